//! The agent pane: a bordered box showing one agent's emulated terminal (vt100 cells with their
//! colours, attributes, wide characters and cursor), with the rows of a waiting prompt
//! highlighted and a banner of the keys that answer it.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use unicode_width::UnicodeWidthStr;

use super::model::{PaneView, PromptView};
use super::style;

/// Draws `pane` into `area`, its bottom border's last `reserve` columns left to the caller.
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
    let block = match bottom_title(pane, takeover, room) {
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
    let cursor = crate::term::paint::screen(pane.screen, inner, buf, highlight);
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

/// The pane's bottom border: take-over's chord, or the waiting dialog's banner in `room`
/// columns.
fn bottom_title(pane: &PaneView<'_>, takeover: bool, room: usize) -> Option<Line<'static>> {
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
        // Focused because the selected task ended: its keys would answer a dialog the operator
        // has not chosen.
        return Some(Line::from(vec![
            Span::styled(format!(" ⚠ {} waits ", pane.task_id), style::BANNER),
            Span::styled(" w or Tab selects it to answer ", style::WAITING_BORDER),
        ]));
    }
    Some(banner(prompt, &pane.task_id, room))
}

/// `⚠ fix-7: [1/Enter] Yes  [2/p] Yes, don't ask again  [3/n] No`: the task the keys answer,
/// then the keys, and what the guard said, if anything. Where `room` is short, the options'
/// labels are cut before any key is lost.
pub fn banner(prompt: &PromptView, task_id: &str, room: usize) -> Line<'static> {
    let head = format!(" ⚠ {task_id}: ");
    let mut spans = vec![Span::styled(head.clone(), style::BANNER)];
    // Why herd did not answer: the request and the guard's reason (in full in the details,
    // `d`); before the keys when the guard objects, so a narrow pane still shows it.
    let note = prompt
        .guard
        .as_ref()
        .map(|note| Span::styled(format!("⛔ {note} "), style::BANNER));
    let mut fixed = head.width();
    if prompt.guard_objects
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
        && let Some(note) = note
        && left >= 8
    {
        let text = super::text_fit::fit(&note.content, left);
        spans.push(Span::styled(text.trim_end().to_string(), note.style));
    }
    Line::from(spans)
}

/// The labels in `room` columns altogether: each cut (with an ellipsis) to the longest length
/// that fits, never below a few letters.
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
        let narrow = text(banner(&prompt, "fix-7", 50));
        assert!(narrow.width() <= 50, "{narrow}");
        assert!(narrow.contains("[3/n] No"), "{narrow}");
        assert!(text(banner(&prompt, "fix-7", 120)).contains("Yes, don't ask again"));
        // The guard's note after the keys takes only the room left.
        let mut noted = prompt.clone();
        noted.guard = Some("Bash(npm test) — ask: no rule allows it".into());
        let line = text(banner(&noted, "fix-7", 80));
        assert!(line.width() <= 80, "{line}");
        assert!(line.contains("[3/n] No  ⛔ Bash(npm"), "{line}");
        assert!(line.ends_with('…'), "{line}");
        let line = text(banner(&noted, "fix-7", 58));
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
