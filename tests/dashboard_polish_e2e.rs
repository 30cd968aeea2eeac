//! End to end, the real `herd run` in a pseudo-terminal of 100x30 with `NO_COLOR`: ids that
//! differ only at their end stay apart in the queue, the selected row is marked without colour,
//! "why" a task failed is the line of its output that says it, `f` goes only through the
//! statuses there are, `/` narrows the queue as in less/k9s/lazygit (Enter keeps, Esc clears),
//! and the summary printed on leaving has one line per task within the terminal's width.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

const ROWS: u16 = 30;
const COLS: u16 = 100;

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
        command.cwd(tasks.parent().expect("folder"));
        command.env("TERM", "xterm-256color");
        command.env("NO_COLOR", "1");
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
        let size = |n| NonZeroU16::new(n).expect("not zero");
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
    fn wait_until(&mut self, what: &str, timeout: Duration, done: impl Fn(&vt100::Screen) -> bool) {
        let deadline = Instant::now() + timeout;
        while !done(self.parser.screen()) {
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

    fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush keys");
    }

    /// Waits for herd to exit, reading the rest of its output.
    fn wait_for_exit(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            while let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.parser.process(&bytes);
            }
            if self.child.try_wait().expect("wait").is_some() {
                while let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(200)) {
                    self.parser.process(&bytes);
                }
                return;
            }
            assert!(
                Instant::now() < deadline,
                "herd did not exit; the screen was:\n{}",
                self.text()
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

/// The queue's title row (the screen's first).
fn title(screen: &vt100::Screen) -> String {
    screen.rows(0, COLS).next().unwrap_or_default()
}

/// The row holding `needle`, if any.
fn row_of(screen: &vt100::Screen, needle: &str) -> Option<u16> {
    screen
        .rows(0, COLS)
        .position(|r| r.contains(needle))
        .map(|r| r as u16)
}

fn tasks_file(dir: &Path) -> std::path::PathBuf {
    let done = |id: &str| {
        format!(
            r#"{{"task_id": "{id}", "agent": "generic", "max_retries": 0, "prompt_template": "x",
                "command": ["sh", "-c", "echo TASK_COMPLETE:{id}"]}}"#
        )
    };
    let cargo = r#"{"task_id": "structured-output-cargo-build-019", "agent": "generic",
        "max_retries": 0, "prompt_template": "x", "command": ["sh", "-c",
        "echo 'Compiling'; echo 'error: could not find `Cargo.toml` in `/tmp/nowhere` or any parent directory' >&2; exit 101"]}"#;
    let disabled = r#"{"task_id": "later-016", "agent": "generic", "enabled": false,
        "prompt_template": "x", "command": ["true"]}"#;
    let text = format!(
        r#"{{"tasks": [{}, {}, {cargo}, {disabled}]}}"#,
        done("structured-output-cargo-build-017"),
        done("structured-output-cargo-build-018"),
    );
    let path = dir.join("tasks.json");
    std::fs::write(&path, text).expect("write tasks");
    path
}

#[test]
fn the_queue_reads_well_at_100_columns_without_colour() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = tasks_file(dir.path());
    let mut ui = Dashboard::start(&tasks);
    ui.wait_until("the batch to end", Duration::from_secs(60), |s| {
        s.contents().contains("The batch is done")
    });
    let screen = ui.parser.screen().clone();
    let text = screen.contents();
    // Ids that differ at their end stay apart, whole or cut in the middle.
    for end in ["017", "018", "019"] {
        assert!(
            text.lines().any(|l| l.contains(&format!("-{end} "))
                && (l.contains("structured-output-cargo-build") || l.contains('…'))),
            "id …{end} is not told apart:\n{text}"
        );
    }
    // The selected row (the first) is marked without colour: reverse video.
    let first = row_of(&screen, "-017").expect("first row");
    assert!(
        screen.cell(first, 3).is_some_and(vt100::Cell::inverse),
        "the selected row is not marked under NO_COLOR:\n{text}"
    );
    // The failed task's details say what its output said, not only its exit code.
    ui.press("jj");
    ui.wait_until("the cause in the details", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("error: could not") && text.contains("`Cargo.toml`")
    });

    // `f` skips the statuses no task has: here failed, completed, skipped and all.
    let mut seen = Vec::new();
    for _ in 0..4 {
        let before = title(ui.parser.screen());
        ui.press("f");
        ui.wait_until("the filter to change", Duration::from_secs(5), |s| {
            title(s) != before
        });
        seen.push(title(ui.parser.screen()));
    }
    let labels: Vec<&str> = seen
        .iter()
        .map(|t| {
            [
                "all",
                "failed",
                "completed",
                "skipped",
                "active",
                "waiting",
                "pending",
                "retryable",
                "cancelled",
            ]
            .into_iter()
            .find(|l| t.contains(&format!("· {l} ")))
            .unwrap_or("?")
        })
        .collect();
    assert_eq!(
        labels,
        ["failed", "completed", "skipped", "all"],
        "{seen:#?}"
    );

    // `/` narrows the queue as it is typed; Enter keeps it; `/` then Esc clears it.
    ui.press("/018");
    ui.wait_until("the search in the title", Duration::from_secs(5), |s| {
        title(s).contains("/018")
    });
    ui.press("\r");
    ui.wait_until("only the matching task", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("-018") && !text.contains("-017 ") && title(s).contains("/018")
    });
    ui.press("/");
    ui.press("\x1b");
    ui.wait_until("every task again", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("-017") && text.contains("-018") && !title(s).contains("/018")
    });

    ui.press("q");
    ui.wait_for_exit(Duration::from_secs(20));
    let after = ui.parser.screen().contents();
    let rows: Vec<&str> = after
        .lines()
        .filter(|l| l.contains("-01") || l.contains("later-016"))
        .collect();
    assert_eq!(rows.len(), 4, "one line per task in the summary:\n{after}");
    assert!(
        rows.iter().any(|l| l.contains("could not find")),
        "the summary says why it failed:\n{after}"
    );
    assert!(
        after.contains("4 tasks: 2 completed, 1 failed, 1 skipped"),
        "the summary counts as `herd status` does:\n{after}"
    );
}
