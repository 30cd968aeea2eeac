//! The vt100 → ratatui painter of the dashboard's panes and the replay player. Our own rather
//! than `tui-term` (which pins an older vt100): besides the ~40-line cell copy, panes need the
//! rows to show when the screen is taller, the prompt's rows marked, wide characters clipped and
//! the cursor handed back.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};

/// How the rows of a waiting prompt are marked.
pub const HIGHLIGHT: Style = Style::new().bg(Color::Indexed(58));

/// The lowest row of `vt` holding any visible character.
fn last_row_with_text(vt: &vt100::Screen) -> Option<u16> {
    let (rows, cols) = vt.size();
    (0..rows.get()).rev().find(|&row| {
        (0..cols.get()).any(|col| {
            vt.cell(row, col)
                .is_some_and(|c| c.has_contents() && c.contents() != " ")
        })
    })
}

/// Copies the agent's screen into `area`, `highlight` rows marked. Returns the visible cursor.
pub fn screen(
    vt: &vt100::Screen,
    area: Rect,
    buf: &mut Buffer,
    highlight: Option<(usize, usize)>,
) -> Option<Position> {
    let (rows, cols) = vt.size();
    let (rows, cols) = (rows.get(), cols.get());
    let (cursor_row, cursor_col) = vt.cursor_position();
    let first = first_shown_row(vt, area.height);
    let visible_rows = rows.saturating_sub(first).min(area.height);
    let visible_cols = cols.min(area.width);
    for r in 0..visible_rows {
        let row = first + r;
        let y = area.y + r;
        let marked = highlight.is_some_and(|(a, b)| (a..=b).contains(&usize::from(row)));
        let mut c = 0;
        while c < visible_cols {
            let x = area.x + c;
            let Some(cell) = vt.cell(row, c) else {
                break;
            };
            let wide = cell.is_wide();
            let fits = !wide || c + 1 < visible_cols;
            if let Some(out) = buf.cell_mut((x, y)) {
                if cell.has_contents() && fits {
                    out.set_symbol(cell.contents());
                } else {
                    out.set_symbol(" ");
                }
                out.set_style(cell_style(cell));
            }
            if wide && fits {
                if let Some(next) = buf.cell_mut((x + 1, y)) {
                    next.reset();
                    next.set_style(cell_style(cell));
                }
                c += 2;
            } else {
                c += 1;
            }
        }
        if marked {
            for c in 0..area.width {
                if let Some(out) = buf.cell_mut((area.x + c, y)) {
                    out.set_bg(HIGHLIGHT.bg.unwrap_or(Color::Reset));
                }
            }
        }
    }
    let visible = !vt.hide_cursor()
        && vt.scrollback() == 0
        && cursor_row >= first
        && cursor_row - first < visible_rows
        && cursor_col < visible_cols;
    visible.then(|| Position::new(area.x + cursor_col, area.y + cursor_row - first))
}

/// The screen's first row shown in `height` rows: for a screen taller than the pane, its bottom,
/// where prompts are (the lower of the cursor and the last row with text).
fn first_shown_row(vt: &vt100::Screen, height: u16) -> u16 {
    let (cursor_row, _) = vt.cursor_position();
    let bottom = cursor_row.max(last_row_with_text(vt).unwrap_or(0));
    if vt.scrollback() == 0 && bottom >= height {
        bottom + 1 - height
    } else {
        0
    }
}

/// The rows of `area` where text is hidden past its right edge.
pub fn rows_cut_on_the_right(vt: &vt100::Screen, area: Rect) -> Vec<u16> {
    let (rows, cols) = vt.size();
    let (rows, cols) = (rows.get(), cols.get());
    if cols <= area.width {
        return Vec::new();
    }
    let first = first_shown_row(vt, area.height);
    (0..rows.saturating_sub(first).min(area.height))
        .filter(|r| {
            (area.width..cols).any(|c| {
                vt.cell(first + r, c)
                    .is_some_and(|cell| cell.has_contents() && cell.contents() != " ")
            })
        })
        .map(|r| area.y + r)
        .collect()
}

fn cell_style(cell: &vt100::Cell) -> Style {
    let mut style = Style::new()
        .fg(color(cell.fgcolor()))
        .bg(color(cell.bgcolor()));
    let mut modifier = Modifier::empty();
    if cell.bold() {
        modifier |= Modifier::BOLD;
    }
    if cell.dim() {
        modifier |= Modifier::DIM;
    }
    if cell.italic() {
        modifier |= Modifier::ITALIC;
    }
    if cell.underline() {
        modifier |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        modifier |= Modifier::REVERSED;
    }
    if !modifier.is_empty() {
        style = style.add_modifier(modifier);
    }
    style
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::screen::Screen;

    fn draw(bytes: &[u8], w: u16, h: u16) -> (Buffer, Option<Position>) {
        draw_in(bytes, w, h, w)
    }

    /// A `w` x `h` screen drawn `area_w` columns wide.
    fn draw_in(bytes: &[u8], w: u16, h: u16, area_w: u16) -> (Buffer, Option<Position>) {
        let mut screen = Screen::new(h, w);
        screen.feed(bytes, 0);
        let area = Rect::new(0, 0, area_w, h);
        let mut buf = Buffer::empty(area);
        let cursor = super::screen(screen.vt(), area, &mut buf, Some((1, 1)));
        (buf, cursor)
    }

    #[test]
    fn colours_and_attributes_are_copied() {
        let (buf, cursor) = draw(b"\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[7mX", 12, 3);
        assert_eq!(buf[(0, 0)].symbol(), "r");
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(1));
        assert!(buf[(0, 0)].modifier.contains(Modifier::BOLD));
        assert_eq!(buf[(4, 0)].fg, Color::Rgb(1, 2, 3));
        assert!(buf[(7, 0)].modifier.contains(Modifier::REVERSED));
        assert_eq!(cursor, Some(Position::new(8, 0)));
    }

    #[test]
    fn wide_characters_take_two_cells_and_never_spill() {
        let (buf, _) = draw("a界b".as_bytes(), 4, 3);
        assert_eq!(buf[(1, 0)].symbol(), "界");
        assert_eq!(buf[(3, 0)].symbol(), "b");
        // A wide character in the pane's last column does not fit: drawn as a blank.
        let (buf, _) = draw_in("ab界".as_bytes(), 4, 3, 3);
        assert_eq!(buf[(1, 0)].symbol(), "b");
        assert_eq!(buf[(2, 0)].symbol(), " ");
    }

    #[test]
    fn prompt_rows_are_highlighted() {
        let (buf, _) = draw(b"one\r\ntwo\r\nthree", 6, 3);
        assert_eq!(buf[(5, 1)].bg, HIGHLIGHT.bg.unwrap_or(Color::Reset));
        assert_eq!(buf[(0, 0)].bg, Color::Reset);
    }

    #[test]
    fn a_small_tile_shows_the_bottom_of_the_screen_where_the_prompt_is() {
        // A TUI that parks its (hidden) cursor at the top and draws its dialog at the bottom.
        let mut screen = Screen::new(10, 20);
        screen.feed(
            b"\x1b[1;1Hheader\x1b[9;1HAllow? 1. Yes\x1b[?25l\x1b[1;1H",
            0,
        );
        let area = Rect::new(0, 0, 20, 3);
        let mut buf = Buffer::empty(area);
        super::screen(screen.vt(), area, &mut buf, None);
        let bottom: String = (0..13).map(|x| buf[(x, 2)].symbol().to_string()).collect();
        assert_eq!(bottom, "Allow? 1. Yes");
    }

    #[test]
    fn a_screen_taller_than_the_pane_keeps_the_cursor_in_view() {
        let mut screen = Screen::new(10, 8);
        screen.feed(b"\x1b[9;1Hbottom", 0);
        let area = Rect::new(0, 0, 8, 4);
        let mut buf = Buffer::empty(area);
        let cursor = super::screen(screen.vt(), area, &mut buf, None);
        assert_eq!(buf[(0, 3)].symbol(), "b");
        assert_eq!(cursor, Some(Position::new(6, 3)));
    }
}
