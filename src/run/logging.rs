//! herd's own log, `<runs dir>/herd.log`, never the screen. `HERD_LOG` sets the filter.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Starts logging to `runs_dir/herd.log` (keep the guard alive). Best effort: no log is no
/// failure.
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
