//! Structured sessions over the Agent Client Protocol: its messages, one session as a state
//! machine, permission requests as the guard's, the transcript and the facts. Pure; `run::acp`
//! does the I/O. No SDK crate: herd needs every raw line (recorded, garbage survived) and a state
//! machine it can test by table.
//!
//! The wire types come from `agent-client-protocol-schema` (pinned `=1.20.0`, serde only;
//! protocol version 1, as claude-agent-acp 0.101.0, codex-acp 2.6.0 and Gemini CLI 0.61.0
//! answer) where its shapes accept what herd must accept: every message herd sends (`wire`,
//! `permission`), `session/new`'s result, the modes and `session/set_mode`, and every
//! `session/update` (`transcript`: an update the crate rejects is not shown; the conformance
//! test checks that every update herd shows, from each real adapter, reads).
//!
//! Read as raw JSON instead, because the crate is stricter than herd must be:
//! - the JSON-RPC envelope and errors (`rpc`, `core::jsonrpc`): the crate's `Error` needs a
//!   `code` and a `message` and its `RequestId` only an integer, string or null, where herd
//!   describes whatever error an agent sends and tells garbage lines apart with a reason; the
//!   error object is also the control socket's, which is not ACP;
//! - `session/request_permission` (`permission`): `PermissionOptionKind` knows only the four
//!   `allow_*`/`reject_*` kinds with no fallback, so one option of another kind would make the
//!   whole request unreadable while the agent waits for its answer (herd keeps such options,
//!   sorted last); the crate also requires `sessionId` and `toolCall.toolCallId`, which herd
//!   does not need to judge the request;
//! - `initialize`'s result: `InitializeResponse` requires `protocolVersion`, which herd does
//!   not need (it keeps the capabilities and `agentInfo` as the agent gave them);
//! - `session/prompt`'s result: `StopReason` has five values and no fallback, where herd ends
//!   the attempt on any reason (`stop_<reason>`, named in the evidence);
//! - `initialize`'s `authMethods` (`auth`): version 1 of the crate knows the `agent` and
//!   `terminal` types but not `env_var`, which agents send;
//! - `fs/*` and `terminal/*`: herd offers neither capability and refuses those requests
//!   (`METHOD_NOT_FOUND`), so it reads none of their params.

pub mod api_watch;
pub mod audit;
pub mod auth;
pub mod install;
pub mod outcome;
pub mod permission;
pub mod registry;
pub mod render;
pub mod rpc;
pub mod session;
pub mod tool_call;
pub mod transcript;
pub mod wire;

pub use outcome::Outcome;
pub use session::{Action, Session, SessionSetup};
pub use transcript::Shown;

#[cfg(test)]
#[path = "audit_flow_tests.rs"]
mod audit_flow_tests;
