//! herd: a terminal dashboard for running fleets of CLI coding agents.
//!
//! Folders depend downwards only: `cli` (the commands) → `ui` (the dashboard) → `serve` (the
//! event loop every face runs, headless, the summary) → `replay` (recordings played back) and
//! `run` (the shell: engine, PTYs, store, recorder) → `term` (the
//! user's terminal, the vt100 painter) and `core` (pure: no I/O, no clock). `sim` is the built-in
//! agent simulator. The binary in `main.rs` only parses arguments and calls `cli::dispatch`.

pub mod assets;
pub mod cli;
pub mod core;
pub mod replay;
pub mod run;
pub mod serve;
pub mod sim;
pub mod term;
pub mod ui;
