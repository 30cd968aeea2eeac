//! Structured sessions over the Agent Client Protocol (JSON-RPC on the agent's stdio): the
//! protocol's messages, one session as a state machine, permission requests as the guard's
//! requests, the transcript it shows and the facts it ends with.
//!
//! Pure like the rest of the core: the shell (`run::acp`) runs the agent, moves the lines and
//! keeps the time. herd speaks ACP through a small typed layer over `serde_json` rather than the
//! `agent-client-protocol` crate: the crate brings its own async connection (futures, rmcp,
//! schemars, anyhow) and owns the I/O, where herd needs every raw line (recorded both ways,
//! garbage and oversized lines survived, not fatal) and a state machine it can test by table.

pub mod audit;
pub mod outcome;
pub mod permission;
pub mod render;
pub mod rpc;
pub mod session;
pub mod transcript;

pub use outcome::Outcome;
pub use session::{Action, Session, SessionSetup};
pub use transcript::Shown;

#[cfg(test)]
#[path = "audit_flow_tests.rs"]
mod audit_flow_tests;
