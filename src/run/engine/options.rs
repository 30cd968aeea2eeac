//! What the engine is started with: its slots, its first PTY size, where recordings go, the
//! scope of the run and the hosts its tasks may name.

use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub concurrency: usize,
    pub rows: u16,
    pub cols: u16,
    pub runs_dir: PathBuf,
    /// Task ids to run; empty means every enabled task.
    pub only: Vec<String>,
    /// Prompts wait for the operator without a time limit (the dashboard); headless they fail
    /// the attempt after `permission_wait_sec`.
    pub operator_present: bool,
    /// The hosts a task's `host` may name (empty: every task runs here).
    pub hosts: crate::core::remote::hosts::HostSet,
    /// Record the keys the operator types in take-over mode (`--record-input`); otherwise only
    /// how many and when.
    pub record_input: bool,
}
