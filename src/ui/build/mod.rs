//! Fills the view model for one frame from the engine (tasks, live attempts, retries) and the
//! dashboard's own state. Reads only; the queue is built for its visible window alone, so a
//! batch of 10,000 tasks costs a pass over statuses, not 10,000 rows.

use std::time::Instant;

use ratatui::layout::Rect;
use serde_json::Value;

pub mod agent;
mod detail;
mod overlay;
mod status;

pub use detail::detail;
pub use overlay::{auto_menu, message_target};

use super::model::{Dashboard, FinalScreen, PaneView, QueueView, RowStatus, TaskRow};
use super::state::{Mode, UiState};
use super::{draw, layout, prompt, queue};
use crate::core::task::{FailureType, TaskSpec, TaskStatus};
use crate::run::engine::Engine;

/// How task `index` shows in the queue.
pub fn row_status(engine: &Engine, index: usize, task: &TaskSpec) -> RowStatus {
    match task.status {
        TaskStatus::Pending | TaskStatus::Retryable if !engine.task_in_scope(index) => {
            RowStatus::Skipped
        }
        TaskStatus::Pending => RowStatus::Pending,
        TaskStatus::Running => match engine.live_for_task(index) {
            Some(live) if live.attempt.waiting().is_some() => RowStatus::Waiting,
            _ => RowStatus::Running,
        },
        TaskStatus::Completed => RowStatus::Completed,
        TaskStatus::Retryable => RowStatus::Retryable,
        TaskStatus::Failed => RowStatus::Failed,
        TaskStatus::Cancelled => RowStatus::Cancelled,
        TaskStatus::NeedsInput => RowStatus::NeedsInput,
    }
}

pub fn failure_of(task: &TaskSpec) -> Option<FailureType> {
    let result = task.result.as_ref()?;
    result
        .get("failure_type")
        .and_then(Value::as_str)
        .and_then(FailureType::parse)
}

/// The tasks the queue lists under the current filter, in file order.
pub fn matching(engine: &Engine, state: &UiState) -> Vec<usize> {
    engine
        .store()
        .file()
        .tasks()
        .iter()
        .enumerate()
        .filter(|(i, t)| state.filter.matches(row_status(engine, *i, t)))
        .map(|(i, _)| i)
        .collect()
}

/// The running tasks, in file order.
pub fn live_tasks(engine: &Engine) -> Vec<usize> {
    let mut live: Vec<usize> = engine.live().map(|l| l.task).collect();
    live.sort_unstable();
    live
}

/// The tasks waiting for the operator, in file order: a running agent's prompt, or the
/// questions of a task that needs input (in this run).
pub fn waiting_tasks(engine: &Engine) -> Vec<usize> {
    engine
        .store()
        .file()
        .tasks()
        .iter()
        .enumerate()
        .filter(|(i, task)| match task.status {
            TaskStatus::NeedsInput => engine.task_in_scope(*i),
            TaskStatus::Running => engine
                .live_for_task(*i)
                .is_some_and(|l| l.attempt.waiting().is_some()),
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}

/// Pane order: the focused task first, then the others in file order.
pub fn pane_order(focus: Option<usize>, live: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = focus.into_iter().collect();
    order.extend(live.iter().copied().filter(|t| Some(*t) != focus));
    order
}

/// The queue's first visible row so that the selection (`selected`, a position) is in view.
pub fn window_offset(offset: usize, selected: Option<usize>, height: usize, len: usize) -> usize {
    let height = height.max(1);
    let mut offset = offset.min(len.saturating_sub(height));
    if let Some(sel) = selected {
        if sel < offset {
            offset = sel;
        } else if sel >= offset + height {
            offset = sel + 1 - height;
        }
    }
    offset
}

pub fn dashboard<'a>(
    engine: &'a Engine,
    state: &'a UiState,
    area: Rect,
    now: Instant,
    order: &[usize],
) -> Dashboard<'a> {
    let detail = detail(engine, state.selected);
    let regions = draw::regions(area, state.zoomed, detail.as_ref());
    let plan = layout::panes(regions.panes, order.len(), state.zoomed);
    let queue_rows = regions.queue.map_or(0, queue::visible_rows);
    let takeover = matches!(state.mode, Mode::TakeOver { .. });
    let panes = order
        .iter()
        .take(plan.slots.len())
        .filter_map(|&task| pane(engine, state, task, now))
        .collect::<Vec<_>>();
    let hidden_panes = order.len() - panes.len();
    Dashboard {
        queue: queue_view(engine, state, queue_rows, now),
        panes,
        hidden_panes,
        zoomed: state.zoomed,
        takeover,
        detail,
        final_screen: final_screen(engine, state),
        status: status::status(engine, state, now),
        overlay: overlay::overlay(engine, state),
    }
}

/// The attempts a task may have: its retry budget, or more once the operator retried it by
/// hand past that budget (never "3/2").
pub fn max_attempts(max_retries: u32, attempts: u32) -> u32 {
    max_retries.saturating_add(1).max(attempts)
}

fn pane<'a>(
    engine: &'a Engine,
    state: &'a UiState,
    task: usize,
    now: Instant,
) -> Option<PaneView<'a>> {
    let live = engine.live_for_task(task)?;
    let spec = engine.store().file().tasks().get(task)?;
    let scrolled_view = state.scrolled_screens.get(&task);
    let screen = scrolled_view.unwrap_or_else(|| live.attempt.screen().vt());
    Some(PaneView {
        task_id: live.task_id.clone(),
        attempt: live.number,
        max_attempts: max_attempts(spec.max_retries, live.number),
        elapsed: now.saturating_duration_since(live.started),
        screen,
        focused: state.focus == Some(task),
        prompt: prompt::view(&live.attempt),
        note: state.note_for(task, now).map(str::to_string),
        scrolled: scrolled_view
            .and_then(|_| state.scroll.get(&task).copied())
            .unwrap_or(0),
        ending: live.attempt.is_ending(),
    })
}

fn queue_view(engine: &Engine, state: &UiState, height: usize, now: Instant) -> QueueView {
    let tasks = engine.store().file().tasks();
    let matching = matching(engine, state);
    let selected = matching.iter().position(|&i| i == state.selected);
    let offset = window_offset(state.queue_offset, selected, height, matching.len());
    let rows = matching
        .iter()
        .skip(offset)
        .take(height)
        .map(|&i| task_row(engine, state, i, &tasks[i], now))
        .collect();
    QueueView {
        filter: state.filter.label(),
        total: tasks.len(),
        matching: matching.len(),
        offset,
        selected,
        rows,
    }
}

fn task_row(
    engine: &Engine,
    state: &UiState,
    index: usize,
    task: &TaskSpec,
    now: Instant,
) -> TaskRow {
    let status = row_status(engine, index, task);
    let live = engine.live_for_task(index);
    let note = if let Some(w) = live.and_then(|l| l.attempt.waiting()) {
        let name = live
            .and_then(|l| l.attempt.profile().prompts.get(w.rule))
            .map_or("prompt", |r| r.name.as_str());
        Some(name.to_string())
    } else if let Some(note) = state.note_for(index, now) {
        Some(note.to_string())
    } else if status == RowStatus::Retryable {
        engine.retry_at(index).map(|at| {
            let left = at.saturating_duration_since(now);
            format!("retry {}s", left.as_secs_f64().ceil() as u64)
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
        attempts: live.map_or(task.attempts, |l| l.number),
        max_attempts: max_attempts(task.max_retries, live.map_or(task.attempts, |l| l.number)),
        elapsed: live
            .map(|l| now.saturating_duration_since(l.started))
            .or_else(|| state.durations.get(&index).copied()),
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

fn final_screen<'a>(engine: &Engine, state: &'a UiState) -> Option<FinalScreen<'a>> {
    let index = state.selected;
    if engine.live_for_task(index).is_some() {
        return None;
    }
    let (attempt, screen) = state.final_screens.get(&index)?;
    Some(FinalScreen {
        task_id: engine.store().file().tasks().get(index)?.task_id.clone(),
        attempt: *attempt,
        screen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_never_exceed_what_the_task_had() {
        assert_eq!(max_attempts(1, 0), 2);
        assert_eq!(max_attempts(1, 2), 2);
        // Retried by hand past its budget: "3/3", never "3/2".
        assert_eq!(max_attempts(1, 3), 3);
        assert_eq!(max_attempts(u32::MAX, 1), u32::MAX);
    }

    #[test]
    fn the_window_follows_the_selection() {
        assert_eq!(window_offset(0, Some(3), 10, 100), 0);
        assert_eq!(window_offset(0, Some(12), 10, 100), 3);
        assert_eq!(window_offset(50, Some(12), 10, 100), 12);
        assert_eq!(
            window_offset(95, None, 10, 100),
            90,
            "no empty rows at the end"
        );
        assert_eq!(window_offset(5, Some(0), 10, 3), 0);
    }

    #[test]
    fn the_focused_pane_comes_first() {
        assert_eq!(pane_order(Some(7), &[1, 4, 7, 9]), vec![7, 1, 4, 9]);
        assert_eq!(pane_order(None, &[1, 4]), vec![1, 4]);
    }
}
