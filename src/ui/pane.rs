//! The agent pane: a bordered box showing one agent's emulated terminal (vt100 cells with their
//! colours, attributes, wide characters and cursor), with the rows of a waiting prompt
//! highlighted and a banner of the keys that answer it.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::model::{PaneView, PromptView};
use super::style;

/// Draws `pane` into `area`. Returns where the real cursor goes (focused pane in take-over).
pub fn render(
    pane: &PaneView<'_>,
    area: Rect,
    buf: &mut Buffer,
    takeover: bool,
) -> Option<Position> {
    let border = if takeover {
        style::TAKEOVER_BORDER
    } else if pane.prompt.is_some() {
        style::WAITING_BORDER
    } else if pane.focused {
        style::FOCUS_BORDER
    } else {
        style::BORDER
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(border)
        .title(title(pane, takeover))
        .title(right_title(pane).right_aligned());
    // A tile's top border is too short for its title and a note: the note goes below.
    let note_below = !pane.focused && pane.prompt.is_none() && !takeover;
    let block = match bottom_title(pane, takeover) {
        Some(line) => block.title_bottom(line),
        None if note_below => match &pane.note {
            Some(note) => block.title_bottom(Span::styled(format!(" {note} "), style::NOTE)),
            None => block,
        },
        None => block,
    };
    let inner = block.inner(area);
    block.render(area, buf);
    let highlight = pane
        .prompt
        .as_ref()
        .filter(|_| pane.scrolled == 0)
        .map(|p| p.rows);
    let cursor = screen(pane.screen, inner, buf, highlight);
    let cursor = cursor.filter(|_| pane.scrolled == 0 && pane.focused);
    match cursor {
        Some(at) if takeover => Some(at),
        Some(at) => {
            if let Some(cell) = buf.cell_mut(at) {
                cell.modifier.insert(Modifier::REVERSED);
            }
            None
        }
        None => None,
    }
}

fn title(pane: &PaneView<'_>, takeover: bool) -> Line<'static> {
    let (glyph, glyph_style) = if pane.prompt.is_some() {
        ("⚠", style::WAITING_BORDER)
    } else {
        ("▶", Style::new().fg(Color::Cyan))
    };
    let name = if pane.focused {
        Style::new().add_modifier(Modifier::BOLD)
    } else {
        Style::new()
    };
    let mut spans = vec![
        Span::raw(" "),
        Span::styled(glyph, glyph_style),
        Span::raw(" "),
        Span::styled(pane.task_id.clone(), name),
        Span::styled(
            format!(
                " · {}/{} · {} ",
                pane.attempt,
                pane.max_attempts,
                style::duration(pane.elapsed)
            ),
            style::DIM,
        ),
    ];
    if pane.ending {
        spans.push(Span::styled("ending ", style::DIM));
    }
    if takeover {
        spans.push(Span::styled(
            " TAKE-OVER ",
            style::BANNER.bg(Color::LightGreen),
        ));
        spans.push(Span::raw(" "));
    }
    Line::from(spans)
}

fn right_title(pane: &PaneView<'_>) -> Line<'static> {
    let mut spans = Vec::new();
    if let Some(note) = pane.note.as_ref().filter(|_| pane.focused) {
        spans.push(Span::styled(format!(" {note} "), style::NOTE));
    }
    if pane.scrolled > 0 {
        spans.push(Span::styled(
            format!(" ⇞ {} back · ] returns ", pane.scrolled),
            Style::new().fg(Color::Black).bg(Color::LightBlue),
        ));
    }
    Line::from(spans)
}

fn bottom_title(pane: &PaneView<'_>, takeover: bool) -> Option<Line<'static>> {
    if takeover {
        return Some(Line::from(vec![
            Span::styled(
                format!(" {} ", super::keys::LEAVE_CHORD),
                style::BANNER.bg(Color::LightGreen),
            ),
            Span::styled(" leaves take-over ", Style::new().fg(Color::LightGreen)),
        ]));
    }
    let prompt = pane.prompt.as_ref()?;
    if !pane.focused {
        return Some(Line::from(vec![
            Span::styled(" ⚠ waiting ", style::BANNER),
            Span::styled(" w: go to it ", style::WAITING_BORDER),
        ]));
    }
    Some(banner(prompt))
}

/// `[1] Yes  [p] Yes, don't ask again  [Esc] No`, then what the guard said, if anything.
pub fn banner(prompt: &PromptView) -> Line<'static> {
    let mut spans = vec![Span::styled(" ⚠ ", style::BANNER)];
    // Why herd did not answer: the request and the guard's reason (in full in the details,
    // `d`); before the keys when the guard objects, so a narrow pane still shows it.
    let note = prompt
        .guard
        .as_ref()
        .map(|note| Span::styled(format!("⛔ {note} "), style::BANNER));
    if prompt.guard_objects
        && let Some(note) = note.clone()
    {
        spans.push(note);
        spans.push(Span::raw(" "));
    }
    for choice in &prompt.choices {
        spans.push(Span::styled(format!("[{}]", choice.key), style::BANNER));
        spans.push(Span::styled(
            format!(" {}  ", choice.label),
            style::WAITING_BORDER,
        ));
    }
    if !prompt.guard_objects
        && let Some(note) = note
    {
        spans.push(note);
    }
    Line::from(spans)
}

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

/// Copies the agent's screen into `area`. Returns the cursor's position on screen when it is
/// visible. `highlight`: rows of the agent's screen to mark.
pub fn screen(
    vt: &vt100::Screen,
    area: Rect,
    buf: &mut Buffer,
    highlight: Option<(usize, usize)>,
) -> Option<Position> {
    let (rows, cols) = vt.size();
    let (rows, cols) = (rows.get(), cols.get());
    let (cursor_row, cursor_col) = vt.cursor_position();
    // A screen taller than the pane (a small tile, or before the agent follows a resize):
    // show its bottom, where prompts and progress are — the lower of the cursor and the last
    // row with text — never the top-left corner of an empty screen.
    let bottom = cursor_row.max(last_row_with_text(vt).unwrap_or(0));
    let first = if vt.scrollback() == 0 && bottom >= area.height {
        bottom + 1 - area.height
    } else {
        0
    };
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
                    out.set_bg(style::PROMPT_ROWS.bg.unwrap_or(Color::Reset));
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
        assert_eq!(
            buf[(5, 1)].bg,
            style::PROMPT_ROWS.bg.unwrap_or(Color::Reset)
        );
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
