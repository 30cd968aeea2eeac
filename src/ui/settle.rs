//! The view state of the next frame, settled before it is drawn: focus, selection, pane order
//! and rectangles, the queue's window, scrolled-back screens, and the PTY sizes the layout asks
//! of the engine, as a list the event loop carries out. Writes only the dashboard's own state.

use std::collections::HashMap;
use std::time::Instant;

use ratatui::layout::Rect;

use super::draw;
use super::layout;
use super::model::{self, PaneSetup, live_tasks, matching, pane_order, window_offset};
use super::queue;
use super::state::{Filter, Mode, UiState};
use crate::run::engine::command::Command;
use crate::run::engine::{BatchView, Engine};

/// One running agent's PTY to resize to the pane it is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneResize {
    pub task: usize,
    pub rows: u16,
    pub cols: u16,
}

/// The next frame's layout and what it asks of the engine.
#[derive(Default)]
pub struct FrameLayout {
    /// The terminal's area.
    pub area: Rect,
    /// The running tasks in pane order, and the screens of those scrolled back.
    pub panes: PaneSetup,
    /// The tasks whose panes are drawn (the first ones of `panes.order`).
    pub visible: Vec<usize>,
    /// PTYs whose size differs from their pane's.
    pub resizes: Vec<PaneResize>,
    /// New sizes for the next agents (`Engine::set_launch_sizes`), when the layout changed.
    pub launch_sizes: Option<Vec<(u16, u16)>>,
}

impl FrameLayout {
    /// What the layout asks of the batch: agents resized to their panes, the next start size.
    pub fn commands(&self) -> Vec<Command> {
        let resizes = self.resizes.iter().map(|r| Command::ResizePane {
            task: r.task,
            rows: r.rows,
            cols: r.cols,
        });
        let launch = self.launch_sizes.clone().map(Command::SetLaunchSizes);
        resizes.chain(launch).collect()
    }
}

/// Settles the dashboard's state for a frame drawn in `area` and lays it out.
pub fn settle(batch: &dyn BatchView, state: &mut UiState, area: Rect, now: Instant) -> FrameLayout {
    let live = live_tasks(batch);
    if let Mode::TakeOver { task, was_zoomed } = state.mode
        && !live.contains(&task)
    {
        state.mode = Mode::Normal;
        state.zoomed = was_zoomed;
    }
    let listed = keep_selection_listed(batch, state);
    state.notice_selection(now);
    state.resolve_focus(&live);
    let order = pane_order(state.focus, &live);
    let regions = layout::regions(area, state.zoomed);
    let plan = layout::panes(regions.panes, order.len(), state.zoomed);
    let visible: Vec<usize> = order.iter().copied().take(plan.slots.len()).collect();
    // TUIs draw their boxes at the width they have and nothing reflows them: an agent is made
    // narrower only when the operator's terminal changed size, never because the focus moved
    // (a tile then shows part of a wider screen).
    let terminal_resized = state.laid_out_area != Some(area);
    state.laid_out_area = Some(area);
    let resizes = visible
        .iter()
        .zip(&plan.slots)
        .filter_map(|(&task, slot)| {
            let current = batch.live_attempt(task)?.attempt().screen().size();
            let (rows, slot_cols) = layout::pty_size(*slot);
            let cols = if terminal_resized {
                slot_cols
            } else {
                slot_cols.max(current.1)
            };
            (current != (rows, cols)).then_some(PaneResize { task, rows, cols })
        })
        .collect();
    let sized_for = (area, state.zoomed);
    let launch_sizes = (state.launch_sized_for != Some(sized_for)).then(|| {
        state.launch_sized_for = Some(sized_for);
        layout::launch_sizes(area, state.zoomed, Engine::MAX_CONCURRENCY)
    });
    let scrolled = scroll_views(batch, state, &live, &visible);
    settle_queue_window(batch, state, area, listed);
    FrameLayout {
        area,
        panes: PaneSetup { order, scrolled },
        visible,
        resizes,
        launch_sizes,
    }
}

/// Panes scrolled back show a view rebuilt from the agent's history; offsets are clamped.
fn scroll_views(
    batch: &dyn BatchView,
    state: &mut UiState,
    live: &[usize],
    visible: &[usize],
) -> HashMap<usize, vt100::Screen> {
    state.scroll.retain(|task, _| live.contains(task));
    let mut views = HashMap::new();
    for &task in visible {
        let wanted = state.scroll.get(&task).copied().unwrap_or(0);
        if wanted == 0 {
            continue;
        }
        if let Some(live) = batch.live_attempt(task) {
            let (view, actual) = live.attempt().screen().scrolled_view(wanted);
            state.scroll.insert(task, actual);
            if actual > 0 {
                views.insert(task, view);
            }
        }
    }
    views
}

/// The queue's first visible row, so that the selection is in view.
fn settle_queue_window(
    batch: &dyn BatchView,
    state: &mut UiState,
    area: Rect,
    listed: Option<Vec<usize>>,
) {
    let detail = model::detail(batch, state.selected, &crate::run::clock::local_now());
    let regions = draw::regions(area, state.zoomed, detail.as_ref());
    let height = regions.queue.map_or(0, queue::visible_rows);
    let list = listed.unwrap_or_else(|| matching(batch, state));
    let selected = list.iter().position(|&i| i == state.selected);
    state.queue_offset = window_offset(state.queue_offset, selected, height, list.len());
}

/// A task that left the filtered list is not left selected out of sight: the selection moves to
/// the next listed task. Returns the list when it was read.
fn keep_selection_listed(batch: &dyn BatchView, state: &mut UiState) -> Option<Vec<usize>> {
    if state.filter == Filter::All {
        return None;
    }
    let list = matching(batch, state);
    if !list.contains(&state.selected) {
        let next = list.iter().find(|&&i| i > state.selected).or(list.last());
        if let Some(&next) = next {
            state.selected = next;
        }
    }
    Some(list)
}
