//! Where an attempt's files are read, beside the engine so it reaches its state: the worker
//! that reads the signal file and the agent's log while the attempt runs (here, or on its host
//! through the launcher, see `run::attempt_files`), and what the end of an attempt on a host
//! needs to find its files there (`gather`).

use std::time::{Duration, SystemTime};

use super::attempts::LiveAttempt;
use super::gather::RemoteEndJob;
use super::prepare::{attempt_file_names, remote_stamp};
use super::tasks::Tasks;
use crate::core::profile::AgentLogKind;
use crate::run::agent_log::AgentLogTail;
use crate::run::attempt_files::{FileSource, FileWatch, FilesReport, RemoteRollouts};
use crate::run::jobs::Outbox;

/// How often a running agent's signal file and log are read here.
const SIGNAL_POLL: Duration = Duration::from_secs(1);
/// How often they are read on a host (each read is one run of its launcher).
const REMOTE_POLL: Duration = Duration::from_secs(2);

impl LiveAttempt {
    /// Starts the worker that reads attempt `key`'s signal file and its agent's log, when it has
    /// either, reporting into `reports`; the copies made of a host's are kept in `runs_dir`. On
    /// a host, the log is the one herd named (`{agent_log}`), or the Codex rollout written
    /// there since the attempt started for the task's folder.
    pub(super) fn watch_files(
        &self,
        (key, agent_log): (u64, Option<AgentLogKind>),
        runs_dir: &std::path::Path,
        reports: Outbox<FilesReport>,
    ) -> Option<FileWatch> {
        let (plan, number) = (&self.plan, self.number);
        if plan.signal_file.is_none() && agent_log.is_none() {
            return None;
        }
        let (source, every) = match &self.remote {
            None => {
                let log = agent_log.map(|kind| {
                    AgentLogTail::new(
                        kind,
                        plan.agent_log.clone(),
                        &plan.env,
                        &plan.cwd,
                        SystemTime::from(self.started_at),
                    )
                });
                let signal = plan.signal_file.clone();
                (FileSource::Local { signal, log }, SIGNAL_POLL)
            }
            Some(remote) => {
                let log = agent_log.and(plan.agent_log.as_ref());
                // A Codex rollout is looked for on the host, in its CODEX_HOME.
                let rollouts = (agent_log == Some(AgentLogKind::CodexRollout) && log.is_none())
                    .then(|| RemoteRollouts {
                        codex_home: plan
                            .env
                            .get("CODEX_HOME")
                            .or(remote.host.env.get("CODEX_HOME"))
                            .filter(|home| !home.is_empty())
                            .cloned(),
                        stamp: plan
                            .env
                            .get("HERD_RUN_DIR")
                            .map(|dir| format!("{dir}/{}", remote_stamp(number)))
                            .unwrap_or_default(),
                        cwd: plan.cwd.display().to_string(),
                    });
                if plan.signal_file.is_none() && log.is_none() && rollouts.is_none() {
                    return None;
                }
                let copies_log = log.is_some() || rollouts.is_some();
                let here = runs_dir.join(&self.task_id);
                let source = FileSource::Remote {
                    host: Box::new(remote.host.clone()),
                    signal: plan.signal_file.as_ref().map(|p| p.display().to_string()),
                    log: log.map(|p| p.display().to_string()),
                    copy_signal: plan
                        .signal_file
                        .as_ref()
                        .map(|_| here.join(format!("attempt_{number}.signal.json"))),
                    copy_log: copies_log.then(|| here.join(format!("attempt_{number}.agent.log"))),
                    rollouts,
                };
                (source, REMOTE_POLL)
            }
        };
        let post = move |report| reports.blocking_send(report).is_ok();
        match FileWatch::start(format!("files-{key}"), source, every, post) {
            Ok(watch) => Some(watch),
            Err(error) => {
                tracing::warn!(task = %self.task_id, "cannot read the signal file and agent log on a worker: {error}");
                None
            }
        }
    }

    /// Where the end of the attempt, when it ran on a host, finds its files there.
    pub(super) fn remote_end_job(&self, tasks: &Tasks) -> Option<RemoteEndJob> {
        let remote = self.remote.as_ref()?;
        Some(RemoteEndJob {
            host: remote.host.clone(),
            run_dir: crate::core::remote::files::run_dir_under_home(&tasks.file_tag, &self.task_id),
            remove: attempt_file_names(&self.plan),
            fetch: vec![format!("attempt_{}.acp.jsonl", self.number)],
            runs_dir: tasks.opts.runs_dir.join(&self.task_id),
            stamp: remote_stamp(self.number),
            transcript_copy: tasks
                .opts
                .runs_dir
                .join(&self.task_id)
                .join(format!("attempt_{}.transcript.jsonl", self.number)),
        })
    }
}
