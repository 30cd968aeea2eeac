//! Try the dashboard by hand with real agents over ACP: writes a mixed batch (screen `claude`
//! and the three ACP profiles, one request left to the operator) into `<dir>/tasks.json`
//! against the conformance suite's mock model API served from here, prints the `herd run` line
//! for it, and serves until `<dir>/stop` exists.
//!
//! `cargo run --example acp_demo -- <empty dir>` (the pinned CLIs and adapters installed in
//! `tests/conformance`, as `scripts/test` does).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/conformance/mock_api/mod.rs"]
mod mock_api;
#[allow(dead_code)]
#[path = "../tests/acp/real_tasks.rs"]
mod real_tasks;
#[allow(dead_code)]
#[path = "../tests/conformance/setup.rs"]
mod setup;

use std::path::PathBuf;
use std::time::Duration;

use mock_api::{MockApi, Scenario};
use real_tasks::{path_with, real_agents_bin, real_task};
use serde_json::{Value, json};
use setup::Cli;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: cargo run --example acp_demo -- <empty dir>");
        std::process::exit(2);
    };
    std::fs::create_dir_all(&dir).expect("the demo folder");
    let bin = real_agents_bin();
    let api = MockApi::start().expect("the mock API");
    let plan = [
        (Cli::Claude, "claude", Scenario::Text, true),
        (Cli::Claude, "claude-acp", Scenario::Tool, false),
        (Cli::Gemini, "gemini-acp", Scenario::Text, true),
        (Cli::Gemini, "gemini-acp", Scenario::Dangerous, true),
        (Cli::Codex, "codex-acp", Scenario::Tool, true),
        (Cli::Codex, "codex-acp", Scenario::NoMarker, true),
    ];
    let tasks: Vec<Value> = plan
        .into_iter()
        .map(|(cli, profile, scenario, auto)| {
            let suffix = if auto { "" } else { "-operator" };
            let id = format!("demo-{profile}-{}{suffix}", scenario.name());
            let mut task = real_task(&dir, &api, cli, profile, &id, scenario);
            task["timeout_sec"] = json!(900);
            if !auto {
                // Nothing automatic: the request waits for the operator.
                task["permission_policy"] = json!({});
            }
            task
        })
        .collect();
    let doc = json!({"run_id": "acp-demo", "tasks": tasks});
    let file = dir.join("tasks.json");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    println!(
        "PATH={} herd run --tasks {}",
        path_with(&bin),
        file.display()
    );
    while !dir.join("stop").exists() {
        std::thread::sleep(Duration::from_millis(500));
    }
}
