//! End to end: the real `herd run` binary with its dashboard in a pseudo-terminal. The agent asks
//! for a password at a prompt that does not echo (`stty -echo; read`); the operator takes it over
//! (`i`), types the password and Enter, gives the keyboard back (Ctrl-]) and the task completes.
//! The password is nowhere under `runs/` (only a count of keys is, as a marker that `herd explain`
//! and `herd replay` read), and nothing under `runs/` has group or other access. With
//! `--record-input` the keys are recorded, as asked.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

mod common;
use common::{describe, herd};

const ROWS: u16 = 40;
const COLS: u16 = 120;
const PASSWORD: &str = "hunter2-Secret";

/// An agent that reads a password without echo and says only how long it was.
const TASKS: &str = r#"{"tasks": [{"task_id": "pw", "agent": "generic", "prompt_template": "x",
  "timeout_sec": 120,
  "command": ["sh", "-c", "printf 'Password: '; stty -echo; read p; stty echo; echo; echo \"got ${{#p}} characters\"; echo TASK_COMPLETE:$HERD_TASK_ID"]}]}
"#;

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
    fn start(tasks: &Path, extra: &[&str]) -> Dashboard {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
        command.args(["run", "--tasks"]);
        command.arg(tasks);
        command.args(extra);
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
        let size = |n| std::num::NonZeroU16::new(n).expect("not zero");
        Dashboard {
            parser: vt100::Parser::new(size(ROWS), size(COLS), 0),
            output,
            writer,
            child,
            _master: pty.master,
        }
    }

    /// Reads output until the screen contains `needle`; on timeout, fails showing the screen.
    fn wait_for(&mut self, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.parser.screen().contents().contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {needle:?}; the screen was:\n{}",
                self.parser.screen().contents()
            );
            if let Ok(bytes) = self
                .output
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                self.parser.process(&bytes);
            }
        }
    }

    fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush keys");
    }

    /// Waits for herd to exit, reading the rest of its output; its exit code.
    fn wait_for_exit(&mut self, timeout: Duration) -> u32 {
        let deadline = Instant::now() + timeout;
        loop {
            while let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.parser.process(&bytes);
            }
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "herd did not exit; the screen was:\n{}",
                self.parser.screen().contents()
            );
        }
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        // Only if a check failed before herd left: do not leave it running.
        let _ = self.child.kill();
    }
}

/// Takes the task over, types the password one key at a time, gives the keyboard back, and
/// waits for the run to end; returns the runs folder.
fn type_the_password(dir: &Path, extra: &[&str]) -> PathBuf {
    let tasks = dir.join("tasks.json");
    std::fs::write(&tasks, TASKS).expect("write tasks");
    let mut ui = Dashboard::start(&tasks, extra);
    ui.wait_for("Password:", Duration::from_secs(30));
    ui.press("i");
    ui.wait_for("leave take-over", Duration::from_secs(10));
    for key in PASSWORD.chars() {
        ui.press(&key.to_string());
    }
    ui.press("\r");
    ui.wait_for(
        &format!("got {} characters", PASSWORD.len()),
        Duration::from_secs(30),
    );
    ui.press("\x1d");
    ui.wait_for("✔ pw", Duration::from_secs(30));
    ui.press("q");
    let code = ui.wait_for_exit(Duration::from_secs(20));
    assert_eq!(code, 0, "{}", ui.parser.screen().contents());
    dir.join("runs")
}

/// Every file and folder under `dir`, `dir` itself included.
fn everything_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < found.len() {
        if found[i].is_dir() {
            for entry in std::fs::read_dir(&found[i]).expect("list") {
                found.push(entry.expect("entry").path());
            }
        }
        i += 1;
    }
    found
}

fn holds(path: &Path, text: &str) -> bool {
    path.is_file()
        && std::fs::read(path)
            .expect("read")
            .windows(text.len())
            .any(|w| w == text.as_bytes())
}

#[test]
fn a_password_typed_in_take_over_is_nowhere_under_runs_and_runs_is_private() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runs = type_the_password(dir.path(), &[]);
    let everything = everything_under(&runs);
    assert!(everything.len() >= 5, "{everything:#?}");
    for path in &everything {
        assert!(
            !holds(path, PASSWORD),
            "{} holds the password",
            path.display()
        );
        // Not even spread over "i" events one key at a time.
        assert!(
            !holds(path, r#""i","h"]"#),
            "{} holds a key",
            path.display()
        );
        let mode = std::fs::symlink_metadata(path)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{} is {:o}", path.display(), mode & 0o777);
    }
    let cast = std::fs::read_to_string(runs.join("pw/attempt_1.cast")).expect("cast");
    let keys = PASSWORD.len() + 1;
    assert!(
        cast.contains(&format!(
            "\"operator typed {keys} keys ({keys} bytes) from "
        )),
        "{cast}"
    );

    // What herd explain and herd replay make of it.
    let explain = herd()
        .arg("explain")
        .arg(runs.join("pw"))
        .output()
        .expect("explain");
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(explain.status.success(), "{}", describe(&explain));
    assert!(
        text.lines()
            .any(|l| l.contains("typed") && l.contains(&format!("operator typed {keys} keys"))),
        "{text}"
    );
    let replay = herd()
        .args(["replay", "--print"])
        .arg(runs.join("pw"))
        .output()
        .expect("replay");
    assert!(replay.status.success(), "{}", describe(&replay));
    let screen = String::from_utf8_lossy(&replay.stdout);
    assert!(
        screen.contains(&format!("got {} characters", PASSWORD.len())),
        "{screen}"
    );
}

#[test]
fn record_input_records_the_keys_as_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runs = type_the_password(dir.path(), &["--record-input"]);
    let cast = std::fs::read_to_string(runs.join("pw/attempt_1.cast")).expect("cast");
    let typed: String = cast
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e[1] == "i")
        .filter_map(|e| e[2].as_str().map(str::to_string))
        .collect();
    assert!(typed.starts_with(PASSWORD), "{cast}");
    assert!(!cast.contains("operator typed"), "{cast}");
}
