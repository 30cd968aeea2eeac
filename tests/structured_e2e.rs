//! End to end: a batch that mixes screen agents and structured agents (the built-in simulator's
//! stream-json and signal-file scenarios) through the real `herd` binary, headless. Checks the
//! verdicts, the fields structured agents add to `result` (final text, session, cost, tokens,
//! turns, denials), command files with `args`, the signal file's three states, `needs_input`
//! answered with `herd message` and resumed, and `"retry_mode": "resume"`.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

mod common;
use common::{agents_under, describe, herd};

/// A folder with a tasks file.
struct Batch {
    dir: tempfile::TempDir,
}

impl Batch {
    fn new(tasks: Value) -> Batch {
        let dir = tempfile::tempdir().unwrap();
        let doc = json!({"run_id": "structured-e2e", "tasks": tasks});
        std::fs::write(
            dir.path().join("tasks.json"),
            serde_json::to_string_pretty(&doc).unwrap(),
        )
        .unwrap();
        Batch { dir }
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("tasks.json")
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.path().join(name), text).unwrap();
    }

    fn run(&self) -> Output {
        let out = herd()
            .args(["run", "--headless", "--tasks"])
            .arg(self.path())
            .output()
            .unwrap();
        let left = agents_under(self.dir.path());
        assert!(left.is_empty(), "agents left running: {left:?}");
        out
    }

    fn task(&self, id: &str) -> Value {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(self.path()).unwrap()).unwrap();
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no task {id}"))
    }

    fn facts(&self, id: &str, attempt: u32) -> Value {
        let path = self
            .dir
            .path()
            .join(format!("runs/{id}/attempt_{attempt}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

fn sim(id: &str, agent: &str, scenario: &str, extra: Value) -> Value {
    let mut task = json!({
        "task_id": id,
        "agent": agent,
        "inputs": {"scenario": scenario},
        "prompt_template": "Do the task. When complete, print exactly: {completion_marker}",
        "timeout_sec": 30,
        "max_retries": 0,
    });
    for (k, v) in extra.as_object().unwrap() {
        task[k] = v.clone();
    }
    task
}

fn assert_status(batch: &Batch, id: &str, status: &str, failure: Option<&str>, out: &Output) {
    let task = batch.task(id);
    assert_eq!(
        (
            task["status"].as_str(),
            task["result"]["failure_type"].as_str()
        ),
        (Some(status), failure),
        "{id}: {}\n{}",
        serde_json::to_string_pretty(&task).unwrap(),
        describe(out)
    );
}

#[test]
fn a_mixed_batch_gets_verdicts_texts_costs_and_sessions_right() {
    let batch = Batch::new(json!([
        sim("screen", "sim", "success", json!({})),
        sim("json-ok", "sim-json", "json_success", json!({})),
        sim("json-auth", "sim-json", "json_auth", json!({})),
        sim("json-quota", "sim-json", "json_quota", json!({})),
        sim("json-denied", "sim-json", "json_denied", json!({})),
        sim("json-cut", "sim-json", "json_cut_short", json!({})),
        sim(
            "json-resume",
            "sim-json",
            "json_resume",
            json!({"retry_mode": "resume", "max_retries": 1})
        ),
    ]));
    let out = batch.run();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));

    assert_status(&batch, "screen", "completed", None, &out);
    let screen = batch.task("screen");
    assert!(screen["result"].get("result_text").is_none(), "{screen}");

    assert_status(&batch, "json-ok", "completed", None, &out);
    let ok = &batch.task("json-ok")["result"];
    assert_eq!(ok["result_text"], "Done.\nTASK_COMPLETE:json-ok");
    assert_eq!(ok["session_id"], "sim-json-ok-1");
    assert_eq!(ok["is_error"], false);
    assert_eq!(ok["cost_usd"], 0.0123);
    assert_eq!(ok["total_cost_usd"], 0.0123);
    assert_eq!(ok["num_turns"], 2);
    assert_eq!(ok["tool_calls"], 1);
    assert_eq!(ok["tokens"]["input"], 1200);
    assert_eq!(ok["tokens"]["output"], 340);
    let facts = batch.facts("json-ok", 1);
    // Structured agents need the marker too unless the task opts out (SPEC).
    assert_eq!(facts["completion"], "marker");
    assert!(facts["stream"]["events"].as_u64().unwrap() >= 4, "{facts}");
    // The raw stream stays in the recording.
    let log = std::fs::read_to_string(batch.dir.path().join("runs/json-ok/attempt_1.log")).unwrap();
    assert!(log.contains(r#""type":"result""#), "{log}");

    assert_status(&batch, "json-auth", "failed", Some("failed_auth"), &out);
    let auth = &batch.task("json-auth")["result"];
    assert_eq!(auth["is_error"], true);
    assert!(
        auth["failure_evidence"]
            .as_str()
            .unwrap()
            .contains("Please run /login"),
        "{auth}"
    );
    assert_status(&batch, "json-quota", "failed", Some("failed_quota"), &out);
    assert_status(
        &batch,
        "json-denied",
        "failed",
        Some("failed_permission_blocked"),
        &out,
    );
    let denied = &batch.task("json-denied")["result"];
    assert_eq!(
        denied["permission_denials"],
        json!(["Bash(touch created_by_agent.txt)"])
    );
    assert_eq!(
        denied["failure_evidence"],
        "permission denied: Bash(touch created_by_agent.txt)"
    );
    assert!(
        denied["failure_summary"]
            .as_str()
            .unwrap()
            .contains("Permission denied: Bash(touch created_by_agent.txt)"),
        "the retry context is the agent's own error, not its JSON: {denied}"
    );
    assert_status(
        &batch,
        "json-cut",
        "failed",
        Some("failed_incomplete"),
        &out,
    );
    assert!(
        batch.task("json-cut")["result"]["failure_evidence"]
            .as_str()
            .unwrap()
            .starts_with("the event stream ended before its result"),
    );

    // A resumed retry continues the first attempt's session.
    assert_status(&batch, "json-resume", "completed", None, &out);
    let resumed = batch.task("json-resume");
    assert_eq!(resumed["attempts"], 2);
    assert_eq!(resumed["result"]["resumed"], true);
    assert_eq!(resumed["result"]["session_id"], "sim-json-resume-1");
    let argv = batch.facts("json-resume", 2)["argv"].clone();
    let argv: Vec<&str> = argv
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let at = argv.iter().position(|a| *a == "--resume").unwrap();
    assert_eq!(argv[at + 1], "sim-json-resume-1");
    assert!(
        argv.last()
            .unwrap()
            .starts_with("Continue the task where you left off and finish it."),
        "{argv:?}"
    );
    assert_eq!(
        batch.facts("json-resume", 2)["resumed_session"],
        "sim-json-resume-1"
    );

    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("COST"), "{summary}");
    assert!(summary.contains("$0.0123"), "{summary}");
}

#[test]
fn a_structured_task_that_sets_a_marker_needs_it_in_the_result() {
    let batch = Batch::new(json!([
        sim(
            "has-it",
            "sim-json",
            "json_success",
            json!({"completion_marker": "DONE-{task_id}"})
        ),
        sim(
            "lacks-it",
            "sim-json",
            "plain.toml",
            json!({"completion_marker": "DONE-{task_id}"})
        ),
        sim("no-marker-asked", "sim-json", "plain.toml", json!({})),
        sim(
            "opted-out",
            "sim-json",
            "plain.toml",
            json!({"completion": "result"})
        ),
    ]));
    batch.write(
        "plain.toml",
        "[[step]]\njson_init = {}\n[[step]]\njson_result = { text = \"All done.\" }\n[[step]]\nexit = 0\n",
    );
    let out = batch.run();
    // json_success prints the marker herd hands it.
    assert_status(&batch, "has-it", "completed", None, &out);
    assert_eq!(
        batch.task("has-it")["result"]["result_text"],
        "Done.\nDONE-has-it"
    );
    assert_status(
        &batch,
        "lacks-it",
        "failed",
        Some("failed_incomplete"),
        &out,
    );
    assert_eq!(
        batch.task("lacks-it")["result"]["failure_evidence"],
        "the result's text has no completion marker"
    );
    // SPEC: the marker is required of structured agents too, unless the task opts out.
    assert_status(
        &batch,
        "no-marker-asked",
        "failed",
        Some("failed_incomplete"),
        &out,
    );
    assert_status(&batch, "opted-out", "completed", None, &out);
}

#[test]
fn signal_files_complete_fail_and_ask_and_answers_resume_the_session() {
    let batch = Batch::new(json!([
        sim(
            "done",
            "sim",
            "signal_done",
            json!({"completion": "signal_file"})
        ),
        sim(
            "error",
            "sim",
            "signal_error",
            json!({"completion": "signal_file"})
        ),
        sim(
            "ask",
            "sim",
            "signal_questions",
            json!({"completion": "signal_file"})
        ),
        sim(
            "json",
            "sim-json",
            "signal_json",
            json!({"completion": "signal_file"})
        ),
        // A screen agent that prints the marker but writes no signal file is not done.
        sim(
            "no-signal",
            "sim",
            "success",
            json!({"completion": "signal_file"})
        ),
    ]));
    let out = batch.run();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_status(&batch, "done", "completed", None, &out);
    let done = &batch.task("done")["result"];
    assert_eq!(done["signal"]["status"], "done");
    assert_eq!(
        done["result_text"],
        "Fixed the failing test; all tests pass."
    );
    assert_status(&batch, "error", "failed", Some("failed_incomplete"), &out);
    assert_eq!(
        batch.task("error")["result"]["failure_evidence"],
        "the agent reported an error: cannot reproduce the bug"
    );
    assert_status(&batch, "json", "completed", None, &out);
    assert_status(
        &batch,
        "no-signal",
        "failed",
        Some("failed_incomplete"),
        &out,
    );
    assert!(
        batch.task("no-signal")["result"]["failure_evidence"]
            .as_str()
            .unwrap()
            .starts_with("no signal file was written"),
    );

    // Questions: the task waits for the operator.
    let ask = batch.task("ask");
    assert_eq!(ask["status"], "needs_input");
    assert_eq!(
        ask["result"]["questions"],
        json!(["Which database should I use?", "May I drop the old table?"])
    );
    assert_eq!(ask["result"]["session_id"], "sim-ask-1");
    let signal_path = batch.dir.path().join("runs/ask/attempt_1.signal.json");
    assert!(
        signal_path.is_file(),
        "the signal file stays with the recording"
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("ask needs input: answer with `herd message"),
        "{summary}"
    );

    // The operator answers from a script; the next run resumes the session with the answer.
    let answer = "Postgres, please; yes — drop it. \"quoted\" $1 {x}";
    let msg = herd()
        .args(["message", "--tasks"])
        .arg(batch.path())
        .args(["ask", answer])
        .output()
        .unwrap();
    assert_eq!(msg.status.code(), Some(0), "{}", describe(&msg));
    assert!(
        String::from_utf8_lossy(&msg.stdout).contains("resumes session sim-ask-1"),
        "{}",
        describe(&msg)
    );
    let queued = batch.task("ask");
    assert_eq!(
        (queued["status"].as_str(), queued["resume_message"].as_str()),
        (Some("retryable"), Some(answer))
    );

    let again = batch.run();
    let ask = batch.task("ask");
    assert_eq!(ask["status"], "completed", "{}", describe(&again));
    assert_eq!(ask["attempts"], 2);
    // The resumed session gets the answer, then where this attempt's signal file is.
    let text = ask["result"]["result_text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "answered: {answer}\n\nWhen you finish, write a JSON file at "
        )) && text.contains("runs/ask/attempt_2.signal.json"),
        "{text}"
    );
    assert_eq!(ask["result"]["resumed"], true);
    assert!(ask.get("resume_message").is_none(), "{ask}");
    // Only the answered task ran again.
    assert_eq!(batch.task("done")["attempts"], 1);

    // Messages to unknown or running tasks are refused without writing anything.
    let before = std::fs::read_to_string(batch.path()).unwrap();
    let unknown = herd()
        .args(["message", "--tasks"])
        .arg(batch.path())
        .args(["nope", "hi"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
    let empty = herd()
        .args(["message", "--tasks"])
        .arg(batch.path())
        .args(["ask", "  "])
        .output()
        .unwrap();
    assert_eq!(empty.status.code(), Some(2), "{}", describe(&empty));
    assert_eq!(std::fs::read_to_string(batch.path()).unwrap(), before);
}

#[test]
fn command_files_fill_their_arguments_and_never_go_through_a_shell() {
    // A scenario that returns its prompt as the result text, so the test sees what the agent got.
    // The tasks opt out of the marker, so the prompt is exactly the command file's.
    let scenario = "[[step]]\njson_init = {}\n[[step]]\njson_result = { text = \"{prompt}\" }\n[[step]]\nexit = 0\n";
    let big = "x".repeat(10 * 1024);
    let tricky = "it \"panics\"\non $HOME; `rm -rf /` && echo $(whoami) 'q' \\ ünï";
    let batch = Batch::new(json!([
        {"task_id": "fix", "agent": "sim-json", "inputs": {"scenario": "echo.toml"},
         "completion": "result", "prompt_file": "commands/fix.md", "args": ["src/a.rs", tricky], "timeout_sec": 30},
        {"task_id": "one", "agent": "sim-json", "inputs": {"scenario": "echo.toml"},
         "completion": "result", "prompt_file": "commands/one.md", "args": [big.clone()], "timeout_sec": 30},
        {"task_id": "missing-arg", "agent": "sim-json", "inputs": {"scenario": "echo.toml"},
         "completion": "result", "prompt_file": "commands/three.md", "args": ["a", "b"], "timeout_sec": 30},
    ]));
    std::fs::create_dir(batch.dir.path().join("commands")).unwrap();
    batch.write("echo.toml", scenario);
    batch.write(
        "commands/fix.md",
        "---\ndescription: Fix a file\nallowed-tools: Bash(cargo test:*)\n---\nFix $1 ($2). All: $ARGUMENTS. Costs US$5, {braces} and $HOME stay.\n",
    );
    batch.write("commands/one.md", "Look at $ARGUMENTS");
    batch.write("commands/three.md", "Use $1, $2 and $3.");
    let out = batch.run();
    assert_status(&batch, "fix", "completed", None, &out);
    assert_eq!(
        batch.task("fix")["result"]["result_text"],
        format!(
            "Fix src/a.rs ({tricky}). All: src/a.rs, {tricky}. Costs US$5, {{braces}} and $HOME stay.\n"
        )
    );
    assert_status(&batch, "one", "completed", None, &out);
    assert_eq!(
        batch.task("one")["result"]["result_text"],
        format!("Look at {big}")
    );
    assert_status(&batch, "missing-arg", "failed", Some("failed_config"), &out);
    let evidence = batch.task("missing-arg")["result"]["failure_evidence"].clone();
    assert!(
        evidence
            .as_str()
            .unwrap()
            .starts_with("prompt_file uses $3 but \"args\" has 2 values"),
        "{evidence}"
    );
    assert!(!batch.dir.path().join("runs/missing-arg").exists());

    // `validate` finds the same problem before anything runs.
    let check = herd()
        .args(["validate", "--tasks"])
        .arg(batch.path())
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(2), "{}", describe(&check));
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.contains("task \"missing-arg\": prompt_file uses $3"),
        "{}",
        describe(&check)
    );
}

#[test]
fn structured_completion_on_a_screen_agent_is_a_config_error() {
    let batch = Batch::new(json!([sim(
        "wrong",
        "sim",
        "success",
        json!({"completion": "result"})
    )]));
    let out = batch.run();
    assert_status(&batch, "wrong", "failed", Some("failed_config"), &out);
    let evidence = batch.task("wrong")["result"]["failure_evidence"].clone();
    assert!(
        evidence.as_str().unwrap().contains("reads the screen"),
        "{evidence}"
    );
    assert!(Path::new(&batch.path()).is_file());
}
