//! The status bar's view: counts by status and failure class, the retry queue, the clock, the
//! queue's state and the keys that matter in the current mode.

use std::time::Instant;

use super::{failure_of, row_status};
use crate::core::task::FailureType;
use crate::run::engine::Engine;
use crate::ui::keys::LEAVE_CHORD;
use crate::ui::model::{RetryView, RowStatus, StatusView};
use crate::ui::prompt;
use crate::ui::state::{Leaving, Mode, UiState};

pub fn status(engine: &Engine, state: &UiState, now: Instant) -> StatusView {
    let tasks = engine.store().file().tasks();
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
    let mut counts = [0usize; 8];
    let mut failures = [0usize; FailureType::ALL.len()];
    let mut retries = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        let status = row_status(engine, i, task);
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
            && let Some(at) = engine.retry_at(i)
        {
            retries.push(RetryView {
                task_id: task.task_id.clone(),
                remaining: at.saturating_duration_since(now),
            });
        }
    }
    retries.sort_by_key(|r| r.remaining);
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
        paused: engine.is_paused(),
        concurrency: engine.concurrency(),
        finished: state.finished.is_some(),
        stopping: state.leaving == Leaving::Stopping,
        message: state.message_now(now).map(str::to_string),
        keys: hints(engine, state),
    }
}

fn hints(engine: &Engine, state: &UiState) -> Vec<(String, String)> {
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    match &state.mode {
        Mode::TakeOver { .. } => {
            return vec![
                pair(LEAVE_CHORD, "leave take-over"),
                pair("", "every other key and paste goes to the agent"),
            ];
        }
        Mode::Normal => {}
        Mode::Attempts { .. } => {
            return vec![
                pair("↑↓", "choose"),
                pair("Enter", "replay"),
                pair("Esc", "close"),
            ];
        }
        _ => return vec![pair("Esc", "close")],
    }
    if state.leaving == Leaving::Stopping {
        return vec![pair("q", "kill the agents now")];
    }
    let mut keys = Vec::new();
    if let Some(live) = state.focus.and_then(|f| engine.live_for_task(f))
        && let Some(view) = prompt::view(&live.attempt)
    {
        keys.extend(
            view.choices
                .iter()
                .map(|c| (c.key.clone(), c.label.clone())),
        );
    }
    let waiting = engine
        .live()
        .filter(|l| l.attempt.waiting().is_some())
        .count();
    if waiting > 0 {
        keys.push(pair("w", &format!("next waiting ({waiting})")));
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
    let pause = if engine.is_paused() {
        "resume"
    } else {
        "pause"
    };
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
        pair("q", "quit"),
    ]);
    keys
}
