//! The emulated terminal of one agent: vt100 behind a small interface of our own.
//!
//! Feeding bytes updates the screen and returns what the detectors need besides the screen
//! itself: answers to terminal queries (in stream order, with the cursor as it was at the query)
//! and the rows that scrolled off the top since the last feed. Pure: no I/O.

use std::num::NonZeroU16;

use super::queries::TerminalQuery;

/// Rows of history kept above the visible screen (for scrolling back in the dashboard).
pub const SCROLLBACK_ROWS: usize = 2000;

/// What vt100 reports while it parses, collected for the caller.
#[derive(Debug, Default)]
pub struct ParseSignals {
    replies: Vec<u8>,
    rows_dropped: usize,
    title: Option<String>,
    bell: bool,
}

impl vt100::Callbacks for ParseSignals {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.bell = true;
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if let Some(query) = TerminalQuery::from_csi(i1, i2, params, c, screen.cursor_position()) {
            self.replies.extend(query.answer());
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        if let Some(query) = TerminalQuery::from_osc(params) {
            self.replies.extend(query.answer());
        }
    }

    fn on_scroll(&mut self, _contents: vt100::capture::RowContents<'_>, _alternate: bool) {
        self.rows_dropped += 1;
    }
}

/// What one `feed` produced besides the new screen.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FeedOutcome {
    /// Bytes to write back to the agent: answers to the queries it sent, in order.
    pub replies: Vec<u8>,
    /// Text of the rows that scrolled off the top, oldest first (at most the scrollback size),
    /// preceded by up to `context` older rows that had already scrolled away.
    pub scrolled_rows: Vec<String>,
    /// How many of `scrolled_rows` are context rather than newly scrolled.
    pub context_rows: usize,
    /// The screen rang the bell.
    pub bell: bool,
}

/// One agent's terminal screen.
pub struct Screen {
    parser: vt100::Parser<ParseSignals>,
    /// Rows scrolled off the top since the screen was created (the absolute row of the visible
    /// top row).
    rows_scrolled_total: u64,
    /// The start of a UTF-8 character cut off at the end of the last feed, held back because
    /// vte mishandles a character split across two `process` calls (it can drop the next byte).
    partial_char: Vec<u8>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.size();
        f.debug_struct("Screen")
            .field("rows", &rows)
            .field("cols", &cols)
            .finish()
    }
}

fn non_zero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    pub fn new(rows: u16, cols: u16) -> Screen {
        Screen::with_scrollback(rows, cols, SCROLLBACK_ROWS)
    }

    pub fn with_scrollback(rows: u16, cols: u16, scrollback: usize) -> Screen {
        Screen {
            parser: vt100::Parser::new_with_callbacks(
                non_zero(rows),
                non_zero(cols),
                scrollback,
                ParseSignals::default(),
            ),
            rows_scrolled_total: 0,
            partial_char: Vec::new(),
        }
    }

    /// Feeds output bytes; `context` older rows are returned before newly scrolled rows so that a
    /// line can be read together with what stood above it.
    pub fn feed(&mut self, bytes: &[u8], context: usize) -> FeedOutcome {
        let before = self.parser.screen().scrollback_len();
        let mut joined;
        let mut bytes = bytes;
        if !self.partial_char.is_empty() {
            joined = std::mem::take(&mut self.partial_char);
            joined.extend_from_slice(bytes);
            bytes = &joined;
        }
        let complete = bytes.len() - incomplete_utf8_tail(bytes);
        self.partial_char.extend_from_slice(&bytes[complete..]);
        self.parser.process(&bytes[..complete]);
        let signals = self.parser.callbacks_mut();
        let replies = std::mem::take(&mut signals.replies);
        let dropped = std::mem::take(&mut signals.rows_dropped);
        let bell = std::mem::take(&mut signals.bell);
        let after = self.parser.screen().scrollback_len();
        let alternate = self.parser.screen().alternate_screen();
        let scrolled = if alternate {
            0
        } else {
            after.saturating_sub(before) + dropped
        };
        self.rows_scrolled_total += scrolled as u64;
        let (scrolled_rows, context_rows) = if scrolled > 0 {
            self.history_rows(scrolled, context)
        } else {
            (Vec::new(), 0)
        };
        FeedOutcome {
            replies,
            scrolled_rows,
            context_rows,
            bell,
        }
    }

    /// The newest `count` rows of history (plus up to `context` above them), oldest first.
    fn history_rows(&mut self, count: usize, context: usize) -> (Vec<String>, usize) {
        let len = self.parser.screen().scrollback_len();
        let count = count.min(len);
        let context = context.min(len - count);
        let wanted = count + context;
        let (rows, cols) = self.size();
        let mut out = Vec::with_capacity(wanted);
        // Scrolling back by `offset` rows shows history rows [len-offset, len-offset+rows).
        let mut offset = wanted;
        while out.len() < wanted {
            self.parser.screen_mut().set_scrollback(offset);
            let take = (wanted - out.len()).min(usize::from(rows));
            out.extend(self.parser.screen().rows(0, cols).take(take));
            offset -= take;
        }
        self.parser.screen_mut().set_scrollback(0);
        for row in &mut out {
            trim_end_in_place(row);
        }
        (out, context)
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(non_zero(rows), non_zero(cols));
    }

    /// (rows, cols)
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// Cursor (row, col), 0-based.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// Absolute row number of the visible top row: rows scrolled away so far.
    pub fn rows_scrolled_total(&self) -> u64 {
        self.rows_scrolled_total
    }

    /// The visible rows as text, trailing blanks trimmed.
    pub fn visible_rows(&self) -> Vec<String> {
        let (_, cols) = self.size();
        self.parser
            .screen()
            .rows(0, cols)
            .map(|mut row| {
                trim_end_in_place(&mut row);
                row
            })
            .collect()
    }

    /// The visible screen as text, one line per row, trailing blank rows dropped.
    pub fn text(&self) -> String {
        let mut rows = self.visible_rows();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        rows.join("\n")
    }

    /// The last `history` rows of scrollback followed by the visible rows.
    pub fn rows_with_history(&mut self, history: usize) -> Vec<String> {
        let len = self.parser.screen().scrollback_len();
        let history = history.min(len);
        let mut rows = if history > 0 {
            self.history_rows(history, 0).0
        } else {
            Vec::new()
        };
        rows.extend(self.visible_rows());
        rows
    }

    /// Whether visible row `row` continues on the next row (soft-wrapped).
    pub fn row_wrapped(&self, row: u16) -> bool {
        self.parser.screen().row_wrapped(row)
    }

    pub fn title(&self) -> Option<&str> {
        self.parser.callbacks().title.as_deref()
    }

    /// The vt100 screen, for drawing.
    pub fn vt(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// The vt100 screen, for scrolling the view back (drawing code resets it after).
    pub fn vt_mut(&mut self) -> &mut vt100::Screen {
        self.parser.screen_mut()
    }
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 character still missing its
/// continuation bytes.
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: look further back for the lead byte
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0, // ASCII or an invalid lead byte: nothing to hold back
        };
        return if needed > back { back } else { 0 };
    }
    0
}

fn trim_end_in_place(row: &mut String) {
    let trimmed = row.trim_end().len();
    row.truncate(trimmed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_follows_cursor_moves() {
        let mut s = Screen::new(5, 40);
        s.feed(b"Claude\x1b[13GCode\r\n\x1b[3;5Hdown here", 0);
        assert_eq!(s.visible_rows()[0], "Claude      Code");
        assert_eq!(s.visible_rows()[2], "    down here");
    }

    #[test]
    fn queries_are_answered_with_the_cursor_at_the_query() {
        let mut s = Screen::new(10, 40);
        let out = s.feed(b"ab\x1b[6ncd\x1b[c", 0);
        assert_eq!(out.replies, b"\x1b[1;3R\x1b[?62;22c");
    }

    #[test]
    fn queries_split_across_feeds_are_answered_once() {
        let mut s = Screen::new(10, 40);
        let a = s.feed(b"x\x1b[", 0);
        let b = s.feed(b"6n", 0);
        assert!(a.replies.is_empty());
        assert_eq!(b.replies, b"\x1b[1;2R");
    }

    #[test]
    fn a_character_split_across_feeds_keeps_what_follows() {
        let mut s = Screen::new(5, 40);
        s.feed(b"x \xc2", 0);
        s.feed(b"\xb7 \xe2\x86", 0);
        s.feed(b"\x90!", 0);
        assert_eq!(s.visible_rows()[0], "x · ←!");
    }

    #[test]
    fn incomplete_tails_are_measured() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail(b"a\xc2"), 1);
        assert_eq!(incomplete_utf8_tail(b"a\xe2\x86"), 2);
        assert_eq!(incomplete_utf8_tail("a←".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(b"\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_utf8_tail(b"\x86\x90"), 0);
    }

    #[test]
    fn scrolled_rows_come_back_in_order_with_context() {
        let mut s = Screen::new(3, 20);
        s.feed(b"one\r\ntwo\r\nthree", 0);
        let out = s.feed(b"\r\nfour\r\nfive", 1);
        assert_eq!(out.scrolled_rows, ["one", "two"]);
        assert_eq!(out.context_rows, 0);
        let out = s.feed(b"\r\nsix", 1);
        assert_eq!(out.scrolled_rows, ["two", "three"]);
        assert_eq!(out.context_rows, 1);
        assert_eq!(s.rows_scrolled_total(), 3);
        assert_eq!(s.visible_rows(), ["four", "five", "six"]);
    }

    #[test]
    fn a_flood_larger_than_the_screen_keeps_every_scrolled_row() {
        let mut s = Screen::with_scrollback(4, 20, 100);
        let text: String = (0..30).map(|i| format!("line {i}\r\n")).collect();
        let out = s.feed(text.as_bytes(), 0);
        assert_eq!(out.scrolled_rows.len(), 27);
        assert_eq!(out.scrolled_rows[0], "line 0");
        assert_eq!(out.scrolled_rows[26], "line 26");
    }

    #[test]
    fn history_past_capacity_is_still_counted() {
        let mut s = Screen::with_scrollback(2, 20, 3);
        let text: String = (0..10).map(|i| format!("l{i}\r\n")).collect();
        let out = s.feed(text.as_bytes(), 0);
        assert_eq!(s.rows_scrolled_total(), 9);
        assert_eq!(out.scrolled_rows, ["l6", "l7", "l8"]);
    }
}
