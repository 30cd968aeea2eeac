//! The shell around the core: commands, the tasks file on disk, agent processes in PTYs, the
//! recorder and the event loop that drives attempts.

pub mod commands;
pub mod engine;
pub mod failure_report;
pub mod headless;
pub mod hygiene;
pub mod launch;
pub mod limits;
pub mod logging;
pub mod message_cmd;
pub mod outcome;
pub mod profiles_view;
pub mod pty;
pub mod recorder;
pub mod replay_cmd;
pub mod store;
pub mod summary;
pub mod transcripts;
pub mod worktree;
