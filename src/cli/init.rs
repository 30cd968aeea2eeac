//! `herd init`: writes a starter tasks file for the agent CLIs found on PATH (or named with
//! `--agent`); never overwrites one without `--force`, and says what to do next.

use std::io::Write;
use std::path::Path;

use color_eyre::eyre::{Result, WrapErr};

use super::args::InitArgs;
use super::inputs::{EXIT_INVALID, loaded};
use crate::core::profile::ProfileSet;
use crate::core::profile::folder_trust::trusted_cli;
use crate::core::taskfile::starter::{StarterAgent, StarterPlan, starter_file};
use crate::run::inputs::load_profiles;
use crate::run::launch::find_program;

/// The CLIs a starter file is for when none is named, in this order.
const USUAL_AGENTS: &[&str] = &["claude", "codex", "gemini"];
/// The agent when none of `USUAL_AGENTS` is installed: herd's own simulator.
const FALLBACK_AGENT: &str = "sim";

pub(super) fn init(args: &InitArgs) -> Result<i32> {
    if args.tasks.exists() && !args.force {
        eprintln!(
            "{}: already exists; herd init does not overwrite it (add --force to replace it, or \
             name another file with --tasks)",
            args.tasks.display()
        );
        return Ok(EXIT_INVALID);
    }
    let Some(profiles) = loaded(load_profiles(None)) else {
        return Ok(EXIT_INVALID);
    };
    let names = match chosen_agents(args, &profiles) {
        Ok(names) => names,
        Err(message) => {
            eprintln!("herd init: {message}");
            return Ok(EXIT_INVALID);
        }
    };
    let folder = folder_of(&args.tasks);
    let plan = StarterPlan {
        agents: names
            .iter()
            .map(|name| starter_agent(name, &profiles))
            .collect(),
        in_git_repository: in_git_repository(&folder),
        notify: desktop_notify(&folder),
    };
    let text = starter_file(&plan)?;
    write(&args.tasks, &text, args.force)?;
    report(args, &names, &profiles, &folder);
    Ok(0)
}

/// The agents named with `--agent`, else the usual CLIs on PATH, else the simulator.
fn chosen_agents(args: &InitArgs, profiles: &ProfileSet) -> Result<Vec<String>, String> {
    if !args.agents.is_empty() {
        if let Some(unknown) = args.agents.iter().find(|a| profiles.get(a).is_none()) {
            let known: Vec<&str> = profiles.names().collect();
            return Err(format!(
                "no agent profile named \"{unknown}\"; the profiles are: {}",
                known.join(", ")
            ));
        }
        let mut names: Vec<String> = Vec::new();
        for name in &args.agents {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        return Ok(names);
    }
    let found: Vec<String> = USUAL_AGENTS
        .iter()
        .filter(|name| is_installed(name, profiles))
        .map(|name| (*name).to_string())
        .collect();
    Ok(if found.is_empty() {
        vec![FALLBACK_AGENT.to_string()]
    } else {
        found
    })
}

/// Whether the program of profile `name` is on PATH.
fn is_installed(name: &str, profiles: &ProfileSet) -> bool {
    let Some(program) = profiles.get(name).and_then(|p| p.command.first()) else {
        return false;
    };
    let path = std::env::var_os("PATH");
    find_program(program, Path::new("."), path.as_deref()).is_some()
}

fn starter_agent(name: &str, profiles: &ProfileSet) -> StarterAgent {
    StarterAgent {
        profile: name.to_string(),
        trusts_folder: profiles
            .get(name)
            .is_some_and(|p| trusted_cli(p.hooks, p.agent_log).is_some()),
    }
}

/// The folder the tasks file is in (its tasks' `cwd` by default), as an absolute path.
fn folder_of(tasks: &Path) -> std::path::PathBuf {
    let parent = tasks
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::path::absolute(parent).unwrap_or_else(|_| parent.to_path_buf())
}

/// Whether `folder` or a folder above it holds `.git` (a folder, or a worktree's file).
fn in_git_repository(folder: &Path) -> bool {
    folder.ancestors().any(|dir| dir.join(".git").exists())
}

/// A desktop notification, when `notify-send` is installed here.
fn desktop_notify(folder: &Path) -> Option<Vec<String>> {
    let path = std::env::var_os("PATH");
    find_program("notify-send", folder, path.as_deref())?;
    Some(vec![
        "sh".into(),
        "-c".into(),
        "notify-send herd \"$HERD_MESSAGE\"".into(),
    ])
}

/// Writes `text` to `path`; without `force`, only as a new file (never over one that appeared
/// since the check).
fn write(path: &Path, text: &str, force: bool) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options
        .open(path)
        .wrap_err_with(|| format!("cannot write {}", path.display()))?;
    file.write_all(text.as_bytes())
        .wrap_err_with(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// What was written, for which agents, and the next commands.
fn report(args: &InitArgs, names: &[String], profiles: &ProfileSet, folder: &Path) {
    let tasks = args.tasks.display();
    println!("wrote {tasks}: two example tasks for {}", names.join(", "));
    if args.agents.is_empty() && names == [FALLBACK_AGENT] {
        println!(
            "  none of {} is on PATH: the tasks use herd's simulator (sim); install a CLI and run \
             herd init --force, or set \"agent\" in the file",
            USUAL_AGENTS.join(", ")
        );
    }
    for name in names.iter().filter(|n| !is_installed(n, profiles)) {
        if name != FALLBACK_AGENT {
            println!("  note: {name} is not on PATH; install it before running");
        }
    }
    if !in_git_repository(folder) {
        println!(
            "  worktree is off: {} is not in a git repository",
            folder.display()
        );
    }
    println!("  \"defaults\" holds the unattended preset; fields named // explain each part");
    println!("next: herd validate --tasks {tasks}");
    println!("      herd run --tasks {tasks}");
}
