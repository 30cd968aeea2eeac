//! What an operator action did, in words (`ControlOutcome`), and the bytes of a message typed
//! into an agent. The actions themselves (cancel, retry now, auto-answer switches, prompt
//! edits, messages) are reached through `Engine::apply` (`command`): each checks the status
//! transition against `TaskStatus::can_become` and changes the document (`tasks::operator`),
//! and the engine does what follows for the queue and the agents. Nothing here draws or waits.

/// What an operator action did, in words for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlOutcome {
    Done(String),
    Refused(String),
    /// An answer for a prompt that no longer waits: it was answered or went away.
    Stale(String),
}

impl ControlOutcome {
    pub fn message(&self) -> &str {
        match self {
            ControlOutcome::Done(m) | ControlOutcome::Refused(m) | ControlOutcome::Stale(m) => m,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, ControlOutcome::Done(_))
    }
}

pub(super) fn refused(text: impl Into<String>) -> ControlOutcome {
    ControlOutcome::Refused(text.into())
}

pub(super) fn done(text: impl Into<String>) -> ControlOutcome {
    ControlOutcome::Done(text.into())
}

/// The bytes that deliver `text` to an agent as one message, then submit it: a bracketed paste
/// when the agent asked for that mode (so newlines stay inside the message), otherwise typed
/// line by line.
pub fn message_bytes(text: &str, bracketed_paste: bool) -> Vec<u8> {
    let body = text
        .trim_end_matches(['\n', '\r'])
        .replace("\r\n", "\n")
        .replace('\n', "\r");
    let mut out = Vec::with_capacity(body.len() + 16);
    if bracketed_paste {
        out.extend_from_slice(b"\x1b[200~");
        out.extend_from_slice(body.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
    } else {
        out.extend_from_slice(body.as_bytes());
    }
    out.push(b'\r');
    out
}
