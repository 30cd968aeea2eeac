//! `herd validate`: every problem of a tasks file and the profiles and hosts it uses, as
//! `FILE:LINE:COL: message` lines, from the validator `herd run` uses too (`run::validate`);
//! reads the file, never writes it.

use std::path::Path;

use color_eyre::eyre::Result;

use super::args::TasksArgs;
use super::inputs::{EXIT_INVALID, default_runs_dir, load_profiles, print_problems};
use crate::core::taskfile::TaskFile;
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
    let hosts = match super::hosts::load_hosts(args.hosts.as_deref(), args.profiles.as_deref()) {
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
