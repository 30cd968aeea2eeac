//! End to end: herd's built-in `claude-json` profile (Claude Code print mode with its JSON-lines
//! events) driving `claudeless`, an independently written Claude Code simulator (crates.io
//! `claudeless`, installed by `.ci/run`), through the real `herd` binary run headless.
//!
//! A profiles file beside each batch overrides only `command` and `resume` of `claude-json` to run
//! claudeless (`--scenario tests/claudeless/*.toml -p {rendered_prompt} --output-format
//! stream-json --verbose`, resumed with `--resume {session_id}`), so the profile's own rules (the
//! events, its texts, `transcripts = "claude"`) decide. Failure tasks swap in a `command` with
//! claudeless's `--failure <mode>`. Every task points `CLAUDE_CONFIG_DIR` into the test's folder,
//! where claudeless keeps its sessions and transcripts and where herd must find them.
//!
//! Without claudeless these tests fail (never skip): install it with `cargo install claudeless
//! --locked`, or point `HERD_CLAUDELESS` at it.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use herd::run::transcripts;

use serde_json::{Value, json};

mod common;
use common::claudeless;

/// How long one herd run may take before the test gives up (each needs a few seconds; a retry
/// adds its backoff of about a second).
const RUN_DEADLINE: Duration = Duration::from_secs(30);
/// The cost claudeless reports for the one-turn `[reply]` answer (the recording
/// `tests/streams/claudeless/scenario-reply.txt`).
const REPLY_COST_USD: f64 = 0.000375;
/// What the `[reply]` rule of `tests/claudeless/scenario.toml` answers.
const REPLY_TEXT: &str = "TASK_COMPLETE:cl-reply";

// ---------------------------------------------------------------------------------------------
// Finding claudeless and its scenarios

/// A scenario file under `tests/claudeless/`.
fn scenario(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/claudeless")
        .join(name);
    assert!(path.is_file(), "missing scenario {}", path.display());
    path.display().to_string()
}

/// The print-mode stream-json arguments every claudeless run here gets.
const STREAM_JSON: [&str; 3] = ["--output-format", "stream-json", "--verbose"];

/// `[claudeless, --scenario, <scenario>, <middle>..., -p, {rendered_prompt}, <stream-json>...]`.
fn claudeless_argv(scenario: &str, middle: &[&str]) -> Vec<String> {
    let mut argv = vec![
        claudeless().display().to_string(),
        "--scenario".into(),
        scenario.to_string(),
    ];
    argv.extend(middle.iter().map(|a| a.to_string()));
    argv.extend(["-p".to_string(), "{rendered_prompt}".to_string()]);
    argv.extend(STREAM_JSON.iter().map(|a| a.to_string()));
    argv
}

// ---------------------------------------------------------------------------------------------
// A batch: a folder with a profiles file, a tasks file and (after a run) the recordings

struct Batch {
    dir: tempfile::TempDir,
    scenario: String,
}

/// What one `herd run` printed and how it ended.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Batch {
    /// A folder whose profiles file points `claude-json`'s `command` and `resume` at claudeless
    /// playing `scenario` (a file under `tests/claudeless/`).
    fn new(scenario_file: &str) -> Batch {
        let dir = tempfile::tempdir().unwrap();
        let scenario = scenario(scenario_file);
        let command = claudeless_argv(&scenario, &[]);
        let resume = claudeless_argv(&scenario, &["--resume", "{session_id}"]);
        // JSON string arrays are valid TOML inline arrays.
        let profiles = format!(
            "# claude-json with claudeless in place of claude; every rule stays the built-in's.\n\
             [profiles.claude-json]\n\
             command = {}\n\
             resume = {}\n",
            serde_json::to_string(&command).unwrap(),
            serde_json::to_string(&resume).unwrap(),
        );
        std::fs::write(dir.path().join("profiles.toml"), profiles).unwrap();
        Batch { dir, scenario }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn tasks_file(&self) -> PathBuf {
        self.path("tasks.json")
    }

    fn profiles_file(&self) -> PathBuf {
        self.path("profiles.toml")
    }

    /// Where claudeless keeps its sessions and transcripts for this batch.
    fn claude_dir(&self) -> PathBuf {
        self.path("claude")
    }

    /// A `claude-json` task: no retries, a short timeout, claudeless's state in the batch. It
    /// opts out of the default marker (`"completion": "result"`): claudeless's replies are fixed
    /// texts, so the result event decides (plus a `completion_marker` where a test sets one).
    fn json_task(&self, task_id: &str, prompt: &str) -> Value {
        json!({
            "task_id": task_id,
            "agent": "claude-json",
            "completion": "result",
            "prompt_template": prompt,
            "env": { "CLAUDE_CONFIG_DIR": self.claude_dir().display().to_string() },
            "timeout_sec": 20,
            "max_retries": 0,
        })
    }

    /// A `claude-json` task whose claudeless fails as `--failure <mode>`.
    fn failing_task(&self, task_id: &str, mode: &str) -> Value {
        let mut task = self.json_task(task_id, "Say hi.");
        task["command"] = json!(claudeless_argv(&self.scenario, &["--failure", mode]));
        task
    }

    /// An interactive `claude` task on claudeless's TUI (`claudeless --scenario <s> <prompt>`),
    /// ended by herd with the exit keys once the marker is on screen.
    fn interactive_task(&self, task_id: &str, prompt: &str, marker: &str) -> Value {
        json!({
            "task_id": task_id,
            "agent": "claude",
            "command": [claudeless().display().to_string(), "--scenario", self.scenario, "{rendered_prompt}"],
            "prompt_template": prompt,
            "completion_marker": marker,
            "env": { "CLAUDE_CONFIG_DIR": self.claude_dir().display().to_string() },
            "timeout_sec": 20,
            "max_retries": 0,
        })
    }

    fn write_tasks(&self, tasks: &[Value]) {
        let doc = json!({ "run_id": "claudeless-json-e2e", "tasks": tasks });
        std::fs::write(
            self.tasks_file(),
            serde_json::to_string_pretty(&doc).unwrap(),
        )
        .unwrap();
    }

    /// A herd command with the environment a developer's own claudeless settings could change
    /// (`CLAUDELESS_CONFIG_DIR` would win over the tasks' `CLAUDE_CONFIG_DIR`) removed.
    fn herd(&self) -> Command {
        let mut herd = common::herd();
        herd.current_dir(self.dir.path())
            .env_remove("CLAUDELESS_CONFIG_DIR")
            .env_remove("CLAUDELESS_SCENARIO")
            .env_remove("CLAUDELESS_FAILURE")
            .env_remove("CLAUDELESS_CLAUDE_VERSION")
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(Stdio::null());
        herd
    }

    /// `herd run --headless` on the batch, waiting at most `RUN_DEADLINE`; checks that herd
    /// finished and left no agent process behind.
    fn run(&self) -> Run {
        let stdout = self.path("herd.stdout");
        let stderr = self.path("herd.stderr");
        let mut child = self
            .herd()
            .args(["run", "--headless", "--tasks"])
            .arg(self.tasks_file())
            .arg("--profiles")
            .arg(self.profiles_file())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + RUN_DEADLINE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                // Ctrl-C lets herd end its agents; then make sure it is gone.
                let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                let grace = Instant::now() + Duration::from_secs(5);
                while child.try_wait().unwrap().is_none() && Instant::now() < grace {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let run = Run {
            code: status.and_then(|s| s.code()),
            stdout: std::fs::read_to_string(stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(stderr).unwrap_or_default(),
        };
        assert!(
            status.is_some(),
            "herd did not finish within {RUN_DEADLINE:?}\n{}",
            self.context(&run)
        );
        self.assert_no_agent_left(&run);
        run
    }

    /// `herd message --tasks F --profiles P [EXTRA…] TASK TEXT`.
    fn message(&self, extra: &[&str], task_id: &str, text: &str) -> std::process::Output {
        self.herd()
            .arg("message")
            .arg("--tasks")
            .arg(self.tasks_file())
            .arg("--profiles")
            .arg(self.profiles_file())
            .args(extra)
            .args([task_id, text])
            .output()
            .unwrap()
    }

    /// The task as herd wrote it back.
    fn task(&self, task_id: &str) -> Value {
        let text = std::fs::read_to_string(self.tasks_file()).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task_id"] == task_id)
            .cloned()
            .unwrap_or_else(|| panic!("no task {task_id} in\n{text}"))
    }

    fn result(&self, task_id: &str) -> Value {
        self.task(task_id)["result"].clone()
    }

    /// The facts file of attempt `n` (`runs/<task>/attempt_<n>.json`).
    fn facts(&self, task_id: &str, n: u32) -> Value {
        let path = self
            .path("runs")
            .join(task_id)
            .join(format!("attempt_{n}.json"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
    }

    /// The session id claudeless announced in attempt `n`'s raw recording (its `system`/`init`
    /// line), read here without herd's parser.
    fn recorded_session(&self, task_id: &str, n: u32) -> Option<String> {
        let path = self
            .path("runs")
            .join(task_id)
            .join(format!("attempt_{n}.log"));
        let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        String::from_utf8_lossy(&raw).lines().find_map(|line| {
            let event: Value = serde_json::from_str(line.trim()).ok()?;
            (event["type"] == "system" && event["subtype"] == "init")
                .then(|| event["session_id"].as_str().map(str::to_string))?
        })
    }

    /// Everything worth seeing when a check fails: herd's output, the tasks file, every facts
    /// file and raw recording.
    fn context(&self, run: &Run) -> String {
        let mut out = format!(
            "herd exit code: {:?}\n--- herd stdout:\n{}\n--- herd stderr:\n{}\n--- tasks file:\n{}",
            run.code,
            run.stdout,
            run.stderr,
            std::fs::read_to_string(self.tasks_file()).unwrap_or_default()
        );
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.path("runs"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|task| {
                std::fs::read_dir(task.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .map(|entry| entry.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "log"))
            .collect();
        files.sort();
        for file in files {
            let text =
                String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
            out.push_str(&format!("\n--- {}:\n{text}", file.display()));
        }
        out
    }

    /// No process started for this batch is alive (herd sets `HERD_RUN_DIR` for every agent).
    fn assert_no_agent_left(&self, run: &Run) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = common::agents_under(self.dir.path());
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "processes left behind after herd ended:\n{}\n{}",
                left.join("\n"),
                self.context(run)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Checks status and failure type, showing everything on a mismatch.
    fn assert_outcome(&self, run: &Run, task_id: &str, status: &str, failure: Option<&str>) {
        let task = self.task(task_id);
        let got = &task["result"]["failure_type"];
        let ok = task["status"] == status
            && match failure {
                Some(f) => got == f,
                None => got.is_null(),
            };
        assert!(
            ok,
            "{task_id}: expected status {status:?}, failure_type {failure:?}; got {}, {got} \
             (evidence {})\n{}",
            task["status"],
            task["result"]["failure_evidence"],
            self.context(run)
        );
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// `argv` holds `--resume <session>` as two neighbouring arguments.
fn resumes(argv: &Value, session: &str) -> bool {
    argv.as_array().is_some_and(|argv| {
        argv.windows(2)
            .any(|w| w[0] == "--resume" && w[1] == session)
    })
}

// ---------------------------------------------------------------------------------------------
// Success and the completion marker

/// `[reply] x`: claudeless answers `TASK_COMPLETE:cl-reply` in one turn; the task completes and
/// its result carries the events' facts and the session's transcript.
#[test]
fn a_reply_completes_with_the_events_facts_and_the_transcript() {
    let batch = Batch::new("scenario.toml");
    batch.write_tasks(&[batch.json_task("cl-json-reply", "[reply] x")]);
    let run = batch.run();
    let ctx = || batch.context(&run);

    batch.assert_outcome(&run, "cl-json-reply", "completed", None);
    assert_eq!(run.code, Some(0), "{}", ctx());
    let result = batch.result("cl-json-reply");
    assert_eq!(result["result_text"], REPLY_TEXT, "{}", ctx());
    assert_eq!(result["is_error"], false, "{}", ctx());
    assert_eq!(result["exit_code"], 0, "{}", ctx());

    let recorded = batch.recorded_session("cl-json-reply", 1);
    let session = result["session_id"].as_str().unwrap_or_default();
    assert!(!session.is_empty(), "no session_id\n{}", ctx());
    assert_eq!(
        Some(session),
        recorded.as_deref(),
        "the session claudeless announced\n{}",
        ctx()
    );

    let cost = result["cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!(close(cost, REPLY_COST_USD), "cost_usd {cost}\n{}", ctx());
    let total = result["total_cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!(close(total, cost), "total_cost_usd {total}\n{}", ctx());
    assert_eq!(result["tokens"]["input"], 100, "{}", ctx());
    assert_eq!(result["tokens"]["output"], 5, "{}", ctx());
    assert_eq!(result["num_turns"], 1, "{}", ctx());
    assert!(result.get("resumed").is_none(), "{}", ctx());

    // claudeless wrote the session's transcript under the task's CLAUDE_CONFIG_DIR.
    let transcript = &result["transcript"];
    // Relative to the tasks file's folder, as `log_file` is.
    let path = batch.path(transcript["path"].as_str().unwrap_or_default());
    assert!(
        path.starts_with(batch.claude_dir().join("projects")) && path.is_file(),
        "transcript {} should be a file under {}/projects\n{}",
        path.display(),
        batch.claude_dir().display(),
        ctx()
    );
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        format!("{session}.jsonl"),
        "{}",
        ctx()
    );
    assert_eq!(transcript["assistant_messages"], 1, "{}", ctx());

    let facts = batch.facts("cl-json-reply", 1);
    assert!(
        facts["stream"]["events"].as_u64().unwrap_or(0) >= 3,
        "init, assistant and result events\n{}",
        ctx()
    );
    assert_eq!(facts["stream"]["session_id"], session, "{}", ctx());
    assert_eq!(facts["completion"], "result", "{}", ctx());
    assert_eq!(facts["verdict"], "completed", "{}", ctx());
    assert_eq!(facts["transcript"]["path"], transcript["path"], "{}", ctx());
    assert!(facts["transcript"]["facts"].is_object(), "{}", ctx());
    assert!(facts.get("resumed_session").is_none(), "{}", ctx());
}

/// A task's `completion_marker` must be in the result's text: there, the task completes; not
/// there, the successful result is still incomplete.
#[test]
fn a_completion_marker_is_looked_for_in_the_results_text() {
    let batch = Batch::new("scenario.toml");
    let mut found = batch.json_task("cl-json-marker", "[reply] x");
    found["completion_marker"] = json!(REPLY_TEXT);
    let mut missing = batch.json_task("cl-json-no-marker", "[reply] x");
    missing["completion_marker"] = json!("TASK_COMPLETE:somewhere-else");
    batch.write_tasks(&[found, missing]);
    let run = batch.run();
    let ctx = || batch.context(&run);

    batch.assert_outcome(&run, "cl-json-marker", "completed", None);
    assert_eq!(
        batch.result("cl-json-marker")["completion_marker_seen"],
        true,
        "{}",
        ctx()
    );
    batch.assert_outcome(
        &run,
        "cl-json-no-marker",
        "failed",
        Some("failed_incomplete"),
    );
    let result = batch.result("cl-json-no-marker");
    assert_eq!(result["completion_marker_seen"], false, "{}", ctx());
    assert_eq!(result["is_error"], false, "{}", ctx());
    assert_eq!(result["result_text"], REPLY_TEXT, "{}", ctx());
    let evidence = result["failure_evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.contains("completion marker"),
        "evidence: {evidence}\n{}",
        ctx()
    );
    assert_eq!(run.code, Some(1), "one task failed\n{}", ctx());
}

// ---------------------------------------------------------------------------------------------
// claudeless's failure modes

/// Every `--failure` mode ends as the verdict its output implies (see
/// `tests/streams/claudeless/README.md`), with claudeless's own words as the evidence.
#[test]
fn every_failure_mode_gets_the_verdict_its_output_implies() {
    /// (mode, failure type, words the evidence must hold, claudeless's exit code)
    const MODES: [(&str, &str, &str, i64); 7] = [
        // `{"error":{"message":"Invalid API key","type":"authentication_error"},"type":"error"}`
        ("auth-error", "failed_auth", "Invalid API key", 1),
        // `..."Rate limit exceeded","retry_after":60,"type":"rate_limit_error"...`
        ("rate-limit", "failed_quota", "Rate limit exceeded", 1),
        // `..."Your account has no credits remaining","type":"billing_error"...`
        ("out-of-credits", "failed_quota", "no credits remaining", 1),
        // `Error: Failed to connect to Claude API: Network is unreachable` (transient).
        (
            "network-unreachable",
            "failed_process",
            "Network is unreachable",
            1,
        ),
        // `Error: Connection to Claude API timed out after 5000ms` (transient).
        (
            "connection-timeout",
            "failed_process",
            "Connection to Claude API timed out",
            1,
        ),
        // `I was going to say...`, no newline, exit 2: no text names a cause, the exit code does.
        ("partial-response", "failed_process", "exit code 2", 2),
        // `{"type":"message","content":[{`, exit 0: the stream was cut short, no result.
        (
            "malformed-json",
            "failed_incomplete",
            "ended before its result",
            0,
        ),
    ];
    let batch = Batch::new("scenario.toml");
    let tasks: Vec<Value> = MODES
        .iter()
        .map(|(mode, ..)| batch.failing_task(&format!("cl-json-{mode}"), mode))
        .collect();
    batch.write_tasks(&tasks);
    let run = batch.run();

    let mut wrong = Vec::new();
    for (mode, failure, words, exit_code) in MODES {
        let task_id = format!("cl-json-{mode}");
        let task = batch.task(&task_id);
        let result = &task["result"];
        let evidence = result["failure_evidence"].as_str().unwrap_or_default();
        if task["status"] != "failed" || result["failure_type"] != failure {
            wrong.push(format!(
                "{mode}: {} {} (evidence {evidence:?}), expected failed {failure}",
                task["status"], result["failure_type"]
            ));
        }
        if !evidence.contains(words) {
            wrong.push(format!(
                "{mode}: evidence {evidence:?} should hold {words:?}"
            ));
        }
        if result["exit_code"] != exit_code {
            wrong.push(format!(
                "{mode}: exit_code {}, expected {exit_code}",
                result["exit_code"]
            ));
        }
        if result["result_text"].is_string() || result["is_error"] == false {
            wrong.push(format!(
                "{mode}: no successful result was printed, got result_text {} is_error {}",
                result["result_text"], result["is_error"]
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n{}",
        wrong.join("\n"),
        batch.context(&run)
    );
    assert_eq!(run.code, Some(1), "{}", batch.context(&run));
}

// ---------------------------------------------------------------------------------------------
// Continuing a session

/// `herd message` after a completed task: the next run resumes claudeless's session with
/// `--resume <id>` and the message, and the costs add up.
#[test]
fn a_message_resumes_the_session_and_the_costs_add_up() {
    let batch = Batch::new("scenario.toml");
    batch.write_tasks(&[batch.json_task("cl-json-resume", "[reply] x")]);
    let first = batch.run();
    batch.assert_outcome(&first, "cl-json-resume", "completed", None);
    let first_result = batch.result("cl-json-resume");
    let session = first_result["session_id"].as_str().unwrap().to_string();
    assert_eq!(
        batch.recorded_session("cl-json-resume", 1).as_deref(),
        Some(session.as_str()),
        "{}",
        batch.context(&first)
    );
    let first_cost = first_result["cost_usd"].as_f64().unwrap();

    let message = "[reply] again";
    // A completed task is not reopened by accident: without --reopen nothing is written.
    let before = std::fs::read(batch.tasks_file()).unwrap();
    let refused = batch.message(&[], "cl-json-resume", message);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        common::describe(&refused)
    );
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--reopen"),
        "{}",
        common::describe(&refused)
    );
    assert_eq!(std::fs::read(batch.tasks_file()).unwrap(), before);
    let out = batch.message(&["--reopen"], "cl-json-resume", message);
    assert!(out.status.success(), "{}", common::describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&session),
        "herd message should name the session it will resume: {}",
        common::describe(&out)
    );
    let waiting = batch.task("cl-json-resume");
    assert_eq!(waiting["status"], "retryable", "{waiting:#}");
    assert_eq!(waiting["resume_message"], message, "{waiting:#}");

    let second = batch.run();
    let ctx = || batch.context(&second);
    batch.assert_outcome(&second, "cl-json-resume", "completed", None);
    assert_eq!(second.code, Some(0), "{}", ctx());
    let task = batch.task("cl-json-resume");
    assert_eq!(task["attempts"], 2, "{}", ctx());
    assert!(task.get("resume_message").is_none(), "{}", ctx());

    let facts = batch.facts("cl-json-resume", 2);
    assert!(
        resumes(&facts["argv"], &session),
        "attempt 2 should run `--resume {session}`: {}\n{}",
        facts["argv"],
        ctx()
    );
    assert!(
        facts["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == message),
        "the message is the resumed prompt: {}\n{}",
        facts["argv"],
        ctx()
    );
    assert_eq!(facts["resumed_session"], session, "{}", ctx());
    // claudeless found the session (an unknown id exits 1 with `Session not found`) and kept it.
    assert_eq!(
        batch.recorded_session("cl-json-resume", 2).as_deref(),
        Some(session.as_str()),
        "{}",
        ctx()
    );

    let result = batch.result("cl-json-resume");
    assert_eq!(result["resumed"], true, "{}", ctx());
    assert_eq!(result["session_id"], session, "{}", ctx());
    assert_eq!(result["result_text"], REPLY_TEXT, "{}", ctx());
    let second_cost = facts["stream"]["cost_usd"].as_f64().unwrap();
    assert_eq!(result["cost_usd"].as_f64(), Some(second_cost), "{}", ctx());
    let total = result["total_cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (total - (first_cost + second_cost)).abs() < 2e-6,
        "total_cost_usd {total}, expected {first_cost} + {second_cost}\n{}",
        ctx()
    );
    // Both turns are in the one session's transcript.
    assert_eq!(result["transcript"]["assistant_messages"], 2, "{}", ctx());
}

/// `"retry_mode": "resume"`: attempt 1's reply lacks the marker (failed_incomplete, retried by
/// `retry_on`); attempt 2 resumes the same session with herd's continuation message, which the
/// scenario (`tests/claudeless/json_retry.toml`) answers with the marker.
#[test]
fn a_resumed_retry_continues_the_first_attempts_session() {
    let batch = Batch::new("json_retry.toml");
    let mut task = batch.json_task("cl-json-retry", "[halfway] Write the report.");
    task["completion_marker"] = json!("TASK_COMPLETE:cl-continue");
    task["retry_mode"] = json!("resume");
    task["retry_on"] = json!(["failed_incomplete"]);
    task["max_retries"] = json!(1);
    batch.write_tasks(&[task]);
    let run = batch.run();
    let ctx = || batch.context(&run);

    batch.assert_outcome(&run, "cl-json-retry", "completed", None);
    assert_eq!(run.code, Some(0), "{}", ctx());
    assert_eq!(batch.task("cl-json-retry")["attempts"], 2, "{}", ctx());

    let first = batch.facts("cl-json-retry", 1);
    assert_eq!(first["failure_type"], "failed_incomplete", "{}", ctx());
    assert!(
        !first["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--resume"),
        "attempt 1 starts afresh\n{}",
        ctx()
    );
    let session = batch
        .recorded_session("cl-json-retry", 1)
        .unwrap_or_else(|| panic!("attempt 1 announced no session\n{}", ctx()));

    let second = batch.facts("cl-json-retry", 2);
    assert!(
        resumes(&second["argv"], &session),
        "attempt 2 should run `--resume {session}`: {}\n{}",
        second["argv"],
        ctx()
    );
    let prompt_arg = second["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|a| a.starts_with("Continue the task where you left off"));
    assert!(
        prompt_arg.is_some(),
        "attempt 2's prompt is the continuation message: {}\n{}",
        second["argv"],
        ctx()
    );
    assert_eq!(second["resumed_session"], session, "{}", ctx());
    assert_eq!(
        batch.recorded_session("cl-json-retry", 2).as_deref(),
        Some(session.as_str()),
        "{}",
        ctx()
    );

    let result = batch.result("cl-json-retry");
    assert_eq!(result["resumed"], true, "{}", ctx());
    assert_eq!(result["session_id"], session, "{}", ctx());
    assert!(
        result["result_text"]
            .as_str()
            .is_some_and(|t| t.contains("TASK_COMPLETE:cl-continue")),
        "{}",
        ctx()
    );
    let costs: Vec<f64> = [&first, &second]
        .iter()
        .map(|f| f["stream"]["cost_usd"].as_f64().unwrap())
        .collect();
    let total = result["total_cost_usd"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (total - costs.iter().sum::<f64>()).abs() < 2e-6,
        "total_cost_usd {total}, attempts cost {costs:?}\n{}",
        ctx()
    );
}

// ---------------------------------------------------------------------------------------------
// Screen and JSON agents side by side

/// An interactive `claude` task on claudeless's TUI next to `claude-json` tasks in one headless
/// batch: each verdict right, exit code 1 for the failed one, and the closing summary shows the
/// cost of the agents that reported one.
#[test]
fn a_mixed_batch_of_screen_and_json_tasks() {
    let batch = Batch::new("scenario.toml");
    batch.write_tasks(&[
        batch.interactive_task("cl-tui-reply", "[reply] Say hi.", REPLY_TEXT),
        batch.json_task("cl-json-ok", "[reply] x"),
        batch.failing_task("cl-json-auth", "auth-error"),
    ]);
    let run = batch.run();
    let ctx = || batch.context(&run);

    batch.assert_outcome(&run, "cl-tui-reply", "completed", None);
    batch.assert_outcome(&run, "cl-json-ok", "completed", None);
    batch.assert_outcome(&run, "cl-json-auth", "failed", Some("failed_auth"));
    assert_eq!(run.code, Some(1), "{}", ctx());
    let tui = batch.result("cl-tui-reply");
    assert_eq!(tui["completion_marker_seen"], true, "{}", ctx());
    assert!(
        tui.get("cost_usd").is_none(),
        "a screen agent reports no cost\n{}",
        ctx()
    );

    // The summary table closes the output: a header with COST, then one row per task.
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("TASK") && l.contains("STATUS"))
        .unwrap_or_else(|| panic!("no summary table\n{}", ctx()));
    assert!(
        lines[header].contains("COST"),
        "the summary should have a COST column: {}\n{}",
        lines[header],
        ctx()
    );
    let row = |task_id: &str| {
        lines[header..]
            .iter()
            .find(|l| l.split_whitespace().next() == Some(task_id))
            .copied()
            .unwrap_or_else(|| panic!("no summary row for {task_id}\n{}", ctx()))
    };
    let cost = batch.result("cl-json-ok")["total_cost_usd"]
        .as_f64()
        .unwrap();
    let shown = format!("${cost:.4}");
    assert!(
        row("cl-json-ok").contains(&shown),
        "the row should show {shown}: {}\n{}",
        row("cl-json-ok"),
        ctx()
    );
    assert!(
        !row("cl-tui-reply").contains('$'),
        "a screen agent has no cost: {}\n{}",
        row("cl-tui-reply"),
        ctx()
    );
    assert!(row("cl-json-auth").contains("failed_auth"), "{}", ctx());
}

// ---------------------------------------------------------------------------------------------
// herd's transcript finder on a real claudeless session (no herd run in between)
// ---------------------------------------------------------------------------------------------

#[test]
fn finds_and_reads_a_real_claudeless_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("work");
    let cfg = dir.path().join("cfg");
    std::fs::create_dir_all(&cwd).unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/claudeless/scenario.toml");
    // File times come from a coarse kernel clock that can lag the system clock by a tick.
    let since = SystemTime::now() - Duration::from_secs(2);
    let output = Command::new(claudeless())
        .args([
            "-p",
            "[reply] x",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .arg("--scenario")
        .arg(&scenario)
        .current_dir(&cwd)
        .env("CLAUDE_CONFIG_DIR", &cfg)
        .env("HOME", dir.path())
        .env_remove("CLAUDELESS_SCENARIO")
        .env_remove("CLAUDELESS_FAILURE")
        .env_remove("CLAUDELESS_CONFIG_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "claudeless failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // The session id, as herd would learn it from the stream's init event.
    let session_id = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no session_id in claudeless's output:\n{stdout}"));

    let env = BTreeMap::from([("CLAUDE_CONFIG_DIR".to_string(), cfg.display().to_string())]);
    let by_id = transcripts::find(&env, &cwd, Some(&session_id), since);
    let listing = || {
        let mut out = String::new();
        for entry in walk(&cfg) {
            out.push_str(&format!("{}\n", entry.display()));
        }
        out
    };
    let path =
        by_id.unwrap_or_else(|| panic!("no transcript for {session_id}; cfg has:\n{}", listing()));
    assert_eq!(
        path.file_name().unwrap(),
        format!("{session_id}.jsonl").as_str()
    );
    assert_eq!(
        transcripts::find(&env, &cwd, None, since),
        Some(path.clone())
    );

    let facts = transcripts::read(&path).unwrap();
    assert_eq!(facts.session_id.as_deref(), Some(session_id.as_str()));
    assert_eq!(facts.bad_lines, 0);
    assert_eq!(facts.assistant_messages, 1);
    assert!(facts.tool_calls.is_empty());
    assert!(facts.tokens.output > 0, "{facts:?}");
}

/// Every path under `dir`, for a failure message.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        out.push(path.clone());
        if path.is_dir() {
            out.extend(walk(&path));
        }
    }
    out
}
