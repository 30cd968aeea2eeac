//! The agent pane: one agent's emulated terminal in a bordered box, the rows of a waiting
//! prompt highlighted and a banner of the keys that answer it.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use unicode_width::UnicodeWidthStr;

use super::model::{PaneView, PromptView};
use super::style;

/// Draws `pane` into `area`, leaving its bottom border's last `reserve` columns to the caller.
/// Returns where the real cursor goes (focused pane in take-over).
pub fn render(
    pane: &PaneView<'_>,
    area: Rect,
    buf: &mut Buffer,
    takeover: bool,
    reserve: u16,
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
    let room = usize::from(area.width.saturating_sub(2).saturating_sub(reserve));
    let reason_rows = guard_reason_rows(pane, takeover, block.inner(area));
    let block = match bottom_title(pane, takeover, room, reason_rows.is_empty()) {
        Some(line) => block.title_bottom(line),
        None if note_below => match &pane.note {
            Some(note) => block.title_bottom(Span::styled(format!(" {note} "), style::NOTE)),
            None => block,
        },
        None => block,
    };
    let mut inner = block.inner(area);
    block.render(area, buf);
    // The guard's reason in rows of its own above the screen, which keeps its bottom (where the
    // dialog is): an objection in the banner's colours, a doubt in yellow.
    let reason_style = if pane.prompt.as_ref().is_some_and(|p| p.guard_objects) {
        style::BANNER
    } else {
        style::WAITING_BORDER
    };
    for (i, row) in reason_rows.iter().enumerate() {
        let line_area = Rect::new(inner.x, inner.y + i as u16, inner.width, 1);
        buf.set_style(line_area, reason_style);
        Line::from(Span::styled(row.clone(), reason_style)).render(line_area, buf);
    }
    let taken = u16::try_from(reason_rows.len()).unwrap_or(0);
    inner.y += taken;
    inner.height -= taken;
    let highlight = pane
        .prompt
        .as_ref()
        .filter(|_| pane.scrolled == 0)
        .map(|p| p.rows);
    let cursor = crate::term::paint::screen(pane.screen, inner, buf, highlight);
    mark_cut_rows(pane.screen, inner, buf);
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

/// A screen wider than the pane is cut on the right: rows with text past the edge get `›` on
/// the border, as `less -S` marks a cut line.
fn mark_cut_rows(screen: &vt100::Screen, inner: Rect, buf: &mut Buffer) {
    if inner.width == 0 {
        return;
    }
    for y in crate::term::paint::rows_cut_on_the_right(screen, inner) {
        if let Some(cell) = buf.cell_mut((inner.right(), y)) {
            cell.set_symbol("›");
            cell.set_style(style::CUT_MARK);
        }
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
            pane.host
                .as_ref()
                .map(|h| format!(" @{h}"))
                .unwrap_or_default(),
            Style::new().fg(Color::Yellow),
        ),
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

/// Display columns the pane's bottom-border title (its banner) takes.
pub fn bottom_width(pane: &PaneView<'_>, area: Rect, takeover: bool, reserve: u16) -> usize {
    let inner = Block::new().borders(Borders::ALL).inner(area);
    let reason_on_banner = guard_reason_rows(pane, takeover, inner).is_empty();
    let room = usize::from(area.width.saturating_sub(2).saturating_sub(reserve));
    bottom_title(pane, takeover, room, reason_on_banner).map_or(0, |line| line.width())
}

/// Rows at most the guard's reason takes above the agent's screen.
const REASON_ROWS: usize = 3;

/// What the guard said of the focused pane's prompt, wrapped to the pane's width in rows of its
/// own (a banner cut it even at 160 columns); none when the pane is too short to spare them.
fn guard_reason_rows(pane: &PaneView<'_>, takeover: bool, inner: Rect) -> Vec<String> {
    let Some(prompt) = pane.prompt.as_ref().filter(|_| pane.focused && !takeover) else {
        return Vec::new();
    };
    let Some(note) = prompt.guard.as_ref() else {
        return Vec::new();
    };
    let sign = if prompt.guard_objects { "⛔" } else { "?" };
    let mut rows = super::text_fit::wrap(&format!("{sign} {note}"), usize::from(inner.width));
    if rows.len() > REASON_ROWS {
        rows.truncate(REASON_ROWS);
        if let Some(last) = rows.last_mut() {
            *last = super::text_fit::fit(last, usize::from(inner.width))
                .trim_end()
                .to_string();
            if !last.ends_with('…') {
                last.push('…');
            }
        }
    }
    // The agent's screen keeps at least its dialog's few rows.
    if usize::from(inner.height) < rows.len() + 6 {
        return Vec::new();
    }
    rows
}

/// The pane's bottom border: take-over's chord, or the waiting dialog's banner in `room` columns.
fn bottom_title(
    pane: &PaneView<'_>,
    takeover: bool,
    room: usize,
    reason_on_banner: bool,
) -> Option<Line<'static>> {
    if takeover {
        return Some(Line::from(vec![
            Span::styled(
                format!(" {} ", super::takeover_keys::LEAVE_CHORD),
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
    if !pane.selected {
        // Focused because the selected task ended: its keys would answer a dialog not chosen.
        return Some(Line::from(vec![
            Span::styled(format!(" ⚠ {} waits ", pane.task_id), style::BANNER),
            Span::styled(" w or Tab selects it to answer ", style::WAITING_BORDER),
        ]));
    }
    Some(banner(prompt, &pane.task_id, room, reason_on_banner))
}

/// `⚠ fix-7: [1/Enter] Yes  [2/p] Yes, don't ask again  [3/n] No`, then what the guard said (an
/// objection only when `reason_on_banner`). Short of room, labels are cut before any key.
pub fn banner(
    prompt: &PromptView,
    task_id: &str,
    room: usize,
    reason_on_banner: bool,
) -> Line<'static> {
    let head = format!(" ⚠ {task_id}: ");
    let mut spans = vec![Span::styled(head.clone(), style::BANNER)];
    // Why herd did not answer; before the keys when the guard objects, so a narrow pane shows it.
    let note = prompt
        .guard
        .as_ref()
        .map(|note| Span::styled(format!("⛔ {note} "), style::BANNER));
    let mut fixed = head.width();
    if prompt.guard_objects
        && reason_on_banner
        && let Some(note) = note.clone()
    {
        fixed += note.content.width() + 1;
        spans.push(note);
        spans.push(Span::raw(" "));
    }
    fixed += prompt
        .choices
        .iter()
        .map(|c| c.key.width() + 5)
        .sum::<usize>();
    let labels: Vec<&str> = prompt.choices.iter().map(|c| c.label.as_str()).collect();
    let labels = fit_labels(&labels, room.saturating_sub(fixed));
    for (choice, label) in prompt.choices.iter().zip(labels) {
        spans.push(Span::styled(format!("[{}]", choice.key), style::BANNER));
        spans.push(Span::styled(format!(" {label}  "), style::WAITING_BORDER));
    }
    // After the keys, the note takes what room is left (the details have it whole).
    let used: usize = spans.iter().map(|s| s.content.width()).sum();
    let left = room.saturating_sub(used);
    if !prompt.guard_objects
        && reason_on_banner
        && let Some(note) = note
        && left >= 8
    {
        let text = super::text_fit::fit(&note.content, left);
        spans.push(Span::styled(text.trim_end().to_string(), note.style));
    }
    Line::from(spans)
}

/// The labels cut (with an ellipsis) to fit in `room` columns altogether, never below a few
/// letters.
fn fit_labels(labels: &[&str], room: usize) -> Vec<String> {
    const SHORTEST: usize = 4;
    let total = |cap: usize| -> usize { labels.iter().map(|l| l.width().min(cap)).sum() };
    let longest = labels.iter().map(|l| l.width()).max().unwrap_or(0);
    let cap = (SHORTEST..=longest)
        .rev()
        .find(|&cap| total(cap) <= room)
        .unwrap_or(SHORTEST);
    labels
        .iter()
        .map(|label| {
            if label.width() <= cap {
                label.to_string()
            } else {
                super::text_fit::fit(label, cap + 1).trim_end().to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_banner_cuts_labels_before_it_loses_a_key() {
        let labels = ["Yes", "Yes, don't ask again", "No"];
        assert_eq!(fit_labels(&labels, 40), labels);
        assert_eq!(fit_labels(&labels, 15), ["Yes", "Yes, don'…", "No"]);
        assert_eq!(fit_labels(&labels, 0), ["Yes", "Yes…", "No"]);
        let prompt = crate::ui::frames_fixtures::prompt();
        let text =
            |line: Line<'_>| -> String { line.spans.iter().map(|s| s.content.as_ref()).collect() };
        let narrow = text(banner(&prompt, "fix-7", 50, true));
        assert!(narrow.width() <= 50, "{narrow}");
        assert!(narrow.contains("[3/n] No"), "{narrow}");
        assert!(text(banner(&prompt, "fix-7", 120, true)).contains("Yes, don't ask again"));
        // The guard's note after the keys takes only the room left.
        let mut noted = prompt.clone();
        noted.guard = Some("Bash(npm test) — ask: no rule allows it".into());
        let line = text(banner(&noted, "fix-7", 80, true));
        assert!(line.width() <= 80, "{line}");
        assert!(line.contains("[3/n] No  ⛔ Bash(npm"), "{line}");
        assert!(line.ends_with('…'), "{line}");
        let line = text(banner(&noted, "fix-7", 58, true));
        assert!(
            !line.contains('⛔'),
            "no room for a note worth reading: {line}"
        );
    }

    #[test]
    fn an_agent_on_another_host_says_which_in_its_title() {
        let screen = crate::core::screen::Screen::new(5, 40);
        let mut pane = crate::ui::frames_fixtures::pane("fix-7", &screen, true, None);
        let text =
            |line: Line<'_>| -> String { line.spans.iter().map(|s| s.content.as_ref()).collect() };
        assert!(text(title(&pane, false)).starts_with(" ▶ fix-7 · 1/2"));
        pane.host = Some("box1".into());
        assert!(text(title(&pane, false)).starts_with(" ▶ fix-7 @box1 · 1/2"));
    }
}
