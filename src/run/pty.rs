//! One agent process in its own pseudo-terminal.
//!
//! The child leads its own session and process group (`spawn` starts it with setsid), so signals go
//! to the whole group; what left the group is found and ended by `hygiene`. Writes and the wait
//! for the child each run on their own thread ("some programs deadlock if you write to their
//! stdin while reading their stdout"); one thread reads every terminal (`reader`) and feeds a
//! bounded channel, so a flooding agent is slowed down rather than filling memory.

use std::io::Write;
use std::sync::mpsc as std_mpsc;

use color_eyre::eyre::{Result, WrapErr, eyre};
use portable_pty::{MasterPty, PtySize, native_pty_system};
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::sync::mpsc;

mod reader;

use super::launch::LaunchPlan;
use super::spawn::{self, SpawnRequest};
use crate::core::attempt::StopSignal;
use crate::core::classify::ExitStatus;

/// What the PTY threads report, tagged with the attempt's key.
#[derive(Debug)]
pub enum PtyReport {
    Output {
        key: u64,
        bytes: Vec<u8>,
    },
    /// The reader saw end of file: every process holding the terminal is gone.
    Closed {
        key: u64,
    },
    Exited {
        key: u64,
        status: ExitStatus,
    },
    /// The attempt's leftover processes were ended (see `hygiene`).
    Swept {
        key: u64,
        ended: Vec<super::hygiene::EndedProcess>,
    },
    /// What the attempt's end needed from git and the disk was gathered (see `engine::gather`).
    Gathered {
        key: u64,
        gathered: Box<super::engine::gathered::Gathered>,
    },
    /// The tasks file's writer finished a write (see `store::writer`): a wakeup, the writer's
    /// state says what is on disk.
    TasksFileWritten {
        generation: u64,
    },
    /// The attempt's signal file or agent log was read (see `attempt_files`).
    Files {
        key: u64,
        report: super::attempt_files::FilesReport,
    },
    /// What an attempt needed before its agent starts was made (see `attempt_files`).
    Prepared {
        key: u64,
        preparation: Box<super::attempt_files::Preparation>,
    },
    /// The agent's CLI called herd's hook (see `hook_server`): `reply` takes the answer.
    Hook {
        key: u64,
        input: serde_json::Value,
        reply: std::sync::mpsc::Sender<String>,
    },
    /// herd's client of the attempt's Codex app server (see `app_server`).
    AppServer {
        key: u64,
        report: crate::core::app_server::AppServerReport,
    },
}

/// Most reports the loop takes off the channel at once: a flood of output still lets timers
/// and keys through between batches.
pub const BATCH_MAX: usize = 256;

/// Most bytes one coalesced output report carries.
const COALESCE_MAX: usize = 1 << 20;

/// Reports as the loop takes them off the channel, with the consecutive output of each
/// terminal joined into one report (up to [`COALESCE_MAX`] bytes): the attempt then reads its
/// screen once per burst instead of once per 64 KiB read. Order per terminal is kept, and
/// output is never joined across that terminal's end.
pub fn coalesce(reports: impl IntoIterator<Item = PtyReport>) -> Vec<PtyReport> {
    let mut out: Vec<PtyReport> = Vec::new();
    // Per terminal: where its last output report is in `out`, while it may still grow.
    let mut open: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for report in reports {
        match report {
            PtyReport::Output { key, bytes } => {
                if let Some(&at) = open.get(&key)
                    && let Some(PtyReport::Output { bytes: joined, .. }) = out.get_mut(at)
                    && joined.len() + bytes.len() <= COALESCE_MAX
                {
                    joined.extend_from_slice(&bytes);
                    continue;
                }
                open.insert(key, out.len());
                out.push(PtyReport::Output { key, bytes });
            }
            PtyReport::Closed { key }
            | PtyReport::Exited { key, .. }
            | PtyReport::Swept { key, .. }
            | PtyReport::Gathered { key, .. }
            | PtyReport::Files { key, .. }
            | PtyReport::Prepared { key, .. }
            | PtyReport::Hook { key, .. }
            | PtyReport::AppServer { key, .. } => {
                open.remove(&key);
                out.push(report);
            }
            PtyReport::TasksFileWritten { .. } => out.push(report),
        }
    }
    out
}

/// A running agent: its process group and the writer/resizer of its terminal.
pub struct AgentProcess {
    pub pid: u32,
    /// At or before the agent's start time (clock ticks since boot, as `/proc/PID/stat`):
    /// nothing older can carry its attempt's cookie, which spares a sweep reading older
    /// processes' environments.
    pub start_time: Option<u64>,
    writer: std_mpsc::Sender<Vec<u8>>,
    master: Box<dyn MasterPty + Send>,
}

impl AgentProcess {
    /// Starts `plan` in a fresh PTY of `rows` x `cols`; reports go to `reports` tagged `key`.
    pub fn spawn(
        plan: &LaunchPlan,
        rows: u16,
        cols: u16,
        key: u64,
        reports: mpsc::Sender<PtyReport>,
    ) -> Result<AgentProcess> {
        crate::run::limits::check_room_for_an_agent()
            .wrap_err_with(|| format!("cannot start {}", plan.argv[0]))?;
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
        // Read by the one reader thread of every terminal (`reader`), through a descriptor of
        // its own.
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
        std::thread::Builder::new()
            .name(format!("pty-write-{key}"))
            .spawn(move || {
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
            .wrap_err("cannot start the PTY writer thread")?;

        std::thread::Builder::new()
            .name(format!("pty-wait-{key}"))
            .spawn(move || {
                let status = spawn::wait_for_exit(pid);
                let _ = reports.blocking_send(PtyReport::Exited { key, status });
            })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn out(key: u64, text: &str) -> PtyReport {
        PtyReport::Output {
            key,
            bytes: text.as_bytes().to_vec(),
        }
    }

    /// (key, "output text" or "closed") per report.
    fn shape(reports: &[PtyReport]) -> Vec<(u64, String)> {
        reports
            .iter()
            .map(|r| match r {
                PtyReport::Output { key, bytes } => {
                    (*key, String::from_utf8_lossy(bytes).into_owned())
                }
                PtyReport::Closed { key } => (*key, "closed".into()),
                PtyReport::Exited { key, .. } => (*key, "exited".into()),
                PtyReport::Swept { key, .. } => (*key, "swept".into()),
                PtyReport::Gathered { key, .. } => (*key, "gathered".into()),
                PtyReport::TasksFileWritten { generation } => (0, format!("written {generation}")),
                PtyReport::Files { key, .. } => (*key, "files".into()),
                PtyReport::Prepared { key, .. } => (*key, "prepared".into()),
                PtyReport::Hook { key, .. } => (*key, "hook".into()),
                PtyReport::AppServer { key, .. } => (*key, "app server".into()),
            })
            .collect()
    }

    #[test]
    fn output_of_one_terminal_is_joined_up_to_its_end() {
        let reports = [
            out(1, "a"),
            out(2, "x"),
            out(1, "b"),
            PtyReport::Closed { key: 1 },
            out(2, "y"),
            out(1, "late"),
        ];
        assert_eq!(
            shape(&coalesce(reports)),
            [
                (1, "ab".to_string()),
                (2, "xy".to_string()),
                (1, "closed".to_string()),
                (1, "late".to_string()),
            ]
        );
    }

    #[test]
    fn a_joined_report_stays_under_the_cap() {
        let chunk = "z".repeat(COALESCE_MAX / 2 + 1);
        let joined = coalesce([out(7, &chunk), out(7, &chunk), out(7, "tail")]);
        let sizes: Vec<usize> = joined
            .iter()
            .map(|r| match r {
                PtyReport::Output { bytes, .. } => bytes.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(sizes, [chunk.len(), chunk.len() + 4]);
    }
}
