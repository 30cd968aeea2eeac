//! End to end through the real binary: an MCP client speaking JSON-RPC over stdio to
//! `herd mcp`, against the built-in simulator. It initializes, lists the tools, adds tasks
//! (checked like the file, written in the file's layout), runs them (a background herd when none
//! runs the file), waits for them and reads herd's verdicts and explanation; bad calls come back
//! as tool errors that say what, why and how to fix.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::herd;

/// `herd mcp` and the lines it writes on stdout.
struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// Every line read, for failure messages.
    seen: Vec<String>,
}

impl McpClient {
    fn start(tasks: &Path) -> McpClient {
        let mut child = herd()
            .args(["mcp", "--tasks"])
            .arg(tasks)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        McpClient {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 1,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits (at most `timeout`) for the response with its id.
    fn request_within(&mut self, method: &str, params: Value, timeout: Duration) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let message: Value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
                    if message["id"] == json!(id) {
                        return message;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no answer to {method} in {timeout:?}; read:\n{}",
                        self.seen.join("\n")
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("herd mcp closed stdout; read:\n{}", self.seen.join("\n"))
                }
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_within(method, params, Duration::from_secs(30))
    }

    /// Calls a tool; its result (`content`, `structuredContent`, `isError`).
    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request_within(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            Duration::from_secs(120),
        );
        assert!(response.get("error").is_none(), "{name}: {response}");
        response["result"].clone()
    }

    /// Calls a tool that must succeed; its structured result.
    fn ok(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.tool(name, arguments.clone());
        assert_eq!(result["isError"], false, "{name} {arguments}: {result}");
        result["structuredContent"].clone()
    }

    /// Calls a tool that must fail; its error (what, why, fix), checked to be in the text too.
    fn error(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.tool(name, arguments.clone());
        assert_eq!(result["isError"], true, "{name} {arguments}: {result}");
        let error = result["structuredContent"]["error"].clone();
        let text = result["content"][0]["text"].as_str().unwrap();
        for part in ["what", "why", "fix"] {
            let said = error[part].as_str().unwrap();
            assert!(!said.is_empty() && text.contains(said), "{part}: {result}");
        }
        error
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        // Closing stdin ends the session; the server must then exit by itself.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        if !std::thread::panicking() {
            panic!("herd mcp did not exit when its stdin closed");
        }
    }
}

fn tasks_file(dir: &Path) -> PathBuf {
    let path = dir.join("tasks.json");
    let text = "{\n  \"run_id\": \"mcp-e2e\",\n  \"tasks\": [\n    {\n      \"task_id\": \"first\",\n      \"agent\": \"sim\",\n      \"inputs\": { \"scenario\": \"success\" },\n      \"prompt_template\": \"Do it. When complete, print exactly: TASK_COMPLETE:{task_id}\"\n    }\n  ]\n}\n";
    std::fs::write(&path, text).unwrap();
    path
}

fn sim_task(task_id: &str, scenario: &str) -> Value {
    json!({
        "task_id": task_id,
        "agent": "sim",
        "max_retries": 0,
        "timeout_sec": 60,
        "inputs": {"scenario": scenario},
        "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}"
    })
}

/// Waits until no herd holds the tasks file (the background herd has ended).
fn wait_for_no_herd(tasks: &Path) {
    let lock = tasks.with_file_name("tasks.json.lock");
    let deadline = Instant::now() + Duration::from_secs(30);
    while lock.exists() {
        assert!(Instant::now() < deadline, "the background herd did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_mcp_client_adds_runs_waits_for_and_reads_the_verdict_of_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path());
    let mut client = McpClient::start(&tasks);

    let init = client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "mcp-e2e", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "herd", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in [
        "run_agent",
        "get_task",
        "update_task",
        "list_tasks",
        "add_task",
        "answer_prompt",
        "wait_for",
        "explain",
    ] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }

    // Added in the file's own layout, pending.
    let added = client.ok("add_task", json!({"task": sim_task("added", "success")}));
    assert_eq!(added["task"]["status"], "pending", "{added}");
    assert_eq!(added["herd"]["running"], false, "{added}");
    let text = std::fs::read_to_string(&tasks).unwrap();
    assert!(
        text.contains("    },\n    {\n      \"task_id\": \"added\",\n"),
        "laid out like the task before it:\n{text}"
    );
    let crash = client.ok("add_task", json!({"task": sim_task("crashes", "crash")}));
    assert_eq!(crash["task"]["task_id"], "crashes");

    // Refused: a repeated id, an unknown agent (herd validate's message), herd's own fields.
    let again = client.error("add_task", json!({"task": sim_task("added", "success")}));
    assert!(
        again["what"].as_str().unwrap().contains("exists already"),
        "{again}"
    );
    let mut unknown = sim_task("unknown-agent", "success");
    unknown["agent"] = json!("no-such-cli");
    let refused = client.error("add_task", json!({"task": unknown}));
    assert!(
        refused["why"].as_str().unwrap().contains("no-such-cli"),
        "{refused}"
    );
    let owned = client.error(
        "update_task",
        json!({"task_id": "added", "patch": {"status": "completed"}}),
    );
    assert!(
        owned["what"].as_str().unwrap().contains("status"),
        "{owned}"
    );
    let after = std::fs::read_to_string(&tasks).unwrap();
    assert!(
        !after.contains("unknown-agent"),
        "nothing written:\n{after}"
    );

    // Without a herd: no prompt to answer, and a wait returns at once with why.
    let answer = client.error(
        "answer_prompt",
        json!({"prompt_id": "added/1/1", "answer": "approve"}),
    );
    assert!(
        answer["why"].as_str().unwrap().contains("no herd runs"),
        "{answer}"
    );
    let idle = client.ok("wait_for", json!({"task_id": "first", "timeout_sec": 30}));
    assert_eq!(idle["reached"], false, "{idle}");
    assert!(
        idle["why"].as_str().unwrap().contains("run_agent"),
        "{idle}"
    );

    // An operator field changed: the file says so.
    let updated = client.ok(
        "update_task",
        json!({"task_id": "first", "patch": {"enabled": false}}),
    );
    assert_eq!(updated["task"]["enabled"], false, "{updated}");
    let disabled = client.error("run_agent", json!({"task_id": "first"}));
    assert!(
        disabled["fix"]
            .as_str()
            .unwrap()
            .contains("\"enabled\": true"),
        "{disabled}"
    );

    // Run, wait, read the verdict.
    let ran = client.ok("run_agent", json!({"task_id": "added"}));
    let command = ran["started"]["command"].to_string();
    assert!(command.contains("\"--detach\",\"--tasks\""), "{ran}");
    assert!(command.contains("\"--only\",\"added\""), "{ran}");
    let waited = client.ok("wait_for", json!({"task_id": "added", "timeout_sec": 90}));
    assert_eq!(waited["reached"], true, "{waited}");
    assert_eq!(waited["task"]["status"], "completed", "{waited}");
    wait_for_no_herd(&tasks);
    let got = client.ok("get_task", json!({"task_id": "added"}));
    assert_eq!(got["task"]["status"], "completed", "{got}");
    assert_eq!(got["task"]["attempts"], 1, "{got}");
    assert_eq!(got["task"]["failure_type"], Value::Null, "{got}");

    client.ok("run_agent", json!({"task_id": "crashes"}));
    let failed = client.ok("wait_for", json!({"task_id": "crashes", "timeout_sec": 90}));
    assert_eq!(failed["task"]["status"], "failed", "{failed}");
    assert_eq!(failed["task"]["failure_type"], "failed_process", "{failed}");
    assert!(
        failed["task"]["failure_evidence"]
            .as_str()
            .unwrap()
            .contains("exit code 3"),
        "herd's evidence: {failed}"
    );
    wait_for_no_herd(&tasks);

    let explained = client.ok("explain", json!({"task_id": "crashes"}));
    let lines: Vec<&str> = explained["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("verdict: failed_process")),
        "{lines:#?}"
    );
    let listed = client.ok("list_tasks", json!({"status": ["failed"]}));
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["crashes"], "{listed}");
    assert!(dir.path().join("runs/background.log").is_file());
}

#[test]
fn a_bad_call_is_a_tool_error_that_says_what_why_and_how_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path());
    let mut client = McpClient::start(&tasks);
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "mcp-e2e", "version": "1"}}),
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let missing = client.error("get_task", json!({"task_id": "nope"}));
    assert!(
        missing["what"]
            .as_str()
            .unwrap()
            .contains("no task \"nope\""),
        "{missing}"
    );
    assert!(
        missing["fix"].as_str().unwrap().contains("list_tasks"),
        "{missing}"
    );
    let bad = client.error("wait_for", json!({"task_id": "first", "timeout_sec": -1}));
    assert!(
        bad["why"].as_str().unwrap().contains("more than 0"),
        "{bad}"
    );
    // Every property has one type (no `[T, "null"]`), as clients that turn schemas into
    // function declarations (Gemini's) require.
    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 8, "{listed}");
    for tool in tools {
        let schema = tool["inputSchema"].to_string();
        assert!(
            !schema.contains("\"type\":[") && !schema.contains("\"type\":\"null\""),
            "{}: {schema}",
            tool["name"]
        );
    }
    let mistyped = client.error(
        "wait_for",
        json!({"task_id": "first", "timeout_sec": "soon"}),
    );
    assert_eq!(
        mistyped["why"], "\"timeout_sec\" must be a number, got the string \"soon\"",
        "{mistyped}"
    );
    let unknown = client.error("get_task", json!({"task_id": "first", "id": "x"}));
    assert_eq!(
        unknown["why"], "there is no argument \"id\": the tool takes task_id",
        "{unknown}"
    );
    let unexplained = client.error("explain", json!({"task_id": "first"}));
    assert!(
        unexplained["what"]
            .as_str()
            .unwrap()
            .contains("has not run yet"),
        "{unexplained}"
    );
}

#[test]
fn while_a_herd_runs_the_file_the_tools_go_through_it_and_answer_its_prompt_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path());
    let mut client = McpClient::start(&tasks);
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "mcp-e2e", "version": "1"}}),
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // A permission dialog nothing allows: it waits for the operator.
    let mut ask = sim_task("ask", "permission");
    ask["permission_wait_sec"] = json!(120);
    client.ok("add_task", json!({"task": ask}));
    client.ok("run_agent", json!({"task_id": "ask"}));

    let waiting = client.ok(
        "wait_for",
        json!({"task_id": "ask", "states": ["prompt_waiting"], "timeout_sec": 60}),
    );
    assert_eq!(waiting["reached"], true, "{waiting}");
    assert_eq!(waiting["herd"]["running"], true, "{waiting}");
    let got = client.ok("get_task", json!({"task_id": "ask"}));
    let prompt_id = got["task"]["prompt"]["prompt_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(prompt_id.starts_with("ask/1/"), "{got}");
    assert_eq!(got["task"]["status"], "running", "{got}");

    // Changes go through the running herd, which writes them into the file.
    let added = client.ok("add_task", json!({"task": sim_task("later", "success")}));
    assert_eq!(added["task"]["task_id"], "later", "{added}");
    let updated = client.ok(
        "update_task",
        json!({"task_id": "later", "patch": {"timeout_sec": 90}}),
    );
    assert_eq!(updated["herd"]["running"], true, "{updated}");
    let refused = client.error(
        "update_task",
        json!({"task_id": "nope", "patch": {"enabled": false}}),
    );
    assert!(
        refused["fix"].as_str().unwrap().contains("list_tasks"),
        "{refused}"
    );

    let answered = client.ok(
        "answer_prompt",
        json!({"prompt_id": prompt_id, "answer": "approve"}),
    );
    assert_eq!(answered["answered"]["done"], true, "{answered}");
    let stale = client.error(
        "answer_prompt",
        json!({"prompt_id": prompt_id, "answer": "approve"}),
    );
    assert!(
        stale["fix"].as_str().unwrap().contains("own prompt_id"),
        "{stale}"
    );
    let done = client.ok("wait_for", json!({"task_id": "ask", "timeout_sec": 60}));
    assert_eq!(done["task"]["status"], "completed", "{done}");
    wait_for_no_herd(&tasks);
    let text = std::fs::read_to_string(&tasks).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(common::task(&doc, "later")["timeout_sec"], 90, "{text}");
}

#[test]
fn an_agent_begins_a_queue_in_a_tasks_file_that_does_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("queue.json");
    let mut client = McpClient::start(&tasks);
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "mcp-e2e", "version": "1"}}),
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // An empty queue: reads answer it, nothing is created by reading.
    let listed = client.ok("list_tasks", json!({}));
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    let missing = client.error("get_task", json!({"task_id": "first"}));
    assert!(
        missing["fix"].as_str().unwrap().contains("add_task"),
        "{missing}"
    );
    let not_yet = client.error("wait_for", json!({"task_id": "first", "timeout_sec": 1}));
    assert!(
        not_yet["what"].as_str().unwrap().contains("no task"),
        "{not_yet}"
    );
    assert!(!tasks.exists(), "nothing written before the first add_task");

    // The first add_task creates the file; the task then runs like any other.
    let added = client.ok("add_task", json!({"task": sim_task("first", "success")}));
    assert_eq!(added["task"]["status"], "pending", "{added}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&tasks).unwrap()).unwrap();
    assert_eq!(written["run_id"], "queue", "{written}");
    assert_eq!(written["tasks"][0]["task_id"], "first", "{written}");
    client.ok("run_agent", json!({"task_id": "first"}));
    let waited = client.ok("wait_for", json!({"task_id": "first", "timeout_sec": 60}));
    assert_eq!(waited["task"]["status"], "completed", "{waited}");
    wait_for_no_herd(&tasks);
}

#[test]
fn a_tasks_file_in_a_folder_that_does_not_exist_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let output = herd()
        .args(["mcp", "--tasks"])
        .arg(dir.path().join("nowhere/queue.json"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nowhere"), "{stderr}");
}
