//! What the engine keeps of an attempt that runs on a host: its host, the launcher's log and
//! the trailer the launch script ends with, which tells the launcher's end from the agent's.

use std::path::PathBuf;

use crate::core::remote::hosts::Host;
use crate::core::remote::script::{self as remote_script, LauncherEnd};

/// What the engine keeps of an attempt that runs on a host.
pub(in crate::run::engine) struct RemoteState {
    pub host: Host,
    /// ssh's own messages and the wrapper's note when the launch script could not be sent.
    pub log: PathBuf,
    carry: Vec<u8>,
    /// The agent's exit code, from the launch script's trailer.
    trailer: Option<i32>,
    /// herd signalled the launcher (timeout, exit keys done, cancel): its end is herd's doing.
    pub signalled: bool,
}

impl RemoteState {
    pub(in crate::run::engine) fn new(host: Host, log: PathBuf) -> RemoteState {
        RemoteState {
            host,
            log,
            carry: Vec::new(),
            trailer: None,
            signalled: false,
        }
    }

    pub(in crate::run::engine) fn scan(&mut self, bytes: &[u8]) {
        if let Some(code) = remote_script::scan_trailer(&mut self.carry, bytes) {
            self.trailer = Some(code);
        }
    }

    /// How the launcher ended, once the agent's terminal is drained.
    pub(in crate::run::engine) fn end(
        &self,
        exit_code: Option<i32>,
        stopped_by_operator: bool,
    ) -> LauncherEnd {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        remote_script::launcher_end(
            exit_code,
            self.trailer,
            self.signalled || stopped_by_operator,
            &log,
        )
    }
}
