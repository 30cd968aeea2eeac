//! The queue: one row per task, only the visible window drawn; and the text fitting it and the
//! details box use.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::model::{QueueView, RowStatus, TaskRow};
use super::numbers::{cost_short, turns_short};
use super::style;
use super::text_fit::{fit, fit_middle};

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
    let title = match &queue.search {
        Some(text) => {
            let mut title = title;
            title.push_span(Span::styled(format!("· /{text} "), style::KEY));
            title
        }
        None => title,
    };
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
            "no task matches this filter or search (f: next filter, / then Esc: no search)"
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
        if selected {
            // One style for the whole row: coloured text reversed would be coloured blocks.
            let plain: Vec<Span<'_>> = line
                .spans
                .into_iter()
                .map(|s| Span::raw(s.content))
                .collect();
            buf.set_style(line_area, style::SELECTED);
            Line::from(plain).render(line_area, buf);
        } else {
            line.render(line_area, buf);
        }
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
    /// The cost and the turns, each right-aligned (0: not shown).
    cost: usize,
    turns: usize,
    note: usize,
}

/// Columns the note keeps before the id, cost and turns get the rest.
const NOTE_KEPT: usize = 10;

impl Columns {
    /// glyph(2) id agent attempts(5) elapsed(6) [cost turns] note. Cost and turns get only what
    /// the id leaves, with room kept for the note.
    fn for_width(width: u16, rows: &[TaskRow]) -> Columns {
        let width = usize::from(width);
        let fixed = 2 + 5 + 6;
        let flexible = width.saturating_sub(fixed);
        let longest = |f: &dyn Fn(&TaskRow) -> usize| rows.iter().map(f).max().unwrap_or(0);
        let longest_id = longest(&|r| r.task_id.width());
        let longest_agent = longest(&|r| r.agent.width());
        let agent = if width >= 54 {
            longest_agent.min(8) + 1
        } else {
            0
        };
        // Room is kept only for notes there are (+1: `fit` keeps a column free after the text).
        let note_wanted = match longest(&|r| note_text(r).0.width()) {
            0 => 0,
            n => (n + 1).min(NOTE_KEPT),
        };
        let id = (longest_id + 1)
            .min(flexible.saturating_sub(agent + note_wanted))
            .max(8);
        let room = flexible.saturating_sub(agent + id);
        let cost = longest(&|r| r.cost_usd.map_or(0, |c| cost_short(c).len()));
        let turns = longest(&|r| r.turns.map_or(0, |t| turns_short(t).len()));
        let with_separator = |w: usize| if w > 0 { w + 1 } else { 0 };
        let (cost, turns) = if with_separator(cost) + with_separator(turns) + note_wanted <= room {
            (cost, turns)
        } else if with_separator(cost) + note_wanted <= room {
            (cost, 0)
        } else {
            (0, 0)
        };
        let note = room.saturating_sub(with_separator(cost) + with_separator(turns));
        Columns {
            id,
            agent,
            cost,
            turns,
            note,
        }
    }

    fn line(&self, row: &TaskRow) -> Line<'static> {
        let status = style::status_style(row.status);
        let attempts = if row.attempts == 0 && row.status != RowStatus::Running {
            "    ".to_string()
        } else {
            format!("{:>4}", format!("{}/{}", row.attempts, row.max_attempts))
        };
        let elapsed = row.elapsed.map(style::duration).unwrap_or_default();
        let (note, note_style) = note_in(row, self.note);
        let id_style = match row.status {
            RowStatus::Waiting => style::WAITING_BORDER,
            RowStatus::NeedsInput => status,
            RowStatus::Skipped | RowStatus::Cancelled => style::DIM,
            _ => Style::new(),
        };
        let mut spans = vec![
            Span::styled(format!("{} ", style::glyph(row.status)), status),
            Span::styled(fit_middle(&row.task_id, self.id), id_style),
        ];
        if self.agent > 0 {
            spans.push(Span::styled(fit(&row.agent, self.agent), style::DIM));
        }
        spans.push(Span::styled(format!("{attempts} "), style::DIM));
        spans.push(Span::raw(format!("{elapsed:>5} ")));
        if self.cost > 0 {
            let cost = row.cost_usd.map(cost_short).unwrap_or_default();
            spans.push(Span::raw(format!("{cost:>w$} ", w = self.cost)));
        }
        if self.turns > 0 {
            let turns = row.turns.map(turns_short).unwrap_or_default();
            spans.push(Span::styled(
                format!("{turns:>w$} ", w = self.turns),
                style::DIM,
            ));
        }
        if self.note > 0 {
            spans.push(Span::styled(fit(&note, self.note), note_style));
        }
        Line::from(spans)
    }
}

/// A row's note in at most `width` columns: `? N questions` shrinks to its number.
fn note_in(row: &TaskRow, width: usize) -> (String, Style) {
    let (note, style) = note_text(row);
    if row.note.is_none() && row.questions > 0 && note.width() >= width {
        return (format!("? {}", row.questions), style);
    }
    (note, style)
}

fn note_text(row: &TaskRow) -> (String, Style) {
    if let Some(note) = &row.note {
        let style = match row.status {
            RowStatus::Waiting => style::WAITING_BORDER,
            RowStatus::NeedsInput => style::status_style(RowStatus::NeedsInput),
            _ => style::NOTE,
        };
        return (note.clone(), style);
    }
    match (row.status, row.failure) {
        (RowStatus::NeedsInput, _) if row.questions > 0 => {
            let plural = if row.questions == 1 { "" } else { "s" };
            (
                format!("? {} question{plural}", row.questions),
                style::status_style(RowStatus::NeedsInput),
            )
        }
        (RowStatus::Skipped, _) => ("skipped".into(), style::DIM),
        (RowStatus::Completed, _) => (String::new(), Style::new()),
        (_, Some(failure)) => (failure.short().to_string(), Style::new().fg(Color::Red)),
        _ => (String::new(), Style::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, cost: Option<f64>, turns: Option<u64>) -> TaskRow {
        TaskRow {
            task_id: id.into(),
            agent: "claude".into(),
            status: RowStatus::Completed,
            attempts: 1,
            max_attempts: 2,
            elapsed: Some(std::time::Duration::from_secs(95)),
            failure: None,
            note: None,
            questions: 0,
            cost_usd: cost,
            turns,
        }
    }

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    /// `row`'s line in a queue `width` wide that lists it alone.
    fn alone(row: &TaskRow, width: u16) -> String {
        text(&Columns::for_width(width, std::slice::from_ref(row)).line(row))
    }

    /// The queue's inside on an 80-column terminal.
    const WIDTH_AT_80: u16 = 78;

    #[test]
    fn the_selected_row_is_in_reverse_video_end_to_end() {
        let rows = vec![
            TaskRow {
                status: RowStatus::Failed,
                failure: Some(crate::core::task::FailureType::Process),
                ..task("structured-output-cargo-build-017", None, None)
            },
            task("b", None, None),
        ];
        let view = QueueView {
            filter: "all",
            search: None,
            total: 2,
            matching: 2,
            offset: 0,
            selected: Some(0),
            rows,
        };
        let area = Rect::new(0, 0, 34, 5);
        let mut buf = Buffer::empty(area);
        render(&view, area, &mut buf);
        for x in 1..33 {
            let cell = &buf[(x, 1)];
            assert!(
                cell.modifier.contains(ratatui::style::Modifier::REVERSED)
                    && cell.fg == Color::Reset,
                "column {x} of the selected row: {cell:?}"
            );
            assert!(
                !buf[(x, 2)]
                    .modifier
                    .contains(ratatui::style::Modifier::REVERSED)
            );
        }
    }

    #[test]
    fn rows_show_cost_and_turns_when_there_is_room() {
        let rows = [
            task("docs-merge-001", Some(0.4213), Some(3)),
            task("long-session-004", Some(12.5), Some(14)),
            task("plain-002", None, None),
        ];
        let columns = Columns::for_width(WIDTH_AT_80, &rows);
        let lines: Vec<String> = rows.iter().map(|r| text(&columns.line(r))).collect();
        assert!(lines[0].contains("docs-merge-001 "), "{lines:#?}");
        assert!(lines[0].contains("1:35  $0.42  3t "), "{lines:#?}");
        assert!(lines[1].contains("1:35 $12.50 14t "), "{lines:#?}");
        assert!(!lines[2].contains('$'), "{lines:#?}");
        for line in &lines {
            assert_eq!(line.width(), usize::from(WIDTH_AT_80), "{line}");
        }
    }

    #[test]
    fn the_cost_goes_before_the_id_is_cut() {
        for len in 1..80 {
            let id = "x".repeat(len);
            let with = [
                task(&id, Some(0.42), Some(3)),
                TaskRow {
                    status: RowStatus::NeedsInput,
                    questions: 2,
                    ..task("q", Some(1.0), Some(12))
                },
            ];
            let without = [
                task(&id, None, None),
                TaskRow {
                    status: RowStatus::NeedsInput,
                    questions: 2,
                    ..task("q", None, None)
                },
            ];
            let costed = Columns::for_width(WIDTH_AT_80, &with);
            let plain = Columns::for_width(WIDTH_AT_80, &without);
            assert_eq!(costed.id, plain.id, "id of {len}");
            for row in &with {
                let line = text(&costed.line(row));
                assert_eq!(line.width(), usize::from(WIDTH_AT_80), "{line}");
            }
            let line = text(&costed.line(&with[0]));
            if line.contains('$') {
                assert!(line.contains(&id), "{line}");
            }
        }
        // Beside a row with a note, at 80 columns: an id of 40 keeps the cost but not the
        // turns, one of 43 neither; both stay whole. Without notes, the cost takes the note's
        // room.
        let asking = TaskRow {
            status: RowStatus::NeedsInput,
            questions: 2,
            ..task("q", Some(1.0), Some(12))
        };
        let line_of = |id: &str, with_note: bool| {
            let mut rows = vec![task(id, Some(0.42), Some(3))];
            if with_note {
                rows.push(asking.clone());
            }
            text(&Columns::for_width(WIDTH_AT_80, &rows).line(&rows[0]))
        };
        let id40 = "a-rather-long-task-identifier-for-tests-";
        let line = line_of(id40, true);
        assert!(line.contains(id40) && line.contains("$0.42  "), "{line}");
        assert!(!line.contains("3t"), "{line}");
        let id43 = "a-rather-long-task-identifier-for-the-tests";
        let line = line_of(id43, true);
        assert!(line.contains(id43) && !line.contains('$'), "{line}");
        let line = line_of(id43, false);
        assert!(line.contains(id43) && line.contains("$0.42 3t"), "{line}");
    }

    #[test]
    fn questions_say_how_many_in_the_room_there_is() {
        let asking = TaskRow {
            status: RowStatus::NeedsInput,
            questions: 2,
            ..task("ask-db", None, None)
        };
        let wide = alone(&asking, WIDTH_AT_80);
        assert!(wide.contains("? 2 questions"), "{wide}");
        let narrow = alone(&asking, 40);
        assert!(narrow.trim_end().ends_with("? 2 questions"), "{narrow}");
        let long_id = TaskRow {
            task_id: "a-long-task-identifier-x".into(),
            ..asking.clone()
        };
        let cut = alone(&long_id, 40);
        assert!(cut.trim_end().ends_with(" ? 2"), "{cut}");
        let one = TaskRow {
            questions: 1,
            ..asking
        };
        let line = alone(&one, WIDTH_AT_80);
        assert!(line.contains("? 1 question "), "{line}");
    }
}
