//! What an attempt and its channels hand back to the shell: the effects (keys to write, signals,
//! answers to a hook or the app server) and the notes worth recording, and what they record
//! (automatic inputs, the prompt waiting for the operator). Data only; no decisions here.

use std::time::Duration;

use crate::core::approval::{self, Approval};
use crate::core::classify::Verdict;
use crate::core::guard::{Decision, Request};
use crate::core::screen::detect::PromptSighting;

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
