//! What the client's loop receives from its threads: the agent's stdout lines and stderr, the
//! operator's keys, the agent's exit. Data only, below the threads that send it (`spawn`) and
//! the code that waits for it (`client`, `terminal`).

use super::lines::AgentLine;

pub(super) enum Event {
    Line(AgentLine),
    Stderr(String),
    Keys(Vec<u8>),
    Exited(String),
}
