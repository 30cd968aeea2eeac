//! The replayed terminal: a vt100 parser fed with a recording's events, and snapshots of it to
//! seek from. A snapshot is the screen alone, restored into a fresh parser, so it is taken only
//! between escape sequences ([`Term::at_ground`]). Pure.

use std::num::NonZeroU16;

use super::cast::{Event, EventKind, parse_size};

/// Bytes one vt100 cell takes (vt100 asserts this size).
const CELL_BYTES: usize = 32;

/// Where the escape-sequence parser stands between two events (vte 0.15's states, merged where
/// their exits are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seq {
    Ground,
    Escape,
    EscapeIntermediate,
    Csi,
    Dcs,
    Osc,
    /// SOS, PM, APC: only CAN, SUB or ESC end them.
    Opaque,
}

impl Seq {
    /// The state after `bytes`: any ESC leads to `Escape`, so only bytes after the last matter.
    fn after(self, bytes: &[u8]) -> Seq {
        let (mut state, rest) = match bytes.iter().rposition(|&b| b == 0x1b) {
            Some(at) => (Seq::Escape, &bytes[at + 1..]),
            None if self == Seq::Ground => return Seq::Ground,
            None => (self, bytes),
        };
        for &byte in rest {
            state = state.step(byte);
        }
        state
    }

    fn step(self, byte: u8) -> Seq {
        if matches!(byte, 0x18 | 0x1a) && self != Seq::Ground {
            return Seq::Ground;
        }
        match self {
            Seq::Ground => Seq::Ground,
            Seq::Escape => match byte {
                0x20..=0x2f => Seq::EscapeIntermediate,
                b'P' => Seq::Dcs,
                b'[' => Seq::Csi,
                b']' => Seq::Osc,
                b'X' | b'^' | b'_' => Seq::Opaque,
                0x30..=0x7e => Seq::Ground,
                _ => Seq::Escape,
            },
            Seq::EscapeIntermediate => match byte {
                0x30..=0x7e => Seq::Ground,
                _ => Seq::EscapeIntermediate,
            },
            Seq::Csi => match byte {
                0x40..=0x7e => Seq::Ground,
                _ => Seq::Csi,
            },
            Seq::Osc => match byte {
                0x07 => Seq::Ground,
                _ => Seq::Osc,
            },
            // vte may also leave these on 0x9c; staying is the safe side (no snapshot here).
            Seq::Dcs | Seq::Opaque => self,
        }
    }
}

/// Collects the window title; everything else vt100 reports is of no use to a replay.
#[derive(Debug, Default, Clone)]
struct TitleWatch {
    title: Option<String>,
}

impl vt100::Callbacks for TitleWatch {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }
}

/// A saved terminal: restoring it gives the very screen it was taken from.
#[derive(Debug, Clone)]
pub struct Snapshot {
    screen: vt100::Screen,
    title: Option<String>,
}

impl Snapshot {
    /// Approximate heap bytes held: the cells of both grids and the scrollback.
    pub fn bytes(&self) -> usize {
        let (rows, cols) = self.screen.size();
        let rows = usize::from(rows.get()) * 2 + self.screen.scrollback_len();
        rows * usize::from(cols.get()) * CELL_BYTES
            + self.title.as_ref().map_or(0, String::capacity)
    }
}

/// The terminal a recording is played into.
pub struct Term {
    parser: vt100::Parser<TitleWatch>,
    seq: Seq,
    scrollback: usize,
}

/// Rows kept above a replayed screen of `rows` rows, for a resize that makes it taller.
pub fn scrollback_for(rows: u16) -> usize {
    (usize::from(rows) * 2).clamp(48, usize::from(super::cast::MAX_ROWS))
}

fn non_zero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl Term {
    /// A blank terminal of the recorded size, `scrollback` rows kept above it.
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Term {
        Term {
            parser: vt100::Parser::new_with_callbacks(
                non_zero(rows),
                non_zero(cols),
                scrollback,
                TitleWatch::default(),
            ),
            seq: Seq::Ground,
            scrollback,
        }
    }

    /// Applies one event; returns whether the screen may have changed.
    pub fn apply(&mut self, event: &Event) -> bool {
        match event.kind {
            EventKind::Output => {
                self.parser.process(event.data.as_bytes());
                self.seq = self.seq.after(event.data.as_bytes());
                true
            }
            EventKind::Resize => match parse_size(&event.data) {
                Some((cols, rows)) => {
                    self.parser.set_size(non_zero(rows), non_zero(cols));
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// Whether the stream stands between escape sequences, where a snapshot is exact.
    pub fn at_ground(&self) -> bool {
        self.seq == Seq::Ground
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut screen = self.parser.screen().clone();
        screen.set_scrollback(0);
        Snapshot {
            screen,
            title: self.parser.callbacks().title.clone(),
        }
    }

    pub fn restore(&mut self, snapshot: &Snapshot) {
        let (rows, cols) = snapshot.screen.size();
        let mut parser = vt100::Parser::new_with_callbacks(
            rows,
            cols,
            self.scrollback,
            TitleWatch {
                title: snapshot.title.clone(),
            },
        );
        *parser.screen_mut() = snapshot.screen.clone();
        self.parser = parser;
        self.seq = Seq::Ground;
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub fn title(&self) -> Option<&str> {
        self.parser.callbacks().title.as_deref()
    }

    /// (rows, cols)
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// The visible screen as text, as `core::screen::Screen::text` gives it.
    pub fn text(&self) -> String {
        screen_text(self.parser.screen())
    }
}

/// The visible rows of a vt100 screen as text, as `core::screen::Screen::text` shows them.
pub fn screen_text(screen: &vt100::Screen) -> String {
    let cols = screen.size().1.get();
    let mut rows: Vec<String> = screen
        .rows(0, cols)
        .map(|row| row.trim_end().to_string())
        .collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(data: &str) -> Event {
        Event {
            time: 0.0,
            kind: EventKind::Output,
            data: data.to_string(),
            line: 2,
        }
    }

    #[test]
    fn the_ground_state_follows_sequences_split_across_events() {
        let cases: &[(&str, bool)] = &[
            ("plain text ❯", true),
            ("\x1b[38;5;", false),
            ("\x1b[31mred", true),
            ("\x1b]0;title", false),
            ("\x1b]0;title\x07", true),
            ("\x1b]0;title\x1b\\", true),
            ("\x1bP1$r", false),
            ("\x1bP1$r\x1b\\", true),
            ("\x1b_apc \x07 still", false),
            ("\x1b(", false),
            ("\x1b(B", true),
            ("\x1b", false),
            ("\x1b[12\x18", true),
        ];
        for (data, ground) in cases {
            let mut term = Term::new(5, 20, 0);
            term.apply(&out(data));
            assert_eq!(term.at_ground(), *ground, "{data:?}");
        }
        let mut term = Term::new(5, 20, 0);
        term.apply(&out("\x1b[1"));
        term.apply(&out("2"));
        assert!(!term.at_ground());
        term.apply(&out("Gx"));
        assert!(term.at_ground());
    }

    #[test]
    fn a_restored_snapshot_continues_like_the_original() {
        let mut term = Term::new(4, 20, 8);
        term.apply(&out("\x1b]0;hello\x07\x1b[2;3r\x1b[31mone\r\ntwo\x1b7"));
        let snap = term.snapshot();
        let tail = out("\r\nthree\r\nfour\r\nfive\x1b8X\x1b[m");
        term.apply(&tail);
        let mut other = Term::new(1, 1, 8);
        other.restore(&snap);
        other.apply(&tail);
        assert_eq!(
            other.screen().contents_formatted(),
            term.screen().contents_formatted()
        );
        assert_eq!(other.title(), Some("hello"));
        assert!(snap.bytes() >= 4 * 20 * 32);
    }

    #[test]
    fn resizes_apply_and_bad_ones_are_ignored() {
        let mut term = Term::new(4, 20, 0);
        let resize = |data: &str| Event {
            kind: EventKind::Resize,
            ..out(data)
        };
        assert!(term.apply(&resize("30x6")));
        assert_eq!(term.size(), (6, 30));
        assert!(!term.apply(&resize("wide")));
        assert!(term.apply(&resize("0x0")));
        assert_eq!(term.size(), (1, 1));
    }
}
