//! herd mcp through the official MCP Python SDK (`mcp`, pinned in
//! `tests/mcp_python/requirements.txt`, installed by `scripts/test` in `tests/mcp_python/venv`):
//! a client as real ones are built. It starts `herd mcp` on a tasks file that does not exist yet,
//! lists the tools (every input schema gives each property one type), lists the empty queue,
//! makes a call with an argument of the wrong JSON type (a tool error that names the argument in
//! JSON's words) and adds the first task (which creates the file). `tests/mcp_python/client.py`
//! prints what it saw; this file judges it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

mod common;

#[test]
fn the_official_python_sdk_begins_a_queue_and_reads_argument_errors_in_json_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("tests/mcp_python/venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: scripts/test installs the official MCP Python SDK there",
        python.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("queue.json");
    let out = Command::new(&python)
        .arg(root.join("tests/mcp_python/client.py"))
        .arg(env!("CARGO_BIN_EXE_herd"))
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::describe(&out));
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", common::describe(&out)));
    assert_eq!(seen["tools"].as_array().map(Vec::len), Some(8), "{seen}");
    assert_eq!(seen["unportable"], json!([]), "{seen}");
    assert_eq!(seen["empty_list"]["is_error"], false, "{seen}");
    assert_eq!(
        seen["empty_list"]["structured"]["tasks"],
        json!([]),
        "{seen}"
    );
    assert_eq!(seen["mistyped"]["is_error"], true, "{seen}");
    let text = seen["mistyped"]["text"].as_str().unwrap();
    assert!(
        text.contains("\"timeout_sec\" must be a number, got the string \"soon\""),
        "{seen}"
    );
    assert!(
        !text.contains("f64") && !text.contains("invalid type"),
        "{seen}"
    );
    assert_eq!(seen["added"]["is_error"], false, "{seen}");
    assert_eq!(
        seen["added"]["structured"]["task"]["status"], "pending",
        "{seen}"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&tasks).unwrap()).unwrap();
    assert_eq!(written["tasks"][0]["task_id"], "first", "{written}");
}
