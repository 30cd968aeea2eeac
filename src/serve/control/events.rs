//! The engine's events as the JSON a subscriber gets (`events.subscribe`): the events headless
//! prints, each an object with its `event` name, its task and what happened; a prompt that
//! waits comes with its id and what it asks (`prompt_waiting`).

use serde_json::{Value, json};

use crate::core::attempt::Note;
use crate::run::engine::{BatchView, EngineEvent, note_label};

/// An event as JSON, or `None` for events too small to tell (as headless prints none).
pub fn to_json(batch: &dyn BatchView, event: &EngineEvent) -> Option<Value> {
    let text = crate::run::event_text::describe(event);
    let mut out = match event {
        EngineEvent::Started {
            task_id,
            attempt,
            command,
        } => {
            json!({"event": "started", "task_id": task_id, "attempt": attempt, "command": command})
        }
        EngineEvent::Note { task_id, note } => note_json(batch, task_id, note)?,
        EngineEvent::Finished {
            task_id,
            attempt,
            verdict,
            status,
        } => json!({
            "event": "finished",
            "task_id": task_id,
            "attempt": attempt,
            "status": status.as_str(),
            "verdict": verdict.label(),
            "failure_type": verdict.failure.map(|f| f.as_str()),
            "evidence": verdict.evidence,
        }),
        EngineEvent::Resumed { task_id, attempt } => {
            json!({"event": "resumed", "task_id": task_id, "attempt": attempt})
        }
        EngineEvent::ConfigFailed { task_id, evidence } => {
            json!({"event": "config_failed", "task_id": task_id, "evidence": evidence})
        }
        EngineEvent::RetryScheduled { task_id, after } => {
            json!({"event": "retry_scheduled", "task_id": task_id, "after_sec": after.as_secs()})
        }
        EngineEvent::SpawnDeferred { task_id, .. } => {
            json!({"event": "spawn_deferred", "task_id": task_id})
        }
        EngineEvent::HostTrouble { task_id, host, .. } => {
            json!({"event": "host_trouble", "task_id": task_id, "host": host})
        }
        EngineEvent::TasksFileChanged { .. } => json!({"event": "tasks_file_changed"}),
        EngineEvent::TasksFileInvalid { problem } => {
            json!({"event": "tasks_file_invalid", "problem": problem})
        }
        EngineEvent::TasksFileParses => json!({"event": "tasks_file_parses"}),
        EngineEvent::RecoveredFromRuns { .. } => json!({"event": "recovered_from_runs"}),
    };
    if let (Some(text), Some(object)) = (text, out.as_object_mut()) {
        object.entry("text").or_insert(Value::String(text));
    }
    Some(out)
}

fn note_json(batch: &dyn BatchView, task_id: &str, note: &Note) -> Option<Value> {
    Some(match note {
        Note::Bell | Note::Verdict(_) => return None,
        Note::WaitingForOperator { .. } => {
            let index = batch.file().task_index(task_id)?;
            let prompt = batch
                .waiting_prompt(index)
                .map_or(Value::Null, |p| super::handle::prompt_json(&p));
            json!({"event": "prompt_waiting", "task_id": task_id, "prompt": prompt})
        }
        Note::OperatorAnswered { rule, keys } => {
            json!({"event": "answered", "task_id": task_id, "rule": rule, "keys": keys})
        }
        other => json!({"event": "note", "task_id": task_id, "note": note_label(other)}),
    })
}
