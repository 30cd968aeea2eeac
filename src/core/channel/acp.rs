//! herd's ACP client as an approval channel. The client draws a dialog only for what its own
//! guard, on the exact request, left to the operator, and applies the task's switches itself
//! (read at its launch): herd never answers one of its dialogs by itself, the operator's keys
//! pick the option the client sends, and the client's exact record of its answers (the
//! request as data, the option sent), read from its result, replaces what the screen read of
//! the dialogs it drew.

use super::effects::{Effect, Note};
use crate::core::approval::{AnsweredBy, Approval, Channel};

/// The attempt's side of herd's ACP client. It keeps no state of its own: the client holds
/// the session, and its record comes whole with its result.
#[derive(Debug, Clone, Copy, Default)]
pub struct AcpChannel;

impl AcpChannel {
    /// The channel the operator's answers to the client's dialogs are recorded with.
    pub fn channel(self) -> Channel {
        Channel::Acp
    }

    /// The switches herd's own screen rules get: none; the client applies the task's.
    pub fn auto_rules(self, rules: usize) -> Vec<bool> {
        vec![false; rules]
    }

    /// The client's record of its answers (`client`, from its result) replaces `approvals`,
    /// and each is noted.
    pub fn take_record(
        self,
        client: &[Approval],
        approvals: &mut Vec<Approval>,
        effects: &mut Vec<Effect>,
    ) {
        let client = with_api_answers(client, approvals);
        for approval in &client {
            effects.push(Effect::Note(Note::Approval(Box::new(approval.clone()))));
        }
        *approvals = client;
    }
}

/// The client's record of its answers, where the operator's answers given through the control
/// socket say so: the client saw keys on its dialog and cannot tell; herd's screen records of
/// the same dialogs, in the same order, can (`AnsweredBy::Api`, `AnsweredBy::Web`).
fn with_api_answers(client: &[Approval], screen: &[Approval]) -> Vec<Approval> {
    let mut people = screen
        .iter()
        .filter(|a| a.by != AnsweredBy::Herd)
        .map(|a| a.by);
    client
        .iter()
        .map(|approval| {
            let mut approval = approval.clone();
            if approval.by == AnsweredBy::Operator
                && let Some(by @ (AnsweredBy::Api | AnsweredBy::Web)) = people.next()
            {
                approval.by = by;
            }
            approval
        })
        .collect()
}

#[cfg(test)]
#[path = "acp_tests.rs"]
mod tests;
