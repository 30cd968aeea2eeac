//! The box with the selected task's details: the questions of a task that needs input first,
//! then (label, value) lines, each value cut to a few rows except the guard's reason (a person
//! must be able to read why herd refused or asked); what does not fit is counted.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::model::{DetailView, RowStatus};
use super::style;
use super::text_fit::wrap;

/// Most rows one detail value wraps to; the rest is cut with an ellipsis.
pub const VALUE_ROWS: usize = 3;

/// The labels whose values are shown whole, however many rows they wrap to: why the guard
/// refused or asked is read in full or not at all.
const WHOLE_VALUES: &[&str] = &["guard"];

pub fn render_detail(detail: Option<&DetailView>, area: Rect, buf: &mut Buffer) {
    render_detail_from(detail, 0, area, buf);
}

/// The details box with its rows from `offset` on (clamped so the last page fills the box).
pub fn render_detail_from(
    detail: Option<&DetailView>,
    offset: usize,
    area: Rect,
    buf: &mut Buffer,
) {
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
    let mut lines = detail_lines(detail, usize::from(inner.width));
    let height = usize::from(inner.height);
    if lines.len() > height {
        let offset = offset.min(lines.len() - height);
        lines.drain(..offset);
    }
    if lines.len() > height && height > 0 {
        let hidden = lines.len() - (height - 1);
        lines.truncate(height - 1);
        lines.push(Line::from(Span::styled(
            format!("… {hidden} more rows"),
            style::DIM,
        )));
    }
    Paragraph::new(lines).render(inner, buf);
}

/// The rows a box `width` wide (borders included) needs to show `detail` whole.
pub fn detail_rows(detail: &DetailView, width: u16) -> u16 {
    let inner = usize::from(width.saturating_sub(2));
    let rows = detail_lines(detail, inner).len() + 2;
    u16::try_from(rows).unwrap_or(u16::MAX)
}

/// The details in rows of `width` columns: the questions first, then (label, value) lines.
fn detail_lines(detail: &DetailView, width: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'_>> = Vec::new();
    let asking = style::status_style(RowStatus::NeedsInput);
    for question in &detail.questions {
        let rows = capped(wrap(question, width.saturating_sub(2).max(1)), width);
        for (i, row) in rows.into_iter().enumerate() {
            let lead = if i == 0 { "? " } else { "  " };
            lines.push(Line::from(vec![
                Span::styled(lead, asking),
                Span::styled(row, asking),
            ]));
        }
    }
    if !detail.questions.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("  m", style::KEY),
            Span::styled(" answers them", style::DIM),
        ]));
    }
    let label_width = detail
        .lines
        .iter()
        .map(|(k, _)| k.width())
        .max()
        .unwrap_or(0);
    let value_width = width.saturating_sub(label_width + 1).max(1);
    for (label, value) in &detail.lines {
        let rows = wrap(value, value_width);
        let rows = if WHOLE_VALUES.contains(&label.as_str()) {
            rows
        } else {
            capped(rows, value_width)
        };
        for (i, chunk) in rows.into_iter().enumerate() {
            let label = if i == 0 { label.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{label:>label_width$} "), style::DIM),
                Span::raw(chunk),
            ]));
        }
    }
    lines
}

/// At most `VALUE_ROWS` of `rows`, the last one ending in an ellipsis when some were left out.
fn capped(mut rows: Vec<String>, width: usize) -> Vec<String> {
    if rows.len() <= VALUE_ROWS {
        return rows;
    }
    rows.truncate(VALUE_ROWS);
    if let Some(last) = rows.last_mut() {
        while !last.is_empty() && last.width() + 1 > width {
            last.pop();
        }
        last.push('…');
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(detail: &DetailView, width: usize) -> Vec<String> {
        detail_lines(detail, width)
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn questions_come_first_and_long_values_are_cut_after_a_few_rows() {
        let detail = DetailView {
            task_id: "t".into(),
            questions: vec!["Which database should I use?".into()],
            lines: vec![
                ("status".into(), "needs input".into()),
                ("result".into(), "word ".repeat(40)),
            ],
        };
        let rows = texts(&detail, 30);
        assert_eq!(rows[0], "? Which database should I use?");
        assert_eq!(rows[1], "  m answers them");
        assert_eq!(rows[2], "status needs input");
        assert_eq!(rows.len(), 3 + VALUE_ROWS, "{rows:#?}");
        let last = rows.last().expect("rows");
        assert!(last.ends_with('…'), "{last}");
        assert!(last.width() <= 30, "{last}");
        assert_eq!(detail_rows(&detail, 32), 3 + VALUE_ROWS as u16 + 2);
    }

    #[test]
    fn the_guards_reason_is_shown_whole_and_the_window_scrolls_to_its_end() {
        let reason = (0..30)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let detail = DetailView {
            task_id: "t".into(),
            questions: Vec::new(),
            lines: vec![
                ("status".into(), "running".into()),
                (
                    "guard".into(),
                    format!("Bash(rm -rf /) — refuse: {reason} END"),
                ),
            ],
        };
        let rows = texts(&detail, 20);
        assert!(rows.len() > 1 + VALUE_ROWS, "{rows:#?}");
        let shown = rows.join(" ");
        assert!(shown.contains("w29 END"), "{rows:#?}");
        assert!(!shown.contains('…'), "{rows:#?}");
        // A window shorter than the reason: the rest is counted, and scrolling reaches it.
        let area = Rect::new(0, 0, 22, 6);
        let text = |offset: usize| -> String {
            let mut buf = Buffer::empty(area);
            render_detail_from(Some(&detail), offset, area, &mut buf);
            (0..6)
                .map(|y| {
                    (0..22)
                        .map(|x| buf[(x, y)].symbol().to_string())
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let top = text(0);
        assert!(top.contains("more rows") && !top.contains("END"), "{top}");
        let end = text(usize::MAX);
        assert!(end.contains("END") && !end.contains("more rows"), "{end}");
    }

    #[test]
    fn what_does_not_fit_the_box_is_counted() {
        let detail = DetailView {
            task_id: "t".into(),
            questions: Vec::new(),
            lines: (0..10).map(|i| (format!("l{i}"), "v".into())).collect(),
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 6));
        render_detail(Some(&detail), buf.area, &mut buf);
        let row =
            |y: u16| -> String { (0..20).map(|x| buf[(x, y)].symbol().to_string()).collect() };
        assert_eq!(row(1), "│l0 v              │");
        assert_eq!(row(4), "│… 7 more rows     │");
    }
}
