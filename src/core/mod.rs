//! The pure core of herd, grouped by concern: `task` (a task's fields, statuses and failure
//! types, the vocabulary of the rest), `taskfile` (the tasks file as a document, its JSON
//! positions, templates and command files), `batch` (which task starts next, retries, what an
//! attempt's end means for its task), `attempt` (one attempt as a state machine) and `channel`
//! (its approval channels), `guard` and `approval` (what may be answered by itself), `screen`
//! (the emulated terminal and what is read off it), `wire` (the agents' structured protocols:
//! hooks, stream JSON, app server, ACP), `facts` (what agents leave besides their screens),
//! `classify` (verdicts), `profile` (agent profiles), `remote` (hosts) and `operator` (what the
//! operator is told, and in which words).
//!
//! Nothing in here touches files, processes, the terminal, tokio or the clock: time is passed in
//! as the elapsed `Duration` of an attempt, and effects are returned as values for the shell to
//! carry out. That keeps every rule testable with plain table tests.

pub mod approval;
pub mod attempt;
pub mod batch;
pub mod channel;
pub mod classify;
pub mod facts;
pub mod guard;
pub mod operator;
pub mod profile;
pub mod remote;
pub mod screen;
pub mod task;
pub mod taskfile;
pub mod wire;
