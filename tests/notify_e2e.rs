//! End to end through the real binary, headless, against the built-in simulator: the `notify`
//! command hears each wait for the operator once (with the request and the guard's reason), a
//! task that needs input, a task that fails for good and the batch's end; `--notify` overrides
//! the file's; a notify command that fails, is missing or hangs changes nothing of the batch;
//! `herd validate` points at a bad `notify`.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::{describe, herd, task};

/// A claude-style Bash dialog for `command`, then the marker.
fn dialog_scenario(dir: &Path, name: &str, command: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        r#"description = "a permission dialog"
[[step]]
claude_header = {{}}
[[step]]
echo = "claude"
[[step]]
dialog = {{ style = "claude", command = {command:?}, description = "Do the thing", on_reject = "idle" }}
[[step]]
say = "Done."
[[step]]
marker = "claude"
[[step]]
idle = "claude"
"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The batch: two waits for the operator (one the guard refuses, one nothing allows, which
/// comes back in a second attempt), a crash, questions, a task with a config error, and a
/// success.
fn batch(dir: &Path, notify: Value) -> PathBuf {
    let home = dialog_scenario(dir, "home", "rm -rf ~");
    let tasks = json!({
        "run_id": "notify-e2e",
        "notify": notify,
        "tasks": [
            {
                "task_id": "home", "agent": "sim", "max_retries": 0, "timeout_sec": 60,
                "permission_wait_sec": 2,
                "permission_policy": {"auto_press_1": true, "auto_press_p": true},
                "inputs": {"scenario": home.display().to_string()},
                "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}"
            },
            {
                "task_id": "ask", "agent": "sim", "max_retries": 1, "timeout_sec": 60,
                "permission_wait_sec": 2, "retry_on": ["failed_permission_blocked"],
                "inputs": {"scenario": "permission"},
                "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}"
            },
            {
                "task_id": "crash", "agent": "sim", "max_retries": 0, "timeout_sec": 60,
                "inputs": {"scenario": "crash"},
                "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}"
            },
            {
                "task_id": "asks", "agent": "sim", "timeout_sec": 60, "completion": "signal_file",
                "inputs": {"scenario": "signal_questions"},
                "prompt_template": "Migrate the users table."
            },
            {
                "task_id": "config", "agent": "sim", "prompt_template": "Use {missing}"
            },
            {
                "task_id": "ok", "agent": "sim", "timeout_sec": 60,
                "inputs": {"scenario": "success"},
                "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}"
            }
        ]
    });
    let path = dir.join("tasks.json");
    std::fs::write(&path, serde_json::to_string_pretty(&tasks).unwrap()).unwrap();
    path
}

fn run(tasks: &Path, extra: &[&str]) -> std::process::Output {
    herd()
        .args(["run", "--headless", "--concurrency", "5", "--tasks"])
        .env("TZ", "Europe/Berlin")
        .arg(tasks)
        .args(extra)
        .output()
        .unwrap()
}

/// A notify command that appends its stdin to `file`.
fn append_to(file: &Path) -> Value {
    json!(["sh", "-c", format!("cat >> '{}'", file.display())])
}

fn events(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Status and failure type of every task: what a notify command must never change.
fn outcome(tasks: &Path) -> Vec<(String, Value, Value)> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(tasks).unwrap()).unwrap();
    ["home", "ask", "crash", "asks", "config", "ok"]
        .iter()
        .map(|id| {
            let t = task(&doc, id);
            (
                id.to_string(),
                t["status"].clone(),
                t["result"]["failure_type"].clone(),
            )
        })
        .collect()
}

fn of_kind<'a>(events: &'a [Value], kind: &str, task_id: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["event"] == kind && (task_id.is_empty() || e["task_id"] == task_id))
        .collect()
}

#[test]
fn notify_hears_each_wait_once_questions_failures_and_the_batch_end() {
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("events.jsonl");
    let tasks = batch(dir.path(), append_to(&got));
    let out = run(&tasks, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let events = events(&got);
    let all = serde_json::to_string_pretty(&events).unwrap();

    // The guard's refusal: one wait, with the request and the reason.
    let home = of_kind(&events, "prompt_waiting", "home");
    assert_eq!(home.len(), 1, "{all}");
    assert_eq!(home[0]["request"], "Bash(rm -rf ~)", "{all}");
    assert_eq!(home[0]["decision"], "refuse", "{all}");
    assert!(
        home[0]["reason"].as_str().unwrap().contains("home folder"),
        "{all}"
    );
    assert_eq!(home[0]["waits_for"], "permission");
    assert_eq!(home[0]["run_id"], "notify-e2e");
    assert_eq!(home[0]["tasks_file"], tasks.display().to_string(), "{all}");
    assert!(home[0]["at"].as_str().unwrap().ends_with('Z'), "{all}");
    // The same moment on the operator's clock (TZ=Europe/Berlin: +01:00 or +02:00).
    let at: jiff::Timestamp = home[0]["at"].as_str().unwrap().parse().unwrap();
    let at_local = home[0]["at_local"].as_str().unwrap();
    let local: jiff::Zoned = format!("{at_local}[Europe/Berlin]").parse().unwrap();
    assert_eq!(local.timestamp(), at, "{all}");
    assert!(
        at_local.ends_with("+01:00") || at_local.ends_with("+02:00"),
        "{all}"
    );
    // Nothing allows it: one wait per attempt, each told once.
    let ask = of_kind(&events, "prompt_waiting", "ask");
    let attempts: Vec<&Value> = ask.iter().map(|e| &e["attempt"]).collect();
    assert_eq!(attempts, [&json!(1), &json!(2)], "{all}");
    assert_eq!(
        ask[0]["request"], "Bash(touch created_by_agent.txt)",
        "{all}"
    );

    let failed: Vec<(&Value, &Value)> = of_kind(&events, "task_failed", "")
        .iter()
        .map(|e| (&e["task_id"], &e["failure_type"]))
        .collect();
    assert_eq!(failed.len(), 4, "{all}");
    for (id, failure) in [
        ("home", "failed_permission_blocked"),
        ("ask", "failed_permission_blocked"),
        ("crash", "failed_process"),
        ("config", "failed_config"),
    ] {
        assert!(
            failed.contains(&(&json!(id), &json!(failure))),
            "{id}: {all}"
        );
    }
    let crash = of_kind(&events, "task_failed", "crash");
    assert_eq!(crash[0]["evidence"], "exit code 3", "{all}");
    // A blocked prompt's failure names the event: what it asked, and that nobody answered.
    let ask_failed = of_kind(&events, "task_failed", "ask");
    let why = ask_failed[0]["why"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("waited 2 s for an answer to ") && why.contains("; nobody answered"),
        "{all}"
    );
    assert!(
        ask_failed[0]["message"].as_str().unwrap().contains(why),
        "{all}"
    );

    let asks = of_kind(&events, "needs_input", "asks");
    assert_eq!(asks.len(), 1, "{all}");
    assert_eq!(
        asks[0]["questions"],
        json!(["Which database should I use?", "May I drop the old table?"])
    );
    assert!(of_kind(&events, "prompt_waiting", "ok").is_empty(), "{all}");

    let end = events.last().unwrap();
    assert_eq!(end["event"], "batch_ended", "{all}");
    assert_eq!(
        end["counts"],
        json!({"completed": 1, "failed": 4, "needs_input": 1}),
        "{all}"
    );
    assert_eq!(end["exit_code"], 1);
    assert_eq!(of_kind(&events, "batch_ended", "").len(), 1, "{all}");
    assert_eq!(events.len(), 9, "{all}");
}

#[test]
fn the_flag_overrides_the_file_and_a_failing_notify_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let from_file = dir.path().join("from_file.jsonl");
    let from_flag = dir.path().join("from_flag.jsonl");
    let tasks = batch(dir.path(), append_to(&from_file));
    let flag = format!("cat >> '{}'", from_flag.display());
    let out = run(&tasks, &["--notify", &flag]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let heard_events = events(&from_flag);
    let said = |events: &[Value]| {
        format!(
            "{}\n{}",
            serde_json::to_string_pretty(events).unwrap(),
            describe(&out)
        )
    };
    assert_eq!(heard_events.len(), 9, "{}", said(&heard_events));
    assert!(events(&from_file).is_empty());
    let heard = outcome(&tasks);

    // The same batch with a command that fails, then with one that does not exist.
    for (name, notify) in [
        (
            "failing",
            json!(["sh", "-c", "cat > /dev/null; echo no route >&2; exit 7"]),
        ),
        ("missing", json!(["/nonexistent/herd-notify"])),
    ] {
        let sub = dir.path().join(name);
        std::fs::create_dir(&sub).unwrap();
        let tasks = batch(&sub, notify);
        let out = run(&tasks, &[]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", describe(&out));
        assert_eq!(outcome(&tasks), heard, "{name}");
        let log = std::fs::read_to_string(sub.join("runs/herd.log")).unwrap();
        let why = if name == "failing" {
            "no route"
        } else {
            "cannot run /nonexistent/herd-notify"
        };
        assert!(log.contains(why), "{name}: {log}");
    }
}

#[test]
fn a_notify_command_that_hangs_is_killed_and_herd_ends_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.json");
    std::fs::write(
        &tasks,
        r#"{"tasks": [{"task_id": "ok", "agent": "sim", "inputs": {"scenario": "success"},
            "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}"}]}"#,
    )
    .unwrap();
    let started = Instant::now();
    let out = run(&tasks, &["--notify", "sleep 60"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // The batch's end waits for its notification at most its time limit (10 s).
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap();
    assert!(
        log.contains("did not end within 10 s and was killed"),
        "{log}"
    );
}

#[test]
fn validate_points_at_a_bad_notify_and_run_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.json");
    std::fs::write(
        &tasks,
        "{\n  \"notify\": \"curl -d @- ntfy.sh/x\",\n  \"tasks\": [{\"task_id\": \"ok\", \"agent\": \"sim\", \"prompt_template\": \"x\"}]\n}\n",
    )
    .unwrap();
    let out = herd()
        .args(["validate", "--tasks"])
        .arg(&tasks)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let wanted = format!(
        "{}:2:13: \"notify\" must be a command as a list of strings",
        tasks.display()
    );
    assert!(printed.contains(&wanted), "{printed}");
    let out = run(&tasks, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn a_profile_s_notify_hears_its_tasks_and_the_batch_end_in_the_tasks_folder() {
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("events.jsonl");
    let profiles = dir.path().join("profiles.toml");
    // A relative path: the command runs in the tasks file's folder, wherever herd started.
    std::fs::write(
        &profiles,
        "[profiles.sim]\nnotify = [\"sh\", \"-c\", \"cat >> events.jsonl\"]\n",
    )
    .unwrap();
    let tasks = dir.path().join("tasks.json");
    std::fs::write(
        &tasks,
        r#"{"tasks": [{"task_id": "crash", "agent": "sim", "max_retries": 0,
            "inputs": {"scenario": "crash"}, "prompt_template": "x"}]}"#,
    )
    .unwrap();
    let out = run(&tasks, &["--profiles", profiles.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let kinds: Vec<Value> = events(&got).iter().map(|e| e["event"].clone()).collect();
    assert_eq!(kinds, [json!("task_failed"), json!("batch_ended")]);
}
