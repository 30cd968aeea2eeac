//! The wires herd speaks: the agents' structured channels, JSON-RPC's error object, and the
//! wire between `herd attach` and a background run.

pub mod acp;
pub mod app_server;
pub mod attach_wire;
pub mod hook;
pub mod jsonrpc;
pub mod stream;
