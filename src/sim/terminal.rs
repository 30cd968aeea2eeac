//! The simulator's screen output, drawn inline like Ink-based CLIs: finished rows scroll away;
//! the live region under them is erased and repainted in place. Also the size and raw mode.

use std::io::{self, IsTerminal, Write};

use super::draw::Region;

/// Size used when the output is not a terminal and `COLUMNS`/`LINES` are not set.
const FALLBACK_SIZE: (usize, usize) = (120, 40);

/// Where the screen size comes from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Size {
    /// Fixed, for tests.
    #[cfg(test)]
    Fixed { columns: usize, rows: usize },
    /// The window size of stdout, asked again on every draw so resizes are followed.
    OfStdout,
}

/// Inline screen output with one live region at the bottom.
pub(super) struct Terminal<W: Write> {
    out: W,
    size: Size,
    /// The region on screen now (empty rows: none).
    shown: Region,
    /// The region row the cursor rests on.
    cursor_row: usize,
    /// Wrap every repaint in synchronized-update marks (`CSI ?2026h` ... `l`), as Codex does.
    synchronized: bool,
    cursor_hidden: bool,
}

impl<W: Write> Terminal<W> {
    pub(super) fn new(out: W, size: Size) -> Terminal<W> {
        Terminal {
            out,
            size,
            shown: Region::default(),
            cursor_row: 0,
            synchronized: false,
            cursor_hidden: false,
        }
    }

    /// Everything written so far (tests).
    #[cfg(test)]
    pub(super) fn output(&self) -> &W {
        &self.out
    }

    /// Columns of the screen.
    pub(super) fn width(&self) -> usize {
        self.size().0
    }

    /// (columns, rows).
    pub(super) fn size(&self) -> (usize, usize) {
        match self.size {
            #[cfg(test)]
            Size::Fixed { columns, rows } => (columns, rows),
            Size::OfStdout => stdout_size(),
        }
    }

    pub(super) fn set_synchronized(&mut self, synchronized: bool) {
        self.synchronized = synchronized;
    }

    /// Hides the cursor until `finish`.
    pub(super) fn hide_cursor(&mut self) -> io::Result<()> {
        self.cursor_hidden = true;
        self.write_raw("\x1b[?25l")
    }

    /// Bytes as they are (titles, queries, cursor visibility).
    pub(super) fn write_raw(&mut self, bytes: &str) -> io::Result<()> {
        self.out.write_all(bytes.as_bytes())?;
        self.out.flush()
    }

    /// Writes finished rows above the live region, which is repainted under them.
    pub(super) fn commit(&mut self, rows: &[String]) -> io::Result<()> {
        let mut frame = self.begin_frame();
        let region = self.shown.clone();
        self.erase_into(&mut frame);
        for row in rows {
            frame.push_str(row);
            if row.contains('\x1b') {
                frame.push_str("\x1b[0m");
            }
            frame.push_str("\r\n");
        }
        self.paint_into(&mut frame, region);
        self.end_frame(frame)
    }

    /// Replaces the live region.
    pub(super) fn show(&mut self, region: Region) -> io::Result<()> {
        let mut frame = self.begin_frame();
        self.erase_into(&mut frame);
        self.paint_into(&mut frame, region);
        self.end_frame(frame)
    }

    /// Erases the live region; the cursor ends where it began.
    pub(super) fn clear(&mut self) -> io::Result<()> {
        self.show(Region::default())
    }

    /// Leaves the region on screen and shows the cursor below it, as a CLI does when it exits.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        let mut frame = String::new();
        let height = self.shown.rows.len();
        if height > 0 {
            let below = height - 1 - self.cursor_row;
            if below > 0 {
                frame.push_str(&format!("\x1b[{below}B"));
            }
            frame.push_str("\r\n");
        }
        if self.cursor_hidden {
            frame.push_str("\x1b[0m\x1b[?25h");
            self.cursor_hidden = false;
        }
        self.shown = Region::default();
        self.cursor_row = 0;
        self.out.write_all(frame.as_bytes())?;
        self.out.flush()
    }

    /// Writes a large block of bytes (a flood), no region handling.
    pub(super) fn write_bulk(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    pub(super) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn begin_frame(&self) -> String {
        if self.synchronized {
            "\x1b[?2026h".to_string()
        } else {
            String::new()
        }
    }

    fn end_frame(&mut self, mut frame: String) -> io::Result<()> {
        if self.synchronized {
            frame.push_str("\x1b[?2026l");
        }
        self.out.write_all(frame.as_bytes())?;
        self.out.flush()
    }

    /// Erases the shown region bottom up; leaves the cursor at its first row, column 1.
    fn erase_into(&mut self, frame: &mut String) {
        let height = self.shown.rows.len();
        if height == 0 {
            return;
        }
        let below = height - 1 - self.cursor_row;
        if below > 0 {
            frame.push_str(&format!("\x1b[{below}B"));
        }
        for row in 0..height {
            frame.push_str("\x1b[2K");
            if row + 1 < height {
                frame.push_str("\x1b[1A");
            }
        }
        frame.push('\r');
        self.shown = Region::default();
        self.cursor_row = 0;
    }

    /// Paints a region from the cursor's row (column 1) down and parks the cursor.
    fn paint_into(&mut self, frame: &mut String, region: Region) {
        let height = region.rows.len();
        if height == 0 {
            return;
        }
        for (index, row) in region.rows.iter().enumerate() {
            frame.push_str(row);
            if row.contains('\x1b') {
                frame.push_str("\x1b[0m");
            }
            if index + 1 < height {
                frame.push_str("\r\n");
            }
        }
        let (cursor_row, cursor_column) = region.cursor.unwrap_or((height - 1, 0));
        let cursor_row = cursor_row.min(height - 1);
        let up = height - 1 - cursor_row;
        if up > 0 {
            frame.push_str(&format!("\x1b[{up}A"));
        }
        if cursor_column > 0 {
            frame.push('\r');
            if cursor_column > 1 {
                frame.push_str(&format!("\x1b[{}C", cursor_column - 1));
            }
        }
        self.cursor_row = cursor_row;
        self.shown = region;
    }
}

fn stdout_size() -> (usize, usize) {
    let stdout = io::stdout();
    if stdout.is_terminal()
        && let Ok(size) = rustix::termios::tcgetwinsize(&stdout)
        && size.ws_col > 0
        && size.ws_row > 0
    {
        return (usize::from(size.ws_col), usize::from(size.ws_row));
    }
    let from_env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse::<usize>().ok())
            .filter(|&value| value > 0)
    };
    (
        from_env("COLUMNS").unwrap_or(FALLBACK_SIZE.0),
        from_env("LINES").unwrap_or(FALLBACK_SIZE.1),
    )
}

/// Raw mode on the controlling terminal while alive; restored when dropped (also on panic).
pub(super) struct RawMode {
    enabled: bool,
}

impl RawMode {
    /// Raw mode when stdin is a terminal; a no-op guard otherwise.
    pub(super) fn enable_if_terminal() -> io::Result<RawMode> {
        if !io::stdin().is_terminal() {
            return Ok(RawMode { enabled: false });
        }
        crossterm::terminal::enable_raw_mode()?;
        Ok(RawMode { enabled: true })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if self.enabled {
            // Nothing sensible is left to do if restoring fails while exiting.
            let _ = crossterm::terminal::disable_raw_mode();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen_of(bytes: &[u8]) -> vt100::Parser {
        let size = |value: u16| std::num::NonZeroU16::new(value).expect("non-zero");
        let mut parser = vt100::Parser::new(size(10), size(30), 0);
        parser.process(bytes);
        parser
    }

    fn rows(parser: &vt100::Parser) -> Vec<String> {
        parser
            .screen()
            .rows(0, 30)
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    #[test]
    fn region_is_repainted_and_commits_go_above_it() {
        let mut terminal = Terminal::new(
            Vec::new(),
            Size::Fixed {
                columns: 30,
                rows: 10,
            },
        );
        terminal.commit(&["first".to_string()]).expect("write");
        let region = |text: &str| Region {
            rows: vec![text.to_string(), "──".to_string(), "> ".to_string()],
            cursor: Some((2, 3)),
        };
        terminal.show(region("spinner 1")).expect("write");
        terminal.show(region("spinner 2")).expect("write");
        terminal.commit(&["second".to_string()]).expect("write");
        let parser = screen_of(&terminal.out);
        assert_eq!(
            &rows(&parser)[..5],
            &["first", "second", "spinner 2", "──", ">"]
        );
        assert_eq!(parser.screen().cursor_position(), (4, 2));
        terminal.clear().expect("write");
        terminal.commit(&["third".to_string()]).expect("write");
        let parser = screen_of(&terminal.out);
        assert_eq!(&rows(&parser)[..4], &["first", "second", "third", ""]);
    }

    #[test]
    fn finish_moves_below_the_region_and_shows_the_cursor() {
        let mut terminal = Terminal::new(
            Vec::new(),
            Size::Fixed {
                columns: 30,
                rows: 10,
            },
        );
        terminal.hide_cursor().expect("write");
        terminal
            .show(Region {
                rows: vec!["a".into(), "b".into(), "c".into()],
                cursor: Some((0, 2)),
            })
            .expect("write");
        terminal.finish().expect("write");
        let parser = screen_of(&terminal.out);
        assert_eq!(parser.screen().cursor_position(), (3, 0));
        assert!(!parser.screen().hide_cursor());
    }
}
