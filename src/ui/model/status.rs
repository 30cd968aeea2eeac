//! The status bar's view: counts by status and failure class, the retry queue, the clock, the
//! queue's state and the keys that matter in the current mode.

use std::time::Instant;

use super::overlay::message_target;
use super::tasks::{failure_of, is_listed, row_status, waiting_tasks};
use crate::core::operator::clock_words;
use crate::core::task::FailureType;
use crate::run::engine::BatchView;
use crate::run::outcome::agent_facts;
use crate::ui::model::{MessageTarget, RetryView, RowStatus, StatusView};
use crate::ui::prompt;
use crate::ui::state::{Leaving, Mode, UiState};
use crate::ui::takeover_keys::LEAVE_CHORD;

pub(super) fn status(
    batch: &dyn BatchView,
    state: &UiState,
    now: Instant,
    wall: &clock_words::LocalNow,
) -> StatusView {
    let tasks = batch.tasks();
    const ORDER: [RowStatus; 9] = [
        RowStatus::Running,
        RowStatus::Waiting,
        RowStatus::NeedsInput,
        RowStatus::Pending,
        RowStatus::Retryable,
        RowStatus::Completed,
        RowStatus::Failed,
        RowStatus::Cancelled,
        RowStatus::Skipped,
    ];
    let mut counts = [0usize; ORDER.len()];
    let mut failures = [0usize; FailureType::ALL.len()];
    let mut retries = Vec::new();
    let mut cost: Option<f64> = None;
    for (i, task) in tasks.iter().enumerate() {
        if !is_listed(batch, i) {
            continue;
        }
        if let Some(total) = agent_facts::total_cost(task.result.as_ref(), None) {
            *cost.get_or_insert(0.0) += total;
        }
        let status = row_status(batch, i, task);
        if let Some(slot) = ORDER.iter().position(|s| *s == status) {
            counts[slot] += 1;
        }
        if matches!(status, RowStatus::Failed | RowStatus::Retryable)
            && let Some(f) = failure_of(task)
            && let Some(slot) = FailureType::ALL.iter().position(|x| *x == f)
        {
            failures[slot] += 1;
        }
        if status == RowStatus::Retryable
            && let Some(at) = batch.retry_at(i)
        {
            let remaining = at.saturating_duration_since(now);
            retries.push(RetryView {
                task_id: task.task_id.clone(),
                remaining,
                when: clock_words::countdown(remaining, wall.now, &wall.zone),
            });
        }
    }
    retries.sort_by_key(|r| r.remaining);
    // A running attempt's result is still its previous one: its cost so far comes on top.
    for live in batch.live_attempts() {
        if let Some(now_cost) = live.attempt().stream_facts().and_then(|f| f.cost_usd) {
            *cost.get_or_insert(0.0) += now_cost;
        }
    }
    let always = [
        RowStatus::Running,
        RowStatus::Pending,
        RowStatus::Completed,
        RowStatus::Failed,
    ];
    StatusView {
        counts: ORDER
            .iter()
            .zip(counts)
            .filter(|(s, n)| *n > 0 || always.contains(s))
            .map(|(s, n)| (*s, n))
            .collect(),
        failures: FailureType::ALL
            .iter()
            .zip(failures)
            .filter(|(_, n)| *n > 0)
            .map(|(f, n)| (*f, n))
            .collect(),
        retries,
        clock: state.clock(now),
        paused: batch.is_paused(),
        concurrency: batch.concurrency(),
        cost_usd: cost,
        finished: state.finished.is_some(),
        stopping: state.leaving == Leaving::Stopping,
        message: status_message(state.message_now(now), batch.tasks_file_problem()),
        hosts_out: batch
            .hosts_out_of_rotation(now)
            .into_iter()
            .map(|(host, _, left)| (host, left.as_secs_f64().ceil() as u64))
            .collect(),
        keys: hints(batch, state),
    }
}

/// The status line's message: a passing one while it lasts, else the tasks file's problem while
/// the file does not parse.
pub(crate) fn status_message(passing: Option<&str>, file_problem: Option<&str>) -> Option<String> {
    passing
        .map(str::to_string)
        .or_else(|| file_problem.map(crate::run::engine::edits::does_not_parse_notice))
}

fn hints(batch: &dyn BatchView, state: &UiState) -> Vec<(String, String)> {
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    if let Some(keys) = window_hints(state) {
        return keys;
    }
    if state.leaving == Leaving::Stopping {
        return vec![pair("q", "kill the agents now")];
    }
    let mut keys = Vec::new();
    // The dialog's keys only where they answer it: the focused pane is the selected task's.
    if let Some(live) = state
        .focus
        .filter(|f| *f == state.selected)
        .and_then(|f| batch.live_attempt(f))
        && let Some(view) = prompt::view(live.attempt())
    {
        keys.extend(
            view.choices
                .iter()
                .map(|c| (c.key.clone(), c.label.clone())),
        );
    }
    let waiting = waiting_tasks(batch).len();
    if waiting > 0 {
        keys.push(pair("w", &format!("next waiting ({waiting})")));
    }
    if let Some(what) = message_hint(batch, state.selected) {
        keys.push(pair("m", what));
    }
    if state.finished.is_some() {
        keys.extend([
            pair("q", "leave"),
            pair("r", "retry"),
            pair("f", "filter"),
            pair("?", "help"),
        ]);
        return keys;
    }
    let pause = if batch.is_paused() { "resume" } else { "pause" };
    let zoom = if state.zoomed { "unzoom" } else { "zoom" };
    keys.extend([
        pair("↑↓", "select"),
        pair("Tab", "pane"),
        pair("z", zoom),
        pair("i", "take over"),
        pair("Space", pause),
        pair("c", "cancel"),
        pair("r", "retry"),
        pair("?", "help"),
    ]);
    if state.background {
        keys.extend([
            pair(crate::ui::status::DETACH_KEY, "detach"),
            pair("q", "detach/stop"),
        ]);
    } else {
        keys.push(pair("q", "quit"));
    }
    keys
}

/// The keys of the window or mode that takes them; `None` in the dashboard itself.
fn window_hints(state: &UiState) -> Option<Vec<(String, String)>> {
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    match &state.mode {
        Mode::TakeOver { .. } => Some(vec![
            pair(LEAVE_CHORD, "leave take-over"),
            pair("", "every other key and paste goes to the agent"),
        ]),
        Mode::Normal => None,
        Mode::Search => Some(vec![
            pair(&format!("/{}▏", state.search), ""),
            pair("Enter", "keep"),
            pair("Esc", "clear"),
        ]),
        Mode::Diff { .. } => Some(vec![
            pair("j/k", "scroll"),
            pair("n/p", "file"),
            pair("q", "close"),
        ]),
        Mode::Attempts { .. } => Some(vec![
            pair("↑↓", "choose"),
            pair("Enter", "replay"),
            pair("Esc", "close"),
        ]),
        _ => Some(vec![pair("Esc", "close")]),
    }
}

/// What `m` does for the selected task, when that is worth a hint.
fn message_hint(batch: &dyn BatchView, index: usize) -> Option<&'static str> {
    match message_target(batch, index)? {
        MessageTarget::Answers { .. } => Some("answer"),
        MessageTarget::Session { .. } => Some("follow up"),
        MessageTarget::Running | MessageTarget::FreshAttempt => None,
    }
}
