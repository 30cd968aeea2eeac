//! herd: a terminal dashboard for running fleets of CLI coding agents.
//!
//! `core` is pure (no I/O, no clock); `run` is the shell that drives agents in pseudo-terminals;
//! `sim` is the built-in agent simulator. The binary in `main.rs` only parses arguments and calls
//! in here.

pub mod assets;
pub mod cli;
pub mod core;
pub mod replay;
pub mod run;
pub mod sim;
pub mod ui;
