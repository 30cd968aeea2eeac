//! The one check of a tasks file that `herd validate` and `herd run` share: every problem of
//! every task with its place and field, none hidden by another or said twice. `herd run` refuses
//! the file's own problems; a task's launch problems make it `failed_config` at its turn, so
//! `validate` lists them first.

use std::collections::HashSet;
use std::path::Path;

use crate::core::profile::ProfileSet;
use crate::core::remote::hosts::HostSet;
use crate::core::taskfile::json_pos::Location;
use crate::core::taskfile::{self, TaskFile};

use super::launch::{self, AddedInstruction, LaunchContext, LaunchError};

/// One problem, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The file itself: its JSON, a field's type or value, task ids.
    File(taskfile::Problem),
    /// A task's `permission_policy` switch that names no prompt rule of its profile.
    Switch {
        task_id: String,
        location: Option<Location>,
        message: String,
    },
    /// A task's `host` that is unknown, unreachable, or cannot do what the task needs.
    Host {
        task_id: String,
        location: Option<Location>,
        message: String,
    },
    /// Something that keeps the task from being launched as written.
    Launch {
        task_id: String,
        location: Option<Location>,
        error: LaunchError,
    },
}

impl Problem {
    /// Whether `herd run` refuses to start over it (the others fail their task alone).
    pub fn blocks_run(&self) -> bool {
        matches!(self, Problem::File(_))
    }

    /// The task it is about, when it is about one.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Problem::File(p) => p.task_id.as_deref(),
            Problem::Switch { task_id, .. }
            | Problem::Host { task_id, .. }
            | Problem::Launch { task_id, .. } => Some(task_id),
        }
    }

    /// `FILE:LINE:COL: task "id": message`.
    pub fn line(&self, path: &Path) -> String {
        let (location, task_id, message) = match self {
            Problem::File(p) => return super::store::format_problem(path, p),
            Problem::Switch {
                task_id,
                location,
                message,
            }
            | Problem::Host {
                task_id,
                location,
                message,
            } => (location, task_id, message.clone()),
            Problem::Launch {
                task_id,
                location,
                error,
            } => (location, task_id, error.to_string()),
        };
        let place = match location {
            Some(at) => format!("{}:{at}", path.display()),
            None => path.display().to_string(),
        };
        format!("{place}: task \"{task_id}\": {message}")
    }
}

/// What the tasks are checked against.
#[derive(Debug, Clone, Copy)]
pub struct Checks<'a> {
    /// `None`: the profiles could not be loaded; launches are not checked.
    pub profiles: Option<&'a ProfileSet>,
    pub hosts: &'a HostSet,
    /// The tasks file's folder: relative `cwd`s are resolved against it.
    pub base_dir: &'a Path,
    /// Where the recordings go (`HERD_RUN_DIR` of each task is below it).
    pub runs_dir: &'a Path,
}

/// The problems of the file itself, in the order of the text: what `herd run` refuses over.
pub fn file_problems(file: &TaskFile) -> Vec<Problem> {
    file.problems().iter().cloned().map(Problem::File).collect()
}

/// Every problem of every task: the file's, then per task its switches, host and launch.
pub fn check(file: &TaskFile, checks: &Checks<'_>) -> Vec<Problem> {
    let mut problems = file_problems(file);
    let Some(profiles) = checks.profiles else {
        return problems;
    };
    for (index, task) in file.tasks().iter().enumerate() {
        // Fields the file already got wrong: what their defaults would launch is not news.
        let reported: HashSet<&str> = file
            .problems()
            .iter()
            .filter(|p| p.task_id.as_deref() == Some(task.task_id.as_str()))
            .filter_map(|p| p.field.as_deref())
            .collect();
        let at = |field: &str| {
            file.location(index, Some(field))
                .or_else(|| file.location(index, None))
        };
        if let Some(profile) = profiles.get(&task.agent)
            && !reported.contains("permission_policy")
        {
            for (key, message) in
                crate::core::approval::unknown_switches(&task.permission_policy, profile)
            {
                problems.push(Problem::Switch {
                    task_id: task.task_id.clone(),
                    location: file
                        .key_location(index, "permission_policy", &key)
                        .or_else(|| at("permission_policy")),
                    message,
                });
            }
        }
        if !reported.contains("host")
            && let Some(message) = super::remote::task_problem(task, checks.hosts)
        {
            problems.push(Problem::Host {
                task_id: task.task_id.clone(),
                location: at("host"),
                message,
            });
        }
        let run_dir = checks.runs_dir.join(&task.task_id);
        let ctx = next_attempt(file, checks, task, &run_dir);
        for error in launch::problems(task, profiles, &ctx) {
            if error.field().is_some_and(|f| reported.contains(f)) {
                continue;
            }
            problems.push(Problem::Launch {
                task_id: task.task_id.clone(),
                location: error.field().map_or_else(|| file.location(index, None), at),
                error,
            });
        }
    }
    problems
}

/// How a task's next attempt would be launched here, for checking and rendering it.
fn next_attempt<'a>(
    file: &'a TaskFile,
    checks: &Checks<'a>,
    task: &crate::core::task::TaskSpec,
    run_dir: &'a Path,
) -> LaunchContext<'a> {
    LaunchContext {
        base_dir: checks.base_dir,
        run_id: file.run_id(),
        attempt: task.attempts + 1,
        run_dir,
        cwd: None,
        hook_settings: None,
    }
}

/// The tasks whose next prompt herd completes with the completion instruction, and which one
/// (it is not in the file); tasks that cannot render are left out.
pub fn added_instructions(file: &TaskFile, checks: &Checks<'_>) -> Vec<(String, AddedInstruction)> {
    let Some(profiles) = checks.profiles else {
        return Vec::new();
    };
    file.tasks()
        .iter()
        .filter_map(|task| {
            let run_dir = checks.runs_dir.join(&task.task_id);
            let ctx = next_attempt(file, checks, task, &run_dir);
            let plan = launch::render(task, profiles, &ctx).ok()?;
            Some((task.task_id.clone(), plan.added_instruction?))
        })
        .collect()
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
