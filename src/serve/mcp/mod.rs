//! `herd mcp --tasks FILE`: an MCP server over stdio (the official Rust SDK, `rmcp`) whose tools
//! list, read, add, change and run the file's tasks, wait for them, answer their permission
//! prompts and explain their attempts, with herd's own verdicts (`tools` the tools as data,
//! `server` the protocol side, `files` the tasks file when no herd runs it, `background` the
//! herd `run_agent` starts, `live` a running herd's control socket).
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

pub use files::Setup;
use server::HerdServer;

/// Serves the MCP protocol on stdio for `setup`'s tasks file until the client leaves.
pub fn serve(setup: Setup) -> Result<()> {
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
    })
}
