//! Fills the view model for one frame from the batch's view and the dashboard's state. Reads
//! only; the queue is built for its visible window alone, so 10,000 tasks cost a pass over
//! statuses, not 10,000 rows.

use std::time::Instant;

use ratatui::layout::Rect;

use super::tasks::{failure_of, is_listed, matching, max_attempts, row_status, window_offset};
use super::{Dashboard, FinalScreen, PaneSetup, PaneView, QueueView, RowStatus, TaskRow};
use super::{agent, detail, overlay, status};
use crate::core::operator::clock_words::{self, LocalNow};
use crate::core::task::TaskSpec;
use crate::run::engine::BatchView;
use crate::ui::state::{Mode, UiState};
use crate::ui::{draw, layout, prompt, queue};

pub fn dashboard<'a>(
    batch: &'a dyn BatchView,
    state: &'a UiState,
    area: Rect,
    now: Instant,
    panes: &'a PaneSetup,
) -> Dashboard<'a> {
    let order = &panes.order;
    // The wall clock, once per frame: long waits and quota resets are said as clock times.
    let local = crate::run::clock::local_now();
    let detail = detail(batch, state.selected, &local);
    let regions = draw::regions(area, state.zoomed, detail.as_ref());
    let plan = layout::panes(regions.panes, order.len(), state.zoomed);
    let queue_rows = regions.queue.map_or(0, queue::visible_rows);
    let takeover = matches!(state.mode, Mode::TakeOver { .. });
    let panes = order
        .iter()
        .take(plan.slots.len())
        .filter_map(|&task| pane(batch, state, panes, task, now))
        .collect::<Vec<_>>();
    let hidden_panes = order.len() - panes.len();
    Dashboard {
        queue: queue_view(batch, state, queue_rows, now, &local),
        panes,
        hidden_panes,
        zoomed: state.zoomed,
        takeover,
        detail,
        final_screen: final_screen(batch, state),
        status: status::status(batch, state, now, &local),
        overlay: overlay::overlay(batch, state),
    }
}

fn pane<'a>(
    batch: &'a dyn BatchView,
    state: &'a UiState,
    panes: &'a PaneSetup,
    task: usize,
    now: Instant,
) -> Option<PaneView<'a>> {
    let live = batch.live_attempt(task)?;
    let spec = batch.task(task)?;
    let scrolled_view = panes.scrolled.get(&task);
    let screen = scrolled_view.unwrap_or_else(|| live.attempt().screen().vt());
    Some(PaneView {
        task_id: live.task_id().to_string(),
        attempt: live.number(),
        max_attempts: max_attempts(spec.last_retried_attempt(), live.number()),
        elapsed: now.saturating_duration_since(live.started()),
        screen,
        focused: state.focus == Some(task),
        selected: state.selected == task,
        prompt: prompt::view(live.attempt()),
        note: state.note_for(task, now).map(str::to_string),
        scrolled: scrolled_view
            .and_then(|_| state.scroll.get(&task).copied())
            .unwrap_or(0),
        ending: live.attempt().is_ending(),
        host: live.host().map(str::to_string),
    })
}

fn queue_view(
    batch: &dyn BatchView,
    state: &UiState,
    height: usize,
    now: Instant,
    local: &LocalNow,
) -> QueueView {
    let tasks = batch.tasks();
    let matching = matching(batch, state);
    let selected = matching.iter().position(|&i| i == state.selected);
    let offset = window_offset(state.queue_offset, selected, height, matching.len());
    let rows = matching
        .iter()
        .skip(offset)
        .take(height)
        .map(|&i| task_row(batch, state, i, &tasks[i], now, local))
        .collect();
    QueueView {
        filter: state.filter.label(),
        search: (!state.search.is_empty() || matches!(state.mode, Mode::Search))
            .then(|| state.search.clone()),
        total: (0..tasks.len()).filter(|&i| is_listed(batch, i)).count(),
        matching: matching.len(),
        offset,
        selected,
        rows,
    }
}

fn task_row(
    batch: &dyn BatchView,
    state: &UiState,
    index: usize,
    task: &TaskSpec,
    now: Instant,
    local: &LocalNow,
) -> TaskRow {
    let status = row_status(batch, index, task);
    let live = batch.live_attempt(index);
    let note = if let Some(w) = live.and_then(|l| l.attempt().waiting()) {
        Some(w.asks())
    } else if let Some(note) = state.note_for(index, now) {
        Some(note.to_string())
    } else if status == RowStatus::Retryable {
        batch.retry_at(index).map(|at| {
            clock_words::retry_note(at.saturating_duration_since(now), local.now, &local.zone)
        })
    } else {
        None
    };
    let (cost_usd, turns) = agent::usage(task.result.as_ref(), live);
    let questions = if status == RowStatus::NeedsInput {
        agent::questions(task.result.as_ref()).len()
    } else {
        0
    };
    TaskRow {
        task_id: task.task_id.clone(),
        agent: task.agent.clone(),
        status,
        attempts: live.map_or(task.attempts, |l| l.number()),
        max_attempts: max_attempts(
            task.last_retried_attempt(),
            live.map_or(task.attempts, |l| l.number()),
        ),
        elapsed: live
            .map(|l| now.saturating_duration_since(l.started()))
            .or_else(|| batch.last_attempt_duration(index)),
        // A task running again shows what it does now, not how its last attempt failed.
        failure: (status != RowStatus::Completed && live.is_none())
            .then(|| failure_of(task))
            .flatten(),
        note,
        questions,
        cost_usd,
        turns,
    }
}

fn final_screen<'a>(batch: &dyn BatchView, state: &'a UiState) -> Option<FinalScreen<'a>> {
    let index = state.selected;
    if batch.live_attempt(index).is_some() {
        return None;
    }
    let (attempt, screen) = state.final_screens.get(&index)?;
    Some(FinalScreen {
        task_id: batch.task(index)?.task_id.clone(),
        attempt: *attempt,
        screen,
    })
}
