//! Agents on other hosts, the pure half: which hosts there are and how each is reached
//! (`hosts`), which one a task's next attempt runs on (`host_choice`), the shell programs herd
//! runs there (`script`: launch, sweep, probe; `files`: an attempt's folder, files and end) and
//! how herd reads back what they printed (`frames`).
//!
//! The shell programs are files in `scripts/`, included at build time and filled by `template`
//! with quoted values only, so `shellcheck` can read them
//! (`run::remote::shellcheck_tests`). Nothing here starts a process:
//! `run::remote` runs the launchers.

pub mod files;
pub mod frames;
pub mod host_choice;
pub mod hosts;
pub mod script;
mod template;
