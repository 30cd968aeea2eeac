//! An agent of the ACP registry, run as a user runs it: `"agent": "acp:qwen-code"`, the
//! registry's profile with no profile of the user's, against the conformance suite's mock
//! model API (OpenAI Chat Completions with tool calls), through the same plan as the adapters
//! herd ships profiles for: text, a tool the task allows, a tool nothing allows, a dangerous
//! command, 401, 429, 503, a hang and a missing marker. Qwen Code opens its sessions in `auto`
//! (its own classifier approves); herd must set its manual mode and decide every tool call.
//!
//! The task's `command` runs the Qwen Code installed from `tests/conformance/registry` (the
//! registry's own pin is not served by the npm registry reachable here; `scripts/acp-registry
//! drift` says so); the rest is the registry profile's: its arguments, protocol and dialog rules.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "acp/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "conformance/mock_api/mod.rs"]
mod mock_api;

use std::path::{Path, PathBuf};

use harness::{Case, check, run_batch};
use mock_api::{MockApi, Scenario};
use serde_json::{Value, json};

const PROMPT: &str = "Create the file conformance_tool_ran.txt with a shell command.";

/// The Qwen Code of `tests/conformance/registry`, installed by `scripts/test`.
fn qwen() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/registry/node_modules/.bin/qwen");
    assert!(
        bin.exists(),
        "Qwen Code is not installed in {}; run scripts/test (or `npm ci` in tests/conformance/registry)",
        bin.display()
    );
    bin
}

/// The registry profile's arguments after its command (`npx --yes <package> <args…>`).
fn registry_args() -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["profiles", "acp:qwen-code"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("command "))
        .unwrap_or_else(|| panic!("no command in herd profiles acp:qwen-code:\n{text}"));
    let argv: Vec<String> =
        serde_json::from_str(line.trim_start()["command".len()..].trim()).unwrap();
    assert_eq!(argv[..2], ["npx", "--yes"], "{argv:?}");
    assert!(argv[2].starts_with("@qwen-code/qwen-code@"), "{argv:?}");
    argv[3..].to_vec()
}

/// One case of the plan: its name, the mock's scenario, the task's policy, the verdict a careful
/// person concludes, words of its evidence, and whether the tool must have run.
type Planned = (
    &'static str,
    Scenario,
    Value,
    &'static str,
    &'static str,
    Option<bool>,
);

fn case(dir: &Path, api: &MockApi, id: &str, scenario: Scenario, policy: Value) -> Value {
    let home = dir.join("homes").join(id);
    let cwd = dir.join("work").join(id);
    std::fs::create_dir_all(home.join(".qwen")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    // Qwen Code retries a rate limit ten times from 60 s on (half an hour) and says nothing to
    // its ACP client meanwhile: its retries are shortened, as the suite does for every CLI
    // that lets it.
    let settings =
        json!({"model": {"generationConfig": {"maxRetries": 0, "retryInitialDelayMs": 500}}});
    std::fs::write(home.join(".qwen/settings.json"), settings.to_string()).unwrap();
    let mut command = vec![qwen().display().to_string()];
    command.extend(registry_args());
    json!({
        "task_id": id, "agent": "acp:qwen-code", "command": command,
        "cwd": cwd.display().to_string(),
        "env": {
            "HOME": home.display().to_string(),
            "OPENAI_API_KEY": "sk-mock-conformance",
            "OPENAI_BASE_URL": api.base_url(id, scenario),
            "OPENAI_MODEL": "gpt-4o",
            "HERD_ACP_AUTH": "openai",
        },
        "timeout_sec": if scenario == Scenario::Hang { 30 } else { 90 },
        "max_retries": 0, "permission_wait_sec": 8, "prompt_template": PROMPT,
        "permission_policy": policy,
    })
}

#[test]
fn a_registry_agent_ends_each_task_as_a_careful_person_concludes() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-registry-")
        .tempdir()
        .unwrap();
    let api = MockApi::start().unwrap();
    let on = json!({"auto_press_1": true});
    let plan: [Planned; 9] = [
        ("text", Scenario::Text, on.clone(), "completed", "", None),
        (
            "tool",
            Scenario::Tool,
            on.clone(),
            "completed",
            "",
            Some(true),
        ),
        (
            "tool-unallowed",
            Scenario::Tool,
            json!({}),
            "failed_permission_blocked",
            "touch",
            Some(false),
        ),
        (
            "dangerous",
            Scenario::Dangerous,
            on.clone(),
            "failed_permission_blocked",
            "curl",
            Some(false),
        ),
        ("auth", Scenario::Auth, on.clone(), "failed_auth", "", None),
        (
            "quota",
            Scenario::Quota,
            on.clone(),
            "failed_quota",
            "",
            None,
        ),
        (
            "overloaded",
            Scenario::Overloaded,
            on.clone(),
            "failed_process",
            "",
            None,
        ),
        (
            "hang",
            Scenario::Hang,
            on.clone(),
            "failed_timeout",
            "",
            None,
        ),
        (
            "no-marker",
            Scenario::NoMarker,
            on,
            "failed_incomplete",
            "",
            None,
        ),
    ];
    let cases: Vec<Case> = plan
        .into_iter()
        .map(|(name, scenario, policy, expect, evidence, tool_ran)| {
            let id = format!("qwen-code-{name}");
            Case {
                task: case(dir.path(), &api, &id, scenario, policy),
                id,
                expect,
                evidence,
                tool_ran,
                approval: None,
            }
        })
        .collect();
    let tasks = cases.iter().map(|c| c.task.clone()).collect();
    let path = std::env::var("PATH").unwrap_or_default();
    let (doc, said) = run_batch(dir.path(), tasks, &path, 5);
    if std::env::var_os("HERD_ACP_KEEP").is_some() {
        println!("kept: {}", dir.keep().display());
        return;
    }
    check(dir.path(), &doc, &cases, &said);
}
