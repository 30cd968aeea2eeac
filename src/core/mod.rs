//! The pure core of herd, grouped by concern (tasks, the tasks file, the batch, the attempt and
//! its channels, the guard, the screen, the wire protocols, facts, verdicts, profiles, hosts,
//! the operator's words). Nothing here touches files, processes, the terminal, tokio or the
//! clock: time comes in, effects go out as values, and every rule is a table test.

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
