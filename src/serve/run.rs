//! A batch served to its end: the engine built on the accepted inputs, the run's control
//! socket opened, the face chosen (the dashboard, handed in by `cli` so this floor never imports
//! `ui`, on a terminal; headless otherwise) and run by
//! the driver's loop on a one-thread runtime, and how the run ended recorded for `herd attach`
//! and `herd status`. The inputs are checked before (`cli::run`); nothing here parses
//! arguments or chooses exit codes for problems with them.

use color_eyre::eyre::{Result, WrapErr};
use tokio::sync::mpsc;

use super::driver::Driver;
use crate::core::profile::ProfileSet;
use crate::run::console::note;
use crate::run::engine::{Engine, EngineOptions};
use crate::run::rendezvous::RunMode;
use crate::run::store::TaskStore;
use crate::serve::control::ControlLink;

/// A run whose inputs were accepted.
pub struct Run {
    pub store: TaskStore,
    pub profiles: ProfileSet,
    pub opts: EngineOptions,
    /// The operator's `notify` command line, run through `sh -c`.
    pub notify: Option<String>,
    /// No dashboard: one line per event on stdout.
    pub headless: bool,
    /// The dashboard takes clicks and the wheel.
    pub mouse: bool,
    /// `--web [ADDR]`: the web view, on ADDR or its default.
    pub web: Option<Option<String>>,
}

/// Serves `run` to its end; herd's exit code.
pub fn serve<D, F>(run: Run, dashboard: D) -> Result<i32>
where
    D: FnOnce(Engine, Driver, bool) -> F,
    F: std::future::Future<Output = Result<i32>>,
{
    // One thread: the loop is the runtime's only task (workers are threads of their own), so
    // it waits in the runtime's driver itself; with worker threads every timer woke a worker
    // that then woke the loop, two switches instead of one (#29).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    runtime.block_on(drive(run, dashboard))
}

/// The batch driven to its end by the engine, through the dashboard or headless, with the
/// run's control socket; the exit code.
async fn drive<D, F>(run: Run, dashboard: D) -> Result<i32>
where
    D: FnOnce(Engine, Driver, bool) -> F,
    F: std::future::Future<Output = Result<i32>>,
{
    let notify = run
        .notify
        .map(|line| vec!["sh".to_string(), "-c".to_string(), line]);
    let tasks_path = run.store.path().to_path_buf();
    let runs_dir = run.opts.runs_dir.clone();
    let (tx, rx) = mpsc::channel(1024);
    let now = crate::run::clock::Now::read();
    let mut engine = Engine::new(run.store, run.profiles, run.opts, tx, now)?;
    engine.set_notify_command(notify);
    let mode = if run.headless {
        RunMode::Headless
    } else if crate::serve::background::in_background() {
        RunMode::Background
    } else {
        RunMode::Dashboard
    };
    let control = control_socket(&tasks_path, &runs_dir, mode, run.headless);
    let mut driver = Driver::new(rx, control);
    if let Some(addr) = &run.web {
        let started = driver.start_web(&mut engine, addr.as_deref());
        let started = started.map_err(|why| color_eyre::eyre::eyre!("--web: {why}"))?;
        // A background run's output is a log: the token is printed by `--detach` instead.
        if mode != RunMode::Background {
            note(&crate::serve::web::announcement(
                &started.url,
                &started.login_url,
                started.local,
            ));
        }
    }
    let started_at = jiff::Timestamp::now();
    let code = if run.headless {
        super::headless::run(engine, driver).await
    } else {
        dashboard(engine, driver, run.mouse).await
    }?;
    let log_file = match mode {
        RunMode::Background => runs_dir.join("background.log"),
        _ => runs_dir.join("herd.log"),
    };
    let end = crate::run::last_run::RunEnd {
        tasks: std::path::absolute(&tasks_path).unwrap_or(tasks_path.clone()),
        mode,
        started_at: started_at.to_string(),
        ended_at: jiff::Timestamp::now().to_string(),
        exit_code: code,
        log_file,
    };
    // For `herd attach` and `herd status` after the end; the run's result does not depend on it.
    if let Err(error) = end.write(&runs_dir) {
        tracing::warn!("cannot record how the run ended: {error}");
    }
    Ok(code)
}

/// The run's control socket (`serve::control`); a run goes on without one when it cannot be made
/// (said on stderr before a headless run's first line, always in `runs/herd.log`).
fn control_socket(
    tasks: &std::path::Path,
    runs_dir: &std::path::Path,
    mode: RunMode,
    headless: bool,
) -> Option<ControlLink> {
    match crate::serve::control::start(tasks, runs_dir, mode) {
        Ok(link) => Some(link),
        Err(error) => {
            tracing::warn!("no control socket for this run: {error}");
            if headless {
                note(&format!(
                    "herd: no control socket for this run (herd ctl cannot reach it): {error}"
                ));
            }
            None
        }
    }
}
