//! The mouse: a click selects a task or focuses a pane, the wheel moves through the queue or
//! scrolls the pane under the pointer. Hit-testing uses the layout the frame is drawn with. Only
//! in normal mode: overlays, editors and take-over keep the keyboard.

use std::time::Instant;

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::model::{self, live_tasks, matching, pane_order, step_through, window_offset};
use super::state::{Mode, UiState};
use super::{draw, layout, queue};
use crate::run::engine::BatchView;

/// Rows one wheel notch scrolls a pane's history.
const WHEEL_ROWS: usize = 3;

/// What a mouse event at a spot of the dashboard means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseTarget {
    /// A queue row: the task at that index of the tasks file.
    QueueRow {
        task: usize,
    },
    /// The queue, below its last row or on its border.
    Queue,
    /// The pane of a running task.
    Pane {
        task: usize,
    },
    Elsewhere,
}

/// Which part of the dashboard, drawn in `area`, is at `at`.
pub fn target(batch: &dyn BatchView, state: &UiState, area: Rect, at: Position) -> MouseTarget {
    let detail = model::detail(batch, state.selected, &crate::run::clock::local_now());
    let regions = draw::regions(area, state.zoomed, detail.as_ref());
    if let Some(rect) = regions.queue.filter(|r| r.contains(at)) {
        let list = matching(batch, state);
        let height = queue::visible_rows(rect);
        let selected = list.iter().position(|&i| i == state.selected);
        let offset = window_offset(state.queue_offset, selected, height, list.len());
        let row = usize::from(at.y.saturating_sub(rect.y));
        // Row 0 is the border with the title.
        return match row.checked_sub(1).filter(|r| *r < height) {
            Some(r) => list
                .get(offset + r)
                .map_or(MouseTarget::Queue, |&task| MouseTarget::QueueRow { task }),
            None => MouseTarget::Queue,
        };
    }
    let live = live_tasks(batch);
    let order = pane_order(state.focus, &live);
    let plan = layout::panes(regions.panes, order.len(), state.zoomed);
    order
        .iter()
        .zip(&plan.slots)
        .find(|(_, slot)| slot.contains(at))
        .map_or(MouseTarget::Elsewhere, |(&task, _)| MouseTarget::Pane {
            task,
        })
}

/// Acts on one mouse event.
pub fn on_mouse(
    batch: &dyn BatchView,
    state: &mut UiState,
    mouse: &MouseEvent,
    area: Rect,
    _now: Instant,
) {
    if !matches!(state.mode, Mode::Normal) || state.replay.is_some() {
        return;
    }
    let at = Position::new(mouse.column, mouse.row);
    let spot = target(batch, state, area, at);
    match (mouse.kind, spot) {
        (MouseEventKind::Down(MouseButton::Left), MouseTarget::QueueRow { task }) => {
            state.selected = task;
            if batch.live_attempt(task).is_some() {
                state.focus = Some(task);
            }
        }
        (MouseEventKind::Down(MouseButton::Left), MouseTarget::Pane { task }) => {
            state.focus = Some(task);
            state.selected = task;
        }
        (MouseEventKind::ScrollUp, MouseTarget::QueueRow { .. } | MouseTarget::Queue) => {
            select_step(batch, state, -1);
        }
        (MouseEventKind::ScrollDown, MouseTarget::QueueRow { .. } | MouseTarget::Queue) => {
            select_step(batch, state, 1);
        }
        (MouseEventKind::ScrollUp, MouseTarget::Pane { task }) => {
            let offset = state.scroll.entry(task).or_insert(0);
            *offset = offset.saturating_add(WHEEL_ROWS);
        }
        (MouseEventKind::ScrollDown, MouseTarget::Pane { task }) => {
            let offset = state.scroll.entry(task).or_insert(0);
            *offset = offset.saturating_sub(WHEEL_ROWS);
        }
        _ => {}
    }
    state.operator_chose();
}

/// Moves the selection `delta` rows through the queue as filtered (keys and the wheel).
pub(super) fn select_step(batch: &dyn BatchView, state: &mut UiState, delta: isize) {
    if let Some(task) = step_through(&matching(batch, state), state.selected, delta) {
        state.selected = task;
    }
}
