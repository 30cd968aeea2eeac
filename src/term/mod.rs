//! The user's terminal and drawing agent screens into it, shared by the dashboard (`ui`) and the
//! replay player (`cli::replay`): `session` owns raw mode, the alternate screen and their undoing
//! on exit and panic; `paint` copies a vt100 screen into a ratatui buffer. Knows nothing of tasks,
//! the engine or recordings.

pub mod paint;
pub mod session;

pub use session::Session;
