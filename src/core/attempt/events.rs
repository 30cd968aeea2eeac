//! The events an attempt is handed by the shell (what goes out is `core::channel::effects`).

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
    /// The operator answered the waiting prompt with keys of no rule (Enter, Esc): recorded like
    /// any answer. Without a waiting prompt, the keys are typed into the agent.
    OperatorReply {
        /// What the keys mean, for the record ("Enter", "Esc").
        name: String,
        keys: Vec<u8>,
    },
    /// An answer by prompt id (the control socket, MCP, the web view; its id checked): with a
    /// rule's keys like `OperatorAnswer`, else like `OperatorReply`. Recorded as `by`'s.
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
    /// The signal file as read: a valid one ends the attempt; an invalid one is remembered.
    SignalFile(Result<SignalFile, SignalFileError>),
    /// Bytes the agent added to its own log (the profile's `agent_log`) since the last read.
    AgentLog(&'a [u8]),
    /// The CLI called one of herd's hooks; the answer goes back as `Effect::HookReply`.
    Hook(&'a serde_json::Value),
    /// herd's app-server client is subscribing: the TUI's dialogs are that channel's from now on.
    AppServerConnected,
    /// A message of the attempt's Codex app server; an answer goes back as `AppServerSend`.
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
