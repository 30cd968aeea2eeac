//! The engine's `Os` on this machine: each agent in its own PTY and process group
//! (`run::pty`, unchanged behind the seam).

use color_eyre::eyre::Result;

use super::os::{AgentProcess, AgentTerminal, Os};
use crate::core::attempt::StopSignal;
use crate::run::jobs::Outbox;
use crate::run::launch::LaunchPlan;
use crate::run::pty::{self, PtyEvent};

/// Agents started in real pseudo-terminals.
pub(crate) struct RealOs;

impl Os for RealOs {
    fn spawn(
        &self,
        plan: &LaunchPlan,
        rows: u16,
        cols: u16,
        key: u64,
        reports: Outbox<PtyEvent>,
    ) -> Result<AgentProcess> {
        let process = pty::AgentProcess::spawn(plan, rows, cols, key, reports)?;
        let (pid, start_time) = (process.pid, process.start_time);
        Ok(AgentProcess::new(pid, start_time, Box::new(process)))
    }
}

impl AgentTerminal for pty::AgentProcess {
    fn write(&self, bytes: Vec<u8>) {
        pty::AgentProcess::write(self, bytes);
    }

    fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        pty::AgentProcess::resize(self, rows, cols)
    }

    fn signal(&self, signal: StopSignal) {
        pty::AgentProcess::signal(self, signal);
    }
}
