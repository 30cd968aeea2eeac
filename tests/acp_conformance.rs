//! ACP sessions end to end: the real Gemini CLI (`gemini --acp`), Claude Code (through
//! `claude-agent-acp`) and Codex (through `codex-acp`), pinned in
//! `tests/conformance/package.json`, run through herd's built-in `*-acp` profiles, headless,
//! against the conformance suite's mock model API; and a scripted fake agent (this test binary
//! under `HERD_FAKE_ACP`) for what a real agent rarely does: garbage, huge lines, unknown
//! requests, a dangerous permission request, no answer to `initialize`, an early exit.
//!
//! Each task must end with the verdict a careful person would conclude, leave no process
//! behind, and keep its session in `attempt_1.acp.jsonl`. `HERD_ACP_ONLY=<substring>` runs a
//! subset of the real-adapter cases.
#![allow(clippy::unwrap_used)]

#[path = "acp/fake_agent.rs"]
mod fake_agent;
#[allow(dead_code)]
#[path = "conformance/mock_api/mod.rs"]
mod mock_api;
#[allow(dead_code)]
#[path = "conformance/setup.rs"]
mod setup;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mock_api::{MockApi, Scenario};
use serde_json::{Value, json};
use setup::Cli;

/// Not a test: the entry point through which this binary plays the fake ACP agent
/// (`HERD_FAKE_ACP=<script>`); without the variable it returns at once.
#[test]
fn fake_acp_agent_entry_point() {
    if let Ok(script) = std::env::var("HERD_FAKE_ACP") {
        fake_agent::run(&script);
    }
}

const PROMPT: &str = "Create the file conformance_tool_ran.txt with a shell command, then print \
                      exactly: TASK_COMPLETE:{task_id}";

/// Runs the tasks headless in one batch; returns the tasks file after the run and herd's output.
fn run_batch(dir: &Path, tasks: Vec<Value>, path: &str, concurrency: usize) -> (Value, String) {
    let tasks_file = dir.join("tasks.json");
    let doc = json!({"run_id": "acp", "tasks": tasks});
    std::fs::write(&tasks_file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args([
            "run",
            "--headless",
            "--concurrency",
            &concurrency.to_string(),
            "--tasks",
        ])
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

fn task<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["tasks"]
        .as_array()
        .and_then(|tasks| tasks.iter().find(|t| t["task_id"] == id))
        .unwrap_or(&Value::Null)
}

fn verdict(task: &Value) -> String {
    match task["status"].as_str() {
        Some("completed") => "completed".into(),
        _ => task["result"]["failure_type"]
            .as_str()
            .map_or_else(|| format!("status {}", task["status"]), str::to_string),
    }
}

/// The time of the recording's last event: how long the attempt took.
fn seconds(dir: &Path, id: &str) -> f64 {
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

fn acp_log(dir: &Path, id: &str) -> String {
    std::fs::read_to_string(dir.join(format!("runs/{id}/attempt_1.acp.jsonl"))).unwrap_or_default()
}

/// Processes whose environment names `needle` (a task's own folder), killed after a short wait.
fn leftovers(needle: &str) -> Vec<String> {
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
            if String::from_utf8_lossy(&environ).contains(needle) {
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
struct Case {
    id: String,
    task: Value,
    expect: &'static str,
    /// Words the evidence must contain.
    evidence: &'static str,
    /// Whether the mock's tool must have run (Some(true)) or must not have (Some(false)).
    tool_ran: Option<bool>,
}

fn check(dir: &Path, doc: &Value, cases: &[Case], said: &str) {
    let mut problems = Vec::new();
    println!(
        "\n{:<34} {:<26} {:<26} {:>6} {:>5}",
        "task", "expected", "verdict", "secs", "procs"
    );
    for case in cases {
        let task = task(doc, &case.id);
        let got = verdict(task);
        let evidence = task["result"]["failure_evidence"].as_str().unwrap_or("");
        let left = leftovers(&format!("/{}", case.id));
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

#[test]
fn hostile_and_scripted_acp_agents_end_with_clear_evidence() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-fake-")
        .tempdir()
        .unwrap();
    let me = std::env::current_exe().unwrap().display().to_string();
    let case = |script: &str, expect, evidence, policy: Value| {
        let id = format!("fake-{script}");
        let cwd = dir.path().join("work").join(&id);
        std::fs::create_dir_all(&cwd).unwrap();
        let command = if script == "missing" {
            json!(["/nonexistent/acp-agent"])
        } else {
            json!([me, "fake_acp_agent_entry_point", "--exact", "--nocapture"])
        };
        Case {
            task: json!({
                "task_id": id, "agent": "gemini-acp", "command": command,
                "cwd": cwd.display().to_string(), "timeout_sec": 60, "max_retries": 0,
                "permission_wait_sec": 3, "permission_policy": policy,
                "env": {"HERD_FAKE_ACP": script, "HERD_ACP_INIT_TIMEOUT": "3"},
                "prompt_template": "Say done: TASK_COMPLETE:{task_id}",
            }),
            id,
            expect,
            evidence,
            tool_ran: None,
        }
    };
    let on = json!({"auto_press_1": true});
    let cases = vec![
        case("text", "completed", "", on.clone()),
        case("hostile", "completed", "", on.clone()),
        case(
            "guard_refuses",
            "failed_permission_blocked",
            "rm -rf ~",
            on.clone(),
        ),
        case(
            "never_initialize",
            "failed_process",
            "did not answer initialize",
            on.clone(),
        ),
        case(
            "exits_early",
            "failed_process",
            "cannot find its model configuration",
            on.clone(),
        ),
        case("missing", "failed_config", "cannot start the ACP agent", on),
        // Nothing allowed: the request waits for an operator, who is not there (headless).
        case(
            "asks",
            "failed_permission_blocked",
            "Bash(npm test)",
            json!({}),
        ),
    ];
    let tasks = cases.iter().map(|c| c.task.clone()).collect();
    let path = std::env::var("PATH").unwrap_or_default();
    let (doc, said) = run_batch(dir.path(), tasks, &path, 6);
    check(dir.path(), &doc, &cases, &said);
    // The hostile agent's garbage, its huge line and its unknown request are on record.
    let log = acp_log(dir.path(), "fake-hostile");
    for needle in [
        "\"garbage\"",
        "\"oversized\"",
        "fs/read_text_file",
        "-32601",
    ] {
        assert!(log.contains(needle), "{needle} not in the acp log:\n{log}");
    }
    // The refused request is answered reject_once, with the guard's reason, in the audit.
    let log = acp_log(dir.path(), "fake-guard_refuses");
    assert!(log.contains("\"option\":\"reject_once\""), "{log}");
}

fn adapter_cases(dir: &Path, api: &MockApi) -> Vec<Case> {
    let only = std::env::var("HERD_ACP_ONLY").unwrap_or_default();
    let mut cases = Vec::new();
    for (cli, profile) in [
        (Cli::Gemini, "gemini-acp"),
        (Cli::Claude, "claude-acp"),
        (Cli::Codex, "codex-acp"),
    ] {
        for (name, scenario, expect, evidence, tool_ran) in [
            ("text", Scenario::Text, "completed", "", None),
            ("tool", Scenario::Tool, "completed", "", Some(true)),
            (
                "tool-denied",
                Scenario::Tool,
                "failed_permission_blocked",
                "touch",
                Some(false),
            ),
            ("auth", Scenario::Auth, "failed_auth", "", None),
            ("quota", Scenario::Quota, "failed_quota", "", None),
            ("hang", Scenario::Hang, "failed_timeout", "", None),
            (
                "no-marker",
                Scenario::NoMarker,
                "failed_incomplete",
                "",
                None,
            ),
        ] {
            let id = format!("{profile}-{name}");
            if !only.is_empty() && !only.split(',').any(|o| id.contains(o)) {
                continue;
            }
            let home = dir.join("homes").join(&id);
            let cwd = dir.join("work").join(&id);
            let base_url = api.base_url(&id, scenario);
            let env = setup::prepare(cli, &home, &cwd, &base_url, scenario, true).unwrap();
            let git = Command::new("git")
                .args(["init", "-q"])
                .current_dir(&cwd)
                .status();
            assert!(git.is_ok_and(|s| s.success()));
            let mut env: serde_json::Map<String, Value> = env
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            if cli == Cli::Claude && is_root() {
                // Claude Code refuses to start its SDK session as root outside a sandbox
                // (claude-agent-acp's session/new fails: "Query closed before response
                // received"); CI runs as a user, this machine may not.
                env.insert("IS_SANDBOX".into(), "1".into());
            }
            let mut task = json!({
                "task_id": id, "agent": profile, "cwd": cwd.display().to_string(), "env": env,
                "timeout_sec": if scenario == Scenario::Hang { 30 } else { 120 },
                "max_retries": 0, "permission_wait_sec": 10, "prompt_template": PROMPT,
                "permission_policy": {"auto_press_1": true},
            });
            if name == "tool-denied" {
                task["permission_policy"]["deny"] = json!(["Bash(touch:*)"]);
            }
            cases.push(Case {
                id,
                task,
                expect,
                evidence,
                tool_ran,
            });
        }
    }
    cases
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

#[test]
fn real_agents_over_acp_end_as_a_careful_person_concludes() {
    let bin = setup::cli_bin_dir();
    for adapter in ["claude-agent-acp", "codex-acp"] {
        assert!(
            bin.join(adapter).exists(),
            "{adapter} is not installed in {}; run scripts/test (or `npm ci` in tests/conformance)",
            bin.display()
        );
    }
    let api = MockApi::start().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-")
        .tempdir()
        .unwrap();
    let cases = adapter_cases(dir.path(), &api);
    if cases.is_empty() {
        return;
    }
    let tasks = cases.iter().map(|c| c.task.clone()).collect();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let concurrency = std::env::var("HERD_ACP_CONCURRENCY")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(7);
    let started = Instant::now();
    let (doc, said) = run_batch(dir.path(), tasks, &path, concurrency);
    println!(
        "acp conformance: {} tasks, concurrency {concurrency}, {:.0} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    if std::env::var_os("HERD_ACP_KEEP").is_some() {
        println!("kept: {}", dir.path().display());
        let kept = dir.keep();
        check(&kept, &doc, &cases, &said);
        return;
    }
    check(dir.path(), &doc, &cases, &said);
}
