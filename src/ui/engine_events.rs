//! What the dashboard makes of the engine's events: a status line, a note in the task's row,
//! the bell when a task waits. Writes only `UiState` and the bell; decides nothing about tasks.

use std::time::Instant;

use color_eyre::eyre::Result;

use super::model::agent;
use super::notify::notify;
use super::state::UiState;
use crate::core::attempt::Note;
use crate::core::task::TaskStatus;
use crate::run::engine::{BatchView, EngineEvent};
use crate::run::event_text::describe;
use crate::term::Session;

/// Shows engine event `event` on the dashboard.
pub(super) fn on_engine_event(
    batch: &dyn BatchView,
    state: &mut UiState,
    session: &mut Session,
    event: &EngineEvent,
    now: Instant,
) -> Result<()> {
    if let Some(line) = describe(event) {
        tracing::info!("{line}");
    }
    let index = |id: &str| batch.file().task_index(id);
    match event {
        EngineEvent::Started { task_id, .. } => {
            if let Some(i) = index(task_id) {
                state.progress(i, format!("{task_id} started"), now);
            }
        }
        EngineEvent::Note { task_id, note } => on_note(batch, state, session, task_id, note, now),
        EngineEvent::Finished {
            task_id, status, ..
        } => on_finished(batch, state, session, task_id, *status, now),
        // A passing message gives way to it (`model::status`).
        EngineEvent::TasksFileInvalid { .. } => {
            state.message = None;
            state.message_about = None;
        }
        EngineEvent::TasksFileChanged { .. }
        | EngineEvent::RecoveredFromRuns { .. }
        | EngineEvent::TasksFileParses
        | EngineEvent::ConfigFailed { .. }
        | EngineEvent::SpawnDeferred { .. }
        | EngineEvent::HostTrouble { .. } => {
            if let Some(text) = status_line(event) {
                state.say(text, now);
            }
        }
        EngineEvent::Resumed { .. } | EngineEvent::RetryScheduled { .. } => {}
    }
    Ok(())
}

/// What an attempt noted: an answer in its row, a prompt waiting for the operator rings.
fn on_note(
    batch: &dyn BatchView,
    state: &mut UiState,
    session: &mut Session,
    task_id: &str,
    note: &Note,
    now: Instant,
) {
    let index = batch.file().task_index(task_id);
    match note {
        // Who answered through which channel: a hook's answer is not a key pressed on screen.
        Note::Approval(approval) => {
            if let Some(i) = index {
                state.note(i, approval.answered(), now);
            }
        }
        Note::AutoAnswered { rule, keys } => {
            tracing::debug!(task_id, rule, keys, "automatic answer");
        }
        Note::WaitingForOperator { .. } => {
            // What the prompt asks, not the rule's name (`press_1`, `always`).
            let asks = index
                .and_then(|i| batch.live_attempt(i))
                .and_then(|l| l.attempt().waiting().map(|w| w.asks()))
                .unwrap_or_else(|| "a prompt".to_string());
            ring(session, &format!("{task_id} is waiting for you: {asks}"));
        }
        _ => {}
    }
}

/// An attempt ended: its task's new status in its row, and the bell when it has questions.
fn on_finished(
    batch: &dyn BatchView,
    state: &mut UiState,
    session: &mut Session,
    task_id: &str,
    status: TaskStatus,
    now: Instant,
) {
    let file = batch.file();
    let index = file.task_index(task_id);
    let spec = index.and_then(|i| file.tasks().get(i));
    if let Some(i) = index {
        tracing::debug!(task_id, %status, "attempt finished");
        let failure = spec
            .and_then(|t| t.result.as_ref())
            .and_then(|r| r.get("failure_type"))
            .and_then(serde_json::Value::as_str)
            .filter(|_| status != TaskStatus::Completed)
            .map(|f| format!(" ({f})"))
            .unwrap_or_default();
        state.settle(i, format!("{task_id}: {status}{failure}"), now);
    }
    if status == TaskStatus::NeedsInput {
        let asked = spec.map_or(0, |t| agent::questions(t.result.as_ref()).len());
        let what = match asked {
            0 => "needs your input".to_string(),
            1 => "has a question for you".to_string(),
            n => format!("has {n} questions for you"),
        };
        state.say(format!("{task_id} {what}: select it, m answers"), now);
        ring(session, &format!("{task_id} {what}"));
    }
}

/// The status line's words for the events that are only said (`None` for the others).
fn status_line(event: &EngineEvent) -> Option<String> {
    Some(match event {
        EngineEvent::TasksFileChanged { summary } => summary.clone(),
        EngineEvent::RecoveredFromRuns { summary, .. } => summary.clone(),
        EngineEvent::TasksFileParses => crate::run::engine::edits::PARSES_AGAIN_NOTICE.to_string(),
        EngineEvent::ConfigFailed { task_id, .. } => {
            format!("{task_id}: failed_config (d shows its details)")
        }
        EngineEvent::SpawnDeferred {
            task_id,
            concurrency,
            ..
        } => format!("{task_id} waits: out of resources to start it; concurrency {concurrency}"),
        EngineEvent::HostTrouble {
            task_id,
            host,
            out_for,
            ..
        } => format!(
            "{task_id} back to the queue: host {host} unreachable, out of rotation for {} s",
            out_for.as_secs()
        ),
        _ => return None,
    })
}

/// Rings the terminal's bell with `body`; a bell that cannot ring does not stop the run.
fn ring(session: &mut Session, body: &str) {
    if let Err(error) = notify(session.terminal.backend_mut(), "herd", body) {
        tracing::warn!("cannot ring the bell: {error}");
    }
}
