//! From a task and its profile to what is started: argv, folder, environment, prompt and marker.
//! Problems here are the task's (`failed_config`). `render` is pure; `check` looks at the disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::core::profile::{Profile, ProfileSet};
use crate::core::task::{DEFAULT_MARKER_TEMPLATE, TaskSpec};

pub mod acp;
mod error;
mod prompt;

pub use error::{LaunchError, TemplateSite};
pub use prompt::{AddedInstruction, CompletionRule, PromptSource, Resume, last_session};

/// Everything needed to start one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub prompt: String,
    pub marker: String,
    pub completion: CompletionRule,
    /// The completion instruction herd appended to the prompt, if it added one.
    pub added_instruction: Option<AddedInstruction>,
    /// The session this attempt continues (the profile's `resume` command was used).
    pub resumed_session: Option<String>,
    /// `HERD_SIGNAL_FILE`, for `"completion": "signal_file"`.
    pub signal_file: Option<PathBuf>,
    /// The file `{agent_log}` names, read live as the profile's `agent_log`.
    pub agent_log: Option<PathBuf>,
    /// The folder herd trusts in the CLI's config before the agent starts.
    pub trust_folder: Option<crate::core::profile::folder_trust::FolderTrust>,
}

/// What the task's fields and the run contribute to placeholders.
#[derive(Debug, Clone)]
pub struct LaunchContext<'a> {
    /// The tasks file's folder: relative `cwd`s are resolved against it.
    pub base_dir: &'a Path,
    pub run_id: Option<&'a str>,
    pub attempt: u32,
    /// Where this attempt's recordings go (`HERD_RUN_DIR`).
    pub run_dir: &'a Path,
    /// The agent's folder when it is not the task's own here (on its host); `{cwd}` names it.
    pub cwd: Option<&'a Path>,
    /// The inline settings `{hook_settings}` gives the CLI; `None`: no hooks.
    pub hook_settings: Option<&'a str>,
}

impl LaunchContext<'_> {
    /// The attempt's signal file, beside its recordings.
    pub fn signal_file(&self) -> PathBuf {
        self.run_dir
            .join(format!("attempt_{}.signal.json", self.attempt))
    }

    /// The file an agent is told to write its own log to (`{agent_log}`), beside the recordings.
    pub fn agent_log_file(&self) -> PathBuf {
        self.run_dir
            .join(format!("attempt_{}.agent.log", self.attempt))
    }
}

/// The working folder of a task: its `cwd` (relative to the tasks file) or the tasks file's folder.
pub fn task_cwd(task: &TaskSpec, base_dir: &Path) -> PathBuf {
    match &task.cwd {
        Some(cwd) => base_dir.join(cwd),
        None => base_dir.to_path_buf(),
    }
}

/// Renders the task for one attempt; `resume` continues a session. The first problem, if any.
pub fn render_launch(
    task: &TaskSpec,
    profile: &Profile,
    source: &PromptSource,
    resume: Option<&Resume>,
    ctx: &LaunchContext<'_>,
) -> Result<LaunchPlan, LaunchError> {
    let mut problems = Vec::new();
    let plan = render_all(task, profile, source, resume, ctx, &mut problems);
    match problems.into_iter().next() {
        Some(first) => Err(first),
        None => Ok(plan),
    }
}

/// Everything about a task known before launching it; the first problem, if any.
pub fn prepare(
    task: &TaskSpec,
    profiles: &ProfileSet,
    ctx: &LaunchContext<'_>,
) -> Result<LaunchPlan, LaunchError> {
    let mut plan = render(task, profiles, ctx)?;
    check_launch(&mut plan)?;
    Ok(plan)
}

/// The plan without looking at this machine (an attempt on another host).
pub fn render(
    task: &TaskSpec,
    profiles: &ProfileSet,
    ctx: &LaunchContext<'_>,
) -> Result<LaunchPlan, LaunchError> {
    let profile = profiles
        .get(&task.agent)
        .ok_or_else(|| unknown_agent(task, profiles))?;
    let source = prompt::prompt_source(task, ctx.base_dir)?;
    let resume = prompt::resume_request(task, profile, ctx.attempt);
    render_launch(task, profile, &source, resume.as_ref(), ctx)
}

/// Every problem that keeps the task from launching, none hiding another.
pub fn problems(
    task: &TaskSpec,
    profiles: &ProfileSet,
    ctx: &LaunchContext<'_>,
) -> Vec<LaunchError> {
    let mut problems = Vec::new();
    // A task on another host finds its folder and program there.
    let local = task.host.is_none();
    let folder = if local {
        check_folder(&task_cwd(task, ctx.base_dir))
    } else {
        Ok(())
    };
    let source = match prompt::prompt_source(task, ctx.base_dir) {
        Ok(source) => Some(source),
        // A missing folder explains an unreadable prompt file.
        Err(LaunchError::PromptFileUnreadable { .. }) if folder.is_err() => None,
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let plan = match profiles.get(&task.agent) {
        Some(profile) => {
            let resume = prompt::resume_request(task, profile, ctx.attempt);
            // An unreadable prompt stands in as empty, so the command and env are still checked.
            let source = source.unwrap_or_else(|| PromptSource::CommandFile(String::new()));
            Some(render_all(
                task,
                profile,
                &source,
                resume.as_ref(),
                ctx,
                &mut problems,
            ))
        }
        None => {
            problems.push(unknown_agent(task, profiles));
            None
        }
    };
    if let Err(e) = folder {
        problems.push(e);
    } else if let Some(mut plan) =
        plan.filter(|p| local && p.argv.first().is_some_and(|a| !a.is_empty()))
    {
        // The program is looked for when its own name rendered (its other items need not).
        if let Err(e) = resolve_program(&mut plan) {
            problems.push(e);
        }
    }
    problems
}

fn unknown_agent(task: &TaskSpec, profiles: &ProfileSet) -> LaunchError {
    LaunchError::UnknownAgent {
        agent: task.agent.clone(),
        known: profiles.names().map(str::to_string).collect(),
    }
}

mod check;
pub use check::find_program;
mod render;

use render::render_all;

pub use check::check_launch;
use check::{check_folder, resolve_program};

#[cfg(test)]
mod tests;
