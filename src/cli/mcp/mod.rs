//! `herd mcp --tasks FILE`: an MCP server over stdio (the official Rust SDK, `rmcp`) whose tools
//! list, read, add, change and run the file's tasks, wait for them, answer their permission
//! prompts and explain their attempts, with herd's own verdicts (`tools` the tools as data,
//! `server` the protocol side, `files` the tasks file when no herd runs it, `background` the
//! herd `run_agent` starts).
//!
//! Standard output is the protocol's: nothing else may be printed there.

mod arguments;
mod background;
mod files;
mod live;
mod server;
mod tools;

use color_eyre::eyre::{Result, WrapErr};
use rmcp::ServiceExt;

use super::args::McpArgs;
use super::inputs::{EXIT_INVALID, default_runs_dir};
use files::Setup;
use server::HerdServer;

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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .wrap_err("cannot start the MCP server's runtime")?;
    runtime.block_on(async {
        let service = HerdServer::new(setup)
            .serve(rmcp::transport::stdio())
            .await
            .wrap_err("the MCP client did not initialize the session")?;
        service.waiting().await.wrap_err("the MCP server stopped")?;
        Ok::<_, color_eyre::Report>(())
    })?;
    Ok(0)
}

/// Why `tasks` cannot be the server's tasks file, if it cannot. A file that does not exist yet
/// is fine (an empty queue; the first `add_task` creates it) as long as its folder exists.
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
