//! The events an attempt is handed by the shell. What it hands back (effects, notes, what it
//! records) is `core::channel::effects`, shared with the channels that make most of it. Data
//! only; no decisions here.

use crate::core::approval::AnsweredBy;
use crate::core::classify::ExitStatus;
use crate::core::facts::signal_file::{Signal, SignalFile, SignalFileError};

#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    Output(&'a [u8]),
    /// The process ended (and its output was drained).
    Exited(ExitStatus),
    /// A deadline passed (see `next_deadline`).
    Tick,
    /// The operator answered the prompt of rule `rule` with its keys.
    OperatorAnswer {
        rule: usize,
    },
    /// The operator answered the waiting prompt with keys of no rule of its own (Enter for the
    /// option the dialog highlights, Esc for no): recorded with the prompt's request like any
    /// answer. Without a waiting prompt, the keys are typed into the agent.
    OperatorReply {
        /// What the keys mean, for the record ("Enter", "Esc").
        name: String,
        keys: Vec<u8>,
    },
    /// An answer given through the control socket to the waiting prompt (the shell checked its
    /// prompt id): `Some(rule)` answers with that rule's keys like `OperatorAnswer`, `None`
    /// with `keys` (named `name`) like `OperatorReply`. Recorded as `by`'s (`"api"`, `"web"`).
    ApiAnswer {
        by: AnsweredBy,
        rule: Option<usize>,
        name: String,
        keys: Vec<u8>,
    },
    /// The operator typed or pasted into the agent (take-over mode).
    OperatorKeys(Vec<u8>),
    /// A message the operator wrote for the agent (`m`), typed into it and submitted.
    OperatorMessage(Vec<u8>),
    Resize {
        rows: u16,
        cols: u16,
    },
    Cancel,
    /// The signal file as the shell read it: a valid signal ends the attempt; a file that is
    /// not valid (yet: the agent may be writing it) is only remembered.
    SignalFile(Result<SignalFile, SignalFileError>),
    /// Bytes the agent added to its own log (the profile's `agent_log`) since the last read.
    AgentLog(&'a [u8]),
    /// The CLI called one of herd's hooks (see `core::hook`) with this input; the answer goes
    /// back as `Effect::HookReply`.
    Hook(&'a serde_json::Value),
    /// herd's client of the attempt's Codex app server is connected and subscribing: from now
    /// on the TUI's approval dialogs are that channel's (`core::app_server`).
    AppServerConnected,
    /// A message of the attempt's Codex app server (a request to approve, a file change, a
    /// resolved request, an error); an answer goes back as `Effect::AppServerSend`.
    AppServer(&'a serde_json::Value),
}

/// The signal's `status` as the agent wrote it.
pub fn signal_status(signal: &Signal) -> &'static str {
    match signal {
        Signal::Done { .. } => "done",
        Signal::Questions { .. } => "questions",
        Signal::Error { .. } => "error",
    }
}
