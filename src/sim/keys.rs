//! Input for the simulator: a thread reads stdin and hands the bytes over; [`Input`] turns them
//! into keys and terminal answers, with deadlines. Parsing is pure.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long a lone ESC waits for the rest of a sequence before it counts as the Esc key.
const ESCAPE_WAIT: Duration = Duration::from_millis(40);

/// A key the user pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    Char(char),
    Enter,
    Escape,
    Backspace,
    Tab,
    CtrlC,
    CtrlD,
    /// Arrows, function keys, other control bytes: ignored by every prompt.
    Other,
}

/// What arrived on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InputEvent {
    Key(Key),
    /// `ESC [ row ; col R`, 1-based.
    CursorPosition {
        row: u16,
        column: u16,
    },
    /// `ESC [ ? ... c`.
    DeviceAttributes,
    /// stdin reached its end (a pipe was closed).
    Closed,
}

/// The outcome of parsing the start of a byte buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Parsed {
    Event {
        event: InputEvent,
        length: usize,
    },
    /// The bytes may be the start of a longer sequence; wait for more (or give up).
    Incomplete,
}

/// Parses one event from the start of `bytes` (which must not be empty).
pub(super) fn parse_event(bytes: &[u8]) -> Parsed {
    let key = |key: Key, length: usize| Parsed::Event {
        event: InputEvent::Key(key),
        length,
    };
    match bytes {
        [] => Parsed::Incomplete,
        [0x1b] => Parsed::Incomplete,
        [0x1b, b'[', rest @ ..] => parse_csi(rest),
        [0x1b, b'O'] => Parsed::Incomplete,
        [0x1b, b'O', _, ..] => key(Key::Other, 3),
        // Alt+key: a printable byte right after ESC.
        [0x1b, byte, ..] if (0x20..0x7f).contains(byte) => key(Key::Other, 2),
        [0x1b, ..] => key(Key::Escape, 1),
        [b'\r' | b'\n', ..] => key(Key::Enter, 1),
        [0x03, ..] => key(Key::CtrlC, 1),
        [0x04, ..] => key(Key::CtrlD, 1),
        [b'\t', ..] => key(Key::Tab, 1),
        [0x7f | 0x08, ..] => key(Key::Backspace, 1),
        [byte, ..] if *byte < 0x20 => key(Key::Other, 1),
        [byte, ..] => parse_utf8(bytes, *byte),
    }
}

/// After `ESC [`: parameters, then a final byte in 0x40..=0x7e.
fn parse_csi(rest: &[u8]) -> Parsed {
    let Some(final_at) = rest.iter().position(|byte| (0x40..=0x7e).contains(byte)) else {
        return Parsed::Incomplete;
    };
    let params = &rest[..final_at];
    let length = 2 + final_at + 1;
    let event = match rest[final_at] {
        b'R' => parse_position(params).map_or(InputEvent::Key(Key::Other), |(row, column)| {
            InputEvent::CursorPosition { row, column }
        }),
        b'c' if params.first() == Some(&b'?') => InputEvent::DeviceAttributes,
        _ => InputEvent::Key(Key::Other),
    };
    Parsed::Event { event, length }
}

fn parse_position(params: &[u8]) -> Option<(u16, u16)> {
    let text = std::str::from_utf8(params).ok()?;
    let (row, column) = text.split_once(';')?;
    Some((row.parse().ok()?, column.parse().ok()?))
}

fn parse_utf8(bytes: &[u8], lead: u8) -> Parsed {
    let length = match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    if bytes.len() < length {
        return Parsed::Incomplete;
    }
    let event = match std::str::from_utf8(&bytes[..length])
        .ok()
        .and_then(|text| text.chars().next())
    {
        Some(ch) => InputEvent::Key(Key::Char(ch)),
        None => InputEvent::Key(Key::Other),
    };
    Parsed::Event { event, length }
}

/// Keys and terminal answers from stdin, read on a background thread.
pub(super) struct Input {
    chunks: Receiver<Vec<u8>>,
    pending: VecDeque<u8>,
    closed: bool,
    /// Keys typed before a question appeared are dropped (terminal only: a pipe's were meant).
    drops_early_keys: bool,
}

impl Input {
    /// Reads this process's stdin.
    pub(super) fn from_stdin(is_terminal: bool) -> Input {
        let (sender, chunks) = mpsc::channel();
        // Not started, the sender goes with the work: the input reads as closed.
        let _ = crate::run::jobs::spawn_thread("sim-keys", move || {
            let mut stdin = std::io::stdin().lock();
            let mut buffer = [0u8; 4096];
            loop {
                match stdin.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(count) => {
                        if sender.send(buffer[..count].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Input {
            chunks,
            pending: VecDeque::new(),
            closed: false,
            drops_early_keys: is_terminal,
        }
    }

    /// Input from fixed bytes, closed after them (tests).
    #[cfg(test)]
    pub(super) fn from_bytes(bytes: &[u8]) -> Input {
        let (sender, chunks) = mpsc::channel();
        let _ = sender.send(bytes.to_vec());
        Input::from_channel(chunks)
    }

    /// Input from a channel that stays open while its sender lives (tests).
    #[cfg(test)]
    pub(super) fn from_channel(chunks: Receiver<Vec<u8>>) -> Input {
        Input {
            chunks,
            pending: VecDeque::new(),
            closed: false,
            drops_early_keys: false,
        }
    }

    /// The next event, or `None` once `deadline` passed. `Closed` repeats once stdin ended.
    pub(super) fn next_event(&mut self, deadline: Option<Instant>) -> Option<InputEvent> {
        loop {
            if !self.pending.is_empty() {
                let bytes: Vec<u8> = self.pending.iter().copied().collect();
                match parse_event(&bytes) {
                    Parsed::Event { event, length } => {
                        self.pending.drain(..length);
                        return Some(event);
                    }
                    Parsed::Incomplete => {
                        if !self.receive(Some(Instant::now() + ESCAPE_WAIT)) {
                            return Some(self.give_up_on_partial());
                        }
                        continue;
                    }
                }
            }
            if self.closed {
                return Some(InputEvent::Closed);
            }
            if !self.receive(deadline) {
                return None;
            }
        }
    }

    /// Drops keys typed before now, on a terminal.
    pub(super) fn drop_early_keys(&mut self) {
        if !self.drops_early_keys {
            return;
        }
        while let Ok(chunk) = self.chunks.try_recv() {
            self.pending.extend(chunk);
        }
        self.pending.clear();
    }

    /// Waits for a chunk until the deadline; false when none came (or stdin ended).
    fn receive(&mut self, deadline: Option<Instant>) -> bool {
        if self.closed {
            return false;
        }
        let received = match deadline {
            None => self
                .chunks
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
            Some(deadline) => self
                .chunks
                .recv_timeout(deadline.saturating_duration_since(Instant::now())),
        };
        match received {
            Ok(chunk) => {
                self.pending.extend(chunk);
                true
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                false
            }
        }
    }

    /// An unfinished sequence that stopped coming: a lone ESC is Esc, anything else is dropped.
    fn give_up_on_partial(&mut self) -> InputEvent {
        if self.pending.front() == Some(&0x1b) {
            self.pending.pop_front();
            if self.pending.is_empty() {
                return InputEvent::Key(Key::Escape);
            }
        }
        self.pending.clear();
        InputEvent::Key(Key::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(bytes: &[u8]) -> Vec<InputEvent> {
        let mut input = Input::from_bytes(bytes);
        let mut seen = Vec::new();
        loop {
            match input.next_event(Some(Instant::now() + Duration::from_millis(200))) {
                Some(InputEvent::Closed) | None => return seen,
                Some(event) => seen.push(event),
            }
        }
    }

    #[test]
    fn keys_and_answers_are_told_apart() {
        use InputEvent::{CursorPosition, DeviceAttributes, Key as K};
        assert_eq!(
            events(b"1p\r\x1b[12;40R\x1b[?64;1;2c\x03\x04\x7fy\x1b[A"),
            vec![
                K(Key::Char('1')),
                K(Key::Char('p')),
                K(Key::Enter),
                CursorPosition {
                    row: 12,
                    column: 40
                },
                DeviceAttributes,
                K(Key::CtrlC),
                K(Key::CtrlD),
                K(Key::Backspace),
                K(Key::Char('y')),
                K(Key::Other),
            ]
        );
    }

    #[test]
    fn lone_escape_is_the_escape_key() {
        assert_eq!(events(b"\x1b"), vec![InputEvent::Key(Key::Escape)]);
        assert_eq!(
            events(b"\x1b\x1b[1;1R"),
            vec![
                InputEvent::Key(Key::Escape),
                InputEvent::CursorPosition { row: 1, column: 1 }
            ]
        );
    }

    #[test]
    fn multibyte_characters_arrive_whole() {
        assert_eq!(
            events("é❯".as_bytes()),
            vec![
                InputEvent::Key(Key::Char('é')),
                InputEvent::Key(Key::Char('❯'))
            ]
        );
        assert_eq!(parse_event(&[0xe2, 0x9d]), Parsed::Incomplete);
    }

    #[test]
    fn a_deadline_passes_without_input() {
        let (_sender, chunks) = mpsc::channel::<Vec<u8>>();
        let mut input = Input::from_channel(chunks);
        let started = Instant::now();
        assert_eq!(
            input.next_event(Some(started + Duration::from_millis(50))),
            None
        );
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}
