//! A task's next attempt before its agent starts: its launch plan (a config problem fails the
//! task here), and what must exist before the agent runs, made on a worker so the loop never
//! waits for git or a host: the task's worktree (`git worktree add`), its signal file cleared,
//! and for an attempt on a host, all that through the launcher plus the attempt's folder there
//! and `git status` as it starts. The worker posts an `EngineInbox::Prepared`; the attempt starts
//! (or its task fails its configuration, or its host goes out of rotation) on it.

use std::path::{Path, PathBuf};

use super::attempts::{Attempts, Planned, RemoteGitBefore};
use super::event::EngineEvent;
use super::outgoing::Outgoing;
use super::snapshots;
use super::tasks::Tasks;
use crate::core::batch::Start;
use crate::core::profile::folder_trust::FolderTrust;
use crate::core::remote::files::{self as remote_files, RemotePrepare};
use crate::core::remote::frames::Prepared;
use crate::core::remote::hosts::HostSet;
use crate::core::task::TaskStatus;
use crate::run::attempt_files::Preparation;
use crate::run::changes::attempt::AttemptFolder;
use crate::run::jobs::{self, Outbox};
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

/// Why a prepared attempt does not start.
pub(super) enum NotPrepared {
    /// Its task fails its configuration, with this evidence.
    Config(String),
    /// Its host could not be reached, for this reason.
    Unreachable(String),
}

impl Tasks {
    /// The launch plan of a task's next attempt (`hosts`: those a task may name), or its
    /// config problem.
    pub(super) fn plan_for(
        &self,
        index: usize,
        attempt: u32,
        hosts: &HostSet,
    ) -> Result<LaunchPlan, PlanError> {
        let task = &self.store.file().tasks()[index];
        let run_dir = self.opts.runs_dir.join(&task.task_id);
        match &task.host {
            None => self.plan_in(index, attempt, &run_dir, None),
            // The folder and the program are the host's: not looked for here.
            Some(_) => match remote::task_problem(task, hosts) {
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
    ) -> Result<LaunchPlan, PlanError> {
        let task = &self.store.file().tasks()[index];
        // herd's hooks reach only a herd on this machine: an agent on a host is left to the
        // screen.
        let hooks = self
            .profiles
            .get(&task.agent)
            .and_then(|p| p.hooks)
            .filter(|_| task.host.is_none());
        let hook_settings = hooks.and_then(crate::run::hook_server::settings);
        let ctx = LaunchContext {
            base_dir: self.store.base_dir(),
            run_id: self.store.file().run_id(),
            attempt,
            run_dir,
            cwd,
            hook_settings: hook_settings.as_deref(),
        };
        match &task.host {
            None => Ok(launch::prepare(task, &self.profiles, &ctx)?),
            Some(_) => {
                let mut plan = launch::render(task, &self.profiles, &ctx)?;
                // The CLI's config on a host is the host's: herd trusts folders here only.
                plan.trust_folder = None;
                Ok(plan)
            }
        }
    }

    /// Every runnable task in scope whose next attempt has no plan fails its configuration.
    pub(super) fn fail_config_problems(&mut self, hosts: &HostSet, out: &mut Outgoing, wall: Wall) {
        for index in self.scope() {
            let task = &self.store.file().tasks()[index];
            if !task.status.is_runnable() {
                continue;
            }
            if let Err(evidence) = self.plan_for(index, task.attempts + 1, hosts) {
                self.fail_config(index, evidence.to_string(), out, wall);
            }
        }
    }

    /// Task `index` fails its configuration, with `evidence`; the frontends are told.
    pub(super) fn fail_config(
        &mut self,
        index: usize,
        evidence: String,
        out: &mut Outgoing,
        wall: Wall,
    ) {
        let task_id = self.store.file().tasks()[index].task_id.clone();
        let file = self.store.file_mut();
        file.set_status(index, TaskStatus::Failed);
        file.set_result(index, outcome::config_failure_json(&evidence, wall));
        // Written with the rest of this turn's changes (`commit`): nothing follows from it.
        out.events
            .push(EngineEvent::ConfigFailed { task_id, evidence });
    }
}

/// The time of the turn, written into the tasks file.
type Wall = jiff::Timestamp;

impl Attempts {
    /// Plans the next attempt of the task the batch starts (on its host, with its account), or
    /// why its configuration fails.
    pub(super) fn plan(
        &mut self,
        start: Start,
        tasks: &Tasks,
        hosts: &HostSet,
    ) -> Result<Planned, String> {
        let index = start.task;
        let task = tasks.store.file().tasks()[index].clone();
        let number = task.attempts + 1;
        let plan = tasks
            .plan_for(index, number, hosts)
            .map_err(|e| e.to_string())?;
        let Some(profile) = tasks.profiles.get(&task.agent).cloned() else {
            return Err(format!("agent \"{}\" is not a known profile", task.agent));
        };
        let key = self.new_key();
        Ok(Planned {
            key,
            index,
            task,
            number,
            plan,
            profile,
            host: start.host.and_then(|name| hosts.get(&name).cloned()),
            account: start.account,
            withdrawn: false,
        })
    }

    /// Whether `planned` starts now: otherwise what it needs is made on a worker (reporting
    /// into `prepared`) and it waits in the table as `Preparing` (holding its slot) for
    /// `on_prepared`. `file_tag`: the tasks file's.
    pub(super) fn starts_now(
        &mut self,
        planned: Planned,
        file_tag: &str,
        snapshot: Option<AttemptFolder>,
        prepared: Outbox<Preparation>,
    ) -> Option<Planned> {
        if !planned.needs_preparation() {
            return Some(planned);
        }
        let job = planned.preparation_job(file_tag, snapshot);
        let key = planned.key;
        self.prepare(key, planned);
        if let Err(not) = jobs::spawn_job(format!("prepare-{key}"), prepared, job) {
            tracing::warn!(
                "cannot prepare attempt {key} on a worker: {}",
                not.error.cause
            );
            self.take_preparing(key)?;
        }
        None
    }

    /// Withdraws the start of task `index` being prepared (the operator disabled or changed the
    /// task): its preparation's result is dropped when it comes. It holds its slot and its
    /// task until then, so the next attempt, planned from the task as it is now, is never
    /// prepared beside it (two `git worktree add` of one task at once).
    pub(super) fn withdraw_preparation(&mut self, index: usize) {
        for planned in self.preparing_mut().filter(|p| p.index == index) {
            tracing::info!(task = %planned.task.task_id, attempt = planned.number, "start withdrawn while it was prepared");
            planned.withdrawn = true;
        }
    }
}

impl Planned {
    /// The blocking work it needs, for a worker (`file_tag`: the tasks file's).
    /// `snapshot`: where its changes are read (`run::changes`), taken after its worktree.
    fn preparation_job(
        &self,
        file_tag: &str,
        snapshot: Option<AttemptFolder>,
    ) -> impl FnOnce() -> Preparation + Send + 'static {
        let task_id = self.task.task_id.clone();
        let worktree = self.task.worktree;
        let cwd = self.plan.cwd.clone();
        let signal = self.plan.signal_file.clone();
        let trust = self
            .plan
            .trust_folder
            .as_ref()
            .map(|trust| (trust.cli, self.plan.env.clone()));
        let remote = self.host.clone().map(|host| {
            let cwd = remote::remote_cwd(self.task.cwd.as_deref(), &host, &cwd);
            let run_dir = remote_files::run_dir_under_home(file_tag, &task_id);
            let clear = attempt_file_names(&self.plan);
            (host, cwd, run_dir, clear, remote_stamp(self.number))
        });
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

    /// What it needed was made (or not) on a worker: taken into its plan (with `git status` of
    /// its folder on a host as it starts), or why it does not start.
    pub(super) fn take_preparation(
        &mut self,
        preparation: Preparation,
        tasks: &Tasks,
    ) -> Result<RemoteGitBefore, NotPrepared> {
        match preparation {
            // Its snapshot was taken out already (`Snapshots::started`).
            Preparation::Local {
                worktree, trusted, ..
            } => {
                match worktree {
                    Some(Ok(path)) => set_worktree(&mut self.plan, path),
                    Some(Err(problem)) => return Err(NotPrepared::Config(problem.to_string())),
                    None => {}
                }
                match trusted {
                    Some(Ok(trust)) => self.plan.trust_folder = Some(trust),
                    Some(Err(problem)) => return Err(NotPrepared::Config(problem)),
                    None => {}
                }
                Ok(None)
            }
            Preparation::Remote(PrepareOutcome::Ready(Prepared::Ready {
                run_dir,
                cwd,
                git_before,
            })) => {
                let (run_dir, at) = (Path::new(&run_dir), Path::new(&cwd));
                let plan = tasks.plan_in(self.index, self.number, run_dir, Some(at));
                self.plan = plan.map_err(|problem| NotPrepared::Config(problem.to_string()))?;
                self.plan.cwd = PathBuf::from(&cwd);
                if self.task.worktree {
                    set_worktree(&mut self.plan, PathBuf::from(cwd));
                }
                Ok(Some(git_before))
            }
            Preparation::Remote(PrepareOutcome::Refused(problem)) => {
                Err(NotPrepared::Config(problem))
            }
            Preparation::Remote(PrepareOutcome::Ready(_)) => {
                Err(NotPrepared::Unreachable("no answer".into()))
            }
            Preparation::Remote(PrepareOutcome::Unreachable(reason)) => {
                Err(NotPrepared::Unreachable(reason.to_string()))
            }
        }
    }
}

fn set_worktree(plan: &mut LaunchPlan, path: PathBuf) {
    plan.env
        .insert("HERD_WORKTREE".into(), path.display().to_string());
    plan.cwd = path;
}

/// Where a local attempt's changes are read (its folder is set on the worker, once its worktree
/// is made), with herd's own files (the tasks file, `runs/`) left out; `None` on a host.
pub(super) fn snapshot_place(
    planned: &Planned,
    runs_dir: &Path,
    tasks_file: &Path,
) -> Option<AttemptFolder> {
    planned.host.is_none().then(|| {
        snapshots::attempt_folder(
            planned.plan.cwd.clone(),
            runs_dir.join(&planned.task.task_id),
            planned.number,
            vec![tasks_file.to_path_buf(), runs_dir.to_path_buf()],
        )
    })
}
