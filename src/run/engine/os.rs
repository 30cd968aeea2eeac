//! The engine's seam to the operating system (alacritty's `EventedPty`, zellij's
//! `ServerOsApi`): the engine spawns an agent in a terminal, writes to it, resizes it and
//! signals its process group only through `Os` and the `AgentProcess` it hands back. What the
//! terminal does comes back as `PtyEvent`s through the outbox given at the spawn, as it would
//! from a real PTY. `os_real` is today's PTY code behind it; the engine's tests use `os_fake`,
//! which spawns nothing.

use color_eyre::eyre::Result;

use crate::core::attempt::StopSignal;
use crate::run::jobs::Outbox;
use crate::run::launch::LaunchPlan;
use crate::run::pty::PtyEvent;

/// What the engine asks of the system for its agents.
pub(crate) trait Os: Send {
    /// Starts `plan` in a fresh terminal of `rows` x `cols`; what the terminal does goes
    /// to `reports`, the key naming the attempt's threads.
    fn spawn(
        &self,
        plan: &LaunchPlan,
        rows: u16,
        cols: u16,
        key: u64,
        reports: Outbox<PtyEvent>,
    ) -> Result<AgentProcess>;
}

/// The terminal of one spawned agent: the writes, resizes and signals the engine makes.
pub(crate) trait AgentTerminal: Send {
    fn write(&self, bytes: Vec<u8>);
    fn resize(&self, rows: u16, cols: u16) -> Result<()>;
    /// Signals the agent's whole process group; a group already gone is not an error.
    fn signal(&self, signal: StopSignal);
}

/// A spawned agent: its process group (for the sweep of what it leaves) and its terminal.
pub(crate) struct AgentProcess {
    pub(crate) pid: u32,
    /// At or before the agent's start time (clock ticks since boot): nothing older can carry
    /// its attempt's cookie.
    pub(crate) start_time: Option<u64>,
    terminal: Box<dyn AgentTerminal>,
}

impl AgentProcess {
    pub(crate) fn new(pid: u32, start_time: Option<u64>, terminal: Box<dyn AgentTerminal>) -> Self {
        AgentProcess {
            pid,
            start_time,
            terminal,
        }
    }

    pub(crate) fn write(&self, bytes: Vec<u8>) {
        self.terminal.write(bytes);
    }

    pub(crate) fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        self.terminal.resize(rows, cols)
    }

    pub(crate) fn signal(&self, signal: StopSignal) {
        self.terminal.signal(signal);
    }
}
