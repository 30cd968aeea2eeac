//! The shell around the core: commands, the tasks file on disk, agent processes in PTYs, the
//! recorder and the event loop that drives attempts.

pub mod acp;
pub mod commands;
pub mod engine;
pub mod explain_cmd;
pub mod failure_report;
pub mod guard_context;
pub mod headless;
pub mod hygiene;
pub mod launch;
pub mod limits;
pub mod logging;
pub mod message_cmd;
pub mod outcome;
pub mod policy_cmd;
pub mod profiles_view;
pub mod pty;
pub mod recorder;
pub mod replay_cmd;
pub mod safe_fs;
pub mod store;
pub mod summary;
pub mod transcripts;
pub mod worktree;
