//! One agent process in its own pseudo-terminal, leading its own session and process group (so
//! signals reach the group; `hygiene` finds what left it). Writes and the wait run on threads of
//! their own ("some programs deadlock if you write to their stdin while reading their stdout");
//! one thread reads every terminal (`reader`) into a bounded channel, so a flooding agent is
//! slowed down. What the terminal does goes out as `PtyEvent`s through its `Outbox`.

use std::io::Write;
use std::sync::mpsc as std_mpsc;

use color_eyre::eyre::{Result, WrapErr, eyre};
use portable_pty::{MasterPty, PtySize, native_pty_system};
use rustix::process::{Pid, Signal, kill_process_group};

mod reader;

use super::jobs::{self, Outbox};
use super::launch::LaunchPlan;
use super::spawn::{self, SpawnRequest};
use crate::core::attempt::StopSignal;
use crate::core::classify::ExitStatus;

/// What an agent's terminal reports; its receiver knows which attempt it is about.
#[derive(Debug)]
pub enum PtyEvent {
    Output {
        bytes: Vec<u8>,
    },
    /// The reader saw end of file: every process holding the terminal is gone.
    Closed,
    Exited {
        status: ExitStatus,
    },
}

/// A running agent: its process group and the writer/resizer of its terminal.
pub struct AgentProcess {
    pub pid: u32,
    /// At or before the agent's start (clock ticks since boot): nothing older can carry its
    /// cookie, which spares a sweep reading older processes' environments.
    pub start_time: Option<u64>,
    writer: std_mpsc::Sender<Vec<u8>>,
    master: Box<dyn MasterPty + Send>,
}

impl AgentProcess {
    /// Starts `plan` in a fresh PTY of `rows` x `cols`, threads named after `key`.
    pub fn spawn(
        plan: &LaunchPlan,
        rows: u16,
        cols: u16,
        key: u64,
        reports: Outbox<PtyEvent>,
    ) -> Result<AgentProcess> {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| eyre!("cannot open a pseudo-terminal: {e:#}"))?;
        let terminal = pty
            .master
            .tty_name()
            .ok_or_else(|| eyre!("cannot find the pseudo-terminal's device name"))?;
        let started_by = super::hygiene::start_time_now();
        let pid = spawn::spawn_in_terminal(&SpawnRequest {
            program: std::path::Path::new(&plan.argv[0]),
            argv: &plan.argv,
            cwd: &plan.cwd,
            env: spawn::agent_environment(&plan.env),
            terminal: &terminal,
        })
        .wrap_err_with(|| format!("cannot start {}", plan.argv[0]))?;
        // Without dropping our copy of the slave side the reader never sees end of file.
        drop(pty.slave);
        // Read by the one reader thread (`reader`), through a descriptor of its own.
        let master = pty
            .master
            .as_raw_fd()
            .ok_or_else(|| eyre!("cannot read the pseudo-terminal"))
            .and_then(|fd| {
                filedescriptor::FileDescriptor::dup(&fd)
                    .map_err(|e| eyre!("cannot read the pseudo-terminal: {e:#}"))
            })?;
        let mut writer = pty
            .master
            .take_writer()
            .map_err(|e| eyre!("cannot write to the pseudo-terminal: {e:#}"))?;
        reader::watch(master, key, reports.clone()).wrap_err("cannot start the PTY reader")?;

        let (writer_tx, writer_rx) = std_mpsc::channel::<Vec<u8>>();
        jobs::spawn_thread(format!("pty-write-{key}"), move || {
            // The writer lives as long as the attempt: dropping it sends EOF to the agent.
            for bytes in writer_rx {
                if writer
                    .write_all(&bytes)
                    .and_then(|()| writer.flush())
                    .is_err()
                {
                    break;
                }
            }
        })
        .map_err(|not| not.error)
        .wrap_err("cannot start the PTY writer thread")?;

        jobs::spawn_thread(format!("pty-wait-{key}"), move || {
            let status = spawn::wait_for_exit(pid);
            let _ = reports.blocking_send(PtyEvent::Exited { status });
        })
        .map_err(|not| not.error)
        .wrap_err("cannot start the child waiter thread")?;

        Ok(AgentProcess {
            pid,
            start_time: Some(started_by),
            writer: writer_tx,
            master: pty.master,
        })
    }

    pub fn write(&self, bytes: Vec<u8>) {
        // The writer thread is gone only when the terminal is; nothing is left to write to then.
        let _ = self.writer.send(bytes);
    }

    pub fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| eyre!("cannot resize the pseudo-terminal: {e:#}"))
    }

    /// Signals the agent's whole process group. A group that is already gone is not an error.
    pub fn signal(&self, signal: StopSignal) {
        signal_group(self.pid, signal);
    }
}

/// Signals process group `pgid`; gone groups are ignored.
pub fn signal_group(pgid: u32, signal: StopSignal) {
    let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let signal = match signal {
        StopSignal::Term => Signal::TERM,
        StopSignal::Kill => Signal::KILL,
    };
    let _ = kill_process_group(pid, signal);
}
