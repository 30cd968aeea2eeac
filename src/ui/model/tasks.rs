//! Which tasks the dashboard shows where: row statuses, the filtered queue, the running and
//! waiting tasks, the panes' order, the queue's window. Reads only.

use serde_json::Value;

use super::RowStatus;
use crate::core::task::{FailureType, TaskSpec, TaskStatus};
use crate::run::engine::BatchView;
use crate::ui::search;
use crate::ui::state::{Filter, UiState};

/// How task `index` shows in the queue.
pub fn row_status(batch: &dyn BatchView, index: usize, task: &TaskSpec) -> RowStatus {
    match task.status {
        TaskStatus::Pending | TaskStatus::Retryable if !batch.in_scope(index) => RowStatus::Skipped,
        TaskStatus::Pending => RowStatus::Pending,
        TaskStatus::Running => match batch.live_attempt(index) {
            Some(live) if live.is_waiting() => RowStatus::Waiting,
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

/// Whether the queue lists task `index`: a task removed from the tasks file during the run is
/// held in memory only, not listed.
pub fn is_listed(batch: &dyn BatchView, index: usize) -> bool {
    batch.is_listed(index)
}

/// The tasks the queue lists under the current filter, in file order.
pub fn matching(batch: &dyn BatchView, state: &UiState) -> Vec<usize> {
    batch
        .tasks()
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            batch.is_listed(*i)
                && state.filter.matches(row_status(batch, *i, t))
                && search::matches(&state.search, t)
        })
        .map(|(i, _)| i)
        .collect()
}

/// How many tasks each status filter lists (the search aside), for `f` to skip empty ones.
pub fn filter_counts(batch: &dyn BatchView) -> Vec<(Filter, usize)> {
    let statuses: Vec<RowStatus> = batch
        .tasks()
        .iter()
        .enumerate()
        .filter(|(i, _)| batch.is_listed(*i))
        .map(|(i, t)| row_status(batch, i, t))
        .collect();
    Filter::ORDER
        .iter()
        .map(|f| (*f, statuses.iter().filter(|s| f.matches(**s)).count()))
        .collect()
}

/// The running tasks, in file order.
pub fn live_tasks(batch: &dyn BatchView) -> Vec<usize> {
    let mut live: Vec<usize> = batch.live_attempts().iter().map(|l| l.task()).collect();
    live.sort_unstable();
    live
}

/// The tasks waiting for the operator, in file order: a running agent's prompt, or the
/// questions of a task that needs input (in this run).
pub fn waiting_tasks(batch: &dyn BatchView) -> Vec<usize> {
    batch
        .tasks()
        .iter()
        .enumerate()
        .filter(|(i, _)| batch.is_listed(*i))
        .filter(|(i, task)| match task.status {
            TaskStatus::NeedsInput => batch.in_scope(*i),
            TaskStatus::Running => batch.live_attempt(*i).is_some_and(|l| l.is_waiting()),
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}

/// The task `delta` rows away from `selected` in `list`, kept within it; its first task when
/// `selected` is not in it.
pub fn step_through(list: &[usize], selected: usize, delta: isize) -> Option<usize> {
    let last = list.len().checked_sub(1)?;
    let next = match list.iter().position(|&i| i == selected) {
        Some(at) => at.saturating_add_signed(delta).min(last),
        None => 0,
    };
    list.get(next).copied()
}

/// A task's id for a status message (`task #N` past the end of the file).
pub fn task_name(batch: &dyn BatchView, task: usize) -> String {
    batch
        .task(task)
        .map_or_else(|| format!("task #{task}"), |t| t.task_id.clone())
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

/// The attempts a task may have: its retry budget, or more once the operator retried it by
/// hand past that budget (never "3/2").
pub fn max_attempts(max_retries: u32, attempts: u32) -> u32 {
    max_retries.saturating_add(1).max(attempts)
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
    fn a_step_stays_within_the_queue() {
        let list = [2, 5, 7, 9];
        assert_eq!(step_through(&list, 5, 1), Some(7));
        assert_eq!(step_through(&list, 5, -1), Some(2));
        assert_eq!(step_through(&list, 5, -10), Some(2), "stops at the top");
        assert_eq!(
            step_through(&list, 7, isize::MAX),
            Some(9),
            "stops at the bottom"
        );
        assert_eq!(step_through(&list, 2, isize::MIN), Some(2));
        assert_eq!(step_through(&list, 3, 1), Some(2), "unlisted: the first");
        assert_eq!(step_through(&[], 3, 1), None);
    }

    #[test]
    fn the_focused_pane_comes_first() {
        assert_eq!(pane_order(Some(7), &[1, 4, 7, 9]), vec![7, 1, 4, 9]);
        assert_eq!(pane_order(None, &[1, 4]), vec![1, 4]);
    }
}
