//! The shell around the core: the tasks file on disk, agent processes in PTYs, the
//! recorder and the event loop that drives attempts.

pub mod acp;
pub mod agent_log;
pub mod app_server;
pub mod attempt_files;
pub mod clock;
pub mod config_lock;
pub mod console;
pub mod engine;
pub mod event_text;
pub mod failure_report;
pub mod folder_trust;
pub mod gemini_home;
pub mod guard_context;
pub mod hook_server;
pub mod hygiene;
pub mod inputs;
pub mod ipc;
pub mod jobs;
pub mod last_run;
pub mod launch;
pub mod limits;
pub mod logging;
pub mod notify;
pub mod outcome;
pub mod pty;
pub mod recorder;
pub mod remote;
pub mod rendezvous;
pub mod runs_dir;
pub mod safe_fs;
pub mod spawn;
pub mod store;
pub mod transcripts;
pub mod validate;
pub mod worktree;
