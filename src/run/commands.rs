//! The commands behind the command line: run, validate, status, profiles, replay, sim.
//! Loads inputs, reports problems as `FILE:LINE:COL: message`, and maps outcomes to exit codes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use color_eyre::eyre::{Result, WrapErr};
use tokio::sync::mpsc;

use super::engine::{Engine, EngineOptions};
use super::launch::{self, LaunchContext};
use super::store::{self, StoreError, TaskStore};
use super::summary;
use crate::cli::{Cli, Command, ProfilesArgs, RunArgs, StatusArgs, TasksArgs};
use crate::core::profile::{ProfileError, ProfileSet};
use crate::core::taskfile::TaskFile;

/// Exit code for invalid input: nothing was started, nothing was written.
pub const EXIT_INVALID: i32 = 2;
/// herd itself cannot go on: it cannot write the tasks file or its recordings.
pub const EXIT_CANNOT_GO_ON: i32 = 3;

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Sim(args) => crate::sim::run(&args),
        Command::AcpClient(args) => Ok(crate::run::acp::run(crate::run::acp::ClientArgs {
            command: args.command,
        })),
        other => {
            color_eyre::install()?;
            match other {
                Command::Run(args) => run(&args),
                Command::Validate(args) => validate(&args),
                Command::Status(args) => status(&args),
                Command::Profiles(args) => profiles(&args),
                Command::Replay(args) => crate::run::replay_cmd::replay(&args),
                Command::Explain(args) => crate::run::explain_cmd::explain(&args),
                Command::Message(args) => crate::run::message_cmd::message(&args),
                Command::Policy(args) => crate::run::policy_cmd::policy(&args),
                Command::Sim(_) | Command::AcpClient(_) => Ok(0),
            }
        }
    }
}

/// Built-in profiles plus the user's file; problems print as `FILE:LINE:COL: message`.
pub fn load_profiles(user: Option<&Path>) -> std::result::Result<ProfileSet, Vec<String>> {
    let user_text = match user {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) => {
                return Err(vec![format!(
                    "{}: cannot read the profiles file: {e}",
                    path.display()
                )]);
            }
        },
        None => None,
    };
    let built_in = crate::assets::built_in_profile_texts();
    ProfileSet::build(&built_in, user_text.as_deref()).map_err(|errors| {
        errors
            .iter()
            .map(|e: &ProfileError| {
                let file =
                    user.map_or("built-in profiles".to_string(), |p| p.display().to_string());
                match e.location {
                    Some(_) => format!("{file}:{e}"),
                    None => format!("{file}: {e}"),
                }
            })
            .collect()
    })
}

pub(crate) fn print_problems(problems: &[String]) {
    for p in problems {
        eprintln!("{p}");
    }
}

pub(crate) fn store_problems(error: &StoreError) -> Vec<String> {
    match error {
        StoreError::Invalid { path, problems } => problems
            .iter()
            .map(|p| store::format_problem(path, p))
            .collect(),
        other => vec![other.to_string()],
    }
}

fn default_runs_dir(tasks: &Path) -> PathBuf {
    tasks
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("runs")
}

fn run(args: &RunArgs) -> Result<i32> {
    let (before, after) = super::limits::raise_open_file_limit();
    tracing::debug!(?before, ?after, "open-file limit");
    let profiles = match load_profiles(args.tasks.profiles.as_deref()) {
        Ok(p) => p,
        Err(problems) => {
            print_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let store = match TaskStore::open(&args.tasks.tasks) {
        Ok(store) => store,
        Err(e) => {
            print_problems(&store_problems(&e));
            return Ok(EXIT_INVALID);
        }
    };
    if !store.file().problems().is_empty() {
        for p in store.file().problems() {
            eprintln!("{}", store::format_problem(store.path(), p));
        }
        eprintln!(
            "herd: the tasks file has problems; nothing was started and the file is unchanged (see herd validate)"
        );
        return Ok(EXIT_INVALID);
    }
    for id in &args.only {
        if store.file().task_index(id).is_none() {
            eprintln!(
                "herd: --only {id}: no task has this task_id in {}",
                args.tasks.tasks.display()
            );
            return Ok(EXIT_INVALID);
        }
    }
    let runs_dir = match &args.runs_dir {
        Some(dir) => dir.clone(),
        None => default_runs_dir(store.path()),
    };
    let runs_dir = std::path::absolute(&runs_dir).unwrap_or(runs_dir);
    let headless = args.headless || !std::io::stdout().is_terminal();
    let mouse = !args.no_mouse;
    let (cols, rows) = args.pty_size;
    let opts = EngineOptions {
        concurrency: usize::from(args.concurrency),
        rows,
        cols,
        runs_dir,
        only: args.only.clone(),
        operator_present: !headless,
    };
    let _log_guard = super::logging::init(&opts.runs_dir);
    tracing::info!(tasks = %args.tasks.tasks.display(), concurrency = opts.concurrency, "herd run starts");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    let outcome = runtime.block_on(async move {
        let (tx, rx) = mpsc::channel(1024);
        let engine = Engine::new(store, profiles, opts, tx)?;
        if headless {
            super::headless::run(engine, rx).await
        } else {
            crate::ui::run(engine, rx, mouse).await
        }
    });
    match outcome {
        Ok(code) => Ok(code),
        // The engine already ended the agents and wrote their tasks back where it could.
        Err(error) => {
            eprintln!("herd: {error:#}");
            Ok(EXIT_CANNOT_GO_ON)
        }
    }
}

fn validate(args: &TasksArgs) -> Result<i32> {
    let mut problems = Vec::new();
    let profiles = match load_profiles(args.profiles.as_deref()) {
        Ok(p) => Some(p),
        Err(mut errors) => {
            problems.append(&mut errors);
            None
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
            if let Err(message) = launch::prepare(task, profiles, &ctx) {
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

fn status(args: &StatusArgs) -> Result<i32> {
    let store = match TaskStore::read_only(&args.tasks.tasks) {
        Ok(store) => store,
        Err(e) => {
            print_problems(&store_problems(&e));
            return Ok(EXIT_INVALID);
        }
    };
    let file = store.file();
    let all: Vec<usize> = (0..file.tasks().len()).collect();
    if args.json {
        let rows: Vec<serde_json::Value> = file.tasks().iter().map(summary::row).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", summary::table_for(file, &all));
    }
    Ok(0)
}

fn profiles(args: &ProfilesArgs) -> Result<i32> {
    let set = match load_profiles(args.profiles.as_deref()) {
        Ok(p) => p,
        Err(problems) => {
            print_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    if let Some(name) = &args.name {
        let Some(profile) = set.get(name) else {
            let known: Vec<&str> = set.names().collect();
            eprintln!(
                "herd: no profile named {name:?}; known: {}",
                known.join(", ")
            );
            return Ok(EXIT_INVALID);
        };
        print!("{}", super::profiles_view::describe_full(profile));
    } else {
        print!("{}", super::profiles_view::describe_all(&set));
    }
    Ok(0)
}
