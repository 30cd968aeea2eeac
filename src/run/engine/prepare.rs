//! A task's next attempt before its agent starts: its launch plan (a config problem fails the
//! task here), and what must exist before the agent runs, made on a worker so the loop never
//! waits for git or a host: the task's worktree (`git worktree add`), its signal file cleared,
//! and for an attempt on a host, all that through the launcher plus the attempt's folder there
//! and `git status` as it starts. The worker posts an `EngineInbox::Prepared`; the attempt starts
//! (or its task fails its configuration, or its host goes out of rotation) on it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use color_eyre::eyre::Result;

use super::Engine;
use super::attempts::Planned;
use super::event::EngineEvent;
use super::inbox::EngineInbox;
use super::snapshots;
use crate::core::batch::Input;
use crate::core::folder_trust::FolderTrust;
use crate::core::remote::files::{self as remote_files, RemotePrepare};
use crate::core::remote::frames::Prepared;
use crate::core::remote::hosts::Host;
use crate::core::task::TaskStatus;
use crate::run::attempt_files::Preparation;
use crate::run::jobs;
use crate::run::launch::{self, LaunchContext, LaunchPlan};
use crate::run::remote::files::PrepareOutcome;
use crate::run::{outcome, remote, worktree};

/// The stamp file, in a remote attempt's folder, whose time is the attempt's start.
pub(super) fn remote_stamp(number: u32) -> String {
    format!("attempt_{number}.start")
}

/// The file names of a plan's signal file and agent log (cleared before, removed after).
pub(super) fn attempt_file_names(plan: &LaunchPlan) -> Vec<String> {
    [&plan.signal_file, &plan.agent_log]
        .into_iter()
        .flatten()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect()
}

/// Why a task's next attempt has no launch plan: its own configuration (`failed_config`).
#[derive(Debug, thiserror::Error)]
pub(super) enum PlanError {
    #[error(transparent)]
    Launch(#[from] launch::LaunchError),
    /// Its host is unknown or unusable (`remote::task_problem`'s words).
    #[error("{0}")]
    Host(String),
}

impl Engine {
    /// The launch plan of a task's next attempt, or its config problem.
    pub(super) fn plan_for(
        &self,
        index: usize,
        attempt: u32,
    ) -> std::result::Result<LaunchPlan, PlanError> {
        let task = &self.tasks.store.file().tasks()[index];
        let run_dir = self.tasks.opts.runs_dir.join(&task.task_id);
        match &task.host {
            None => self.plan_in(index, attempt, &run_dir, None),
            // The folder and the program are the host's: not looked for here.
            Some(_) => match remote::task_problem(task, self.hosts.set()) {
                Some(problem) => Err(PlanError::Host(problem)),
                None => self.plan_in(index, attempt, &run_dir, None),
            },
        }
    }

    /// The plan with its attempt's files in `run_dir` (the recordings' folder here, the
    /// attempt's folder on a host) and, on a host, the agent in `cwd` there.
    fn plan_in(
        &self,
        index: usize,
        attempt: u32,
        run_dir: &Path,
        cwd: Option<&Path>,
    ) -> std::result::Result<LaunchPlan, PlanError> {
        let task = &self.tasks.store.file().tasks()[index];
        // herd's hooks reach only a herd on this machine: an agent on a host is left to the
        // screen.
        let hooks = self
            .tasks
            .profiles
            .get(&task.agent)
            .and_then(|p| p.hooks)
            .filter(|_| task.host.is_none());
        let hook_settings = hooks.and_then(crate::run::hook_server::settings);
        let ctx = LaunchContext {
            base_dir: self.tasks.store.base_dir(),
            run_id: self.tasks.store.file().run_id(),
            attempt,
            run_dir,
            cwd,
            hook_settings: hook_settings.as_deref(),
        };
        match &task.host {
            None => Ok(launch::prepare(task, &self.tasks.profiles, &ctx)?),
            Some(_) => {
                let mut plan = launch::render(task, &self.tasks.profiles, &ctx)?;
                // The CLI's config on a host is the host's: herd trusts folders here only.
                plan.trust_folder = None;
                Ok(plan)
            }
        }
    }

    pub(super) fn fail_config_problems(&mut self) -> Result<()> {
        for index in self.tasks.scope() {
            let task = &self.tasks.store.file().tasks()[index];
            if !task.status.is_runnable() {
                continue;
            }
            if let Err(evidence) = self.plan_for(index, task.attempts + 1) {
                self.fail_config(index, evidence.to_string())?;
            }
        }
        Ok(())
    }

    pub(super) fn fail_config(&mut self, index: usize, evidence: String) -> Result<()> {
        let task_id = self.tasks.store.file().tasks()[index].task_id.clone();
        let file = self.tasks.store.file_mut();
        file.set_status(index, TaskStatus::Failed);
        file.set_result(
            index,
            outcome::config_failure_json(&evidence, self.clock.wall),
        );
        // Written with the rest of this turn's changes (`commit`): nothing follows from it.
        self.out
            .events
            .push(EngineEvent::ConfigFailed { task_id, evidence });
        Ok(())
    }

    /// Plans task `index`'s next attempt on `host`; `None` when the task failed its
    /// configuration instead.
    pub(super) fn plan_start(
        &mut self,
        index: usize,
        host: Option<Host>,
    ) -> Result<Option<Planned>> {
        self.batch
            .handle(Input::RetryCleared { task: index }, self.clock.at);
        let task = self.tasks.store.file().tasks()[index].clone();
        let number = task.attempts + 1;
        let plan = match self.plan_for(index, number) {
            Ok(plan) => plan,
            Err(evidence) => {
                return self.fail_config(index, evidence.to_string()).map(|()| None);
            }
        };
        let Some(profile) = self.tasks.profiles.get(&task.agent).cloned() else {
            let problem = format!("agent \"{}\" is not a known profile", task.agent);
            return self.fail_config(index, problem).map(|()| None);
        };
        let key = self.attempts.new_key();
        Ok(Some(Planned {
            key,
            index,
            task,
            number,
            plan,
            profile,
            host,
            withdrawn: false,
        }))
    }

    /// Whether `planned` starts now: otherwise what it needs is made on a worker and it waits
    /// in the attempt table as `Preparing` (holding its slot) for `on_prepared`.
    pub(super) fn starts_now(&mut self, planned: Planned) -> Option<Planned> {
        if !planned.needs_preparation() {
            return Some(planned);
        }
        let job = self.preparation_job(&planned);
        let key = planned.key;
        let prepared = self.outbox_of(key, EngineInbox::from_preparation);
        self.attempts.prepare(key, planned);
        if let Err(not) = jobs::spawn_job(format!("prepare-{key}"), prepared, job) {
            tracing::warn!(
                "cannot prepare attempt {key} on a worker: {}",
                not.error.cause
            );
            self.attempts.take_preparing(key)?;
        }
        None
    }

    /// Withdraws the start of task `index` being prepared (the operator disabled or changed the
    /// task): its preparation's result is dropped when it comes. It holds its slot and its
    /// task until then, so the next attempt, planned from the task as it is now, is never
    /// prepared beside it (two `git worktree add` of one task at once).
    pub(super) fn withdraw_preparation(&mut self, index: usize) {
        for planned in self.attempts.preparing_mut().filter(|p| p.index == index) {
            tracing::info!(task = %planned.task.task_id, attempt = planned.number, "start withdrawn while it was prepared");
            planned.withdrawn = true;
        }
    }

    /// The blocking work `planned` needs, for a worker.
    fn preparation_job(&self, planned: &Planned) -> impl FnOnce() -> Preparation + Send + 'static {
        let task_id = planned.task.task_id.clone();
        let worktree = planned.task.worktree;
        let cwd = planned.plan.cwd.clone();
        let signal = planned.plan.signal_file.clone();
        let trust = planned
            .plan
            .trust_folder
            .as_ref()
            .map(|trust| (trust.cli, planned.plan.env.clone()));
        let remote = planned.host.clone().map(|host| {
            let cwd = remote::remote_cwd(planned.task.cwd.as_deref(), &host, &cwd);
            let run_dir = remote_files::run_dir_under_home(&self.tasks.file_tag, &task_id);
            let clear = attempt_file_names(&planned.plan);
            (host, cwd, run_dir, clear, remote_stamp(planned.number))
        });
        let snapshot = snapshot_place(planned, &self.tasks.opts.runs_dir, self.tasks.store.path());
        move || match remote {
            Some((host, cwd, run_dir, clear, stamp)) => {
                Preparation::Remote(crate::run::remote::files::prepare(
                    &host,
                    &RemotePrepare {
                        cwd: &cwd,
                        run_dir: &run_dir,
                        clear: &clear,
                        stamp: &stamp,
                        worktree: worktree.then_some(task_id.as_str()),
                        host: &host.name,
                    },
                ))
            }
            None => {
                if let Some(path) = &signal {
                    // Only what this attempt's agent writes counts.
                    if let Err(e) = std::fs::remove_file(path)
                        && e.kind() != std::io::ErrorKind::NotFound
                    {
                        tracing::warn!("cannot clear the signal file {}: {e}", path.display());
                    }
                }
                let worktree = worktree.then(|| worktree::prepare(&cwd, &task_id));
                // The folder the agent will run in: its worktree, when it has one.
                let folder = match &worktree {
                    Some(Ok(path)) => path.clone(),
                    _ => cwd,
                };
                let snapshot = snapshot.map(|mut place| {
                    place.folder = folder.clone();
                    let start = place.at_start().unwrap_or_else(|error| {
                        tracing::warn!(folder = %folder.display(), "cannot take the attempt's snapshot: {error}");
                        None
                    });
                    (place, start)
                });
                let trusted = trust.map(|(cli, env)| {
                    let trust = FolderTrust { cli, folder };
                    crate::run::folder_trust::trust_folder(&env, &trust).map(|_| trust)
                });
                Preparation::Local {
                    worktree,
                    trusted,
                    snapshot,
                }
            }
        }
    }

    /// What an attempt needed was made (or not): it starts, its task fails its configuration,
    /// or its host goes out of rotation and the task waits.
    pub(super) fn on_prepared(
        &mut self,
        key: u64,
        preparation: Preparation,
        now: Instant,
    ) -> Result<()> {
        let Some(mut planned) = self.attempts.take_preparing(key) else {
            return Ok(());
        };
        // Stopped, or the operator cancelled the task meanwhile: it does not start.
        let task = &self.tasks.store.file().tasks()[planned.index];
        if self.batch.queue().is_stopping() || !task.status.is_runnable() {
            return Ok(());
        }
        // Disabled or changed meanwhile: the task as it is now goes, or stays, from the queue.
        if planned.withdrawn {
            return self.fill(now);
        }
        let index = planned.index;
        let mut git_before = None;
        match preparation {
            Preparation::Local {
                worktree,
                trusted,
                snapshot,
            } => {
                if let Some((place, start)) = snapshot {
                    self.snapshots.started(key, place, start);
                }
                match worktree {
                    Some(Ok(path)) => set_worktree(&mut planned.plan, path),
                    Some(Err(problem)) => return self.fail_config(index, problem.to_string()),
                    None => {}
                }
                match trusted {
                    Some(Ok(trust)) => planned.plan.trust_folder = Some(trust),
                    Some(Err(problem)) => return self.fail_config(index, problem),
                    None => {}
                }
            }
            Preparation::Remote(PrepareOutcome::Ready(Prepared::Ready {
                run_dir,
                cwd,
                git_before: before,
            })) => {
                let plan = self.plan_in(
                    index,
                    planned.number,
                    Path::new(&run_dir),
                    Some(Path::new(&cwd)),
                );
                planned.plan = match plan {
                    Ok(plan) => plan,
                    Err(problem) => return self.fail_config(index, problem.to_string()),
                };
                planned.plan.cwd = PathBuf::from(&cwd);
                if planned.task.worktree {
                    set_worktree(&mut planned.plan, PathBuf::from(cwd));
                }
                git_before = Some(before);
            }
            Preparation::Remote(PrepareOutcome::Refused(problem)) => {
                return self.fail_config(index, problem);
            }
            Preparation::Remote(PrepareOutcome::Ready(_)) => {
                return self.unreachable_at_start(planned, "no answer".into(), now);
            }
            Preparation::Remote(PrepareOutcome::Unreachable(reason)) => {
                return self.unreachable_at_start(planned, reason.to_string(), now);
            }
        }
        let size = self.sizes.at(self.attempts.past_preparation());
        let starting = self.begin(planned, now, git_before, size)?;
        // Launched once the write that marks it `running` is on disk.
        self.record_starts(vec![starting], now)?;
        self.commit(now)
    }
}

fn set_worktree(plan: &mut LaunchPlan, path: PathBuf) {
    plan.env
        .insert("HERD_WORKTREE".into(), path.display().to_string());
    plan.cwd = path;
}

/// Where a local attempt's changes are read (its folder is set on the worker, once its worktree
/// is made), with herd's own files (the tasks file, `runs/`) left out; `None` on a host.
fn snapshot_place(
    planned: &Planned,
    runs_dir: &Path,
    tasks_file: &Path,
) -> Option<crate::run::changes::attempt::AttemptFolder> {
    planned.host.is_none().then(|| {
        snapshots::attempt_folder(
            planned.plan.cwd.clone(),
            runs_dir.join(&planned.task.task_id),
            planned.number,
            vec![tasks_file.to_path_buf(), runs_dir.to_path_buf()],
        )
    })
}
