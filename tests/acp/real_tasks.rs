//! A real agent's task against the conformance suite's mock model API (its own config folder, a
//! git repository as its folder), shared by `tests/acp_conformance.rs` and the
//! `examples/acp_demo.rs` that sets up a mixed batch to try the dashboard by hand.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::mock_api::{MockApi, Scenario};
use crate::setup::{self, Cli};

/// As a person writes a prompt: no word of a marker (herd adds the instruction, and the mock
/// model prints the marker only when the conversation names it).
pub(crate) const PROMPT: &str = "Create the file conformance_tool_ran.txt with a shell command.";

pub(crate) fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

/// A real agent's task against the mock API: its own config folder (HOME) and a git repository
/// as its folder, both named after `id`.
pub(crate) fn real_task(
    dir: &Path,
    api: &MockApi,
    cli: Cli,
    profile: &str,
    id: &str,
    scenario: Scenario,
) -> Value {
    let home = dir.join("homes").join(id);
    let cwd = dir.join("work").join(id);
    let base_url = api.base_url(id, scenario);
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
    if cli == Cli::Claude && profile.ends_with("-acp") && is_root() {
        // Claude Code refuses to start its SDK session as root outside a sandbox
        // (claude-agent-acp's session/new fails: "Query closed before response
        // received"); CI runs as a user, this machine may not.
        env.insert("IS_SANDBOX".into(), "1".into());
    }
    json!({
        "task_id": id, "agent": profile, "cwd": cwd.display().to_string(), "env": env,
        "timeout_sec": if scenario == Scenario::Hang { 30 } else { 120 },
        "max_retries": 0, "permission_wait_sec": 10, "prompt_template": PROMPT,
        "permission_policy": {"auto_press_1": true},
    })
}

/// The adapters and CLIs of the real-agent tests are installed.
pub(crate) fn real_agents_bin() -> std::path::PathBuf {
    let bin = setup::cli_bin_dir();
    for adapter in ["claude-agent-acp", "codex-acp"] {
        assert!(
            bin.join(adapter).exists(),
            "{adapter} is not installed in {}; run scripts/test (or `npm ci` in tests/conformance)",
            bin.display()
        );
    }
    bin
}

/// PATH with the real CLIs first.
pub(crate) fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
