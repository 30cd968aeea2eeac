//! The real `herd run` dashboard driven in a pseudo-terminal, read through the vt100 terminal
//! emulator as a person would see it: start it at a size with extra arguments and environment,
//! wait for what the screen shows (failing with the screen on timeout), press keys, quit, and
//! wait for herd to exit. One driver for every end-to-end test of the dashboard.
#![allow(clippy::expect_used)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// How herd is started: the terminal's size, and what `herd run --tasks <file>` gets besides.
pub(crate) struct Launch<'a> {
    pub(crate) rows: u16,
    pub(crate) cols: u16,
    /// Arguments of `herd run` after `--tasks <file>`.
    pub(crate) args: &'a [&'a str],
    /// Environment variables besides `TERM=xterm-256color`.
    pub(crate) env: &'a [(&'a str, &'a str)],
}

impl Launch<'_> {
    /// A terminal of `rows` x `cols`, no extra arguments nor environment.
    pub(crate) fn size(rows: u16, cols: u16) -> Launch<'static> {
        Launch {
            rows,
            cols,
            args: &[],
            env: &[],
        }
    }
}

/// The dashboard as seen through a terminal emulator.
pub(crate) struct Dashboard {
    parser: vt100::Parser,
    /// Everything herd wrote, for what a screen does not keep (bells, notifications).
    raw: Vec<u8>,
    output: mpsc::Receiver<Vec<u8>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    /// Closing the terminal hangs up on herd: kept open until the test ends or hangs up.
    master: Option<Box<dyn MasterPty + Send>>,
    /// Tells the reading thread to let go of its copy of the master (`hang_up`).
    stop_reading: Arc<AtomicBool>,
}

impl Dashboard {
    /// `herd run --tasks <tasks>` in the folder of `tasks`, in a new pseudo-terminal.
    pub(crate) fn start(tasks: &Path, launch: Launch<'_>) -> Dashboard {
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
        command.args(["run", "--tasks"]);
        command.arg(tasks);
        command.args(launch.args);
        command.cwd(tasks.parent().expect("folder"));
        Dashboard::spawn(command, &launch)
    }

    /// Any command (`herd attach`, or herd run as another user) in a new pseudo-terminal of
    /// `launch`'s size, with its environment; `launch.args` are not used.
    pub(crate) fn spawn(mut command: CommandBuilder, launch: &Launch<'_>) -> Dashboard {
        let size = |n: u16| NonZeroU16::new(n).expect("not zero");
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: launch.rows,
                cols: launch.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        command.env("TERM", "xterm-256color");
        for (name, value) in launch.env {
            command.env(name, value);
        }
        let child = pty.slave.spawn_command(command).expect("herd starts");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let writer = pty.master.take_writer().expect("writer");
        let (tx, output) = mpsc::channel();
        let stop_reading = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stop_reading);
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || stop.load(Ordering::Relaxed) || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Dashboard {
            parser: vt100::Parser::new(size(launch.rows), size(launch.cols), 0),
            raw: Vec::new(),
            output,
            writer,
            child,
            master: Some(pty.master),
            stop_reading,
        }
    }

    /// The terminal changes size, as a window resized: the process gets SIGWINCH.
    pub(crate) fn resize(&mut self, rows: u16, cols: u16) {
        let size = |n: u16| NonZeroU16::new(n).expect("not zero");
        self.master
            .as_ref()
            .expect("the terminal is open")
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize");
        self.parser.set_size(size(rows), size(cols));
    }

    /// The terminal is closed, as a window closed under herd: every copy of its master goes
    /// (the reading thread's at herd's next write: the dashboard draws its clock every second),
    /// so herd's terminal hangs up. Returns herd's exit code once it exited, `None` if it did
    /// not within `timeout`.
    pub(crate) fn hang_up(&mut self, timeout: Duration) -> Option<u32> {
        self.stop_reading.store(true, Ordering::Relaxed);
        self.writer = Box::new(std::io::sink());
        self.master = None;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.exit_code());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// The pid of the process in the terminal.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    pub(crate) fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub(crate) fn text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Everything herd wrote so far.
    pub(crate) fn raw(&self) -> &[u8] {
        &self.raw
    }

    fn take(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
        self.raw.extend_from_slice(bytes);
    }

    /// Reads what herd writes within `wait`, one piece at most; whether there was one.
    pub(crate) fn read_some(&mut self, wait: Duration) -> bool {
        match self.output.recv_timeout(wait) {
            Ok(bytes) => {
                self.take(&bytes);
                true
            }
            Err(_) => false,
        }
    }

    /// Keeps the screen up to date for `span`.
    pub(crate) fn pump(&mut self, span: Duration) {
        let until = Instant::now() + span;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            self.read_some(left);
        }
    }

    /// Reads output until `done` holds; on timeout, fails showing the last screen.
    pub(crate) fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&vt100::Screen) -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        while !done(self.parser.screen()) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {what}; the screen was:\n{}",
                self.text()
            );
            self.read_some(left.min(Duration::from_millis(100)));
        }
    }

    /// [`Dashboard::wait_until`] on the screen's text.
    pub(crate) fn wait_until_text(
        &mut self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) {
        self.wait_until(what, timeout, |screen| done(&screen.contents()));
    }

    /// Reads output until the screen contains `needle`; on timeout, fails showing the screen.
    pub(crate) fn wait_for(&mut self, needle: &str, timeout: Duration) {
        self.wait_until_text(&format!("{needle:?}"), timeout, |text| {
            text.contains(needle)
        });
    }

    /// The screen keeps `holds` true for all of `time` (what must not happen, does not).
    pub(crate) fn holds_for(&mut self, what: &str, time: Duration, holds: impl Fn(&str) -> bool) {
        let end = Instant::now() + time;
        loop {
            assert!(
                holds(&self.text()),
                "{what}; the screen was:\n{}",
                self.text()
            );
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            self.read_some(left.min(Duration::from_millis(50)));
        }
    }

    pub(crate) fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush keys");
    }

    /// Reads what herd writes for 50 ms at a time until it stops; herd's exit code if it left.
    fn drain_and_poll(&mut self) -> Option<u32> {
        while self.read_some(Duration::from_millis(50)) {}
        let status = self.child.try_wait().expect("wait")?;
        Some(status.exit_code())
    }

    /// Waits for herd to exit, reading the rest of its output; its exit code.
    pub(crate) fn wait_for_exit(&mut self, timeout: Duration) -> u32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(code) = self.drain_and_poll() {
                while self.read_some(Duration::from_millis(200)) {}
                return code;
            }
            assert!(
                Instant::now() < deadline,
                "herd did not exit; the screen was:\n{}",
                self.text()
            );
        }
    }

    /// Leaves with `q` (confirmed with `y` when agents run); herd's exit code.
    pub(crate) fn quit(&mut self) -> u32 {
        self.press("q");
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut confirmed = false;
        loop {
            if let Some(code) = self.drain_and_poll() {
                return code;
            }
            if !confirmed && self.text().contains("and quit?") {
                self.press("y");
                confirmed = true;
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
        // herd ends its agents when it leaves; only if a check failed before herd left: do not
        // leave it running.
        let _ = self.child.kill();
    }
}
