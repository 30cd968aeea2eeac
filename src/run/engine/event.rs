//! What happened, for the frontends to show (`EngineEvent`), and the words a note is recorded
//! and shown with (`note_label`).

use std::time::Duration;

use crate::core::attempt::Note;
use crate::core::classify::Verdict;
use crate::core::task::TaskStatus;

/// What happened, for the frontends to show.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    Resumed {
        task_id: String,
        attempt: u32,
    },
    Started {
        task_id: String,
        attempt: u32,
        command: String,
    },
    Note {
        task_id: String,
        note: Note,
    },
    Finished {
        task_id: String,
        attempt: u32,
        verdict: Verdict,
        status: TaskStatus,
    },
    ConfigFailed {
        task_id: String,
        evidence: String,
    },
    RetryScheduled {
        task_id: String,
        after: Duration,
    },
    /// The agent could not start for lack of resources (open files, processes, memory): the
    /// task waits for a slot, not a failure, and concurrency was lowered.
    SpawnDeferred {
        task_id: String,
        reason: String,
        concurrency: usize,
    },
    /// The task's host could not be reached or the connection was lost: the attempt does not
    /// count, the task goes back to the queue and the host is out of rotation for a while.
    HostTrouble {
        task_id: String,
        host: String,
        evidence: String,
        out_for: Duration,
    },
    /// The operator's version of the tasks file was merged: what was picked up
    /// (`tasks file changed: 1 task added, 1 prompt changed`).
    TasksFileChanged {
        summary: String,
    },
    /// The operator's version does not parse: `FILE:LINE:COL: message`. herd writes nothing
    /// until it does.
    TasksFileInvalid {
        problem: String,
    },
    /// The tasks file parses again after `TasksFileInvalid`: herd's changes are written.
    TasksFileParses,
    /// At the start: results `runs/` recorded and the tasks file did not have (`recovered 3
    /// results from runs/`), each task with its attempt and status, now in the file.
    RecoveredFromRuns {
        summary: String,
        tasks: Vec<(String, u32, TaskStatus)>,
    },
}

/// The cast marker text for a note.
pub fn note_label(note: &Note) -> String {
    match note {
        Note::PromptShown { rule, text } => format!("prompt {rule}: {text}"),
        Note::AutoAnswered { rule, keys } => format!("auto answer {rule}: {keys:?}"),
        Note::OperatorAnswered { rule, keys } => format!("operator answer {rule}: {keys:?}"),
        Note::WaitingForOperator { rule, text } => format!("waiting for operator {rule}: {text}"),
        Note::MarkerSeen => "completion marker seen".to_string(),
        Note::ResultEvent { success } => format!(
            "result event: {}",
            if *success { "success" } else { "error" }
        ),
        Note::SignalRead { status } => format!("signal file: {status}"),
        Note::Ending { reason } => format!("ending: {reason}"),
        Note::Verdict(v) => format!(
            "verdict: {}{}",
            v.label(),
            v.evidence
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ),
        Note::Bell => "bell".to_string(),
        Note::Approval(approval) => format!("answer {}", approval.summary()),
        Note::AnswerTaken { rule } => format!("taken {rule}: the dialog left the screen"),
        Note::AnswerResent { rule, keys, resend } => format!(
            "not taken {rule}: the dialog still showed {} s later; {keys:?} sent again \
             ({resend} of {})",
            crate::core::attempt::RESEND_AFTER.as_secs(),
            crate::core::attempt::MAX_RESENDS
        ),
    }
}
