//! End to end: herd's built-in `claude` profile driving `claudeless`, an independently written
//! Claude Code simulator (crates.io `claudeless`, installed by `.ci/run`). Each test runs the real
//! `herd` binary headless on a one-task batch whose `command` swaps `claude` for claudeless, so
//! the profile's own screen rules (prompt rules, `ready`, `exit_keys`, auth/quota texts) decide.
//!
//! claudeless is scripted by `tests/claudeless/*.toml`; the prompt's leading tag (`[bash]`,
//! `[auth_error]`, ...) picks the behaviour. Without claudeless these tests fail (never skip):
//! install it with `cargo install claudeless --locked`, or point `HERD_CLAUDELESS` at it.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::claudeless;

/// How long one herd run may take before the test gives up (every run here needs a few seconds).
const RUN_DEADLINE: Duration = Duration::from_secs(25);
/// Headless wait for an unanswered prompt; short so a blocked dialog fails fast.
const PERMISSION_WAIT_SEC: u64 = 3;
/// herd's headless terminal width, which the echo trap below is built for.
const COLS: usize = 120;

// ---------------------------------------------------------------------------------------------
// Finding claudeless
// ---------------------------------------------------------------------------------------------

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/claudeless")
        .join(name)
        .display()
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// One herd run on a one-task batch
// ---------------------------------------------------------------------------------------------

/// A temporary folder holding a tasks file with one task for the `claude` agent.
struct Batch {
    dir: tempfile::TempDir,
    task: Value,
}

impl Batch {
    /// A task running `claudeless <args> {rendered_prompt}` under the `claude` profile.
    fn new(task_id: &str, args: &[&str], prompt_template: &str) -> Batch {
        let dir = tempfile::tempdir().unwrap();
        let mut command = vec![claudeless().display().to_string()];
        command.extend(args.iter().map(|a| a.to_string()));
        command.push("{rendered_prompt}".into());
        let state = dir.path().join("claudeless-state");
        let task = json!({
            "task_id": task_id,
            "agent": "claude",
            "command": command,
            // claudeless keeps its ~/.claude-like state here, inside the test's folder.
            "env": { "CLAUDELESS_CONFIG_DIR": state.display().to_string() },
            "timeout_sec": 20,
            "max_retries": 0,
            "prompt_template": prompt_template,
        });
        Batch { dir, task }
    }

    fn set(mut self, key: &str, value: Value) -> Batch {
        self.task[key] = value;
        self
    }

    /// Runs `herd run --headless` on the batch, waiting at most `RUN_DEADLINE`.
    fn run(self) -> Finished {
        let tasks = self.dir.path().join("tasks.json");
        let doc = json!({ "run_id": "claudeless-e2e", "tasks": [self.task] });
        std::fs::write(&tasks, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let stdout = self.dir.path().join("herd.stdout");
        let stderr = self.dir.path().join("herd.stderr");
        let mut child = Command::new(env!("CARGO_BIN_EXE_herd"))
            .args(["run", "--headless", "--tasks"])
            .arg(&tasks)
            // A developer's own claudeless settings must not change the script.
            .env_remove("CLAUDELESS_SCENARIO")
            .env_remove("CLAUDELESS_FAILURE")
            .env_remove("CLAUDELESS_CLAUDE_VERSION")
            .stdin(Stdio::null())
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
        let finished = Finished {
            task_id: self.task["task_id"].as_str().unwrap().to_string(),
            tasks,
            code: status.and_then(|s| s.code()),
            stdout: std::fs::read_to_string(stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(stderr).unwrap_or_default(),
            dir: self.dir,
        };
        assert!(
            status.is_some(),
            "herd did not finish within {RUN_DEADLINE:?}\n{}",
            finished.context()
        );
        finished.assert_no_agent_left();
        finished
    }
}

/// What a herd run left behind: its exit code and output, the tasks file, the recordings.
struct Finished {
    dir: tempfile::TempDir,
    task_id: String,
    tasks: PathBuf,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Finished {
    /// The task as herd wrote it back.
    fn task(&self) -> Value {
        let text = std::fs::read_to_string(&self.tasks).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        doc["tasks"][0].clone()
    }

    fn result(&self) -> Value {
        self.task()["result"].clone()
    }

    fn runs(&self) -> PathBuf {
        self.dir.path().join("runs").join(&self.task_id)
    }

    /// The final screen of the latest attempt, as `herd replay --print` shows it.
    fn screen(&self) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_herd"))
            .args(["replay", "--print"])
            .arg(self.runs())
            .output()
            .unwrap();
        let mut screen = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            screen.push_str(&format!(
                "\n(herd replay exited {:?}: {})",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        screen
    }

    /// `[seconds, kind, data]` events of the first attempt's asciicast (header skipped).
    fn cast_events(&self) -> Vec<(f64, String, String)> {
        let path = self.runs().join("attempt_1.cast");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), self.context()));
        text.lines()
            .skip(1)
            .map(|line| {
                let event: Value = serde_json::from_str(line).unwrap();
                (
                    event[0].as_f64().unwrap(),
                    event[1].as_str().unwrap().to_string(),
                    event[2].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// Everything worth seeing when a check fails.
    fn context(&self) -> String {
        let task = std::fs::read_to_string(&self.tasks).unwrap_or_default();
        format!(
            "herd exit code: {:?}\n--- herd stdout:\n{}\n--- herd stderr:\n{}\n--- tasks file:\n{}\n\
             --- last screen (herd replay {} --print):\n{}",
            self.code,
            self.stdout,
            self.stderr,
            task,
            self.runs().display(),
            self.screen()
        )
    }

    /// Checks status and failure type, showing everything on a mismatch.
    fn assert_outcome(&self, status: &str, failure_type: Option<&str>, why: &str) {
        let task = self.task();
        let failure = &task["result"]["failure_type"];
        let ok = task["status"] == status
            && match failure_type {
                Some(f) => failure == f,
                None => failure.is_null(),
            };
        assert!(
            ok,
            "{}: expected status {status:?}, failure_type {failure_type:?}; got {}, {}\n{why}\n{}",
            self.task_id,
            task["status"],
            failure,
            self.context()
        );
    }

    fn assert_exit_code(&self, code: i32) {
        assert_eq!(
            self.code,
            Some(code),
            "herd's exit code\n{}",
            self.context()
        );
    }

    /// No process started for this batch is alive (herd sets `HERD_RUN_DIR` for every agent).
    fn assert_no_agent_left(&self) {
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
                self.context()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn auto_count(result: &Value, key: &str) -> Option<u64> {
    result["auto_inputs"]
        .as_array()?
        .iter()
        .find(|entry| entry["key"] == key)
        .and_then(|entry| entry["count"].as_u64())
}

/// A prompt template whose echo puts the marker alone on a row: claudeless echoes the prompt
/// after `❯ ` and hard-wraps it at the terminal width, so with exactly `COLS - 2` characters
/// before it, the row after holds ` TASK_COMPLETE:<id>` and nothing else. Only herd's
/// echo-proof marker rule keeps that row from counting.
fn echo_trap_prompt(tag: &str) -> String {
    let tail = " When complete, print exactly:";
    let mut lead = format!("{tag} Delete the build folder, then run the test suite again");
    while lead.len() + tail.len() < COLS - 2 {
        lead.push('.');
    }
    format!("{lead}{tail} TASK_COMPLETE:{{task_id}}")
}

fn assert_echo_trap_set(run: &Finished, marker: &str) {
    let screen = run.screen();
    assert!(
        screen.lines().any(|row| row.trim() == marker),
        "the prompt's echo should put {marker} alone on a row (claudeless wraps the echo at the \
         terminal width; did herd's headless size or claudeless's echo change?)\n{}",
        run.context()
    );
}

const PLAIN_PROMPT: &str = "Say hi. When complete, print exactly: TASK_COMPLETE:{task_id}";

// ---------------------------------------------------------------------------------------------
// Permission dialogs
// ---------------------------------------------------------------------------------------------

/// `auto_press_1`: the Bash dialog (`❯ 1. Yes`) is answered with `1`, claudeless shows the tool's
/// output `⎿  TASK_COMPLETE:cl-bash`, herd ends it with the exit keys and the task completes.
#[test]
fn bash_permission_answered_by_policy_completes() {
    let run = Batch::new(
        "cl-bash",
        &["--scenario", &fixture("scenario.toml")],
        &echo_trap_prompt("[bash]"),
    )
    .set("permission_policy", json!({ "auto_press_1": true }))
    .run();

    run.assert_outcome(
        "completed",
        None,
        "the Bash dialog should be answered by policy",
    );
    run.assert_exit_code(0);
    let result = run.result();
    assert_eq!(result["completion_marker_seen"], true, "{}", run.context());
    assert_eq!(
        result["exit_code"],
        0,
        "claudeless should leave by the exit keys, not a signal\n{}",
        run.context()
    );
    assert_eq!(auto_count(&result, "1"), Some(1), "{}", run.context());
    assert_echo_trap_set(&run, "TASK_COMPLETE:cl-bash");

    // The recording: the dialog was seen, answered with `1`, then the marker, then the exit keys.
    let events = run.cast_events();
    let at = |kind: &str, pred: &dyn Fn(&str) -> bool| {
        events
            .iter()
            .position(|(_, k, d)| k == kind && pred(d))
            .unwrap_or_else(|| {
                panic!(
                    "no {kind:?} event as expected\n{events:#?}\n{}",
                    run.context()
                )
            })
    };
    let shown = at("m", &|d| {
        d.starts_with("prompt press_1") && d.contains("1. Yes")
    });
    let answered = at("m", &|d| d.starts_with("auto answer press_1"));
    let typed = at("i", &|d| d == "1");
    let marker = at("m", &|d| d.contains("completion marker seen"));
    let exit_keys = at("i", &|d| d.contains("/exit"));
    assert!(
        shown < answered && typed < marker && marker < exit_keys,
        "events out of order\n{events:#?}"
    );
}

/// No policy: the dialog is left for an operator who never comes, and headless herd fails the
/// task as blocked after `permission_wait_sec`, with the echoed marker not counting.
#[test]
fn bash_permission_without_policy_is_blocked() {
    let run = Batch::new(
        "cl-bash",
        &["--scenario", &fixture("scenario.toml")],
        &echo_trap_prompt("[bash]"),
    )
    .set("permission_wait_sec", json!(PERMISSION_WAIT_SEC))
    .run();

    run.assert_outcome(
        "failed",
        Some("failed_permission_blocked"),
        "nobody may answer the Bash dialog",
    );
    run.assert_exit_code(1);
    let result = run.result();
    assert_eq!(result["completion_marker_seen"], false, "{}", run.context());
    let evidence = result["failure_evidence"].as_str().unwrap_or_default();
    // The dialog's text (`❯ 1. Yes` or `2. Yes, allow ...`: whichever rule holds it).
    assert!(
        evidence.contains("Yes"),
        "evidence: {evidence}\n{}",
        run.context()
    );
    assert_ne!(auto_count(&result, "1"), Some(1), "{}", run.context());
    assert!(
        !run.cast_events()
            .iter()
            .any(|(_, k, d)| k == "i" && d == "1"),
        "herd must not answer the dialog\n{}",
        run.context()
    );
    assert_echo_trap_set(&run, "TASK_COMPLETE:cl-bash");
}

/// `auto_press_p`: the "don't ask again" answer. claudeless words option 2 of a Bash dialog
/// `2. Yes, allow echo commands from this project` (also `allow reading from <dir>/ from this
/// project`, `allow this command from this project`, `and always allow access to <dir>/ ...`).
#[test]
fn bash_dont_ask_again_answered_by_policy_completes() {
    let run = Batch::new(
        "cl-bash",
        &["--scenario", &fixture("scenario.toml")],
        PLAIN_PROMPT.replace("Say hi.", "[bash] Run it.").as_str(),
    )
    .set("permission_policy", json!({ "auto_press_p": true }))
    .set("permission_wait_sec", json!(PERMISSION_WAIT_SEC))
    .run();

    run.assert_outcome(
        "completed",
        None,
        "the claude profile's press_p rule should match claudeless's \
         `2. Yes, allow echo commands from this project`",
    );
    run.assert_exit_code(0);
    let result = run.result();
    let press_p_key = result["auto_inputs"]
        .as_array()
        .and_then(|inputs| inputs.iter().find(|e| e["count"] == 1))
        .cloned();
    assert!(
        press_p_key.is_some(),
        "one automatic answer expected\n{}",
        run.context()
    );
    assert!(
        run.cast_events()
            .iter()
            .any(|(_, k, d)| k == "m" && d.starts_with("auto answer press_p")),
        "{}",
        run.context()
    );
}

/// The guard: under both switches a Bash dialog asking to delete a folder of the home folder is
/// not answered; headless, the task ends blocked with the request and the reason.
#[test]
fn a_dangerous_bash_dialog_is_refused_under_both_switches() {
    let run = Batch::new(
        "cl-danger",
        &["--scenario", &fixture("scenario.toml")],
        PLAIN_PROMPT
            .replace("Say hi.", "[danger] Clean up.")
            .as_str(),
    )
    .set(
        "permission_policy",
        json!({ "auto_press_1": true, "auto_press_p": true }),
    )
    .set("permission_wait_sec", json!(PERMISSION_WAIT_SEC))
    .run();
    run.assert_outcome(
        "failed",
        Some("failed_permission_blocked"),
        "the guard refuses rm -rf ~/projects",
    );
    let result = run.result();
    let evidence = result["failure_evidence"].as_str().unwrap_or_default();
    assert!(
        evidence.contains("Bash(rm -rf ~/projects)")
            && evidence.contains("outside the task's folder"),
        "evidence: {evidence}\n{}",
        run.context()
    );
    assert_eq!(result["approvals"], json!([]), "{}", run.context());
    assert!(
        !run.cast_events()
            .iter()
            .any(|(_, k, d)| k == "i" && (d == "1" || d == "2")),
        "herd must not answer the dialog\n{}",
        run.context()
    );
}

/// The guard: an ordinary command inside the folder is approved under `auto_press_1` and the
/// answer is recorded with its request.
#[test]
fn an_ordinary_bash_dialog_is_approved_and_recorded() {
    let run = Batch::new(
        "cl-ordinary",
        &["--scenario", &fixture("scenario.toml")],
        PLAIN_PROMPT
            .replace("Say hi.", "[ordinary] Clean the build.")
            .as_str(),
    )
    .set("permission_policy", json!({ "auto_press_1": true }))
    .set("permission_wait_sec", json!(PERMISSION_WAIT_SEC))
    .run();
    run.assert_outcome(
        "completed",
        None,
        "rm -rf build inside the folder is ordinary work",
    );
    let approvals = run.result()["approvals"].clone();
    assert_eq!(
        approvals,
        json!([{
            "by": "auto",
            // claudeless calls no hooks: the dialog on its screen was answered.
            "channel": "screen",
            "request": "Bash(rm -rf build)",
            "decision": "allow",
            // The switch that allowed it: the audit says why, not only what.
            "why": "auto_press_1"
        }]),
        "{}",
        run.context()
    );
}

/// The folder-trust dialog comes first in a folder claudeless does not trust yet; the claude
/// profile answers it without a policy (`auto_trust` defaults to true), then the reply completes.
#[test]
fn folder_trust_dialog_is_answered_by_default() {
    let run = Batch::new(
        "cl-trust",
        &["--scenario", &fixture("untrusted.toml")],
        PLAIN_PROMPT,
    )
    .set("permission_wait_sec", json!(PERMISSION_WAIT_SEC))
    // An unmatched trust dialog just sits there: fail by timeout, soon.
    .set("timeout_sec", json!(8))
    .run();

    run.assert_outcome(
        "completed",
        None,
        "the claude profile's trust rule should match claudeless's trust dialog \
         (`Do you trust the files in this folder?` / `❯ 1. Yes, proceed`; confirmed by Enter)",
    );
    run.assert_exit_code(0);
    assert!(
        run.cast_events()
            .iter()
            .any(|(_, k, d)| k == "m" && d.starts_with("auto answer trust")),
        "{}",
        run.context()
    );
}

// ---------------------------------------------------------------------------------------------
// A plain reply, interactive and `-p`
// ---------------------------------------------------------------------------------------------

/// A reply that is the marker (`⏺ TASK_COMPLETE:cl-reply`): herd ends claudeless with the exit
/// keys and the task completes.
#[test]
fn interactive_reply_with_marker_completes() {
    let run = Batch::new(
        "cl-reply",
        &["--scenario", &fixture("scenario.toml")],
        &echo_trap_prompt("[reply]"),
    )
    .run();

    run.assert_outcome("completed", None, "the reply is the marker");
    run.assert_exit_code(0);
    assert_eq!(run.result()["exit_code"], 0, "{}", run.context());
    assert_echo_trap_set(&run, "TASK_COMPLETE:cl-reply");
}

/// `claude -p` prints the reply and exits 0 by itself.
#[test]
fn print_mode_reply_with_marker_completes() {
    let run = Batch::new(
        "cl-reply",
        &["-p", "--scenario", &fixture("scenario.toml")],
        &format!("[reply] {PLAIN_PROMPT}"),
    )
    .run();

    run.assert_outcome("completed", None, "`-p` prints the marker and exits 0");
    run.assert_exit_code(0);
}

// ---------------------------------------------------------------------------------------------
// Failures: `-p --failure <mode>` (claudeless's own error texts, then exit 1/2) and scenario
// failures in the TUI (`⏺ Error: ...`, then back at the input prompt: the `ready` + idle end).
// ---------------------------------------------------------------------------------------------

/// `claudeless -p --failure <mode>` must end as `failure_type`.
fn print_mode_failure(mode: &str, failure_type: &str, why: &str) {
    let run = Batch::new(
        &format!("cl-print-{mode}"),
        &["-p", "--failure", mode],
        PLAIN_PROMPT,
    )
    .run();
    run.assert_outcome("failed", Some(failure_type), why);
    run.assert_exit_code(1);
}

/// A scenario failure in the TUI must end as `failure_type` once claudeless idles at its prompt.
fn interactive_failure(tag: &str, failure_type: &str, why: &str) {
    let run = Batch::new(
        &format!("cl-tui-{}", tag.replace('_', "-")),
        &["--scenario", &fixture("scenario.toml")],
        &format!("[{tag}] {PLAIN_PROMPT}"),
    )
    // The built-in idle_sec (20 s) is for real sessions; the screen rules stay the profile's.
    .set("idle_sec", json!(1))
    .run();
    run.assert_outcome("failed", Some(failure_type), why);
    run.assert_exit_code(1);
    let evidence = run.result()["failure_evidence"].clone();
    assert!(
        evidence.as_str().is_some_and(|e| e.contains("Error")),
        "the evidence should be claudeless's error line, got {evidence}\n{}",
        run.context()
    );
}

#[test]
fn print_mode_auth_error_is_failed_auth() {
    print_mode_failure(
        "auth-error",
        "failed_auth",
        r#"`{"error":{"message":"Invalid API key","type":"authentication_error"},...}`, exit 1"#,
    );
}

#[test]
fn print_mode_rate_limit_is_failed_quota() {
    print_mode_failure(
        "rate-limit",
        "failed_quota",
        r#"`{"error":{"message":"Rate limit exceeded",...,"type":"rate_limit_error"},...}`, exit 1"#,
    );
}

#[test]
fn print_mode_out_of_credits_is_failed_quota() {
    print_mode_failure(
        "out-of-credits",
        "failed_quota",
        r#"`{"error":{"message":"Your account has no credits remaining","type":"billing_error"},...}`, exit 1"#,
    );
}

#[test]
fn print_mode_network_unreachable_is_failed_process() {
    print_mode_failure(
        "network-unreachable",
        "failed_process",
        "`Error: Failed to connect to Claude API: Network is unreachable`, exit 1",
    );
}

#[test]
fn interactive_auth_error_is_failed_auth() {
    interactive_failure(
        "auth_error",
        "failed_auth",
        "`⏺ Error: Invalid API key`, then idle at the input prompt",
    );
}

#[test]
fn interactive_rate_limit_is_failed_quota() {
    interactive_failure(
        "rate_limit",
        "failed_quota",
        "`⏺ Error: Rate limited. Retry after 30 seconds.`, then idle at the input prompt",
    );
}

#[test]
fn interactive_out_of_credits_is_failed_quota() {
    interactive_failure(
        "out_of_credits",
        "failed_quota",
        "`⏺ Error: No credits remaining`, then idle at the input prompt",
    );
}

#[test]
fn interactive_network_unreachable_is_failed_process() {
    interactive_failure(
        "network_unreachable",
        "failed_process",
        "`⏺ Error: Network is unreachable` is a transient error (failed_process, retried), \
         then idle at the input prompt",
    );
}
