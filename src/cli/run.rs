//! `herd run`: checks the tasks file and profiles, then hands the batch to `serve::run`, with
//! the dashboard on a terminal or headless otherwise. Maps the outcome to an exit code.

use std::io::IsTerminal;

use color_eyre::eyre::Result;

use super::args::RunArgs;
use super::inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID, loaded};
use crate::core::batch::rerun::{self, RetryPlan};
use crate::run::console::note;
use crate::run::engine::EngineOptions;
use crate::run::inputs::{default_runs_dir, load_profiles, store_problems};
use crate::run::store::TaskStore;
use crate::run::validate;
use crate::serve::run::Run;

pub(super) fn run(args: &RunArgs) -> Result<i32> {
    let (before, after) = crate::run::limits::raise_open_file_limit();
    tracing::debug!(?before, ?after, "open-file limit");
    let Some(Accepted {
        profiles,
        hosts,
        mut store,
        retries,
    }) = accept_inputs(args)
    else {
        return Ok(EXIT_INVALID);
    };
    let runs_dir = match &args.runs_dir {
        Some(dir) => dir.clone(),
        None => default_runs_dir(store.path()),
    };
    let runs_dir = std::path::absolute(&runs_dir).unwrap_or(runs_dir);
    // From here on the input is accepted: runs/ is made (private) and the tasks file changes.
    let tightened = crate::run::runs_dir::prepare(
        &runs_dir,
        store.file().tasks().iter().map(|t| t.task_id.as_str()),
    );
    let _log_guard = crate::run::logging::init(&runs_dir);
    tracing::info!(tasks = %args.tasks.tasks.display(), concurrency = args.concurrency, "herd run starts");
    match tightened {
        Ok(0) => {}
        Ok(n) => {
            tracing::info!(runs = %runs_dir.display(), "made {n} recordings of an older herd private (no group or other access)")
        }
        Err(error) => tracing::warn!("cannot make the recordings folder private: {error}"),
    }
    apply_retries(&mut store, &retries);
    explain_only(&store, &args.only);
    let headless = args.headless || !std::io::stdout().is_terminal();
    let (cols, rows) = args.pty_size;
    let opts = EngineOptions {
        concurrency: usize::from(args.concurrency),
        rows,
        cols,
        runs_dir,
        only: args.only.clone(),
        operator_present: !headless,
        hosts,
        record_input: args.record_input,
    };
    let run = Run {
        store,
        profiles,
        opts,
        notify: args.notify.clone(),
        headless,
        mouse: !args.no_mouse,
        web: args.web.clone(),
    };
    // The dashboard is the face above the floor: handed down, so `serve` never imports `ui`.
    let outcome = crate::serve::run::serve(run, crate::ui::run);
    match outcome {
        Ok(code) => Ok(code),
        // The engine already ended the agents and wrote their tasks back where it could.
        Err(error) => {
            note(&format!("herd: {error:#}"));
            Ok(EXIT_CANNOT_GO_ON)
        }
    }
}

/// The inputs of a run once every check passed.
struct Accepted {
    profiles: crate::core::profile::ProfileSet,
    hosts: crate::core::remote::hosts::HostSet,
    store: TaskStore,
    retries: RetryPlan,
}

/// The profiles, hosts and tasks file `args` name, checked; `None` when one has a problem (said
/// on stderr): nothing may start.
fn accept_inputs(args: &RunArgs) -> Option<Accepted> {
    let profiles = loaded(load_profiles(args.tasks.profiles.as_deref()))?;
    let hosts = loaded(crate::run::inputs::load_hosts(
        args.tasks.hosts.as_deref(),
        args.tasks.profiles.as_deref(),
    ))?;
    let store = loaded(TaskStore::open(&args.tasks.tasks).map_err(|e| store_problems(&e)))?;
    if !tasks_file_accepted(&store, args) {
        return None;
    }
    let retries = match rerun::plan_retries(store.file().tasks(), &args.retry, &args.only) {
        Ok(plan) => plan,
        Err(problems) => {
            for problem in &problems {
                note(&format!("herd: {problem}"));
            }
            note("herd: nothing was started and the tasks file is unchanged");
            return None;
        }
    };
    Some(Accepted {
        profiles,
        hosts,
        store,
        retries,
    })
}

/// Whether the tasks file can run and has every task `--only` names; problems go to stderr.
fn tasks_file_accepted(store: &TaskStore, args: &RunArgs) -> bool {
    let blocking = validate::file_problems(store.file());
    if !blocking.is_empty() {
        for p in &blocking {
            note(&p.line(store.path()));
        }
        note(
            "herd: the tasks file has problems; nothing was started and the file is unchanged (see herd validate)",
        );
        return false;
    }
    for id in &args.only {
        if store.file().task_index(id).is_none() {
            note(&format!(
                "herd: --only {id}: no task has this task_id in {}",
                args.tasks.tasks.display()
            ));
            return false;
        }
    }
    true
}

/// `--retry`: each task goes back to `pending` with a fresh retry budget and no retry wait, in
/// the tasks file and in `runs/herd.log`; the notes go to stderr.
fn apply_retries(store: &mut TaskStore, plan: &RetryPlan) {
    for said in &plan.notes {
        note(&format!("herd: {said}"));
    }
    for reset in &plan.resets {
        reset.apply(store.file_mut());
        let what = reset.describe();
        tracing::info!(task = %reset.task_id, "--retry {what}");
        note(&format!("herd: --retry {what}"));
    }
}

/// `--only`: says which of the tasks it names will not run, and why, before the run starts.
fn explain_only(store: &TaskStore, only: &[String]) {
    for id in only {
        let Some(task) = store
            .file()
            .task_index(id)
            .map(|i| &store.file().tasks()[i])
        else {
            continue;
        };
        if let Some(why) = rerun::why_it_will_not_run(task) {
            tracing::info!(task = %id, "--only: {why}");
            note(&format!("herd: --only {id}: {why}"));
        }
    }
}
