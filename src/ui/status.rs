//! The status bar: counts by status and by failure class, the retry queue with countdowns, the
//! batch's cost so far, the run clock, the queue's state, the last action's result and the keys
//! that matter now.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::model::StatusView;
use super::numbers::cost_short;
use super::style;

pub fn render(status: &StatusView, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let bar = Style::new().bg(Color::Indexed(235));
    buf.set_style(area, bar);
    let top = Rect { height: 1, ..area };
    let (left, right) = summary(status);
    let right_width = line_width(&right);
    left.render(
        Rect {
            width: top.width.saturating_sub(right_width + 1),
            ..top
        },
        buf,
    );
    right.right_aligned().render(top, buf);
    if area.height >= 2 {
        hints(status).render(
            Rect {
                y: area.y + 1,
                height: 1,
                ..area
            },
            buf,
        );
    }
}

fn line_width(line: &Line<'_>) -> u16 {
    line.spans.iter().map(|s| s.content.width()).sum::<usize>() as u16
}

fn summary(status: &StatusView) -> (Line<'static>, Line<'static>) {
    let mut left = vec![Span::raw(" ")];
    for (row_status, count) in &status.counts {
        left.push(Span::styled(
            format!(
                "{} {count} {}",
                style::glyph(*row_status),
                style::label(*row_status)
            ),
            style::status_style(*row_status),
        ));
        left.push(Span::raw("  "));
    }
    if !status.failures.is_empty() {
        left.push(Span::styled("│ ", style::DIM));
        let parts: Vec<String> = status
            .failures
            .iter()
            .map(|(f, n)| format!("{} {n}", f.short()))
            .collect();
        left.push(Span::styled(parts.join(" · "), Style::new().fg(Color::Red)));
        left.push(Span::raw("  "));
    }
    if !status.retries.is_empty() {
        left.push(Span::styled("│ ↻ ", style::DIM));
        let shown: Vec<String> = status
            .retries
            .iter()
            .take(3)
            .map(|r| format!("{} {}s", r.task_id, r.remaining.as_secs_f64().ceil() as u64))
            .collect();
        let more = status.retries.len().saturating_sub(3);
        let mut text = shown.join(", ");
        if more > 0 {
            text.push_str(&format!(" +{more}"));
        }
        left.push(Span::styled(text, Style::new().fg(Color::Magenta)));
    }
    let mut right = Vec::new();
    if status.stopping {
        right.push(Span::styled(" STOPPING ", style::BANNER.bg(Color::Red)));
        right.push(Span::raw(" "));
    } else if status.finished {
        right.push(Span::styled(" DONE ", style::BANNER.bg(Color::Green)));
        right.push(Span::raw(" "));
    } else if status.paused {
        right.push(Span::styled(" ⏸ PAUSED ", style::BANNER));
        right.push(Span::raw(" "));
    }
    if let Some(cost) = status.cost_usd {
        right.push(Span::styled(
            format!("{} ", cost_short(cost)),
            Style::new().fg(Color::Green),
        ));
    }
    right.push(Span::styled(
        format!("×{} ", status.concurrency),
        style::DIM,
    ));
    right.push(Span::styled(
        format!("⏱ {} ", style::duration(status.clock)),
        Style::new().add_modifier(Modifier::BOLD),
    ));
    (Line::from(left), Line::from(right))
}

fn hints(status: &StatusView) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    if let Some(message) = &status.message {
        spans.push(Span::styled(
            format!(" {message} "),
            Style::new().fg(Color::Black).bg(Color::LightBlue),
        ));
        spans.push(Span::raw("  "));
    }
    for (key, what) in &status.keys {
        spans.push(Span::styled(key.clone(), style::KEY));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    Line::from(spans)
}
