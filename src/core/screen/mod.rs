//! The emulated terminal of one agent: vt100 behind a small interface of our own. A feed returns
//! query answers and the rows that scrolled off. History is held compactly, each row as its text
//! and SGR runs, and rebuilt for the scroll view only while the operator looks back. The
//! detectors' `Snapshot` is updated by re-reading only the rows output can have written
//! (`rows_touched`).

pub mod alternate_screen;
pub mod detect;
pub mod marker;
pub mod queries;
pub mod screen_retry;
pub mod styled;

use std::collections::VecDeque;
use std::num::NonZeroU16;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::screen::queries::TerminalQuery;
use rows_touched::{RowTracker, Touched};

mod rows_touched;

/// Rows of history kept above the visible screen (for scrolling back in the dashboard).
pub const SCROLLBACK_ROWS: usize = 2000;

/// What vt100 reports while it parses, collected for the caller.
#[derive(Debug, Default)]
pub struct ParseSignals {
    replies: Vec<u8>,
    /// Rows of the main screen that scrolled off the top during this feed.
    rows_scrolled: usize,
    title: Option<String>,
    bell: bool,
    /// Rows that scrolled off, oldest first, each a self-contained formatted capture.
    history: VecDeque<Box<str>>,
    history_cap: usize,
    /// Where a row is captured before it is stored at its exact size (no regrowth per row).
    scratch: String,
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

    fn on_scroll(&mut self, contents: vt100::capture::RowContents<'_>, alternate: bool) {
        // A full-screen program's own screen is not the session's history.
        if alternate {
            return;
        }
        self.rows_scrolled += 1;
        if self.history_cap == 0 {
            return;
        }
        self.scratch.clear();
        // A fresh state per row, so any window of the history draws on its own.
        let mut state = vt100::capture::BasicFormattedCaptureState::new();
        if contents
            .write_formatted_basic(&mut self.scratch, &mut state)
            .is_ok()
        {
            if self.history.len() == self.history_cap {
                self.history.pop_front();
            }
            self.history.push_back(Box::from(self.scratch.as_str()));
        }
    }
}

/// What one `feed` produced besides the new screen.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FeedOutcome {
    /// Bytes to write back to the agent: answers to the queries it sent, in order.
    pub replies: Vec<u8>,
    /// Text of the rows that scrolled off, oldest first, after up to `context` older rows.
    pub scrolled_rows: Vec<String>,
    /// How many of `scrolled_rows` are context rather than newly scrolled.
    pub context_rows: usize,
    /// The screen rang the bell.
    pub bell: bool,
}

/// What one `Screen::feed_counted` produced besides the new screen.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fed {
    /// Bytes to write back to the agent: answers to the queries it sent, in order.
    pub replies: Vec<u8>,
    /// How many rows scrolled off the top (`Screen::scrolled_rows` reads them).
    pub scrolled: usize,
    /// The screen rang the bell.
    pub bell: bool,
}

/// The visible screen as text at one moment, read once after a change and shared by every
/// detector.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The visible rows, trailing blanks trimmed.
    pub rows: Vec<String>,
    /// The rows joined by line breaks, trailing blank rows dropped (`Screen::text`).
    pub text: String,
    /// The cursor's row, 0-based.
    pub cursor_row: usize,
    /// Absolute row number of `rows[0]`: rows scrolled away before it.
    pub first_row_number: u64,
    /// Which `Screen::update` wrote it last (0: none): only that one is updated row by row.
    stamp: u64,
}

impl PartialEq for Snapshot {
    fn eq(&self, other: &Snapshot) -> bool {
        self.rows == other.rows
            && self.text == other.text
            && self.cursor_row == other.cursor_row
            && self.first_row_number == other.first_row_number
    }
}

impl Eq for Snapshot {}

/// Every `Screen::update` gets a stamp of its own.
static NEXT_STAMP: AtomicU64 = AtomicU64::new(1);

/// What changed on screen since the last `Screen::update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// Rows scrolled off since, and the rows that can have been written, in today's rows.
    Rows { scrolled: usize, touched: Touched },
    /// Anything: every row is read again.
    All,
}

impl Snapshot {
    /// The last `history` rows followed by the visible rows, and how many are history.
    pub fn with_history(&self, history: Vec<String>) -> (Vec<String>, usize) {
        let above = history.len();
        let mut rows = history;
        rows.extend(self.rows.iter().cloned());
        (rows, above)
    }
}

/// One agent's terminal screen.
pub struct Screen {
    parser: vt100::Parser<ParseSignals>,
    /// Rows scrolled off since the screen was created (the visible top's absolute row).
    rows_scrolled_total: u64,
    /// A UTF-8 character cut at the end of the last feed, held back: vte can drop the next byte.
    partial_char: Vec<u8>,
    /// Which rows each feed can have written (`rows_touched`).
    tracker: RowTracker,
    /// What changed since the last `update`, and the stamp it gave its snapshot.
    pending: Pending,
    stamp: u64,
    /// Buffers a row and the text are read into before they are compared with the snapshot's.
    row_scratch: String,
    text_scratch: String,
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
            // No scrollback in vt100: rows leave for the compact history through `on_scroll`.
            parser: vt100::Parser::new_with_callbacks(
                non_zero(rows),
                non_zero(cols),
                0,
                ParseSignals {
                    history_cap: scrollback,
                    ..ParseSignals::default()
                },
            ),
            rows_scrolled_total: 0,
            partial_char: Vec::new(),
            tracker: RowTracker::default(),
            pending: Pending::All,
            stamp: 0,
            row_scratch: String::new(),
            text_scratch: String::new(),
        }
    }

    /// Feeds output bytes; `context` older rows come before newly scrolled ones.
    pub fn feed(&mut self, bytes: &[u8], context: usize) -> FeedOutcome {
        let fed = self.feed_counted(bytes);
        let (scrolled_rows, context_rows) = if fed.scrolled > 0 {
            self.scrolled_rows(fed.scrolled, context)
        } else {
            (Vec::new(), 0)
        };
        FeedOutcome {
            replies: fed.replies,
            scrolled_rows,
            context_rows,
            bell: fed.bell,
        }
    }

    /// `feed`, with the scrolled rows counted, not read (`scrolled_rows` reads them).
    pub fn feed_counted(&mut self, bytes: &[u8]) -> Fed {
        let mut joined;
        let mut bytes = bytes;
        if !self.partial_char.is_empty() {
            joined = std::mem::take(&mut self.partial_char);
            joined.extend_from_slice(bytes);
            bytes = &joined;
        }
        let complete = bytes.len() - incomplete_utf8_tail(bytes);
        self.partial_char.extend_from_slice(&bytes[complete..]);
        let alternate_before = self.parser.screen().alternate_screen();
        let touched = self.tracker.feed(
            &bytes[..complete],
            self.cursor(),
            self.size(),
            alternate_before,
        );
        self.parser.process(&bytes[..complete]);
        let signals = self.parser.callbacks_mut();
        let replies = std::mem::take(&mut signals.replies);
        let scrolled = std::mem::take(&mut signals.rows_scrolled);
        let bell = std::mem::take(&mut signals.bell);
        self.rows_scrolled_total += scrolled as u64;
        // The alternate screen's scrolling is not counted: its rows are read again.
        let alternate = alternate_before || self.parser.screen().alternate_screen();
        self.note_touched(if alternate { Touched::All } else { touched }, scrolled);
        Fed {
            replies,
            scrolled,
            bell,
        }
    }

    /// The newest `count` rows of history and up to `context` rows above them, as text; and how
    /// many are context.
    pub fn scrolled_rows(&self, count: usize, context: usize) -> (Vec<String>, usize) {
        self.history_rows(count, context)
    }

    /// As `scrolled_rows`, with trailing blanks trimmed.
    fn history_rows(&self, count: usize, context: usize) -> (Vec<String>, usize) {
        let history = &self.parser.callbacks().history;
        let len = history.len();
        let count = count.min(len);
        let context = context.min(len - count);
        let rows = history
            .range(len - count - context..)
            .map(|row| {
                let mut text: String = vt100::capture::basic_formatted_to_plain(row).collect();
                trim_end_in_place(&mut text);
                text
            })
            .collect();
        (rows, context)
    }

    /// Rows of history held (at most the scrollback size).
    pub fn history_len(&self) -> usize {
        self.parser.callbacks().history.len()
    }

    /// The screen as it looked `offset` rows further back, without a cursor, and the offset used:
    /// for the scroll view.
    pub fn scrolled_view(&self, offset: usize) -> (vt100::Screen, usize) {
        let (rows, cols) = self.size();
        let history = &self.parser.callbacks().history;
        let offset = offset.min(history.len());
        let visible: Vec<String> = self.parser.screen().rows_formatted(0, cols).collect();
        let total = history.len() + visible.len();
        let end = total - offset;
        let start = end.saturating_sub(usize::from(rows));
        let mut parser = vt100::Parser::new(non_zero(rows), non_zero(cols), 0);
        for line in start..end {
            if line > start {
                parser.process(b"\r\n");
            }
            parser.process(b"\x1b[m");
            match line.checked_sub(history.len()) {
                None => parser.process(history[line].as_bytes()),
                Some(i) => parser.process(visible[i].as_bytes()),
            }
        }
        parser.process(b"\x1b[m\x1b[?25l");
        (parser.screen().clone(), offset)
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(non_zero(rows), non_zero(cols));
        self.tracker.resized();
        self.pending = Pending::All;
    }

    /// Adds a feed's rows to what the next `update` reads.
    fn note_touched(&mut self, touched: Touched, scrolled: usize) {
        let rows = usize::from(self.size().0);
        self.pending = match self.pending {
            Pending::All => Pending::All,
            _ if touched == Touched::All => Pending::All,
            Pending::Rows {
                scrolled: before,
                touched: earlier,
            } => {
                let scrolled_total = before + scrolled;
                if scrolled_total >= rows {
                    Pending::All
                } else {
                    let merged = merge(
                        shift_up(earlier, scrolled),
                        shift_up_wide(touched, scrolled),
                    );
                    Pending::Rows {
                        scrolled: scrolled_total,
                        touched: merged,
                    }
                }
            }
        };
    }

    /// Brings `snapshot` up to date and says whether its text or the cursor's row changed (a
    /// prompt anchored at the cursor waits again when it comes back). The snapshot updated last
    /// moves up by the scrolled rows and re-reads only touched ones; any other is read whole.
    pub fn update(&mut self, snapshot: &mut Snapshot) -> bool {
        let (rows, _) = self.size();
        let rows = usize::from(rows);
        let pending = std::mem::replace(
            &mut self.pending,
            Pending::Rows {
                scrolled: 0,
                touched: Touched::Nothing,
            },
        );
        let ours = snapshot.stamp != 0 && snapshot.stamp == self.stamp;
        match pending {
            Pending::Rows { scrolled, touched } if ours && snapshot.rows.len() == rows => {
                snapshot.rows.drain(..scrolled);
                snapshot.rows.resize_with(rows, String::new);
                if let Touched::Rows { first, last } = touched {
                    let last = usize::from(last).min(rows - 1);
                    for row in usize::from(first)..=last {
                        self.read_row_into_scratch(row);
                        if self.row_scratch != snapshot.rows[row] {
                            std::mem::swap(&mut self.row_scratch, &mut snapshot.rows[row]);
                        }
                    }
                }
            }
            _ => snapshot.rows = self.visible_rows(),
        }
        self.stamp = NEXT_STAMP.fetch_add(1, Ordering::Relaxed);
        snapshot.stamp = self.stamp;
        let cursor_row = usize::from(self.cursor().0);
        let cursor_moved = std::mem::replace(&mut snapshot.cursor_row, cursor_row) != cursor_row;
        snapshot.first_row_number = self.rows_scrolled_total;
        self.text_scratch.clear();
        join_rows_into(&snapshot.rows, &mut self.text_scratch);
        let text_changed = self.text_scratch != snapshot.text;
        if text_changed {
            std::mem::swap(&mut self.text_scratch, &mut snapshot.text);
        }
        text_changed || cursor_moved
    }

    /// Visible row `row` as text into `row_scratch`, in one walk to the row (vt100's `cell`
    /// walks to its row for every cell).
    fn read_row_into_scratch(&mut self, row: usize) {
        let Ok(row) = u16::try_from(row) else {
            self.row_scratch.clear();
            return;
        };
        // The row's text, and a line break unless it wraps onto the next.
        let mut text = self
            .parser
            .screen()
            .contents_between(row, 0, row.saturating_add(1), 0);
        if text.ends_with('\n') {
            text.pop();
        }
        trim_end_in_place(&mut text);
        self.row_scratch = text;
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
        screen_text(&self.visible_rows())
    }

    /// The visible screen read as text once, for every detector to share.
    pub fn snapshot(&self) -> Snapshot {
        let rows = self.visible_rows();
        Snapshot {
            text: screen_text(&rows),
            rows,
            cursor_row: usize::from(self.cursor().0),
            first_row_number: self.rows_scrolled_total,
            stamp: 0,
        }
    }

    /// The last `count` rows of history, oldest first, trailing blanks trimmed.
    pub fn history_tail(&self, count: usize) -> Vec<String> {
        self.history_rows(count, 0).0
    }

    /// The last `history` rows of scrollback followed by the visible rows.
    pub fn rows_with_history(&mut self, history: usize) -> Vec<String> {
        let mut rows = self.history_rows(history, 0).0;
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
}

/// How many bytes at the end of `bytes` start a UTF-8 character still missing bytes.
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

/// Rows joined by line breaks, trailing blank rows dropped.
fn screen_text(rows: &[String]) -> String {
    let mut text = String::new();
    join_rows_into(rows, &mut text);
    text
}

/// `rows` joined by line breaks, trailing blank rows dropped, appended to `text`.
fn join_rows_into(rows: &[String], text: &mut String) {
    let kept = rows
        .iter()
        .rposition(|row| !row.is_empty())
        .map_or(0, |i| i + 1);
    for (i, row) in rows[..kept].iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(row);
    }
}

/// Rows touched before `scrolled` rows went off the top, in today's rows.
fn shift_up(touched: Touched, scrolled: usize) -> Touched {
    match touched {
        Touched::Rows { first, last } => match usize::from(last).checked_sub(scrolled) {
            Some(last) => Touched::Rows {
                first: u16::try_from(usize::from(first).saturating_sub(scrolled)).unwrap_or(0),
                last: u16::try_from(last).unwrap_or(u16::MAX),
            },
            None => Touched::Nothing,
        },
        other => other,
    }
}

/// A feed's rows when `scrolled` rows went off during it: its first row can be up to `scrolled`
/// higher.
fn shift_up_wide(touched: Touched, scrolled: usize) -> Touched {
    match touched {
        Touched::Rows { first, last } => Touched::Rows {
            first: u16::try_from(usize::from(first).saturating_sub(scrolled)).unwrap_or(0),
            last,
        },
        other => other,
    }
}

fn merge(a: Touched, b: Touched) -> Touched {
    match (a, b) {
        (Touched::All, _) | (_, Touched::All) => Touched::All,
        (Touched::Nothing, x) | (x, Touched::Nothing) => x,
        (
            Touched::Rows {
                first: f1,
                last: l1,
            },
            Touched::Rows {
                first: f2,
                last: l2,
            },
        ) => Touched::Rows {
            first: f1.min(f2),
            last: l1.max(l2),
        },
    }
}

fn trim_end_in_place(row: &mut String) {
    let trimmed = row.trim_end().len();
    row.truncate(trimmed);
}

#[cfg(test)]
mod tests;
