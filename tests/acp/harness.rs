//! What the ACP end-to-end tests share: running a tasks file headless through the real binary,
//! and checking each task's verdict, evidence, approvals, the tool's file and the processes
//! left, with a table of what was measured. A real agent's task is `real_tasks.rs`'s.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{RequestPermissionRequest, SessionUpdate};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::mock_api::{self, MockApi};

/// Runs the tasks headless in one batch; returns the tasks file after the run and herd's output.
pub(crate) fn run_batch(
    dir: &Path,
    tasks: Vec<Value>,
    path: &str,
    concurrency: usize,
) -> (Value, String) {
    run_batch_with(dir, tasks, path, concurrency, &[])
}

/// `run_batch` with more arguments for `herd run` (`--profiles FILE`).
pub(crate) fn run_batch_with(
    dir: &Path,
    tasks: Vec<Value>,
    path: &str,
    concurrency: usize,
    more: &[&std::ffi::OsStr],
) -> (Value, String) {
    let tasks_file = dir.join("tasks.json");
    let doc = json!({"run_id": "acp", "tasks": tasks});
    std::fs::write(&tasks_file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args([
            "run",
            "--headless",
            "--concurrency",
            &concurrency.to_string(),
        ])
        .args(more)
        .arg("--tasks")
        .arg(&tasks_file)
        .env("PATH", path)
        .output()
        .unwrap();
    let said = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = serde_json::from_str(&std::fs::read_to_string(&tasks_file).unwrap()).unwrap();
    (doc, said)
}

pub(crate) fn task<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["tasks"]
        .as_array()
        .and_then(|tasks| tasks.iter().find(|t| t["task_id"] == id))
        .unwrap_or(&Value::Null)
}

pub(crate) fn verdict(task: &Value) -> String {
    match task["status"].as_str() {
        Some("completed") => "completed".into(),
        _ => task["result"]["failure_type"]
            .as_str()
            .map_or_else(|| format!("status {}", task["status"]), str::to_string),
    }
}

/// The time of the recording's last event: how long the attempt took.
pub(crate) fn seconds(dir: &Path, id: &str) -> f64 {
    let cast = dir.join(format!("runs/{id}/attempt_1.cast"));
    std::fs::read_to_string(cast)
        .ok()
        .and_then(|text| {
            text.lines()
                .rev()
                .find_map(|line| serde_json::from_str::<Value>(line).ok()?[0].as_f64())
        })
        .unwrap_or(f64::NAN)
}

/// The `session/update` kinds herd's transcript shows; the others are skipped unread.
const SHOWN_UPDATES: &[&str] = &[
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
];

/// What the agents sent, read with the schema crate's types as herd reads it: every
/// `session/update`'s `update` of a kind herd shows as `SessionUpdate`. Returns how many were
/// read and each the crate rejects, with its reason. Updates herd skips that the crate would
/// reject (claude-agent-acp's `usage_update` with `used: null`) and permission requests (which
/// herd reads as raw JSON) are counted apart, for the record.
pub(crate) fn wire_check(dir: &Path, cases: &[Case]) -> (usize, Vec<String>) {
    let (mut read, mut rejected, mut skipped_odd) = (0, Vec::new(), Vec::new());
    let (mut permissions, mut odd_permissions) = (0, 0);
    for case in cases {
        for line in acp_log(dir, &case.id).lines() {
            let Ok(record) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let msg = &record["msg"];
            if record["dir"] != "in" {
                continue;
            }
            if msg["method"] == "session/update" {
                let update = &msg["params"]["update"];
                let shown = update["sessionUpdate"]
                    .as_str()
                    .is_some_and(|kind| SHOWN_UPDATES.contains(&kind));
                read += usize::from(shown);
                if let Err(error) = SessionUpdate::deserialize(update) {
                    let problem = format!("{}: {error}: {update}", case.id);
                    if shown {
                        rejected.push(problem);
                    } else {
                        skipped_odd.push(problem);
                    }
                }
            } else if msg["method"] == "session/request_permission" {
                permissions += 1;
                if RequestPermissionRequest::deserialize(&msg["params"]).is_err() {
                    odd_permissions += 1;
                }
            }
        }
    }
    println!(
        "schema crate: {read} shown session/update read, {} rejected; {} skipped ones it \
         would reject; {permissions} permission requests, {odd_permissions} it would reject",
        rejected.len(),
        skipped_odd.len()
    );
    for problem in skipped_odd.iter().take(3) {
        println!("    skipped: {problem}");
    }
    (read, rejected)
}

/// Each task of a profile in `modes` ran in that mode, set by herd (`session/set_mode`), as its
/// attempt's facts say (`stream.acp_mode`). Prints what the agent opened the session in and
/// what it ran in; returns the tasks that did not run in herd's mode.
pub(crate) fn modes_check(dir: &Path, cases: &[Case], modes: &[(&str, &str)]) -> Vec<String> {
    let mut unset = Vec::new();
    for case in cases {
        let profile = case.task["agent"].as_str().unwrap_or_default();
        let Some((_, profiles_mode)) = modes.iter().find(|(p, _)| *p == profile) else {
            continue;
        };
        // A task's own `acp_mode` wins over the profile's.
        let wanted = case.task["acp_mode"].as_str().unwrap_or(profiles_mode);
        let facts = dir.join(format!("runs/{}/attempt_1.json", case.id));
        let facts: Value = std::fs::read_to_string(&facts)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        let mode = &facts["stream"]["acp_mode"];
        println!(
            "{:<40} mode: opened in {}, ran in {} (set by herd: {})",
            case.id, mode["started_in"], mode["current"], mode["set_by_herd"]
        );
        let took = mode["current"] == *wanted && mode["set_by_herd"] == true;
        // A session already in herd's mode needs no session/set_mode.
        let already = mode["started_in"] == *wanted && mode["current"] == *wanted;
        if !took && !already {
            unset.push(format!("{}: not run in mode {wanted}: {mode}", case.id));
        }
    }
    unset
}

pub(crate) fn acp_log(dir: &Path, id: &str) -> String {
    std::fs::read_to_string(dir.join(format!("runs/{id}/attempt_1.acp.jsonl"))).unwrap_or_default()
}

/// Processes whose environment names a task's own folder (`<dir>/…/<id>`: this run's temporary
/// folder, so another run's processes with the same task id are never touched), killed after a
/// short wait.
pub(crate) fn leftovers(dir: &Path, id: &str) -> Vec<String> {
    let (root, name) = (dir.display().to_string(), format!("/{id}"));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let environ = String::from_utf8_lossy(&environ);
            if environ.contains(&root) && environ.contains(&name) {
                let cmd = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
                found.push((pid, cmd.replace('\0', " ")));
            }
        }
        if found.is_empty() || Instant::now() >= deadline {
            for (pid, _) in &found {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            return found
                .into_iter()
                .map(|(p, c)| format!("{p}: {c}"))
                .collect();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One case: the task, what a careful person concludes, and what else must hold.
pub(crate) struct Case {
    pub(crate) id: String,
    pub(crate) task: Value,
    pub(crate) expect: &'static str,
    /// Words the evidence must contain.
    pub(crate) evidence: &'static str,
    /// Whether the mock's tool must have run (Some(true)) or must not have (Some(false)).
    pub(crate) tool_ran: Option<bool>,
    /// An answer `result.approvals` must hold: (decision, option, words of the request).
    pub(crate) approval: Option<(&'static str, &'static str, &'static str)>,
}

pub(crate) fn check(dir: &Path, doc: &Value, cases: &[Case], said: &str) {
    let mut problems = Vec::new();
    println!(
        "\n{:<34} {:<26} {:<26} {:>6} {:>5}",
        "task", "expected", "verdict", "secs", "procs"
    );
    for case in cases {
        let task = task(doc, &case.id);
        let got = verdict(task);
        let evidence = task["result"]["failure_evidence"].as_str().unwrap_or("");
        let left = leftovers(dir, &case.id);
        let ran = dir
            .join("work")
            .join(&case.id)
            .join(mock_api::TOOL_FILE)
            .exists();
        println!(
            "{:<34} {:<26} {:<26} {:>6.1} {:>5}",
            case.id,
            case.expect,
            got,
            seconds(dir, &case.id),
            left.len()
        );
        let log = acp_log(dir, &case.id);
        let mut wrong = Vec::new();
        if got != case.expect {
            wrong.push(format!("verdict {got}"));
        }
        if !evidence.contains(case.evidence) {
            wrong.push(format!("evidence {evidence:?} lacks {:?}", case.evidence));
        }
        if case.tool_ran.is_some_and(|want| want != ran) {
            wrong.push(format!("tool ran: {ran}"));
        }
        if !left.is_empty() {
            wrong.push(format!("processes left: {left:?}"));
        }
        if !evidence.is_empty() {
            println!("    evidence: {evidence}");
        }
        let approvals = task["result"]["approvals"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for a in &approvals {
            let field = |k: &str| a[k].as_str().unwrap_or("-").to_string();
            println!(
                "    approval: {} {} {} — {}: {}",
                field("by"),
                field("option"),
                field("request"),
                field("decision"),
                field("why")
            );
        }
        if let Some((decision, option, words)) = case.approval {
            let found = approvals.iter().any(|a| {
                a["decision"] == decision
                    && a["option"] == option
                    && a["request"].as_str().is_some_and(|r| r.contains(words))
                    && a["why"].as_str().is_some_and(|w| !w.is_empty())
            });
            if !found {
                wrong.push(format!(
                    "no {decision} / {option} answer to a request with {words:?} in result.approvals {approvals:?}"
                ));
            }
        }
        if !wrong.is_empty() {
            let tail: Vec<&str> = log.lines().rev().take(12).collect();
            problems.push(format!(
                "{}: {} (evidence: {evidence})\n  acp log tail:\n    {}",
                case.id,
                wrong.join("; "),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}\n\n{said}", problems.join("\n\n"));
}

/// Seconds from the mock API's first error answer to a task's attempt's end (its recording's last
/// event; the header's start is rounded down to whole seconds, so one is added: an upper bound),
/// or `None` when the API never answered it with an error.
pub(crate) fn seconds_after_first_error(dir: &Path, api: &MockApi, id: &str) -> Option<f64> {
    let at = api
        .requests()
        .into_iter()
        .find(|r| r.task_id == id && r.status >= 400)?
        .at
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let cast = std::fs::read_to_string(dir.join(format!("runs/{id}/attempt_1.cast"))).ok()?;
    let header: Value = serde_json::from_str(cast.lines().next()?).ok()?;
    Some(header["timestamp"].as_f64()? + 1.0 + seconds(dir, id) - at)
}

/// Auth, quota and overload never heal within one attempt: for each id, the verdict came within
/// `limit` seconds of the API's first error. Prints what it measured; returns what is late.
pub(crate) fn late_verdicts(dir: &Path, api: &MockApi, ids: &[&str], limit: f64) -> Vec<String> {
    let mut late = Vec::new();
    for id in ids {
        match seconds_after_first_error(dir, api, id) {
            Some(s) => {
                println!("{id:<40} verdict {s:>6.1} s after the first API error");
                if s > limit {
                    late.push(format!(
                        "{id}: verdict {s:.0} s after the API's first error (at most {limit:.0})"
                    ));
                }
            }
            None => late.push(format!("{id}: the API never answered it with an error")),
        }
    }
    late
}
