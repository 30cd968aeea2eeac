//! One line of text per engine event, for headless and the control socket's events.

use super::engine::{EngineEvent, note_label};
use crate::core::attempt::Note;

/// One line for an event, or nothing for events too small to print.
pub fn describe(event: &EngineEvent) -> Option<String> {
    Some(match event {
        EngineEvent::Resumed { task_id, attempt } => {
            format!("{task_id}  attempt {attempt} was interrupted; the task is retryable")
        }
        EngineEvent::Started {
            task_id,
            attempt,
            command,
        } => {
            format!(
                "{task_id}  attempt {attempt} started: {}",
                shorten(command, 100)
            )
        }
        EngineEvent::Note { task_id, note } => match note {
            Note::Bell | Note::Verdict(_) => return None,
            other => format!("{task_id}  {}", note_label(other)),
        },
        EngineEvent::Finished {
            task_id,
            attempt,
            verdict,
            status,
        } => {
            let evidence = verdict
                .evidence
                .as_deref()
                .map(|e| format!(": {}", shorten(e, 120)))
                .unwrap_or_default();
            format!(
                "{task_id}  attempt {attempt} {} -> {status}{evidence}",
                verdict.label()
            )
        }
        EngineEvent::ConfigFailed { task_id, evidence } => {
            format!("{task_id}  failed_config: {evidence}")
        }
        EngineEvent::RetryScheduled { task_id, after } => {
            format!("{task_id}  retry in {} s", after.as_secs())
        }
        EngineEvent::SpawnDeferred {
            task_id,
            reason,
            concurrency,
        } => format!(
            "{task_id}  waits: the agent could not start ({}); concurrency lowered to {concurrency}",
            shorten(reason, 100)
        ),
        EngineEvent::HostTrouble {
            task_id,
            host,
            evidence,
            out_for,
        } => format!(
            "{task_id}  back to the queue, not counted: {}; {host} out of rotation for {} s",
            shorten(evidence, 120),
            out_for.as_secs()
        ),
        EngineEvent::TasksFileChanged { summary } => summary.clone(),
        EngineEvent::RecoveredFromRuns { summary, tasks } => {
            let each: Vec<String> = tasks
                .iter()
                .map(|(task_id, attempt, status)| {
                    format!("{task_id} {status} after attempt {attempt}")
                })
                .collect();
            format!("{summary}: {}", each.join(", "))
        }
        EngineEvent::TasksFileInvalid { problem } => {
            crate::run::engine::edits::does_not_parse_notice(problem)
        }
        EngineEvent::TasksFileParses => crate::run::engine::edits::PARSES_AGAIN_NOTICE.to_string(),
    })
}

fn shorten(text: &str, max: usize) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}
