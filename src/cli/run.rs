//! `herd run`: checks the tasks file and profiles, then drives the batch through the engine,
//! with the dashboard on a terminal or headless otherwise. Maps the outcome to an exit code.

use std::io::IsTerminal;

use color_eyre::eyre::{Result, WrapErr};
use tokio::sync::mpsc;

use super::args::RunArgs;
use super::inputs::{
    EXIT_CANNOT_GO_ON, EXIT_INVALID, default_runs_dir, load_profiles, print_problems,
    store_problems,
};
use crate::run::engine::{Engine, EngineOptions};
use crate::run::store::TaskStore;
use crate::run::validate;

pub(super) fn run(args: &RunArgs) -> Result<i32> {
    let (before, after) = crate::run::limits::raise_open_file_limit();
    tracing::debug!(?before, ?after, "open-file limit");
    let profiles = match load_profiles(args.tasks.profiles.as_deref()) {
        Ok(p) => p,
        Err(problems) => {
            print_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let hosts =
        match super::hosts::load_hosts(args.tasks.hosts.as_deref(), args.tasks.profiles.as_deref())
        {
            Ok(hosts) => hosts,
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
    let blocking = validate::file_problems(store.file());
    if !blocking.is_empty() {
        for p in &blocking {
            eprintln!("{}", p.line(store.path()));
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
        hosts,
    };
    let _log_guard = crate::run::logging::init(&opts.runs_dir);
    tracing::info!(tasks = %args.tasks.tasks.display(), concurrency = opts.concurrency, "herd run starts");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    let notify = args
        .notify
        .as_ref()
        .map(|line| vec!["sh".to_string(), "-c".to_string(), line.clone()]);
    let outcome = runtime.block_on(async move {
        let (tx, rx) = mpsc::channel(1024);
        let mut engine = Engine::new(store, profiles, opts, tx, crate::run::clock::Now::read())?;
        engine.set_notify_command(notify);
        if headless {
            crate::run::headless::run(engine, rx).await
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
