//! A turn that failed although it ended with `end_turn`: codex-acp 2.6.0 reports a failing API
//! only as a `systemError` thread status and the error as agent text. herd keeps both, and such
//! a turn ends the session as a failure with that text; a later `active` status clears it.

use serde_json::Value;

use super::Session;
use crate::core::wire::acp::outcome::Outcome;

/// The outcome kind of a turn that ended after the agent reported a system error.
const TURN_FAILED: &str = "error_during_execution";

/// What an agent reported about its thread's health, from a `session_info_update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ThreadStatus {
    SystemError,
    Active,
}

/// The thread status a `session/update` reports (`_meta.codex.threadStatus.type`), if any.
pub(super) fn thread_status(update: &Value) -> Option<ThreadStatus> {
    if update.get("sessionUpdate").and_then(Value::as_str) != Some("session_info_update") {
        return None;
    }
    let status = update
        .pointer("/_meta/codex/threadStatus/type")
        .and_then(Value::as_str)?;
    match status {
        "systemError" => Some(ThreadStatus::SystemError),
        "active" => Some(ThreadStatus::Active),
        _ => None,
    }
}

impl Session {
    /// Keeps a thread status the agent reported: a system error starts the error's text.
    pub(super) fn on_thread_status(&mut self, status: ThreadStatus) {
        self.system_error = match status {
            ThreadStatus::SystemError => Some(String::new()),
            ThreadStatus::Active => None,
        };
    }

    /// The failure of a turn that ended after a system error, with the agent's error line.
    pub(super) fn turn_failure(&self) -> Option<Outcome> {
        let said = self.system_error.as_ref()?;
        let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
        let what = if said.is_empty() { "no details" } else { &said };
        let message =
            format!("the turn ended (end_turn) after the agent reported a system error: {what}");
        Some(Outcome::failed(TURN_FAILED, &message))
    }
}
