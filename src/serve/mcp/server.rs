//! The MCP server (`rmcp`): `tools/list` gives `tools::all`, `tools/call` checks the arguments
//! (`tools::parse`) and carries the call out against the tasks file, through the running herd
//! when one runs it, else on the file itself (`files`, `background`). Every result is herd's own
//! data (rows of `serve::summary::row`, `herd explain`'s lines); every failure is a tool error
//! result that says what, why and how to fix it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::background::{self, RunningHerd, running_herd};
use super::files::{self, Setup};
use super::live;
use super::tools::{self, ToolCall, ToolError, WaitState};
use crate::core::task::TaskStatus;
use crate::run::jobs;

/// How often `wait_for` looks at the task again.
const WAIT_STEP: Duration = Duration::from_millis(200);

/// herd's MCP server for one tasks file.
#[derive(Debug, Clone)]
pub(super) struct HerdServer {
    setup: Arc<Setup>,
}

impl HerdServer {
    pub(super) fn new(setup: Setup) -> Self {
        HerdServer {
            setup: Arc::new(setup),
        }
    }

    /// Carries out one checked call.
    async fn call(&self, call: ToolCall) -> Result<Value, ToolError> {
        match call {
            ToolCall::WaitFor {
                task_id,
                states,
                timeout_sec,
            } => self.wait_for(&task_id, &states, timeout_sec).await,
            other => {
                let server = self.clone();
                jobs::blocking("mcp-call", move || server.call_blocking(other))
                    .await
                    .map_err(|error| {
                        ToolError::new(
                            "the call did not finish",
                            error.to_string(),
                            "try again; if it keeps failing, report it with herd's version",
                        )
                    })?
            }
        }
    }

    fn call_blocking(&self, call: ToolCall) -> Result<Value, ToolError> {
        let setup = &*self.setup;
        let herd = running_herd(&setup.tasks);
        let herd_json = RunningHerd::to_json(herd.as_ref());
        match call {
            ToolCall::ListTasks { statuses } => {
                let words: Option<Vec<&str>> = statuses
                    .as_ref()
                    .map(|list| list.iter().map(|s| s.as_str()).collect());
                let params = words.map_or_else(|| json!({}), |words| json!({"status": words}));
                if let Some(result) = read_live(herd.as_ref(), "tasks.list", params, "list") {
                    return Ok(json!({"herd": herd_json, "tasks": result?["tasks"]}));
                }
                let file = files::read(setup)?;
                let rows = files::rows(&file, statuses.as_deref());
                Ok(json!({"herd": herd_json, "tasks": rows}))
            }
            ToolCall::GetTask { task_id } => {
                let task = self.task_now(herd.as_ref(), &task_id)?;
                Ok(json!({"herd": herd_json, "task": task}))
            }
            ToolCall::UpdateTask { task_id, patch } => {
                let task = match control_of(setup, herd.as_ref(), "change a task")? {
                    Some(socket) => live::call(
                        &socket,
                        "tasks.update",
                        json!({"task_id": task_id, "patch": patch}),
                    )
                    .map_err(|e| e.into_tool_error(&format!("change task {task_id:?}")))?["task"]
                        .take(),
                    None => files::update_task(setup, &task_id, &patch)?,
                };
                Ok(json!({"herd": herd_json, "task": task}))
            }
            ToolCall::AddTask { task } => {
                let task_id = task["task_id"].as_str().unwrap_or_default().to_string();
                let row = match control_of(setup, herd.as_ref(), "add a task")? {
                    Some(socket) => {
                        live::call(&socket, "tasks.add", json!({"task": task}))
                            .map_err(|e| e.into_tool_error(&format!("add task {task_id:?}")))?;
                        self.task_now(herd.as_ref(), &task_id)?
                    }
                    None => files::add_task(setup, &task)?,
                };
                Ok(json!({"herd": herd_json, "task": row}))
            }
            ToolCall::RunAgent { task_id } => self.run_agent(herd.as_ref(), &task_id),
            ToolCall::AnswerPrompt { prompt_id, answer } => {
                let Some(socket) = control_of(setup, herd.as_ref(), "answer a prompt")? else {
                    return Err(ToolError::new(
                        format!("no prompt {prompt_id:?} waits"),
                        format!(
                            "no herd runs {}, so no prompt waits for an answer",
                            setup.tasks.display()
                        ),
                        "a prompt waits only while a herd runs its task: run_agent, then \
                         wait_for the task with states [\"prompt_waiting\"], then get_task",
                    ));
                };
                let answered = live::call(
                    &socket,
                    "prompts.answer",
                    json!({"prompt_id": prompt_id, "answer": answer.as_str()}),
                )
                .map_err(|e| e.into_tool_error(&format!("answer prompt {prompt_id:?}")))?;
                Ok(json!({"herd": herd_json, "answered": answered}))
            }
            ToolCall::Explain { task_id, attempt } => {
                let runs_dir = herd
                    .and_then(|herd| herd.runs_dir)
                    .unwrap_or_else(|| setup.runs_dir.clone());
                files::explain(setup, &runs_dir, &task_id, attempt)
            }
            ToolCall::WaitFor { .. } => Err(ToolError::new(
                "wait_for ran in the wrong place",
                "it waits without blocking a thread",
                "report it with herd's version",
            )),
        }
    }

    /// Task `task_id` as the running herd sees it (its row, what its attempt is doing and the
    /// prompt waiting for an answer), else as the file says.
    fn task_now(&self, herd: Option<&RunningHerd>, task_id: &str) -> Result<Value, ToolError> {
        let params = json!({"task_id": task_id});
        if let Some(result) =
            read_live(herd, "tasks.get", params, &format!("read task {task_id:?}"))
        {
            return Ok(result?["task"].take());
        }
        let file = files::read(&self.setup)?;
        files::row(&self.setup, &file, task_id)
    }

    /// Runs a task: the running herd takes it, else a background herd is started for it.
    fn run_agent(&self, herd: Option<&RunningHerd>, task_id: &str) -> Result<Value, ToolError> {
        let setup = &*self.setup;
        if let Some(socket) = control_of(setup, herd, "run a task")? {
            let ran = run_live(&socket, task_id)?;
            return Ok(json!({
                "ran": ran,
                "herd": RunningHerd::to_json(herd),
                "task": self.task_now(herd, task_id)?,
            }));
        }
        let file = files::read(setup)?;
        let index = files::index_of(setup, &file, task_id)?;
        let retry = runnable_how(setup, &file.tasks()[index])?;
        let started = background::start(setup, task_id, retry)?;
        let file = files::read(setup)?;
        let row = files::row(setup, &file, task_id)?;
        Ok(json!({
            "started": {
                "how": "a background herd for this task alone (herd run --detach): \
                        `herd attach --tasks FILE` shows its dashboard",
                "command": started.command,
                "pid": started.pid,
                "log": started.log,
                "said": started.said,
                "ended_with_exit_code": started.ended,
            },
            "herd": RunningHerd::to_json(running_herd(&setup.tasks).as_ref()),
            "task": row,
        }))
    }

    async fn wait_for(
        &self,
        task_id: &str,
        states: &[WaitState],
        timeout_sec: f64,
    ) -> Result<Value, ToolError> {
        let started = Instant::now();
        let deadline = started + Duration::from_secs_f64(timeout_sec);
        loop {
            let server = self.clone();
            let id = task_id.to_string();
            // The herd first, then the file: a herd that ended wrote its last change before.
            let (herd, row) = jobs::blocking("mcp-wait", move || {
                let herd = running_herd(&server.setup.tasks);
                let row = server.task_now(herd.as_ref(), &id)?;
                Ok::<_, ToolError>((herd, row))
            })
            .await
            .map_err(|error| {
                ToolError::new("the wait did not finish", error.to_string(), "try again")
            })??;
            let status = row["status"].as_str().and_then(TaskStatus::parse);
            let prompt_waits = row.get("prompt").is_some_and(|p| !p.is_null());
            let reached = states.iter().find(|state| match state.status() {
                Some(_) => state.status() == status,
                None => prompt_waits,
            });
            let waited = started.elapsed().as_secs_f64();
            let answer = |reached: bool, why: Option<String>| {
                json!({
                    "reached": reached,
                    "waited_sec": (waited * 10.0).round() / 10.0,
                    "why": why,
                    "herd": RunningHerd::to_json(herd.as_ref()),
                    "task": row,
                })
            };
            let word = status.map_or("?", TaskStatus::as_str);
            if reached.is_some() {
                return Ok(answer(true, None));
            }
            let settled =
                status.is_some_and(|s| WaitState::SETTLED.iter().any(|w| w.status() == Some(s)));
            if settled {
                return Ok(answer(
                    false,
                    Some(format!(
                        "task {task_id:?} is {word}: herd has stopped working on it, so it \
                         reaches none of the states waited for"
                    )),
                ));
            }
            if herd.is_none() {
                return Ok(answer(
                    false,
                    Some(format!(
                        "no herd runs {}, so task {task_id:?} stays {word}; run_agent runs it",
                        self.setup.tasks.display()
                    )),
                ));
            }
            if Instant::now() >= deadline {
                return Ok(answer(
                    false,
                    Some(format!(
                        "task {task_id:?} is still {word} after {timeout_sec} s; call wait_for \
                         again to wait longer"
                    )),
                ));
            }
            tokio::time::sleep(WAIT_STEP.min(deadline - Instant::now())).await;
        }
    }
}

/// Whether a task can be run now, and whether it needs `--retry` (it failed or was cancelled:
/// it goes back to pending with a fresh retry budget).
fn runnable_how(setup: &Setup, task: &crate::core::task::TaskSpec) -> Result<bool, ToolError> {
    let id = &task.task_id;
    if !task.enabled {
        return Err(ToolError::new(
            format!("task {id:?} is disabled"),
            "its \"enabled\" is false, so herd does not run it",
            "update_task with patch {\"enabled\": true}, then run_agent",
        ));
    }
    match task.status {
        TaskStatus::Completed => Err(ToolError::new(
            format!("task {id:?} is completed"),
            "herd never runs a completed task again: its verdict stands",
            format!(
                "to continue its session, leave a message with `herd message --tasks {} --reopen \
                 {id} TEXT`, then run_agent; or add a new task with add_task",
                setup.tasks.display()
            ),
        )),
        TaskStatus::NeedsInput => Err(ToolError::new(
            format!("task {id:?} waits for answers"),
            "its agent asked questions (get_task shows them in `questions`)",
            format!(
                "answer with `herd message --tasks {} {id} \"...\"`, then run_agent",
                setup.tasks.display()
            ),
        )),
        TaskStatus::Failed | TaskStatus::Cancelled => Ok(true),
        TaskStatus::Pending | TaskStatus::Retryable | TaskStatus::Running => Ok(false),
    }
}

/// The control socket of the herd that runs the file; `None` when no herd does (the tools
/// work on the file); an error when one does without a socket to reach it by.
fn control_of(
    setup: &Setup,
    herd: Option<&RunningHerd>,
    what: &str,
) -> Result<Option<PathBuf>, ToolError> {
    match herd {
        None => Ok(None),
        Some(RunningHerd {
            control: Some(socket),
            ..
        }) => Ok(Some(socket.clone())),
        Some(herd) => Err(unreachable_herd(setup, herd, what)),
    }
}

/// A read through the running herd; `None` when no herd runs the file or its socket does not
/// answer (it is ending): the file says it then.
fn read_live(
    herd: Option<&RunningHerd>,
    method: &str,
    params: Value,
    what: &str,
) -> Option<Result<Value, ToolError>> {
    let socket = herd?.control.as_ref()?;
    match live::call(socket, method, params) {
        Ok(result) => Some(Ok(result)),
        Err(live::CallError::Unreachable(_)) => None,
        Err(error) => Some(Err(error.into_tool_error(what))),
    }
}

/// Asks the running herd to run task `task_id` now (`tasks.run`; a herd without that method
/// retries a failed or cancelled task with `tasks.retry`).
fn run_live(socket: &Path, task_id: &str) -> Result<Value, ToolError> {
    let what = format!("run task {task_id:?}");
    let params = json!({"task_id": task_id});
    match live::call(socket, "tasks.run", params.clone()) {
        Ok(ran) => Ok(ran),
        Err(error) if error.is_unknown_method() => {
            live::call(socket, "tasks.retry", params).map_err(|error| error.into_tool_error(&what))
        }
        Err(error) => Err(error.into_tool_error(&what)),
    }
}

/// A herd runs the file but cannot be reached through a control socket.
fn unreachable_herd(setup: &Setup, herd: &RunningHerd, what: &str) -> ToolError {
    ToolError::new(
        format!(
            "cannot {what} while herd pid {} runs {}",
            herd.pid,
            setup.tasks.display()
        ),
        "that herd owns the tasks file until it ends and serves no control socket this server \
         can reach",
        "wait_for its tasks to end (list_tasks shows them), or stop that herd, then try again",
    )
}

/// A tool's result: herd's data, or the error with what, why and how to fix it.
fn result_of(outcome: Result<Value, ToolError>) -> CallToolResult {
    match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(error) => {
            let mut result = CallToolResult::structured_error(error.to_json());
            result.content = vec![ContentBlock::text(error.to_text())];
            result
        }
    }
}

impl ServerHandler for HerdServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("herd", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "herd runs coding-agent tasks from the tasks file {}. list_tasks and get_task \
                 give herd's verdict of each task (status, failure_type, evidence); add_task \
                 and update_task change the file; run_agent runs a task and wait_for waits for \
                 its verdict; answer_prompt answers a permission prompt by its id; explain \
                 tells what herd saw and decided in an attempt.",
                self.setup.tasks.display()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let outcome = match tools::parse(&request.name, request.arguments.as_ref()) {
            Ok(call) => self.call(call).await,
            Err(error) => Err(error),
        };
        Ok(result_of(outcome).into())
    }
}
