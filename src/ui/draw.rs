//! One frame of the dashboard from its view model. Reads only.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use crate::replay::ReplayView;

use super::layout::{self, Regions};
use super::model::{Dashboard, DetailView, Overlay, RowStatus};
use super::{details_box, overlay, pane, queue, status, style};

pub fn draw(frame: &mut Frame<'_>, view: &Dashboard<'_>) {
    let area = frame.area();
    let regions = regions(area, view.zoomed, view.detail.as_ref());
    if let Some(rect) = regions.queue {
        queue::render(&view.queue, rect, frame.buffer_mut());
    }
    if let Some(rect) = regions.detail {
        details_box::render_detail(view.detail.as_ref(), rect, frame.buffer_mut());
    }
    let total = view.panes.len() + view.hidden_panes;
    let plan = layout::panes(regions.panes, total, view.zoomed);
    let mut cursor = None;
    if view.panes.is_empty() {
        no_agents(view, regions.panes, regions.detail.is_none(), frame);
    }
    let more = format!(" +{} more · Tab cycles ", plan.hidden);
    let more_width = more.chars().count() as u16;
    for (i, (pane_view, slot)) in view.panes.iter().zip(&plan.slots).enumerate() {
        let takeover = view.takeover && pane_view.focused;
        // The last slot's bottom border also says how many panes are hidden.
        let reserve = match plan.hidden > 0 && i + 1 == plan.slots.len() {
            true => more_width + 1,
            false => 0,
        };
        if let Some(at) = pane::render(pane_view, *slot, frame.buffer_mut(), takeover, reserve) {
            cursor = Some(at);
        }
    }
    if plan.hidden > 0
        && let Some(last) = plan.slots.last()
        && let Some(text) = more_panes_text(view, plan.hidden, plan.slots.len() - 1, *last)
    {
        let width = text.chars().count() as u16;
        let x = last.right().saturating_sub(width + 1).max(last.x);
        frame
            .buffer_mut()
            .set_string(x, last.bottom().saturating_sub(1), text, style::KEY);
    }
    status::render(&view.status, regions.status, frame.buffer_mut());
    if let Some(Overlay::Details { offset }) = &view.overlay {
        // The details box at the size it needs, over the dashboard.
        let area = frame.area();
        let width = area.width.min(100);
        let rows = view
            .detail
            .as_ref()
            .map_or(4, |d| details_box::detail_rows(d, width))
            .min(area.height);
        let popup = layout::centered(area, width, rows);
        frame.render_widget(Clear, popup);
        details_box::render_detail_from(view.detail.as_ref(), *offset, popup, frame.buffer_mut());
    } else if let Some(overlay) = &view.overlay {
        overlay::render(frame, overlay);
    } else if let Some(at) = cursor {
        frame.set_cursor_position(at);
    }
}

/// `+N more · Tab cycles` for the bottom border of the last pane slot, after its banner:
/// shortened rather than written over the banner's keys.
fn more_panes_text(view: &Dashboard<'_>, hidden: usize, slot: usize, area: Rect) -> Option<String> {
    // The banner left room for the whole text (`reserve`).
    let reserve = format!(" +{hidden} more · Tab cycles ").chars().count() as u16 + 1;
    let banner = view.panes.get(slot).map_or(0, |pane| {
        pane::bottom_width(pane, area, view.takeover && pane.focused, reserve)
    });
    let room = usize::from(area.width).saturating_sub(banner + 3);
    [
        format!(" +{hidden} more · Tab cycles "),
        format!(" +{hidden} more "),
        format!(" +{hidden} "),
    ]
    .into_iter()
    .find(|t| t.chars().count() <= room)
}

/// `NO_COLOR`: every cell in the terminal's own colours, its attributes kept. Not left to
/// crossterm, whose bare `ESC[m` resets attributes too (the selected row lost its reverse video).
pub fn without_colours(buf: &mut ratatui::buffer::Buffer) {
    for cell in &mut buf.content {
        cell.fg = ratatui::style::Color::Reset;
        cell.bg = ratatui::style::Color::Reset;
        cell.underline_color = ratatui::style::Color::Reset;
    }
}

/// The dashboard's regions when it shows `detail`: the details box grows up to half the column.
pub fn regions(area: Rect, zoomed: bool, shown: Option<&DetailView>) -> Regions {
    let rows = layout::side_width(area)
        .zip(shown)
        .map_or(layout::DETAIL_ROWS, |(width, shown)| {
            details_box::detail_rows(shown, width)
        });
    layout::regions_with_detail(area, zoomed, rows)
}

/// Draws the player over the panes region of a dashboard already drawn.
pub fn replay<R>(frame: &mut Frame<'_>, zoomed: bool, view: &ReplayView<R>, now: Instant) {
    let area = layout::regions(frame.area(), zoomed).panes;
    frame.render_widget(Clear, area);
    view.render(frame, area, now);
}

/// The panes region when no agent runs: why, and the selected task's last screen (on narrow
/// screens, its details first).
fn no_agents(view: &Dashboard<'_>, area: Rect, with_detail: bool, frame: &mut Frame<'_>) {
    let questions_wait = view
        .status
        .counts
        .iter()
        .any(|(status, n)| *status == RowStatus::NeedsInput && *n > 0);
    let why = if view.status.stopping {
        "Stopping…"
    } else if questions_wait {
        "Tasks wait for your answers: w selects one, m answers it. q leaves."
    } else if view.status.finished {
        "The batch is done. q leaves; r runs a failed task again."
    } else if view.status.paused {
        "The queue is paused. Space resumes it."
    } else {
        "No agent is running."
    };
    let (top, rest) = (
        Rect { height: 1, ..area },
        Rect {
            y: area.y + 1,
            height: area.height.saturating_sub(1),
            ..area
        },
    );
    let selected_asks = with_detail
        && view
            .detail
            .as_ref()
            .is_some_and(|d| !d.questions.is_empty());
    if let Some(last) = view.final_screen.as_ref().filter(|_| !selected_asks) {
        Line::from(Span::styled(format!(" {why}"), style::DIM)).render(top, frame.buffer_mut());
        let block = Block::new()
            .borders(Borders::ALL)
            .border_style(style::BORDER)
            .title(Line::from(vec![
                Span::raw(format!(" {} ", last.task_id)),
                Span::styled(
                    format!("· attempt {} · its last screen ", last.attempt),
                    style::DIM,
                ),
            ]));
        let inner = block.inner(rest);
        block.render(rest, frame.buffer_mut());
        crate::term::paint::screen(last.screen, inner, frame.buffer_mut(), None);
        return;
    }
    if with_detail && let Some(shown) = &view.detail {
        Line::from(Span::styled(format!(" {why}"), style::DIM)).render(top, frame.buffer_mut());
        details_box::render_detail(Some(shown), rest, frame.buffer_mut());
        return;
    }
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(style::BORDER)
        .title(" Agents ");
    let lines = vec![
        Line::raw(""),
        Line::from(Span::styled(format!(" {why}"), style::DIM)),
    ];
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}
