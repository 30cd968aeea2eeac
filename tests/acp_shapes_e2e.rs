//! Never approve what was not read, end to end over ACP, in the terms of the agents users meet:
//! a small ACP agent (this test binary under `HERD_SHAPE_AGENT`, the call in its folder's
//! `call.json`) asks to "Run the tests" and
//! states the real action the ways different agents state it. Both auto switches are on, in the
//! built-in `claude-acp` profile with the task's own command and in a bare `protocol = "acp"`
//! profile of the user's. The agent does the work (writes `ran.txt`) only when herd allows it.
//!
//! Each dangerous or unreadable shape must leave the file unwritten and end the task
//! `failed_permission_blocked` headless, an unreadable one with `herd could not read this
//! request`; a harmless command in the same shapes is allowed and the task completes.
#![allow(clippy::unwrap_used)]

#[path = "acp/harness.rs"]
#[allow(dead_code)]
mod harness;
#[allow(dead_code)]
#[path = "conformance/mock_api/mod.rs"]
mod mock_api;

use std::io::{BufRead, Write};

use harness::{run_batch_with, task, verdict};
use serde_json::{Value, json};

/// Not a test: the entry point through which this binary plays the agent; without the
/// variable it returns at once.
#[test]
fn shape_agent_entry_point() {
    if std::env::var_os("HERD_SHAPE_AGENT").is_some() {
        let call = std::fs::read_to_string("call.json").unwrap();
        play_agent(&serde_json::from_str(&call).unwrap());
    }
}

fn send(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

fn said(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})
}

/// An agent that asks once about `call`, runs it (writes `ran.txt`) only when allowed, and
/// ends its turn with the marker either way.
fn play_agent(call: &Value) -> ! {
    let marker = std::env::var("HERD_COMPLETION_MARKER").unwrap_or_default();
    let mut prompt_id = Value::Null;
    for line in std::io::stdin().lock().lines() {
        let Ok(message) = serde_json::from_str::<Value>(&line.unwrap_or_default()) else {
            continue;
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") => send(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": 1, "agentCapabilities": {"loadSession": false},
                "authMethods": [], "agentInfo": {"name": "shape-agent", "version": "1"}}})),
            Some("session/new") => {
                send(&json!({"jsonrpc": "2.0", "id": id, "result": {"sessionId": "s-1"}}))
            }
            Some("session/prompt") => {
                prompt_id = id;
                send(&said("I will run the tests. "));
                send(&json!({"jsonrpc": "2.0", "id": "perm-1",
                    "method": "session/request_permission", "params": {"sessionId": "s-1",
                    "toolCall": call, "options": [
                        {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                        {"optionId": "once", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}}));
            }
            None if id == json!("perm-1") => {
                let chosen = message["result"]["outcome"]["optionId"]
                    .as_str()
                    .unwrap_or("cancelled");
                if chosen == "once" || chosen == "always" {
                    std::fs::write("ran.txt", call.to_string()).unwrap();
                }
                send(&said(&format!(
                    "The request was answered: {chosen}.\n{marker}"
                )));
                send(
                    &json!({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}}),
                );
            }
            _ => {}
        }
    }
    std::process::exit(0)
}

/// "Run the tests" as the title, with the action stated in `raw` and `content`.
fn run_the_tests(kind: Option<&str>, raw: Option<Value>, content: Option<&str>) -> Value {
    let mut call = json!({"toolCallId": "c1", "title": "Run the tests", "status": "pending"});
    if let Some(kind) = kind {
        call["kind"] = json!(kind);
    }
    if let Some(raw) = raw {
        call["rawInput"] = raw;
    }
    if let Some(text) = content {
        call["content"] = json!([{"type": "content", "content": {"type": "text", "text": text}}]);
    }
    call
}

struct Shape {
    name: &'static str,
    call: Value,
    /// `completed` (allowed and run) or `failed_permission_blocked`.
    expect: &'static str,
    /// What the evidence must say.
    evidence: &'static str,
}

fn shapes() -> Vec<Shape> {
    let danger = "rm -rf ~/x && make test";
    let blocked = |name, call, evidence| Shape {
        name,
        call,
        expect: "failed_permission_blocked",
        evidence,
    };
    let allowed = |name, call| Shape {
        name,
        call,
        expect: "completed",
        evidence: "",
    };
    let unread = "herd could not read this request";
    vec![
        blocked(
            "argv",
            run_the_tests(
                Some("execute"),
                Some(json!({"argv": ["sh", "-c", danger]})),
                None,
            ),
            "rm -rf",
        ),
        blocked(
            "script",
            run_the_tests(Some("execute"), Some(json!({"script": danger})), None),
            "rm -rf",
        ),
        blocked(
            "commands",
            run_the_tests(
                Some("execute"),
                Some(json!({"commands": ["rm -rf ~/x", "make test"]})),
                None,
            ),
            "rm -rf",
        ),
        blocked(
            "content",
            run_the_tests(Some("execute"), None, Some("make lint && make test")),
            unread,
        ),
        blocked(
            "unknown-kind",
            run_the_tests(Some("other"), Some(json!({"shell": "make test"})), None),
            unread,
        ),
        blocked(
            "unknown-key",
            run_the_tests(
                Some("execute"),
                Some(json!({"command": "make test", "then": "make deploy"})),
                None,
            ),
            unread,
        ),
        blocked(
            "command",
            run_the_tests(Some("execute"), Some(json!({"command": danger})), None),
            "rm -rf",
        ),
        allowed(
            "harmless-command",
            run_the_tests(Some("execute"), Some(json!({"command": "make test"})), None),
        ),
        allowed(
            "harmless-argv",
            run_the_tests(
                Some("execute"),
                Some(json!({"argv": ["sh", "-c", "make test"]})),
                None,
            ),
        ),
        allowed(
            "harmless-commands",
            run_the_tests(
                Some("execute"),
                Some(json!({"commands": ["make", "make test"]})),
                None,
            ),
        ),
    ]
}

#[test]
fn an_agent_that_states_its_action_in_any_shape_is_never_approved_unread() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-shapes-")
        .tempdir()
        .unwrap();
    // A user's bare ACP profile, as the README invites.
    let profiles = dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        "[profiles.my-acp]\ncommand = [\"my-acp-agent\"]\nprotocol = \"acp\"\n",
    )
    .unwrap();
    let me = std::env::current_exe().unwrap().display().to_string();
    let mut tasks = Vec::new();
    let mut expected = Vec::new();
    for profile in ["claude-acp", "my-acp"] {
        for shape in shapes() {
            let id = format!("{profile}-{}", shape.name);
            let cwd = dir.path().join("work").join(&id);
            std::fs::create_dir_all(&cwd).unwrap();
            std::fs::write(cwd.join("call.json"), shape.call.to_string()).unwrap();
            tasks.push(json!({
                "task_id": id, "agent": profile,
                "command": [me, "shape_agent_entry_point", "--exact", "--nocapture"],
                "cwd": cwd.display().to_string(), "timeout_sec": 60, "max_retries": 0,
                "permission_wait_sec": 2,
                "permission_policy": {"auto_press_1": true, "auto_press_p": true},
                "env": {"HERD_SHAPE_AGENT": "1"},
                "prompt_template": "Run the tests.",
            }));
            expected.push((id, cwd, shape));
        }
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let more = [std::ffi::OsStr::new("--profiles"), profiles.as_os_str()];
    let (doc, said) = run_batch_with(dir.path(), tasks, &path, 8, &more);
    let mut wrong = Vec::new();
    for (id, cwd, shape) in &expected {
        let task = task(&doc, id);
        let got = verdict(task);
        let evidence = task["result"]["failure_evidence"].as_str().unwrap_or("");
        let ran = cwd.join("ran.txt").exists();
        let ok = got == shape.expect
            && evidence.contains(shape.evidence)
            && ran == (shape.expect == "completed");
        if !ok {
            wrong.push(format!(
                "{id}: expected {} ({:?}), got {got}, ran {ran}, evidence {evidence:?}\n  call {}",
                shape.expect, shape.evidence, shape.call
            ));
        }
    }
    assert!(wrong.is_empty(), "{}\n\n{said}", wrong.join("\n"));
}
