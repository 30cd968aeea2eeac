//! The attempt's vocabulary with the shell: the events it is handed, the effects and notes it
//! hands back, and what it records (automatic inputs, the prompt waiting for the operator).
//! Data only; no decisions here.

use std::time::Duration;

use crate::core::approval::{self, Approval};
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::detect::PromptSighting;
use crate::core::guard::{Decision, Request};
use crate::core::signal_file::{SignalFile, SignalFileError};

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
    /// with `keys` (named `name`) like `OperatorReply`. Recorded as the API's (`"by": "api"`).
    ApiAnswer {
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

/// Why herd writes to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputReason {
    QueryReply,
    AutoAnswer {
        rule: String,
    },
    OperatorAnswer {
        rule: String,
    },
    ExitKeys,
    /// Keys the operator typed in take-over mode: what they are is the operator's (a password
    /// at a prompt that does not echo); only their count is recorded unless asked for.
    Operator,
    /// A message the operator wrote for the agent: recorded like a prompt.
    OperatorMessage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Term,
    Kill,
}

/// Things worth recording and showing, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    PromptShown {
        rule: String,
        text: String,
    },
    AutoAnswered {
        rule: String,
        keys: String,
    },
    OperatorAnswered {
        rule: String,
        keys: String,
    },
    WaitingForOperator {
        rule: String,
        text: String,
    },
    MarkerSeen,
    /// A structured agent's final result event.
    ResultEvent {
        success: bool,
    },
    /// The agent's signal file was read: its status.
    SignalRead {
        status: String,
    },
    Ending {
        reason: String,
    },
    Verdict(Verdict),
    Bell,
    /// An answer to a prompt with what it approved and why (boxed: the largest note by far).
    Approval(Box<Approval>),
    /// An automatic answer was taken: its dialog left the screen.
    AnswerTaken {
        rule: String,
    },
    /// An automatic answer was not taken (its dialog still showed `RESEND_AFTER` later) and is
    /// sent again: `resend` of `MAX_RESENDS`.
    AnswerResent {
        rule: String,
        keys: String,
        resend: u32,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Write {
        bytes: Vec<u8>,
        reason: InputReason,
    },
    Signal(StopSignal),
    Note(Note),
    /// The text to answer the hook call of `Event::Hook` with (JSON; `{}` is no decision).
    HookReply {
        output: String,
    },
    /// A message for the attempt's Codex app server (an answer to its request), as JSON text.
    AppServerSend {
        text: String,
    },
}

/// One automatic answer, for the attempt's facts.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoInput {
    pub at: Duration,
    pub rule: String,
    pub keys: String,
}

/// A prompt waiting for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingPrompt {
    pub rule: usize,
    pub since: Duration,
    pub sighting: PromptSighting,
    /// What the prompt asks, when herd could read it.
    pub request: Option<Request>,
    /// Why herd did not answer by itself (the guard's refusal or doubt), for guarded prompts.
    pub decision: Option<Decision>,
}

impl WaitingPrompt {
    /// What the prompt asks, in short (`Bash: npm test`), or `a prompt` when herd could not
    /// read it: for the queue's note and the notification, where a rule's name (`press_1`)
    /// says nothing to the operator.
    pub fn asks(&self) -> String {
        self.request
            .as_ref()
            .map_or_else(|| "a prompt".to_string(), Request::short)
    }

    /// `Bash(rm -rf ~) — refuse: …`, or empty when there is nothing to say.
    pub fn guard_note(&self) -> String {
        approval::describe(self.request.as_ref(), self.decision.as_ref())
    }
}
