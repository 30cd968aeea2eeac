//! herd's ACP client (`herd acp-client -- <agent command>`), started in the attempt's PTY for a
//! `protocol = "acp"` profile: it runs the agent as its child, speaks ACP through
//! `core::acp::Session`, draws the transcript on the PTY, records every message, and ends with
//! one structured `result` event the engine judges like any structured agent's. A digit on
//! stdin answers a waiting request, a line is a follow-up; TERM/HUP/INT cancel, then end the
//! agent. Also `herd acp login` and `herd acp install`.

mod client;
mod inbox;
pub mod install;
mod lines;
mod log;
pub mod login;
mod spawn;
mod terminal;

pub use client::{ClientArgs, run};
