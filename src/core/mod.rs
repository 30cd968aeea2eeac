//! The pure core of herd: task rules, the tasks file, profiles, the emulated screen, detectors,
//! verdicts and the attempt state machine.
//!
//! Nothing in here touches files, processes, the terminal, tokio or the clock: time is passed in
//! as the elapsed `Duration` of an attempt, and effects are returned as values for the shell to
//! carry out. That keeps every rule testable with plain table tests.

pub mod accounts;
pub mod acp;
pub mod agent_log;
pub mod alternate_screen;
pub mod app_server;
pub mod approval;
pub mod attach_wire;
pub mod attempt;
pub mod batch;
pub mod changes;
pub mod channel;
pub mod classify;
pub mod clock_words;
pub mod command_file;
pub mod deciding_event;
pub mod detect;
pub mod dialog;
pub mod digest;
pub mod failure_context;
pub mod folder_trust;
pub mod guard;
pub mod hook;
pub mod json_pos;
pub mod jsonc;
pub mod jsonrpc;
pub mod marker;
pub mod notify;
pub mod outcome;
pub mod profile;
pub mod prompt_id;
pub mod queries;
pub mod quota_reset;
pub mod recovered;
pub mod remote;
pub mod rerun;
pub mod retry;
pub mod screen;
pub mod screen_retry;
pub mod shell_words;
pub mod signal_file;
pub mod starter;
pub mod stream;
pub mod task;
pub mod taskfile;
pub mod template;
pub mod transcript;
