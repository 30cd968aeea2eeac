//! The queue: one row per task (status glyph and colour, id, agent, attempt n of max, elapsed
//! time, failure type or a short note), only the visible window drawn; and the box with the
//! selected task's details.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::model::{DetailView, QueueView, RowStatus, TaskRow};
use super::style;

/// Rows of tasks the queue shows in `area` (its border removed).
pub fn visible_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(2))
}

pub fn render(queue: &QueueView, area: Rect, buf: &mut Buffer) {
    let title = Line::from(vec![
        Span::styled(
            " Queue ",
            Style::new().add_modifier(ratatui::style::Modifier::BOLD),
        ),
        Span::styled(format!("· {} ", queue.filter), style::KEY),
    ]);
    let position = if queue.matching == 0 {
        " none ".to_string()
    } else if queue.matching == queue.total {
        format!(" {} ", queue.total)
    } else {
        format!(" {}/{} ", queue.matching, queue.total)
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(style::BORDER)
        .title(title)
        .title(Line::from(position).right_aligned());
    let inner = block.inner(area);
    block.render(area, buf);
    if queue.rows.is_empty() {
        let text = if queue.total == 0 {
            "no tasks"
        } else {
            "no task matches this filter (f: next filter)"
        };
        Paragraph::new(Span::styled(text, style::DIM)).render(inner, buf);
        return;
    }
    let columns = Columns::for_width(inner.width, &queue.rows);
    for (i, row) in queue
        .rows
        .iter()
        .enumerate()
        .take(usize::from(inner.height))
    {
        let y = inner.y + i as u16;
        let selected = queue.selected == Some(queue.offset + i);
        let line = columns.line(row);
        let line_area = Rect::new(inner.x, y, inner.width, 1);
        let base = if selected {
            style::SELECTED
        } else {
            Style::new()
        };
        buf.set_style(line_area, base);
        line.render(line_area, buf);
    }
    if queue.offset + queue.rows.len() < queue.matching || queue.offset > 0 {
        let last = queue.offset + queue.rows.len();
        let text = format!(" {}-{} ", queue.offset + 1, last);
        let x = area.right().saturating_sub(text.width() as u16 + 1);
        buf.set_string(x, area.bottom().saturating_sub(1), text, style::DIM);
    }
}

/// Column widths for one queue width.
struct Columns {
    id: usize,
    agent: usize,
    note: usize,
}

impl Columns {
    /// glyph(2) id agent attempts(5) elapsed(6) note
    fn for_width(width: u16, rows: &[TaskRow]) -> Columns {
        let width = usize::from(width);
        let fixed = 2 + 5 + 6;
        let flexible = width.saturating_sub(fixed);
        let longest_id = rows.iter().map(|r| r.task_id.width()).max().unwrap_or(0);
        let longest_agent = rows.iter().map(|r| r.agent.width()).max().unwrap_or(0);
        let agent = if width >= 54 {
            longest_agent.min(8) + 1
        } else {
            0
        };
        let id = (longest_id + 1)
            .min(flexible.saturating_sub(agent + 10))
            .max(8);
        let note = flexible.saturating_sub(agent + id);
        Columns { id, agent, note }
    }

    fn line(&self, row: &TaskRow) -> Line<'static> {
        let status = style::status_style(row.status);
        let attempts = if row.attempts == 0 && row.status != RowStatus::Running {
            "    ".to_string()
        } else {
            format!("{:>4}", format!("{}/{}", row.attempts, row.max_attempts))
        };
        let elapsed = row.elapsed.map(style::duration).unwrap_or_default();
        let (note, note_style) = note_text(row);
        let id_style = match row.status {
            RowStatus::Waiting => style::WAITING_BORDER,
            RowStatus::Skipped | RowStatus::Cancelled => style::DIM,
            _ => Style::new(),
        };
        let mut spans = vec![
            Span::styled(format!("{} ", style::glyph(row.status)), status),
            Span::styled(fit(&row.task_id, self.id), id_style),
        ];
        if self.agent > 0 {
            spans.push(Span::styled(fit(&row.agent, self.agent), style::DIM));
        }
        spans.push(Span::styled(format!("{attempts} "), style::DIM));
        spans.push(Span::raw(format!("{elapsed:>5} ")));
        if self.note > 0 {
            spans.push(Span::styled(fit(&note, self.note), note_style));
        }
        Line::from(spans)
    }
}

fn note_text(row: &TaskRow) -> (String, Style) {
    if let Some(note) = &row.note {
        let style = match row.status {
            RowStatus::Waiting => style::WAITING_BORDER,
            _ => style::NOTE,
        };
        return (note.clone(), style);
    }
    match (row.status, row.failure) {
        (RowStatus::Skipped, _) => ("skipped".into(), style::DIM),
        (RowStatus::Completed, _) => (String::new(), Style::new()),
        (_, Some(failure)) => (failure.short().to_string(), Style::new().fg(Color::Red)),
        _ => (String::new(), Style::new()),
    }
}

/// `text` in exactly `width` display columns, the last one a blank separating it from the next
/// column: padded, or cut with an ellipsis.
pub fn fit(text: &str, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let room = width - 1;
    let mut out = String::new();
    let mut used = 0;
    if text.width() <= room {
        out.push_str(text);
        used = text.width();
    } else {
        for ch in text.chars() {
            let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + w + 1 > room {
                break;
            }
            out.push(ch);
            used += w;
        }
        if room > 0 {
            out.push('…');
            used += 1;
        }
    }
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

pub fn render_detail(detail: Option<&DetailView>, area: Rect, buf: &mut Buffer) {
    let title = detail.map_or(" Task ".to_string(), |d| format!(" {} ", d.task_id));
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(style::BORDER)
        .title(title);
    let inner = block.inner(area);
    block.render(area, buf);
    let Some(detail) = detail else {
        return;
    };
    let label_width = detail
        .lines
        .iter()
        .map(|(k, _)| k.width())
        .max()
        .unwrap_or(0);
    let value_width = usize::from(inner.width)
        .saturating_sub(label_width + 1)
        .max(1);
    let mut lines: Vec<Line> = Vec::new();
    for (label, value) in &detail.lines {
        for (i, chunk) in wrap(value, value_width).into_iter().enumerate() {
            let label = if i == 0 { label.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{label:>label_width$} "), style::DIM),
                Span::raw(chunk),
            ]));
        }
    }
    Paragraph::new(lines).render(inner, buf);
}

/// `text` in rows of at most `width` display columns, broken at spaces where possible.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    let mut used = 0;
    for word in text.split_inclusive(' ') {
        let w = word.width();
        if used + w.min(width) > width && used > 0 {
            rows.push(String::new());
            used = 0;
        }
        for ch in word.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + cw > width {
                rows.push(String::new());
                used = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push(ch);
            }
            used += cw;
        }
    }
    rows.into_iter().map(|r| r.trim_end().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_with_an_ellipsis_or_padded() {
        assert_eq!(fit("abc", 6), "abc   ");
        assert_eq!(fit("abcdefgh", 6), "abcd… ");
        assert_eq!(fit("abcdef", 6), "abcd… ");
        assert_eq!(fit("abcde", 6), "abcde ");
        assert_eq!(fit("界界界界", 5), "界…  ");
        assert_eq!(fit("x", 0), "");
        assert_eq!(fit("xy", 1), " ");
    }

    #[test]
    fn long_values_wrap_at_spaces() {
        assert_eq!(
            wrap("Fix issue #142 and run the tests.", 16),
            ["Fix issue #142", "and run the", "tests."]
        );
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
    }
}
