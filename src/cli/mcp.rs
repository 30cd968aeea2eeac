//! `herd mcp --tasks FILE`: its arguments checked, then the MCP server (`serve::mcp`) on stdio.

use color_eyre::eyre::Result;

use super::args::McpArgs;
use super::inputs::EXIT_INVALID;
use crate::run::inputs::default_runs_dir;
use crate::serve::mcp::{self, Setup};

pub(super) fn mcp(args: &McpArgs) -> Result<i32> {
    let tasks = &args.tasks.tasks;
    if let Some(problem) = unusable_tasks_path(tasks) {
        eprintln!("herd mcp: {}: {problem}", tasks.display());
        return Ok(EXIT_INVALID);
    }
    let setup = Setup {
        tasks: tasks.clone(),
        profiles: args.tasks.profiles.clone(),
        hosts: args.tasks.hosts.clone(),
        runs_dir: args
            .runs_dir
            .clone()
            .unwrap_or_else(|| default_runs_dir(tasks)),
    };
    mcp::serve(setup)?;
    Ok(0)
}

/// Why `tasks` cannot be the server's tasks file, if it cannot; a missing file is fine as long
/// as its folder exists (the first `add_task` creates it).
fn unusable_tasks_path(tasks: &std::path::Path) -> Option<String> {
    match std::fs::metadata(tasks) {
        Ok(_) => None,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let folder = tasks
                .parent()
                .filter(|folder| !folder.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            match std::fs::metadata(folder) {
                Ok(meta) if meta.is_dir() => None,
                Ok(_) => Some(format!("{} is not a folder", folder.display())),
                Err(error) => Some(format!("its folder {}: {error}", folder.display())),
            }
        }
        Err(error) => Some(error.to_string()),
    }
}
