//! herd's own log: a file beside the recordings (`<runs dir>/herd.log`), never the screen, so
//! it cannot garble the dashboard. `HERD_LOG` sets the filter (default `info`).

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Starts logging to `runs_dir/herd.log`; keep the guard alive for the run so lines are flushed.
/// Logging is best effort: a folder that cannot be written means no log, not a failed run.
pub fn init(runs_dir: &Path) -> Option<WorkerGuard> {
    // Private, as everything under it (`runs_dir`).
    super::safe_fs::private_dir(runs_dir).ok()?;
    // Never through a link planted as `herd.log` (see `safe_fs`).
    let file = super::safe_fs::append_file(&runs_dir.join("herd.log")).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = EnvFilter::try_from_env("HERD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .ok()?;
    Some(guard)
}
