//! Draws one frame from the live engine: settles the focus, gives every visible pane's PTY the
//! size it is drawn at (and tells the engine the size the next agent's pane will have), scrolls
//! screens back where the operator asked, builds the view model, draws it with an open replay
//! on top, and puts the screens back to live.

use std::collections::HashSet;
use std::time::Instant;

use color_eyre::eyre::{Result, eyre};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;

use super::draw::{self, draw};
use super::layout;
use super::model::{self, live_tasks, matching, pane_order};
use super::state::{Filter, Mode, UiState};
use crate::core::attempt::Event;
use crate::run::engine::Engine;

/// Draws the dashboard; returns the tasks whose panes are visible (their output redraws).
pub fn frame<B: Backend>(
    terminal: &mut Terminal<B>,
    engine: &mut Engine,
    state: &mut UiState,
    now: Instant,
) -> Result<HashSet<usize>>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let size = terminal
        .size()
        .map_err(|e| eyre!("cannot read the terminal size: {e}"))?;
    let area = Rect::new(0, 0, size.width, size.height);
    let live = live_tasks(engine);
    if let Mode::TakeOver { task, was_zoomed } = state.mode
        && !live.contains(&task)
    {
        state.mode = Mode::Normal;
        state.zoomed = was_zoomed;
    }
    keep_selection_listed(engine, state);
    state.resolve_focus(&live);
    let order = pane_order(state.focus, &live);
    let regions = layout::regions(area, state.zoomed);
    let plan = layout::panes(regions.panes, order.len(), state.zoomed);
    let visible: Vec<usize> = order.iter().copied().take(plan.slots.len()).collect();
    // TUIs draw their boxes at the width they have and nothing reflows them: an agent is made
    // narrower only when the operator's terminal changed size, never because the focus moved
    // (a tile then shows part of a wider screen).
    let terminal_resized = state.drawn_area != Some(area);
    state.drawn_area = Some(area);
    for (&task, slot) in visible.iter().zip(&plan.slots) {
        let current = engine
            .live_for_task(task)
            .map(|live| live.attempt.screen().size());
        let (rows, slot_cols) = layout::pty_size(*slot);
        let cols = match current {
            Some((_, now_cols)) if !terminal_resized => slot_cols.max(now_cols),
            _ => slot_cols,
        };
        if current.is_some_and(|size| size != (rows, cols)) {
            tracing::debug!(task, rows, cols, "pane resized");
            engine.send_to_task(task, Event::Resize { rows, cols }, now)?;
        }
    }
    let panes = layout::panes_after_next_start(live.len(), engine.concurrency());
    let (rows, cols) = layout::launch_size(area, state.zoomed, panes);
    engine.set_launch_size(rows, cols);
    state.scroll.retain(|task, _| live.contains(task));
    // Panes scrolled back show a view rebuilt from the agent's history; the live screens are
    // only read.
    state.scrolled_screens.clear();
    for &task in &visible {
        let wanted = state.scroll.get(&task).copied().unwrap_or(0);
        if wanted == 0 {
            continue;
        }
        if let Some(live) = engine.live_for_task(task) {
            let (view, actual) = live.attempt.screen().scrolled_view(wanted);
            state.scroll.insert(task, actual);
            if actual > 0 {
                state.scrolled_screens.insert(task, view);
            }
        }
    }
    // Out of the state while the view model borrows it; put back below.
    let mut replay = state.replay.take();
    let drawn = {
        let mut view = model::dashboard(engine, state, area, now, &order);
        if replay.is_some() {
            view.status.keys = replay_keys();
        }
        let offset = view.queue.offset;
        let zoomed = state.zoomed;
        terminal
            .draw(|f| {
                draw(f, &view);
                if let Some(replay) = replay.as_mut() {
                    draw::replay(f, zoomed, &mut replay.view, now);
                }
            })
            .map(|_| offset)
            .map_err(|e| eyre!("cannot draw the dashboard: {e}"))
    };
    let replaying = replay.is_some();
    state.replay = replay;
    state.queue_offset = drawn?;
    // The replay covers the panes: their output changes nothing on screen.
    if replaying {
        return Ok(HashSet::new());
    }
    Ok(visible.into_iter().collect())
}

/// The status bar's keys while a replay is open (the player shows its own under the timeline).
pub fn replay_keys() -> Vec<(String, String)> {
    [
        ("q Esc", "back to the dashboard"),
        ("", "the run goes on meanwhile"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A task that left the filtered list (it finished, say) is not left selected out of sight:
/// the selection moves to the next listed task.
fn keep_selection_listed(engine: &Engine, state: &mut UiState) {
    if state.filter == Filter::All {
        return;
    }
    let list = matching(engine, state);
    if list.contains(&state.selected) {
        return;
    }
    let next = list.iter().find(|&&i| i > state.selected).or(list.last());
    if let Some(&next) = next {
        state.selected = next;
    }
}
