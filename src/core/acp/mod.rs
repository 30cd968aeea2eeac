//! Structured sessions over the Agent Client Protocol (JSON-RPC on the agent's stdio): the
//! protocol's messages, one session as a state machine, permission requests as the guard's
//! requests, the transcript it shows and the facts it ends with.
//!
//! Pure like the rest of the core: the shell (`run::acp`) runs the agent, moves the lines and
//! keeps the time. herd does not use the `agent-client-protocol` SDK crate: it brings its own
//! async connection and owns the I/O, where herd needs every raw line (recorded both ways,
//! garbage and oversized lines survived, not fatal) and a state machine it can test by table.
//!
//! The wire types come from `agent-client-protocol-schema` (pinned `=1.20.0`, default features
//! off: serde only, no async runtime, no schemars; protocol version 1, the version
//! claude-agent-acp 0.101.0, codex-acp 2.6.0 and Gemini CLI 0.61.0 answer) where its shapes
//! accept what herd must accept:
//! - every message herd sends: `initialize`, `authenticate`, `session/new`, `session/load`,
//!   `session/prompt`, `session/cancel` (`wire`) and the answers to permission requests
//!   (`permission::selected`, `permission::cancelled`), and the method names;
//! - `session/new`'s result (`wire::new_session_id`);
//! - the `update` of every `session/update` (`transcript`, as `SessionUpdate`). An update the
//!   crate rejects is not shown, as an update of a kind herd does not show always was; since
//!   then a content block of a type outside the schema drops its chunk (it showed as `[type]`)
//!   and a tool kind outside it reads `other`. The conformance test checks that every update
//!   herd shows, from each real adapter, reads; one herd skips may not (claude-agent-acp
//!   0.23.1's `usage_update` carried `used: null` where the crate wants a number; 0.101.0 sends
//!   none the crate rejects);
//! - `session/new`'s and `session/load`'s `modes`, `session/set_mode`, and the mode a
//!   `current_mode_update` or a mode `config_option_update` reports (`wire`): herd sets each
//!   session's permission mode itself (`session::mode`).
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
