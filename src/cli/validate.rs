//! `herd validate`: every problem of a tasks file and what it uses, as `FILE:LINE:COL: message`
//! lines, from the validator `herd run` uses too. Never writes the file.

use std::path::Path;

use color_eyre::eyre::Result;

use super::args::TasksArgs;
use super::inputs::{EXIT_INVALID, print_problems};
use crate::core::taskfile::TaskFile;
use crate::run::inputs::{default_runs_dir, load_profiles};
use crate::run::launch::AddedInstruction;
use crate::run::store;
use crate::run::validate::{self, Checks};

pub(super) fn validate(args: &TasksArgs) -> Result<i32> {
    let mut problems = Vec::new();
    let profiles = match load_profiles(args.profiles.as_deref()) {
        Ok(p) => Some(p),
        Err(mut errors) => {
            problems.append(&mut errors);
            None
        }
    };
    let hosts =
        match crate::run::inputs::load_hosts(args.hosts.as_deref(), args.profiles.as_deref()) {
            Ok(hosts) => hosts,
            Err(mut errors) => {
                problems.append(&mut errors);
                crate::core::remote::hosts::HostSet::default()
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
    let runs_dir = default_runs_dir(&args.tasks);
    let checks = Checks {
        profiles: profiles.as_ref(),
        hosts: &hosts,
        base_dir: runs_dir.parent().unwrap_or(Path::new(".")),
        runs_dir: &runs_dir,
    };
    problems.extend(
        validate::check(&file, &checks)
            .iter()
            .map(|p| p.line(&args.tasks)),
    );
    for line in instruction_lines(&path, &validate::added_instructions(&file, &checks)) {
        println!("{line}");
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

/// What herd adds to prompts: a line per kind of instruction, with the tasks whose prompts do
/// not ask for it themselves.
fn instruction_lines(path: &str, added: &[(String, AddedInstruction)]) -> Vec<String> {
    let (marker, signal): (Vec<_>, Vec<_>) = added
        .iter()
        .partition(|(_, instruction)| *instruction == AddedInstruction::Marker);
    let ids = |tasks: &[&(String, AddedInstruction)]| {
        tasks
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let count = |n: usize| format!("{n} task{}", if n == 1 { "" } else { "s" });
    let mut lines = Vec::new();
    if !marker.is_empty() {
        lines.push(format!(
            "{path}: note: herd adds \"When complete, print exactly: <the task's marker>\" to the \
             prompt of {} ({}); \"marker_instruction\": false leaves a prompt as written",
            count(marker.len()),
            ids(&marker)
        ));
    }
    if !signal.is_empty() {
        lines.push(format!(
            "{path}: note: herd adds how to write the signal file to the prompt of {} ({}); \
             \"marker_instruction\": false leaves a prompt as written",
            count(signal.len()),
            ids(&signal)
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tasks_that_get_an_instruction_are_named_once_per_kind() {
        let added = [
            ("a".to_string(), AddedInstruction::Marker),
            (
                "s".to_string(),
                AddedInstruction::SignalFile("/r/s.json".into()),
            ),
            ("b".to_string(), AddedInstruction::Marker),
        ];
        let lines = instruction_lines("t.json", &added);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("t.json: note: herd adds \"When complete, print exactly: ")
                && lines[0].contains("prompt of 2 tasks (a, b)"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("signal file to the prompt of 1 task (s)"),
            "{lines:?}"
        );
        assert!(instruction_lines("t.json", &[]).is_empty());
    }
}
