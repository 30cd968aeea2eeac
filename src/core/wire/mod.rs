//! The wires herd speaks: the agents' structured channels as their vendors document them
//! (Claude Code's hooks and stream JSON, Codex's app server, the Agent Client Protocol),
//! JSON-RPC's error object, and the wire between `herd attach` and a background run.

pub mod acp;
pub mod app_server;
pub mod attach_wire;
pub mod hook;
pub mod jsonrpc;
pub mod stream;
