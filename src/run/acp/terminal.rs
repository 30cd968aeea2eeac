//! The client's side of the attempt's terminal: output written, keys read (raw mode), the agent
//! ended.

use std::io::{IsTerminal, Write};
use std::process::ExitStatus;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::Value;
use unicode_width::UnicodeWidthStr;

use super::inbox::Event;

/// How long the agent has to exit once the session is over.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The attempt's terminal (the client's stdout).
pub(super) struct Screen {
    out: std::io::Stdout,
}

impl Screen {
    pub(super) fn new() -> Screen {
        Screen {
            out: std::io::stdout(),
        }
    }

    pub(super) fn text(&mut self, text: &str) {
        let mut out = self.out.lock();
        // A terminal that is gone leaves nobody to tell.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }

    /// A structured event for the stream reader: one JSON line, then wiped from the screen.
    pub(super) fn event(&mut self, event: &Value) {
        let line = event.to_string();
        let cols = columns().max(1);
        let rows = line.width().div_ceil(cols).max(1);
        self.text(&format!("\r\n{line}\r\n\x1b[{rows}A\x1b[J"));
    }
}

/// The rows `text` (whole lines ending in CRLF, an opening CRLF not counted) takes on screen.
pub(super) fn rows_of(text: &str) -> usize {
    let cols = columns().max(1);
    let body = text.strip_prefix("\r\n").unwrap_or(text);
    body.split_terminator("\r\n")
        .map(|line| visible(line).width().div_ceil(cols).max(1))
        .sum()
}

/// The text without escape sequences (`ESC [ … letter`).
fn visible(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for next in chars.by_ref() {
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn columns() -> usize {
    let stdout = std::io::stdout();
    if stdout.is_terminal()
        && let Ok(size) = rustix::termios::tcgetwinsize(&stdout)
        && size.ws_col > 0
    {
        return usize::from(size.ws_col);
    }
    80
}

/// Raw mode on the terminal while the session runs, so a digit answers at once.
pub(super) struct RawMode {
    enabled: bool,
}

impl RawMode {
    pub(super) fn enable() -> RawMode {
        let enabled =
            std::io::stdin().is_terminal() && crossterm::terminal::enable_raw_mode().is_ok();
        RawMode { enabled }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if self.enabled {
            // Exiting anyway; nothing to do if it fails.
            let _ = crossterm::terminal::disable_raw_mode();
        }
    }
}

/// What the operator's keys mean.
#[derive(Debug, PartialEq)]
pub(super) enum Key {
    /// Answers the waiting permission request.
    Digit(char),
    /// A follow-up prompt (typed and Enter, or pasted by `m`).
    Line(String),
    /// Esc alone while a request waits: the dashboard's "No".
    Reject,
    /// Enter on an empty line while a request waits: allow once.
    Accept,
}

/// Keys to lines: bracketed paste kept whole, Enter ends a line, Backspace edits it.
#[derive(Debug, Default)]
pub(super) struct KeyInput {
    line: String,
    pasting: bool,
}

impl KeyInput {
    pub(super) fn feed(&mut self, bytes: &[u8], waiting: bool) -> Vec<Key> {
        if bytes == b"\x1b" && waiting && self.line.is_empty() {
            return vec![Key::Reject];
        }
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut keys = Vec::new();
        let mut rest = text.as_str();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("\x1b[200~") {
                self.pasting = true;
                rest = after;
                continue;
            }
            if let Some(after) = rest.strip_prefix("\x1b[201~") {
                self.pasting = false;
                rest = after;
                continue;
            }
            let Some(c) = rest.chars().next() else { break };
            rest = &rest[c.len_utf8()..];
            if c == '\x1b' {
                // Arrow keys and the like (`ESC [ … final`, `ESC O x`) are not text.
                if let Some(csi) = rest.strip_prefix('[') {
                    let end = csi.find(|c: char| c.is_ascii_alphabetic() || c == '~');
                    rest = end.map_or("", |at| &csi[at + 1..]);
                } else if let Some(ss3) = rest.strip_prefix('O') {
                    rest = ss3.get(1..).unwrap_or("");
                }
                continue;
            }
            match c {
                '\r' | '\n' if !self.pasting => {
                    let line = std::mem::take(&mut self.line);
                    if !line.trim().is_empty() {
                        keys.push(Key::Line(line));
                    } else if waiting && c == '\r' {
                        keys.push(Key::Accept);
                    }
                }
                '\x7f' | '\x08' => {
                    self.line.pop();
                }
                c if c.is_ascii_digit() && waiting && self.line.is_empty() && !self.pasting => {
                    keys.push(Key::Digit(c));
                }
                '\n' | '\t' => self.line.push(c),
                c if c.is_control() => {}
                c => self.line.push(c),
            }
        }
        keys
    }
}

pub(super) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "exit status unknown".into(),
    }
}

/// The agent's stdin is closed; it gets `EXIT_GRACE` to exit, then TERM, then KILL.
pub(super) fn end_agent(pid: u32, inbox: &Receiver<Event>) {
    let exited = |inbox: &Receiver<Event>, within: Duration| {
        let by = Instant::now() + within;
        while let Some(left) = by.checked_duration_since(Instant::now()) {
            match inbox.recv_timeout(left) {
                Ok(Event::Exited(_)) | Err(_) => return true,
                Ok(_) => {}
            }
        }
        false
    };
    if exited(inbox, EXIT_GRACE) {
        return;
    }
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    if !exited(inbox, EXIT_GRACE) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// At most 300 characters of a line, for the transcript and evidence.
pub(super) fn excerpt(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_answer_only_a_waiting_request_and_lines_are_follow_ups() {
        let mut keys = KeyInput::default();
        assert_eq!(keys.feed(b"2", true), [Key::Digit('2')]);
        assert_eq!(
            keys.feed(b"2 more\x7fe\r", false),
            [Key::Line("2 more".into())]
        );
        assert_eq!(
            keys.feed(b"\x1b[200~a\nb\x1b[201~\r", true),
            [Key::Line("a\nb".into())]
        );
        assert!(keys.feed(b"\x1b[A", false).is_empty());
        assert_eq!(keys.feed(b"\x1b", true), [Key::Reject]);
        assert!(keys.feed(b"\x1b", false).is_empty());
        // Enter alone answers a waiting request (allow once); it ends a typed line otherwise.
        assert_eq!(keys.feed(b"\r", true), [Key::Accept]);
        assert!(keys.feed(b"\r", false).is_empty());
        assert_eq!(keys.feed(b"go\r", true), [Key::Line("go".into())]);
    }
}
