//! Agents of the ACP registry, run as a user runs them: `"agent": "acp:<id>"`, the registry's
//! profile with no profile of the user's, against the conformance suite's mock model API
//! (OpenAI Chat Completions with tool calls), through the same plan as the adapters herd ships
//! profiles for: text, a tool the task allows, a tool nothing allows, a dangerous command, 401,
//! 429, 503, a hang and a missing marker. Qwen Code opens its sessions in `auto` (its own
//! classifier approves): herd must set its manual mode and decide every tool call.
//!
//! Each task's `command` runs the agent installed from `tests/conformance/registry` (the
//! registry's own pins are not all served by the npm registry reachable here; `scripts/acp-registry
//! drift` says which); the rest is the registry profile's: its arguments, protocol and dialog
//! rules. The agents' own settings are what a user writes once: the model API to use, and
//! (OpenCode) its tools set to ask, where its default lets them run unasked.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "acp/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "conformance/mock_api/mod.rs"]
mod mock_api;

use std::path::{Path, PathBuf};

use harness::{Case, check, late_verdicts, run_batch};
use mock_api::{MockApi, Scenario};
use serde_json::{Value, json};

const PROMPT: &str = "Create the file conformance_tool_ran.txt with a shell command.";

/// A registry agent under test: its registry id, the program installed for it, and how its
/// config folder (HOME) points it at the mock model API.
struct Agent {
    id: &'static str,
    program: &'static str,
    /// The npm package the registry's command names, without its version.
    package: &'static str,
    prepare: fn(home: &Path, base_url: &str) -> Vec<(&'static str, String)>,
}

const AGENTS: [Agent; 2] = [
    Agent {
        id: "qwen-code",
        program: "qwen",
        package: "@qwen-code/qwen-code",
        prepare: prepare_qwen,
    },
    Agent {
        id: "opencode",
        program: "opencode",
        package: "@opencode/cli",
        prepare: prepare_opencode,
    },
];

/// Qwen Code: the OpenAI settings by environment; its rate-limit retries (ten, from 60 s on,
/// half an hour, and nothing said to its ACP client meanwhile) shortened in its settings, as
/// the suite does for every CLI that lets it.
fn prepare_qwen(home: &Path, base_url: &str) -> Vec<(&'static str, String)> {
    let settings =
        json!({"model": {"generationConfig": {"maxRetries": 0, "retryInitialDelayMs": 500}}});
    write(&home.join(".qwen/settings.json"), &settings);
    vec![
        ("OPENAI_API_KEY", "sk-mock-conformance".into()),
        ("OPENAI_BASE_URL", base_url.into()),
        ("OPENAI_MODEL", "gpt-4o".into()),
        ("HERD_ACP_AUTH", "openai".into()),
    ]
}

/// OpenCode: an OpenAI-compatible provider at the mock, and its tools set to ask (its default
/// runs them unasked, which herd would stop as a call made without asking).
fn prepare_opencode(home: &Path, base_url: &str) -> Vec<(&'static str, String)> {
    let config = json!({
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": base_url, "apiKey": "sk-mock-conformance"},
            "models": {"gpt-4o": {"name": "gpt-4o"}}}},
        "model": "mock/gpt-4o",
        "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
        "autoupdate": false,
    });
    write(&home.join(".config/opencode/opencode.json"), &config);
    Vec::new()
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

/// The program installed for a registry agent by `scripts/test`.
fn installed(agent: &Agent) -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/registry/node_modules/.bin")
        .join(agent.program);
    assert!(
        bin.exists(),
        "{} is not installed in {}; run scripts/test (or `npm ci` in tests/conformance/registry)",
        agent.package,
        bin.display()
    );
    bin
}

/// The registry profile's arguments after its command (`npx --yes <package> <args…>`).
fn registry_args(agent: &Agent) -> Vec<String> {
    let profile = format!("acp:{}", agent.id);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["profiles", &profile])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("command "))
        .unwrap_or_else(|| panic!("no command in herd profiles {profile}:\n{text}"));
    let argv: Vec<String> =
        serde_json::from_str(line.trim_start()["command".len()..].trim()).unwrap();
    assert_eq!(argv[..2], ["npx", "--yes"], "{argv:?}");
    assert!(
        argv[2].starts_with(&format!("{}@", agent.package)),
        "{argv:?}"
    );
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

fn plan() -> [Planned; 9] {
    let on = json!({"auto_press_1": true});
    [
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
    ]
}

/// The task's timeout: a hang is judged by it. Both agents retry a 429 and a 503 inside one
/// prompt for 75 to 90 s (Qwen Code seven times from 1.5 s on, not configurable) and tell their
/// ACP client nothing meanwhile; herd reads each answer from their runtime's fetch diagnostics
/// and ends the turn once the API keeps failing, well before the agents give up (and before
/// this timeout, which would say `failed_timeout`).
fn timeout_sec(scenario: Scenario) -> u64 {
    match scenario {
        Scenario::Hang => 30,
        _ => 90,
    }
}

/// Auth, quota and overload verdicts come within this many seconds of the API's first error.
const HOPELESS_LIMIT: f64 = 60.0;

fn task(dir: &Path, api: &MockApi, agent: &Agent, planned: &Planned) -> Case {
    let (name, scenario, policy, expect, evidence, tool_ran) = planned.clone();
    let id = format!("{}-{name}", agent.id);
    let home = dir.join("homes").join(&id);
    let cwd = dir.join("work").join(&id);
    std::fs::create_dir_all(&cwd).unwrap();
    let mut env = serde_json::Map::new();
    env.insert("HOME".into(), json!(home.display().to_string()));
    for (key, value) in (agent.prepare)(&home, &api.base_url(&id, scenario)) {
        env.insert(key.into(), json!(value));
    }
    let mut command = vec![installed(agent).display().to_string()];
    command.extend(registry_args(agent));
    let task = json!({
        "task_id": id, "agent": format!("acp:{}", agent.id), "command": command,
        "cwd": cwd.display().to_string(), "env": env,
        "timeout_sec": timeout_sec(scenario),
        "max_retries": 0, "permission_wait_sec": 8, "prompt_template": PROMPT,
        "permission_policy": policy,
    });
    Case {
        id,
        task,
        expect,
        evidence,
        tool_ran,
        approval: None,
    }
}

#[test]
fn registry_agents_end_each_task_as_a_careful_person_concludes() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-registry-")
        .tempdir()
        .unwrap();
    let api = MockApi::start().unwrap();
    let only = std::env::var("HERD_ACP_ONLY").unwrap_or_default();
    let cases: Vec<Case> = AGENTS
        .iter()
        .flat_map(|agent| plan().map(|planned| task(dir.path(), &api, agent, &planned)))
        .filter(|case| case.id.contains(&only))
        .collect();
    let tasks = cases.iter().map(|c| c.task.clone()).collect();
    let path = std::env::var("PATH").unwrap_or_default();
    let (doc, said) = run_batch(dir.path(), tasks, &path, 6);
    if std::env::var_os("HERD_ACP_KEEP").is_some() {
        println!("kept: {}", dir.keep().display());
        return;
    }
    check(dir.path(), &doc, &cases, &said);
    let hopeless: Vec<&str> = cases
        .iter()
        .map(|c| c.id.as_str())
        .filter(|id| {
            ["-auth", "-quota", "-overloaded"]
                .iter()
                .any(|s| id.ends_with(s))
        })
        .collect();
    let late = late_verdicts(dir.path(), &api, &hopeless, HOPELESS_LIMIT);
    assert!(late.is_empty(), "{}", late.join("\n"));
}
