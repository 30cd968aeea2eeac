//! Which visible rows a burst of output can have changed, from a second, light parse beside
//! vt100's (the same `vte`): vt100 does not say, and re-reading every row after every burst was
//! most of herd's cost on a streaming agent (#29). The estimate errs only wide: the cursor is
//! followed as a range (lowest row, highest row and column reachable) and every row between
//! counts when something is written; what is not followed (clears, line inserts, scroll regions,
//! the alternate screen, resets) touches every row.

use vte::{Params, Perform};

/// Rows a feed can have written, before its scrolling is accounted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Touched {
    /// Nothing on screen was written (only modes, titles, queries, cursor moves).
    Nothing,
    /// Rows `first..=last` at most.
    Rows { first: u16, last: u16 },
    /// Any row.
    All,
}

impl Touched {
    fn add(&mut self, first: u16, last: u16) {
        *self = match *self {
            Touched::Nothing => Touched::Rows { first, last },
            Touched::Rows { first: f, last: l } => Touched::Rows {
                first: f.min(first),
                last: l.max(last),
            },
            Touched::All => Touched::All,
        };
    }
}

/// The parse that follows one screen's output, carrying partial sequences between feeds.
#[derive(Default)]
pub(super) struct RowTracker {
    parser: vte::Parser,
    /// Where `ESC 7` saved the cursor, as a range, if it was seen.
    saved: Option<CursorRange>,
    /// A scroll region other than the whole screen is set (main or alternate): `on_scroll`
    /// misses its scrolling, so every feed touches every row.
    regioned: [bool; 2],
}

/// The rows and columns the cursor can be at: at least row `lo`, at most (`hi_row`,
/// `hi_col`) in reading order, where `hi_col == cols` is a wrap still pending at the row's end.
/// Printing and moves along a row keep that order; a move up or down that stops at the edge,
/// or to an absolute row, can put the cursor on the bound's row with a larger column, so those
/// give the column's bound up (`down`, `up`).
#[derive(Debug, Clone, Copy)]
struct CursorRange {
    lo: u16,
    hi_row: u16,
    hi_col: u16,
}

impl RowTracker {
    /// Follows `bytes` fed to a screen of `size` with the cursor at `cursor`; what they can have
    /// written.
    pub(super) fn feed(
        &mut self,
        bytes: &[u8],
        cursor: (u16, u16),
        size: (u16, u16),
        alternate: bool,
    ) -> Touched {
        let (rows, cols) = (size.0.max(1), size.1.max(1));
        let mut follow = Follow {
            rows,
            cols,
            at: CursorRange {
                lo: cursor.0.min(rows - 1),
                hi_row: cursor.0.min(rows - 1),
                hi_col: cursor.1.min(cols),
            },
            touched: if self.regioned.contains(&true) {
                Touched::All
            } else {
                Touched::Nothing
            },
            saved: self.saved,
            regioned: self.regioned,
            alternate,
        };
        self.parser.advance(&mut follow, bytes);
        self.saved = follow.saved;
        self.regioned = follow.regioned;
        follow.touched
    }

    /// The screen was resized: a cursor saved before is no longer followed.
    pub(super) fn resized(&mut self) {
        self.saved = None;
    }
}

/// One feed's following of the cursor.
struct Follow {
    rows: u16,
    cols: u16,
    at: CursorRange,
    touched: Touched,
    saved: Option<CursorRange>,
    regioned: [bool; 2],
    /// The alternate screen is shown (as far as this feed's modes tell).
    alternate: bool,
}

impl Follow {
    fn last_row(&self) -> u16 {
        self.rows - 1
    }

    /// The rows the cursor can be on are written.
    fn touch_cursor_rows(&mut self) {
        self.touched.add(self.at.lo, self.at.hi_row);
    }

    fn touch_all(&mut self) {
        self.touched = Touched::All;
        // Where the cursor went is no longer followed; the next feed starts from vt100's.
        self.at = CursorRange {
            lo: 0,
            hi_row: self.last_row(),
            hi_col: self.cols,
        };
        self.saved = None;
    }

    /// A character `width` columns wide at most is printed.
    fn put_char(&mut self, width: u16) {
        let at = &mut self.at;
        if at.hi_col + width > self.cols {
            // It may wrap (a wrap pending, or a wide character that does not fit).
            at.hi_row = (at.hi_row + 1).min(self.rows - 1);
            at.hi_col = width;
        } else {
            at.hi_col += width;
        }
        self.touch_cursor_rows();
    }

    /// Down `count` rows, stopping at the last (giving the column's bound up).
    fn down(&mut self, count: u16) {
        let last = self.last_row();
        self.at.lo = self.at.lo.saturating_add(count).min(last);
        if self.at.hi_row.saturating_add(count) >= last {
            self.at.hi_row = last;
            self.at.hi_col = self.cols;
        } else {
            self.at.hi_row += count;
        }
    }

    /// Up `count` rows, stopping at the first (the column's bound as in `down`).
    fn up(&mut self, count: u16) {
        self.at.lo = self.at.lo.saturating_sub(count);
        if self.at.hi_row <= count {
            self.at.hi_row = 0;
            self.at.hi_col = self.cols;
        } else {
            self.at.hi_row -= count;
        }
    }

    /// The column is set outright (a carriage return, an absolute column).
    fn set_col(&mut self, col: u16) {
        self.at.hi_col = col.min(self.cols - 1);
    }

    /// The column moves right by at most `count` without wrapping.
    fn right(&mut self, count: u16) {
        let moved = self.at.hi_col.saturating_add(count).min(self.cols - 1);
        self.at.hi_col = self.at.hi_col.max(moved);
    }

    fn goto(&mut self, row: u16, col: u16) {
        let row = row.min(self.last_row());
        self.at = CursorRange {
            lo: row,
            hi_row: row,
            hi_col: col.min(self.cols - 1),
        };
    }

    fn set_region(&mut self, params: &Params) {
        let top = first_param(params, 1);
        let bottom = nth_param(params, 1).filter(|&b| b != 0);
        self.regioned[usize::from(self.alternate)] =
            !(top == 1 && bottom.is_none_or(|b| b >= self.rows));
        self.touch_all();
    }

    fn private_mode(&mut self, params: &Params, set: bool) {
        // The alternate screens and origin mode change where rows are or what they show.
        for param in params.iter() {
            match param.first() {
                // vt100 switches screens on these two only.
                Some(47 | 1049) => {
                    self.alternate = set;
                    self.touch_all();
                }
                Some(6 | 1047) => self.touch_all(),
                _ => {}
            }
        }
    }

    fn erase_in_display(&mut self, mode: u16) {
        match mode {
            0 => self.touched.add(self.at.lo, self.last_row()),
            1 => self.touched.add(0, self.at.hi_row),
            _ => self.touch_all(),
        }
    }
}

/// The first parameter, `default` when missing or 0 (as vt100 reads them).
fn first_param(params: &Params, default: u16) -> u16 {
    match params.iter().next().and_then(|p| p.first().copied()) {
        None | Some(0) => default,
        Some(n) => n,
    }
}

fn nth_param(params: &Params, index: usize) -> Option<u16> {
    params.iter().nth(index).and_then(|p| p.first().copied())
}

impl Perform for Follow {
    fn print(&mut self, c: char) {
        if matches!(self.touched, Touched::All) {
            return;
        }
        // ASCII is one column; anything else at most two (a combining mark may widen the last).
        let width = if c.is_ascii() { 1 } else { 2 };
        self.put_char(width);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.down(1),
            b'\r' => self.set_col(0),
            b'\t' => self.right(self.cols),
            // Backspace moves left: the bounds hold. Others write nothing in vt100.
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, c: char) {
        // A region set or reset is followed even when every row is touched already.
        if intermediates.is_empty() && c == 'r' {
            self.set_region(params);
            return;
        }
        // So is the screen shown, whose region the next one sets.
        if intermediates == b"?" && matches!(c, 'h' | 'l') {
            self.private_mode(params, c == 'h');
            return;
        }
        if matches!(self.touched, Touched::All) {
            return;
        }
        let n = first_param(params, 1);
        match (intermediates.first(), c) {
            (None, '@' | 'K' | 'P' | 'X') | (Some(b'?'), 'K') => self.touch_cursor_rows(),
            (None, 'A') => self.up(n),
            (None, 'F') => {
                self.up(n);
                self.set_col(0);
            }
            (None, 'B') => self.down(n),
            (None, 'E') => {
                self.down(n);
                self.set_col(0);
            }
            (None, 'C') => self.right(n),
            (None, 'D') => {}
            (None, 'G' | '`') => self.set_col(n - 1),
            (None, 'H' | 'f') => self.goto(n - 1, nth_param(params, 1).unwrap_or(0).max(1) - 1),
            (None, 'd') => {
                // The column stays: its bound holds only if the row was known.
                if self.at.lo != self.at.hi_row {
                    self.at.hi_col = self.cols;
                }
                let row = (n - 1).min(self.last_row());
                self.at.lo = row;
                self.at.hi_row = row;
            }
            (None, 'J') | (Some(b'?'), 'J') => self.erase_in_display(first_param(params, 0)),
            // Repeating the last character n times: as many characters printed.
            (None, 'b') => {
                let most = u32::from(self.rows) * u32::from(self.cols);
                for _ in 0..u32::from(n).min(most) {
                    self.put_char(2);
                }
            }
            (None, 'L' | 'M' | 'S' | 'T') => self.touch_all(),
            // Styles, modes, queries, cursor shapes: no cell changes.
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        if matches!(self.touched, Touched::All) || !intermediates.is_empty() {
            return;
        }
        match byte {
            b'7' => self.saved = Some(self.at),
            b'8' => match self.saved {
                Some(saved) => self.at = saved,
                None => {
                    self.at = CursorRange {
                        lo: 0,
                        hi_row: self.last_row(),
                        hi_col: self.cols,
                    }
                }
            },
            // Reverse index (scrolls down at the top), reset.
            b'M' | b'c' => self.touch_all(),
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "rows_touched_tests.rs"]
mod tests;
