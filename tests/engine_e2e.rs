//! End to end: the real `herd` binary, headless, on simulator batches. Checks the rewritten tasks
//! file, the exit code, the recordings, resuming after herd is killed, one owner per file, bad
//! input left untouched, and that no agent process is left behind.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{agents_under, describe, herd, task};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks.example.json")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn run_headless(tasks: &Path, extra: &[&str]) -> Output {
    herd()
        .args(["run", "--headless", "--tasks"])
        .arg(tasks)
        .args(extra)
        .output()
        .unwrap()
}

/// Waits until `cond` holds, or fails showing `context()`.
fn wait_until(
    what: &str,
    timeout: Duration,
    mut cond: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        if Instant::now() > deadline {
            panic!("timed out waiting for {what}\n{}", context());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn no_agents_under(dir: &Path) {
    // The group is killed when the agent exits; give the kernel a moment to reap.
    wait_until(
        "every agent process to be gone",
        Duration::from_secs(5),
        || agents_under(dir).is_empty(),
        || format!("{:#?}", agents_under(dir)),
    );
}

/// The demo is the first file a newcomer checks: `herd validate` on it says "no problems" (its
/// failures are the runs' own, none is a mistake in the file).
#[test]
fn the_example_batch_validates() {
    let out = herd()
        .args(["validate", "--tasks"])
        .arg(example())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("no problems"), "{}", describe(&out));
}

#[test]
fn the_example_batch_ends_as_it_promises() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.json");
    std::fs::copy(example(), &tasks).unwrap();
    let out = run_headless(&tasks, &["--concurrency", "6"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let doc = read_json(&tasks);
    for t in doc["tasks"].as_array().unwrap() {
        let id = t["task_id"].as_str().unwrap();
        let expect = t["expect"].as_str().unwrap();
        let status = t["status"].as_str().unwrap_or("pending");
        let want_status = expect.split([' ', ':']).next().unwrap();
        assert_eq!(status, want_status, "{id}: {expect}\n{}", describe(&out));
        if let Some(failure) = expect
            .strip_prefix("failed (")
            .and_then(|r| r.split(')').next())
        {
            assert_eq!(
                t["result"]["failure_type"], failure,
                "{id}: {}",
                t["result"]
            );
            assert!(
                t["result"]["failure_evidence"]
                    .as_str()
                    .is_some_and(|e| !e.is_empty()),
                "{id}"
            );
        }
        if status == "completed" {
            assert_eq!(t["result"]["failure_type"], Value::Null, "{id}");
            // A signal file decides by itself; a structured agent's result by its event.
            if t.get("completion").is_none() && t["agent"] != "sim-json" {
                assert_eq!(t["result"]["completion_marker_seen"], true, "{id}");
            }
        }
        if t["agent"] == "sim-json" && t["attempts"].as_u64().unwrap_or(0) > 0 {
            assert!(
                t["result"]["session_id"].is_string(),
                "{id}: {}",
                t["result"]
            );
        }
        // Every attempt left its three recordings, and log_file points at the last one.
        let attempts = t["attempts"].as_u64().unwrap_or(0);
        for n in 1..=attempts {
            for ext in ["log", "cast", "json"] {
                let p = dir.path().join(format!("runs/{id}/attempt_{n}.{ext}"));
                assert!(p.is_file(), "{id}: missing {}", p.display());
            }
        }
        if attempts > 0 {
            assert_eq!(
                t["result"]["log_file"],
                format!("runs/{id}/attempt_{attempts}.log"),
                "{id}"
            );
        }
    }
    // Key order and fields herd does not know are kept.
    let first = doc["tasks"][0].as_object().unwrap();
    let keys: Vec<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(
        &keys[..5],
        ["task_id", "agent", "inputs", "prompt_template", "expect"]
    );
    assert_eq!(
        doc["description"]
            .as_str()
            .map(|d| d.starts_with("A demo batch")),
        Some(true)
    );
    // The flaky task was retried: attempt 1 failed_process, attempt 2 completed.
    let flaky = task(&doc, "flaky-network-005");
    assert_eq!(flaky["attempts"], 2);
    let first_attempt = read_json(&dir.path().join("runs/flaky-network-005/attempt_1.json"));
    assert_eq!(first_attempt["failure_type"], "failed_process");
    // Automatic answers are counted per key and logged with time and rule.
    let allowed = task(&doc, "always-allow-003");
    let inputs = allowed["result"]["auto_inputs"].as_array().unwrap();
    assert!(
        inputs.iter().any(|i| i["key"] == "1" && i["count"] == 1),
        "{inputs:?}"
    );
    assert!(
        inputs.iter().any(|i| i["key"] == "p" && i["count"] == 1),
        "{inputs:?}"
    );
    let facts = read_json(&dir.path().join("runs/always-allow-003/attempt_1.json"));
    assert_eq!(facts["auto_inputs"].as_array().unwrap().len(), 2);
    assert!(facts["auto_inputs"][0]["at_sec"].as_f64().is_some());
    // The cast is asciicast v2 with output, input and marker events.
    let cast =
        std::fs::read_to_string(dir.path().join("runs/fix-issue-142/attempt_1.cast")).unwrap();
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        (
            header["version"].as_u64(),
            header["width"].as_u64(),
            header["height"].as_u64()
        ),
        (Some(2), Some(120), Some(40))
    );
    let kinds: Vec<String> = lines
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()[1]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for kind in ["o", "i", "m"] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} event");
    }
    no_agents_under(dir.path());
}

fn write_tasks(dir: &Path, tasks: &str) -> PathBuf {
    let path = dir.join("tasks.json");
    std::fs::write(
        &path,
        format!("{{\"run_id\": \"t\", \"tasks\": [{tasks}]}}"),
    )
    .unwrap();
    path
}

fn sim_task(id: &str, scenario: &str, extra: &str) -> String {
    format!(
        r#"{{"task_id": "{id}", "agent": "sim", "inputs": {{"scenario": "{scenario}"}}, "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{{task_id}}"{extra}}}"#
    )
}

fn spawn_herd(tasks: &Path) -> Child {
    herd()
        .args(["run", "--headless", "--tasks"])
        .arg(tasks)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn status_of(tasks: &Path, id: &str) -> String {
    std::fs::read_to_string(tasks)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .map(|doc| {
            task(&doc, id)["status"]
                .as_str()
                .unwrap_or("pending")
                .to_string()
        })
        .unwrap_or_default()
}

#[test]
fn a_killed_batch_resumes_without_rerunning_completed_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(
        dir.path(),
        &[
            sim_task("quick", "plain_success", ""),
            sim_task("slow", "demo_slow", ""),
        ]
        .join(","),
    );
    let mut child = spawn_herd(&tasks);
    wait_until(
        "quick completed while slow runs",
        Duration::from_secs(30),
        || status_of(&tasks, "quick") == "completed" && status_of(&tasks, "slow") == "running",
        || std::fs::read_to_string(&tasks).unwrap_or_default(),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("slow  attempt 1 was interrupted"),
        "{stdout}"
    );
    let doc = read_json(&tasks);
    assert_eq!(
        task(&doc, "quick")["attempts"],
        1,
        "completed tasks are never re-run"
    );
    assert_eq!(task(&doc, "slow")["status"], "completed");
    assert_eq!(task(&doc, "slow")["attempts"], 2);
    no_agents_under(dir.path());
}

#[test]
fn a_second_herd_on_the_same_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(dir.path(), &sim_task("h", "hang", r#", "timeout_sec": 30"#));
    let mut first = spawn_herd(&tasks);
    wait_until(
        "the first herd to start its agent",
        Duration::from_secs(20),
        || status_of(&tasks, "h") == "running",
        String::new,
    );
    let before = std::fs::read(&tasks).unwrap();
    let second = run_headless(&tasks, &[]);
    assert_eq!(second.status.code(), Some(2), "{}", describe(&second));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("in use by another herd (pid"), "{stderr}");
    assert_eq!(std::fs::read(&tasks).unwrap(), before);
    // Ctrl-C: the running task goes back to retryable and herd exits 130.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(status_of(&tasks, "h"), "retryable");
    no_agents_under(dir.path());
}

#[test]
fn a_broken_file_is_refused_and_left_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.json");
    let text = "{\"tasks\": [\n  {\"task_id\": \"a\", \"agent\": \"sim\", \"prompt_template\": \"x\"},\n  {\"task_id\": \"a\", \"agent\": \"sim\"}\n]}\n";
    std::fs::write(&tasks, text).unwrap();
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(&tasks).unwrap(), text);
    assert!(!dir.path().join("runs").exists());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = tasks.display().to_string();
    assert!(stderr.contains(&format!("{file}:3:")), "{stderr}");
    let malformed = "{\"tasks\": [\n  {\"task_id\": \"a\",,}\n]}";
    std::fs::write(&tasks, malformed).unwrap();
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("{file}:2:")),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_to_string(&tasks).unwrap(), malformed);
}

#[test]
fn validate_lists_every_problem_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.json");
    let text = r#"{"tasks": [
  {"task_id": "a", "agent": "nobody", "prompt_template": "x"},
  {"task_id": "b", "agent": "sim", "prompt_template": "Use {missing}"},
  {"task_id": "c", "agent": "sim", "inputs": {"scenario": "success"}, "prompt_template": "x", "cwd": "no/such/dir"},
  {"task_id": "d", "agent": "generic", "prompt_template": "x", "command": ["not-installed-anywhere"]}
]}"#;
    std::fs::write(&tasks, text).unwrap();
    let out = herd()
        .args(["validate", "--tasks"])
        .arg(&tasks)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = tasks.display().to_string();
    for (line, needle) in [
        (2, "agent \"nobody\" is not a known profile"),
        (3, "no value for {missing}"),
        (4, "does not exist"),
        (5, "command \"not-installed-anywhere\" is not installed"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("{file}:{line}:")) && l.contains(needle)),
            "line {line}: {needle}\n{stderr}"
        );
    }
    // Run fails those tasks as failed_config and runs nothing else into the ground.
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let doc = read_json(&tasks);
    for id in ["a", "b", "c", "d"] {
        assert_eq!(
            task(&doc, id)["result"]["failure_type"],
            "failed_config",
            "{id}"
        );
        assert_eq!(task(&doc, id)["status"], "failed", "{id}");
    }
}

#[test]
fn terminal_queries_are_answered_and_floods_do_not_hide_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(
        dir.path(),
        &[
            sim_task("q", "queries", r#", "timeout_sec": 30"#),
            sim_task("f", "flood", r#", "timeout_sec": 60"#),
        ]
        .join(","),
    );
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let log = std::fs::read(dir.path().join("runs/f/attempt_1.log")).unwrap();
    assert!(
        log.len() > 4_000_000,
        "the .log keeps every byte: {}",
        log.len()
    );
}

#[test]
fn only_runs_the_named_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(
        dir.path(),
        &[
            sim_task("one", "plain_success", ""),
            sim_task("two", "plain_success", ""),
        ]
        .join(","),
    );
    let out = run_headless(&tasks, &["--only", "two"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc = read_json(&tasks);
    assert_eq!(task(&doc, "one").get("status"), None, "untouched");
    assert_eq!(task(&doc, "two")["status"], "completed");
    let out = run_headless(&tasks, &["--only", "three"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_retry_time_is_written_and_a_resumed_batch_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(dir.path(), &sim_task("c", "crash", r#", "max_retries": 5"#));
    let mut child = spawn_herd(&tasks);
    wait_until(
        "the first attempt to fail and wait for its retry",
        Duration::from_secs(20),
        || status_of(&tasks, "c") == "retryable",
        || std::fs::read_to_string(&tasks).unwrap_or_default(),
    );
    let doc = read_json(&tasks);
    let retry_at = task(&doc, "c")["retry_at"].as_str().unwrap().to_string();
    assert!(
        retry_at.ends_with('Z') && retry_at.len() == 20,
        "{retry_at}"
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    child.wait().unwrap();

    // A retry time 3 s ahead is honoured by the next run.
    let text = std::fs::read_to_string(&tasks).unwrap();
    let later = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3)).to_string();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["tasks"][0]["retry_at"] = Value::String(later);
    doc["tasks"][0]["inputs"]["scenario"] = Value::String("plain_success".into());
    std::fs::write(&tasks, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let started = Instant::now();
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "started before retry_at"
    );
    let doc = read_json(&tasks);
    assert_eq!(task(&doc, "c")["status"], "completed");
    assert_eq!(
        task(&doc, "c").get("retry_at"),
        None,
        "cleared once the attempt starts"
    );
    no_agents_under(dir.path());
}

#[test]
fn a_retry_is_told_what_failed_last_time() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("compile_error.toml");
    std::fs::write(
        &scenario,
        r#"description = "a compiler error on attempt 1, fixed on attempt 2"
[[step]]
line = "   Compiling demo v0.1.0"
[[step]]
line = "error[E0308]: mismatched types"
when_attempt_below = 2
[[step]]
line = " --> src/main.rs:4:18"
when_attempt_below = 2
[[step]]
line = "  |     let n: u32 = \"four\";"
when_attempt_below = 2
[[step]]
line = "  |                  ^^^^^^ expected `u32`, found `&str`"
when_attempt_below = 2
[[step]]
line = "error: could not compile `demo` (bin \"demo\") due to 1 previous error"
when_attempt_below = 2
[[step]]
exit = 101
when_attempt_below = 2
[[step]]
marker = "plain"
[[step]]
exit = 0
"#,
    )
    .unwrap();
    // A scenario path works wherever a built-in scenario name does.
    let t = sim_task(
        "c",
        &scenario.display().to_string(),
        r#", "max_retries": 1"#,
    );
    let tasks = write_tasks(dir.path(), &t);
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let errors = read_json(&dir.path().join("runs/c/attempt_1.errors.json"));
    let lines = errors["lines"].as_array().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l["category"] == "syntax" || l["category"] == "build"),
        "{errors}"
    );
    assert!(
        errors["aggregate_score"].as_u64().unwrap() >= 60,
        "{errors}"
    );
    let doc = read_json(&tasks);
    let summary = task(&doc, "c")["result"].get("failure_summary");
    assert_eq!(summary, None, "a completed attempt has no failure summary");
    let second = read_json(&dir.path().join("runs/c/attempt_2.json"));
    let prompt = second["argv"][4].as_str().unwrap();
    assert!(
        prompt.starts_with(
            "Do it. When complete, print exactly: TASK_COMPLETE:c\n\nThe previous attempt failed"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("E0308") && prompt.contains("src/main.rs:4:18"),
        "{prompt}"
    );
    no_agents_under(dir.path());
}

#[test]
fn a_quota_failure_waits_for_its_reset_and_holds_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("limited.toml");
    std::fs::write(
        &scenario,
        r#"description = "rate limited on attempt 1, fine after"
[[step]]
line = "Rate limit exceeded. Try again in 3 seconds."
when_attempt_below = 2
[[step]]
exit = 1
when_attempt_below = 2
[[step]]
marker = "plain"
[[step]]
exit = 0
"#,
    )
    .unwrap();
    let waits = r#", "wait_for_quota_reset": true, "max_retries": 0"#;
    let first = sim_task("limited", &scenario.display().to_string(), waits);
    let tasks = write_tasks(
        dir.path(),
        &[first, sim_task("same-profile", "plain_success", "")].join(","),
    );
    let started = Instant::now();
    let out = herd()
        .args(["run", "--headless", "--concurrency", "1", "--tasks"])
        .arg(&tasks)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "the reset was not waited for"
    );
    let doc = read_json(&tasks);
    assert_eq!(
        task(&doc, "limited")["attempts"],
        2,
        "max_retries 0, yet the quota wait retries"
    );
    assert_eq!(task(&doc, "limited")["status"], "completed");
    // The other task of the same profile waited for the reset too, instead of starting into the
    // same wall as soon as the slot was free.
    let when = |path: &str, field: &str| {
        let facts = read_json(&dir.path().join(path));
        let text = facts[field].as_str().unwrap().to_string();
        text.parse::<jiff::Timestamp>().unwrap()
    };
    let failed = when("runs/limited/attempt_1.json", "ended_at");
    let other = when("runs/same-profile/attempt_1.json", "started_at");
    assert!(
        other.duration_since(failed) >= jiff::SignedDuration::from_secs(2),
        "{failed} -> {other}\n{}",
        describe(&out)
    );
}

#[test]
fn worktree_tasks_leave_the_right_trees_behind() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    std::fs::write(repo.join("README"), "hi\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "first"]);
    let clean = sim_task(
        "clean",
        "plain_success",
        r#", "worktree": true, "cwd": "repo""#,
    );
    let dirty = r#"{"task_id": "dirty", "agent": "generic", "worktree": true, "cwd": "repo",
        "prompt_template": "write a file",
        "command": ["sh", "-c", "echo change > made.txt; echo TASK_COMPLETE:dirty"]}"#;
    let tasks = write_tasks(dir.path(), &[clean, dirty.to_string()].join(","));
    let out = run_headless(&tasks, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc = read_json(&tasks);
    let clean_wt = repo.join(".herd/worktrees/clean");
    let dirty_wt = repo.join(".herd/worktrees/dirty");
    assert_eq!(
        task(&doc, "clean")["result"]["worktree"]["state"],
        "removed"
    );
    assert!(!clean_wt.exists());
    assert_eq!(
        task(&doc, "dirty")["result"]["worktree"]["state"],
        "kept: it has changes"
    );
    assert_eq!(
        task(&doc, "dirty")["result"]["worktree"]["changed_files"][0],
        "made.txt"
    );
    assert!(dirty_wt.join("made.txt").is_file());
    assert!(
        !repo.join("made.txt").exists(),
        "the task's own checkout is untouched"
    );
}

#[test]
fn a_quota_failure_moves_to_the_next_account_and_keeps_secrets_out() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("limited.toml");
    std::fs::write(
        &scenario,
        "description = \"rate limited on attempt 1\"\n[[step]]\nline = \"Rate limit exceeded. Try again in 40 seconds.\"\nwhen_attempt_below = 2\n[[step]]\nexit = 1\nwhen_attempt_below = 2\n[[step]]\nmarker = \"plain\"\n[[step]]\nexit = 0\n",
    )
    .unwrap();
    let profiles = dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        r#"[profiles.rotating]
command = ["herd", "sim", "{scenario}", "--prompt", "{rendered_prompt}"]
quota = ['(?i)rate limit exceeded']
[[profiles.rotating.accounts]]
name = "first"
env = { SIM_API_KEY = "SECRET-first-0001" }
[[profiles.rotating.accounts]]
name = "second"
env = { SIM_API_KEY = "SECRET-second-0002" }
"#,
    )
    .unwrap();
    let t = format!(
        r#"{{"task_id": "r", "agent": "rotating", "max_retries": 0, "inputs": {{"scenario": "{}"}}, "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{{task_id}}"}}"#,
        scenario.display()
    );
    let tasks = write_tasks(dir.path(), &t);
    let started = Instant::now();
    let out = run_headless(&tasks, &["--profiles", profiles.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "it waited for the reset instead of switching"
    );
    let doc = read_json(&tasks);
    assert_eq!(task(&doc, "r")["attempts"], 2);
    assert_eq!(task(&doc, "r")["result"]["account"], "second");
    let first = read_json(&dir.path().join("runs/r/attempt_1.json"));
    assert_eq!(first["account"], "first");
    assert_eq!(first["failure_type"], "failed_quota");
    // The secrets reached the agent only: not the tasks file, not the recordings.
    let mut written = vec![std::fs::read_to_string(&tasks).unwrap()];
    for entry in std::fs::read_dir(dir.path().join("runs/r")).unwrap() {
        written.push(
            String::from_utf8_lossy(&std::fs::read(entry.unwrap().path()).unwrap()).into_owned(),
        );
    }
    assert!(
        written.iter().all(|w| !w.contains("SECRET-")),
        "a secret was written"
    );
}

/// A profile `hooked` whose agent, in place of Claude Code, sends herd's hook `payload` (a
/// hook input JSON) through `herd hook` as Claude would, then waits, writing nothing on its
/// screen. Returns the profiles file.
fn hooked_profile(dir: &Path, payload: &str) -> PathBuf {
    let script = dir.join("hooked.sh");
    std::fs::write(
        &script,
        format!(
            "printf '%s' '{payload}' | '{}' hook >/dev/null\nsleep 30\n",
            env!("CARGO_BIN_EXE_herd")
        ),
    )
    .unwrap();
    let profiles = dir.join("profiles.toml");
    std::fs::write(
        &profiles,
        format!(
            "[profiles.hooked]\ncommand = [\"sh\", \"{}\"]\nhooks = \"claude\"\n",
            script.display()
        ),
    )
    .unwrap();
    profiles
}

#[test]
fn a_stop_failure_that_says_when_the_limit_resets_sets_the_quota_wait() {
    let dir = tempfile::tempdir().unwrap();
    // A subscription's spent limit, as Claude Code words it: the reset as a unix time. The
    // screen says nothing: only the hook's payload tells when.
    let profiles = hooked_profile(
        dir.path(),
        r#"{"hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": "Claude AI usage limit reached|1893553445"}"#,
    );
    let tasks = write_tasks(
        dir.path(),
        r#"{"task_id": "q", "agent": "hooked", "prompt_template": "p", "wait_for_quota_reset": true, "max_retries": 0}"#,
    );
    let child = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&tasks)
        .args(["--profiles", profiles.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "the attempt to fail on its quota and wait",
        Duration::from_secs(20),
        || status_of(&tasks, "q") == "retryable",
        || std::fs::read_to_string(&tasks).unwrap_or_default(),
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let doc = read_json(&tasks);
    let q = task(&doc, "q");
    assert_eq!(
        q["result"]["failure_type"],
        "failed_quota",
        "{doc}\n{}",
        describe(&out)
    );
    assert_eq!(
        q["retry_at"],
        "2030-01-02T03:04:05Z",
        "{doc}\n{}",
        describe(&out)
    );
    no_agents_under(dir.path());
}
