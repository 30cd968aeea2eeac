//! End to end: the real `herd run` dashboard in a pseudo-terminal with an ACP agent (the
//! scripted fake agent of `acp/fake_agent.rs`, played by this test binary) whose permission
//! request the task's policy leaves to the operator. The pane shows the client's numbered
//! dialog and the banner offers its keys; the operator's Enter (the banner's "Allow once")
//! allows once, `n` rejects; each task ends as answered, with the answer in
//! `result.approvals` as the client gave it (by the operator, the option sent).

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "acp/fake_agent.rs"]
mod fake_agent;

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use serde_json::{Value, json};

/// Not a test: the entry point through which this binary plays the fake ACP agent
/// (`HERD_FAKE_ACP=<script>`); without the variable it returns at once.
#[test]
fn fake_acp_agent_entry_point() {
    if let Ok(script) = std::env::var("HERD_FAKE_ACP") {
        fake_agent::run(&script);
    }
}

const ROWS: u16 = 40;
const COLS: u16 = 140;

/// The dashboard as seen through a terminal emulator.
struct Dashboard {
    parser: vt100::Parser,
    output: mpsc::Receiver<Vec<u8>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    /// Closing the terminal would hang up on herd: kept open until the test ends.
    _master: Box<dyn MasterPty + Send>,
}

impl Dashboard {
    fn start(tasks: &Path) -> Dashboard {
        let size = |n: u16| NonZeroU16::new(n).expect("not zero");
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
        command.args(["run", "--concurrency", "1", "--tasks"]);
        command.arg(tasks);
        command.cwd(tasks.parent().expect("folder"));
        command.env("TERM", "xterm-256color");
        let child = pty.slave.spawn_command(command).expect("herd starts");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let writer = pty.master.take_writer().expect("writer");
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Dashboard {
            parser: vt100::Parser::new(size(ROWS), size(COLS), 0),
            output,
            writer,
            child,
            _master: pty.master,
        }
    }

    fn text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Reads output until `done` holds; on timeout, fails showing the last screen.
    fn wait_until(&mut self, what: &str, timeout: Duration, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + timeout;
        while !done(&self.text()) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {what}; the screen was:\n{}",
                self.text()
            );
            if let Ok(bytes) = self
                .output
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                self.parser.process(&bytes);
            }
        }
    }

    /// Keeps the screen up to date for `span` (while the test polls the tasks file).
    fn pump(&mut self, span: Duration) {
        let until = Instant::now() + span;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            if let Ok(bytes) = self.output.recv_timeout(left) {
                self.parser.process(&bytes);
            }
        }
    }

    fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush keys");
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        // herd ends its agents when it leaves; only if a check failed before that.
        let _ = self.child.kill();
    }
}

fn task_in_file(tasks: &Path, id: &str) -> Value {
    let text = std::fs::read_to_string(tasks).expect("tasks file");
    let doc: Value = serde_json::from_str(&text).expect("json");
    doc["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["task_id"] == id))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn the_operator_answers_an_acp_request_from_the_dashboard_with_enter_or_n() {
    let dir = tempfile::tempdir().expect("temp dir");
    let me = std::env::current_exe().unwrap().display().to_string();
    let task = |id: &str| {
        json!({
            "task_id": id, "agent": "gemini-acp", "timeout_sec": 120, "max_retries": 0,
            "command": [me, "fake_acp_agent_entry_point", "--exact", "--nocapture"],
            "env": {"HERD_FAKE_ACP": "asks"},
            "prompt_template": "Run the tests, then print TASK_COMPLETE:{task_id}",
        })
    };
    let tasks = dir.path().join("tasks.json");
    let doc = json!({"run_id": "acp-e2e", "tasks": [task("allowed"), task("rejected")]});
    std::fs::write(&tasks, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut ui = Dashboard::start(&tasks);

    for (id, key, option, status) in [
        ("allowed", "\r", "allow_once", "completed"),
        ("rejected", "n", "reject_once", "failed"),
    ] {
        if id == "rejected" {
            // The answered task stays selected once it ended: the next one is chosen, never
            // answered because its pane took the focus.
            ui.wait_until(
                "the next pane to wait unselected",
                Duration::from_secs(30),
                |s| s.contains("⚠ rejected waits"),
            );
            ui.press("w");
        }
        ui.wait_until(
            &format!("{id}'s request and the banner's keys"),
            Duration::from_secs(60),
            |s| {
                s.contains(&format!("⚠ {id}"))
                    && s.contains("Request: Bash(npm test)")
                    && s.contains("/Enter] Allow once")
                    && s.contains("[n] No")
            },
        );
        ui.press(key);
        let deadline = Instant::now() + Duration::from_secs(30);
        while task_in_file(&tasks, id)["status"] != status {
            assert!(
                Instant::now() < deadline,
                "{id} did not end {status}: {}\nthe screen was:\n{}",
                task_in_file(&tasks, id),
                ui.text()
            );
            ui.pump(Duration::from_millis(200));
        }
        let result = &task_in_file(&tasks, id)["result"];
        let approvals = result["approvals"].as_array().cloned().unwrap_or_default();
        assert_eq!(approvals.len(), 1, "{id}: {result}");
        let answer = &approvals[0];
        assert_eq!(answer["by"], "operator", "{id}: {answer}");
        assert_eq!(answer["option"], option, "{id}: {answer}");
        assert_eq!(answer["request"], "Bash(npm test)", "{id}: {answer}");
        assert_eq!(answer["decision"], "ask", "{id}: {answer}");
        if status == "failed" {
            assert_eq!(result["failure_type"], "failed_permission_blocked");
            let evidence = result["failure_evidence"].as_str().unwrap_or_default();
            assert!(
                evidence.contains("Bash(npm test)") && evidence.contains("by the operator"),
                "{evidence}"
            );
        }
    }
    ui.press("q");
}
