//! The engine's inbox: what every worker reports to the loop that owns the engine (agents'
//! terminals, the tasks file's writer, the hook and app-server links, the workers that prepare,
//! read, sweep and gather an attempt), named by its receiver. The loop takes reports off the
//! channel in batches (`BATCH_MAX`) and joins each terminal's consecutive output (`coalesce`)
//! before the engine sees them.
//!
//! Each worker reports in its own type through an `Outbox` (`run::jobs`) and knows nothing of
//! the engine: the engine hands it an outbox that converts into this inbox and tags the report
//! with the attempt it is about (`Outgoing::outbox_of`, the `from_*` constructors here). The
//! engine's own jobs (prepare, sweep, gather, started by `run::jobs::spawn_job`) return their
//! results the same way.

use super::gathered::Gathered;
use crate::core::app_server::AppServerReport;
use crate::core::classify::ExitStatus;
use crate::run::attempt_files::{FilesReport, Preparation};
use crate::run::hook_server::HookCall;
use crate::run::hygiene::EndedProcess;
use crate::run::pty::PtyEvent;
use crate::run::store::writer::TasksFileWritten;

/// What the workers report to the engine, tagged with the attempt's key where it has one.
#[derive(Debug)]
pub enum EngineInbox {
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
        ended: Vec<EndedProcess>,
    },
    /// What the attempt's end needed from git and the disk was gathered (see `engine::gather`).
    Gathered {
        key: u64,
        gathered: Box<Gathered>,
    },
    /// The tasks file's writer finished a write (see `store::writer`): a wakeup, the writer's
    /// state says what is on disk.
    TasksFileWritten {
        generation: u64,
    },
    /// The attempt's signal file or agent log was read (see `attempt_files`).
    Files {
        key: u64,
        report: FilesReport,
    },
    /// What an attempt needed before its agent starts was made (see `attempt_files`).
    Prepared {
        key: u64,
        preparation: Box<Preparation>,
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
        report: AppServerReport,
    },
}

impl EngineInbox {
    /// The attempt a report is about; `None` for the tasks file's writer, which serves them all.
    pub fn key(&self) -> Option<u64> {
        match self {
            EngineInbox::Output { key, .. }
            | EngineInbox::Closed { key }
            | EngineInbox::Exited { key, .. }
            | EngineInbox::Swept { key, .. }
            | EngineInbox::Gathered { key, .. }
            | EngineInbox::Files { key, .. }
            | EngineInbox::Prepared { key, .. }
            | EngineInbox::Hook { key, .. }
            | EngineInbox::AppServer { key, .. } => Some(*key),
            EngineInbox::TasksFileWritten { .. } => None,
        }
    }

    /// What attempt `key`'s terminal reported.
    pub fn from_pty(key: u64, event: PtyEvent) -> EngineInbox {
        match event {
            PtyEvent::Output { bytes } => EngineInbox::Output { key, bytes },
            PtyEvent::Closed => EngineInbox::Closed { key },
            PtyEvent::Exited { status } => EngineInbox::Exited { key, status },
        }
    }

    /// A hook call of attempt `key`'s CLI.
    pub fn from_hook(key: u64, call: HookCall) -> EngineInbox {
        let HookCall { input, reply } = call;
        EngineInbox::Hook { key, input, reply }
    }

    /// What attempt `key`'s app server said.
    pub fn from_app_server(key: u64, report: AppServerReport) -> EngineInbox {
        EngineInbox::AppServer { key, report }
    }

    /// What attempt `key` needed before its agent starts, made (`prepare`).
    pub fn from_preparation(key: u64, preparation: Preparation) -> EngineInbox {
        let preparation = Box::new(preparation);
        EngineInbox::Prepared { key, preparation }
    }

    /// The processes attempt `key` left, ended (`processes`).
    pub fn from_sweep(key: u64, ended: Vec<EndedProcess>) -> EngineInbox {
        EngineInbox::Swept { key, ended }
    }

    /// What attempt `key`'s end needed, gathered (`gather`).
    pub fn from_gathered(key: u64, gathered: Gathered) -> EngineInbox {
        let gathered = Box::new(gathered);
        EngineInbox::Gathered { key, gathered }
    }

    /// What was read of attempt `key`'s signal file and agent log.
    pub fn from_files(key: u64, report: FilesReport) -> EngineInbox {
        EngineInbox::Files { key, report }
    }
}

impl From<TasksFileWritten> for EngineInbox {
    fn from(written: TasksFileWritten) -> EngineInbox {
        EngineInbox::TasksFileWritten {
            generation: written.generation,
        }
    }
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
pub fn coalesce(reports: impl IntoIterator<Item = EngineInbox>) -> Vec<EngineInbox> {
    let mut out: Vec<EngineInbox> = Vec::new();
    // Per terminal: where its last output report is in `out`, while it may still grow.
    let mut open: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for report in reports {
        match report {
            EngineInbox::Output { key, bytes } => {
                if let Some(&at) = open.get(&key)
                    && let Some(EngineInbox::Output { bytes: joined, .. }) = out.get_mut(at)
                    && joined.len() + bytes.len() <= COALESCE_MAX
                {
                    joined.extend_from_slice(&bytes);
                    continue;
                }
                open.insert(key, out.len());
                out.push(EngineInbox::Output { key, bytes });
            }
            other => {
                // Output is never joined across the terminal's end or another report of it.
                if let Some(key) = other.key() {
                    open.remove(&key);
                }
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(key: u64, text: &str) -> EngineInbox {
        EngineInbox::Output {
            key,
            bytes: text.as_bytes().to_vec(),
        }
    }

    /// (key, "output text" or "closed") per report.
    fn shape(reports: &[EngineInbox]) -> Vec<(u64, String)> {
        reports
            .iter()
            .map(|r| match r {
                EngineInbox::Output { key, bytes } => {
                    (*key, String::from_utf8_lossy(bytes).into_owned())
                }
                EngineInbox::Closed { key } => (*key, "closed".into()),
                EngineInbox::Exited { key, .. } => (*key, "exited".into()),
                EngineInbox::Swept { key, .. } => (*key, "swept".into()),
                EngineInbox::Gathered { key, .. } => (*key, "gathered".into()),
                EngineInbox::TasksFileWritten { generation } => {
                    (0, format!("written {generation}"))
                }
                EngineInbox::Files { key, .. } => (*key, "files".into()),
                EngineInbox::Prepared { key, .. } => (*key, "prepared".into()),
                EngineInbox::Hook { key, .. } => (*key, "hook".into()),
                EngineInbox::AppServer { key, .. } => (*key, "app server".into()),
            })
            .collect()
    }

    #[test]
    fn output_of_one_terminal_is_joined_up_to_its_end() {
        let reports = [
            out(1, "a"),
            out(2, "x"),
            out(1, "b"),
            EngineInbox::Closed { key: 1 },
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
                EngineInbox::Output { bytes, .. } => bytes.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(sizes, [chunk.len(), chunk.len() + 4]);
    }
}
