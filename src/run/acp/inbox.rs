//! What the client's loop receives from its threads. Data only.

use super::lines::AgentLine;

pub(super) enum Event {
    Line(AgentLine),
    Stderr(String),
    Keys(Vec<u8>),
    Exited(String),
}
