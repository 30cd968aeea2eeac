//! The user's terminal, shared by the dashboard and the replay player: `session` owns raw mode
//! and its undoing; `paint` copies a vt100 screen into a ratatui buffer.

pub mod paint;
pub mod session;

pub use session::Session;
