//! `herd validate`: every problem of a tasks file and the profiles it uses, as
//! `FILE:LINE:COL: message` lines; reads the file, never writes it.

use std::path::Path;

use color_eyre::eyre::Result;

use super::args::TasksArgs;
use super::inputs::{EXIT_INVALID, default_runs_dir, load_profiles, print_problems};
use crate::core::taskfile::TaskFile;
use crate::run::launch::{self, LaunchContext};
use crate::run::store;

pub fn validate(args: &TasksArgs) -> Result<i32> {
    let mut problems = Vec::new();
    let profiles = match load_profiles(args.profiles.as_deref()) {
        Ok(p) => Some(p),
        Err(mut errors) => {
            problems.append(&mut errors);
            None
        }
    };
    let hosts = match super::hosts::load_hosts(args.hosts.as_deref(), args.profiles.as_deref()) {
        Ok(hosts) => hosts,
        Err(mut errors) => {
            problems.append(&mut errors);
            crate::core::hosts::HostSet::default()
        }
    };
    let text = match std::fs::read_to_string(&args.tasks) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{}: cannot read the tasks file: {e}", args.tasks.display());
            return Ok(EXIT_INVALID);
        }
    };
    let path = args.tasks.display().to_string();
    let file = match TaskFile::parse(&text) {
        Ok(file) => file,
        Err(errors) => {
            problems.extend(errors.iter().map(|p| store::format_problem(&args.tasks, p)));
            print_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    problems.extend(
        file.problems()
            .iter()
            .map(|p| store::format_problem(&args.tasks, p)),
    );
    if let Some(profiles) = &profiles {
        let base = default_runs_dir(&args.tasks);
        let base_dir = base.parent().unwrap_or(Path::new("."));
        for (index, task) in file.tasks().iter().enumerate() {
            // A task whose fields are already reported is not rendered again.
            if file
                .problems()
                .iter()
                .any(|p| p.task_id.as_deref() == Some(task.task_id.as_str()))
            {
                continue;
            }
            if let Some(profile) = profiles.get(&task.agent) {
                for (key, message) in
                    crate::core::approval::unknown_switches(&task.permission_policy, profile)
                {
                    let place = file
                        .key_location(index, "permission_policy", &key)
                        .map(|l| format!("{path}:{l}"))
                        .unwrap_or_else(|| path.clone());
                    problems.push(format!("{place}: task \"{}\": {message}", task.task_id));
                }
            }
            let run_dir = base.join(&task.task_id);
            let ctx = LaunchContext {
                base_dir,
                run_id: file.run_id(),
                attempt: task.attempts + 1,
                run_dir: &run_dir,
            };
            if let Some(message) = crate::run::remote::task_problem(task, &hosts) {
                let place = file
                    .location(index, Some("host"))
                    .map(|l| format!("{path}:{l}"))
                    .unwrap_or_else(|| path.clone());
                problems.push(format!("{place}: task \"{}\": {message}", task.task_id));
            }
            // On a host, the folder and the program are the host's: they are probed there.
            let prepared = match &task.host {
                Some(_) => launch::render(task, profiles, &ctx).map(|_| ()),
                None => launch::prepare(task, profiles, &ctx).map(|_| ()),
            };
            if let Err(message) = prepared {
                let field = guess_field(&message);
                let at = file
                    .location(index, field)
                    .or_else(|| file.location(index, None));
                let place = at
                    .map(|l| format!("{path}:{l}"))
                    .unwrap_or_else(|| path.clone());
                problems.push(format!("{place}: task \"{}\": {message}", task.task_id));
            }
        }
    }
    if problems.is_empty() {
        println!("{path}: {} tasks, no problems", file.tasks().len());
        Ok(0)
    } else {
        print_problems(&problems);
        eprintln!(
            "{} problem{} found",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" }
        );
        Ok(EXIT_INVALID)
    }
}

/// The task field a launch problem is about, to point at it.
fn guess_field(message: &str) -> Option<&'static str> {
    const PREFIXES: [(&str, &str); 8] = [
        ("agent \"", "agent"),
        ("\"completion\"", "completion"),
        ("prompt_template", "prompt_template"),
        ("prompt_file", "prompt_file"),
        ("completion_marker", "completion_marker"),
        ("cwd ", "cwd"),
        ("env ", "env"),
        ("command", "command"),
    ];
    PREFIXES
        .into_iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map(|(_, field)| field)
        .or_else(|| message.contains("command").then_some("command"))
}
