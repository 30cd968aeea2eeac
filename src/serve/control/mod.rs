//! The control socket: every run (dashboard, headless, background) serves line-framed JSON-RPC
//! 2.0 on a Unix socket only its user can reach, so scripts, `herd ctl`, `herd mcp` and other
//! terminals can list and change tasks, answer prompts by id, read panes and follow events.
//!
//! `protocol` is the wire (methods, `Method`, error codes), `server` the socket and its
//! threads, `handle` carries a command out on the engine in the loop's turn (`serve::driver`),
//! `events` turns the engine's events into the JSON subscribers get, `client` is the other end.

pub mod client;
pub mod events;
pub mod handle;
pub mod protocol;
pub mod server;

pub use server::{ControlLink, Request, start};
