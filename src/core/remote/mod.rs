//! Agents on other hosts, the pure half: the hosts (`hosts`), the choice of one
//! (`host_choice`), the shell programs run there (`script`, `files`, filled by `template`) and
//! what they print, read back (`frames`). `run::remote` runs the launchers.

pub mod files;
pub mod frames;
pub mod host_choice;
pub mod hosts;
pub mod script;
mod template;
