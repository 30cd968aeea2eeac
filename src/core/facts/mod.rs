//! What agents leave behind besides their screens, read into facts: their own logs and
//! transcripts, the signal file, a quota's reset time, what a failed attempt said.

pub mod agent_log;
pub mod changes;
pub mod failure_context;
pub mod quota_reset;
pub mod signal_file;
pub mod transcript;
