//! herd's ACP client: `herd acp-client -- <agent command>`, started by the engine in the
//! attempt's PTY for a `protocol = "acp"` profile. It runs the agent as its child (in the
//! attempt's process group, with the attempt's `HERD_ATTEMPT_ID`), speaks ACP on the agent's
//! stdio through `core::acp::Session`, draws the live transcript on the PTY (so the dashboard
//! pane, the `.cast` and `herd replay` show it), records every message both ways in
//! `attempt_<n>.acp.jsonl`, and ends with one structured `result` event the engine's stream
//! reader judges like any structured agent's.
//!
//! The operator's keys arrive on stdin: a digit answers a waiting permission request, a line
//! (typed or pasted with `m`) is a follow-up prompt. TERM/HUP/INT (herd's timeout or stop) send
//! `session/cancel`, then the agent is ended.
//!
//! Beside the client, the operator's own commands: `herd acp login` (`login`) and
//! `herd acp install` (`install`).

mod client;
mod inbox;
pub mod install;
mod lines;
mod log;
pub mod login;
mod spawn;
mod terminal;

pub use client::{ClientArgs, run};
