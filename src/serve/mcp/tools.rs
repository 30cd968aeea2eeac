//! The MCP server's tools as data: each one's name, description and input schema (made from the
//! input types below by `schemars`), and the checking of a call's arguments into a `ToolCall`,
//! with an error that says what is wrong, why, and how to fix it. No I/O: what a call does is
//! `files` (no herd runs the tasks file) and `live` (a herd runs it).

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::arguments;
use crate::core::task::{TaskStatus, is_safe_task_id};
use crate::core::taskfile::HERD_OWNED;

/// The longest `wait_for` waits in one call, in seconds.
pub(super) const MAX_WAIT_SEC: f64 = 3600.0;
/// How long `wait_for` waits when the call does not say: under the 60 s many clients give a
/// tool call by default.
pub(super) const DEFAULT_WAIT_SEC: f64 = 50.0;

/// A tool call that failed: what went wrong, why, and what to do about it. Shown to the model
/// as the tool's error result (`isError: true`), never as a protocol error it cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ToolError {
    pub(super) what: String,
    pub(super) why: String,
    pub(super) fix: String,
}

impl ToolError {
    pub(super) fn new(
        what: impl Into<String>,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        ToolError {
            what: what.into(),
            why: why.into(),
            fix: fix.into(),
        }
    }

    /// The error as the tool's structured result.
    pub(super) fn to_json(&self) -> Value {
        json!({"error": {"what": self.what, "why": self.why, "fix": self.fix}})
    }

    /// The error as one paragraph of text.
    pub(super) fn to_text(&self) -> String {
        format!("{}: {}. Fix: {}", self.what, self.why, self.fix)
    }
}

/// A task status, as the tasks file spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum StatusWord {
    Pending,
    Running,
    Completed,
    Retryable,
    Failed,
    Cancelled,
    NeedsInput,
}

impl StatusWord {
    pub(super) fn status(self) -> TaskStatus {
        match self {
            StatusWord::Pending => TaskStatus::Pending,
            StatusWord::Running => TaskStatus::Running,
            StatusWord::Completed => TaskStatus::Completed,
            StatusWord::Retryable => TaskStatus::Retryable,
            StatusWord::Failed => TaskStatus::Failed,
            StatusWord::Cancelled => TaskStatus::Cancelled,
            StatusWord::NeedsInput => TaskStatus::NeedsInput,
        }
    }
}

/// What `wait_for` waits for: a task status, or a permission prompt of the task waiting for an
/// answer (only a running herd can have one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum WaitState {
    Pending,
    Running,
    Completed,
    Retryable,
    Failed,
    Cancelled,
    NeedsInput,
    /// A permission prompt of the task waits for `answer_prompt`.
    PromptWaiting,
}

impl WaitState {
    /// The task status it is, `None` for `prompt_waiting`.
    pub(super) fn status(self) -> Option<TaskStatus> {
        Some(match self {
            WaitState::Pending => TaskStatus::Pending,
            WaitState::Running => TaskStatus::Running,
            WaitState::Completed => TaskStatus::Completed,
            WaitState::Retryable => TaskStatus::Retryable,
            WaitState::Failed => TaskStatus::Failed,
            WaitState::Cancelled => TaskStatus::Cancelled,
            WaitState::NeedsInput => TaskStatus::NeedsInput,
            WaitState::PromptWaiting => return None,
        })
    }

    /// The states herd leaves a task in when it stops working on it (what `wait_for` waits for
    /// when the call names none).
    pub(super) const SETTLED: [WaitState; 4] = [
        WaitState::Completed,
        WaitState::Failed,
        WaitState::Cancelled,
        WaitState::NeedsInput,
    ];
}

/// How a waiting permission prompt is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum Answer {
    /// Allow this request once.
    Approve,
    /// Allow it, and what the dialog offers to allow from now on.
    ApproveAlways,
    /// Refuse it.
    Deny,
}

impl Answer {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Answer::Approve => "approve",
            Answer::ApproveAlways => "approve_always",
            Answer::Deny => "deny",
        }
    }
}

/// `get_task`, `run_agent`: one task.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskRef {
    /// The task's `task_id` in the tasks file.
    pub(super) task_id: String,
}

/// `list_tasks`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListTasks {
    /// Only the tasks in these statuses (all tasks when absent).
    #[serde(default)]
    pub(super) status: Option<Vec<StatusWord>>,
}

/// `update_task`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct UpdateTask {
    /// The task's `task_id`.
    pub(super) task_id: String,
    /// The task fields to set, as the tasks file writes them (`enabled`, `prompt_template`,
    /// `inputs`, `max_retries`, `timeout_sec`, `permission_policy`, ...); `null` removes a
    /// field. herd's own fields (`status`, `attempts`, `result`, ...) and `task_id` cannot be
    /// set.
    pub(super) patch: Map<String, Value>,
}

/// `add_task`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AddTask {
    /// The new task as the tasks file writes it: at least `task_id` (unique; letters, digits,
    /// `-`, `_`, `.`), `agent` (a profile: `claude`, `codex`, `gemini`, `aider`, `sim`, ...)
    /// and `prompt_template`. It starts `pending`.
    pub(super) task: Map<String, Value>,
}

/// `answer_prompt`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AnswerPrompt {
    /// The waiting prompt's id (`prompt.prompt_id` of `get_task`, `<task_id>/<attempt>/<n>`).
    pub(super) prompt_id: String,
    pub(super) answer: Answer,
}

/// `wait_for`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WaitFor {
    /// The task's `task_id`.
    pub(super) task_id: String,
    /// Return as soon as the task is in one of these states [default: completed, failed,
    /// cancelled, needs_input: herd has stopped working on it].
    #[serde(default)]
    pub(super) states: Option<Vec<WaitState>>,
    /// The longest to wait, in seconds (at most 3600) [default: 50]. Keep it under the
    /// client's tool-call timeout.
    #[serde(default)]
    pub(super) timeout_sec: Option<f64>,
}

/// `explain`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Explain {
    /// The task's `task_id`.
    pub(super) task_id: String,
    /// Which attempt (1, 2, ...) [default: the latest].
    #[serde(default)]
    pub(super) attempt: Option<u32>,
}

/// One checked tool call.
#[derive(Debug, Clone)]
pub(super) enum ToolCall {
    ListTasks {
        statuses: Option<Vec<TaskStatus>>,
    },
    GetTask {
        task_id: String,
    },
    UpdateTask {
        task_id: String,
        patch: Map<String, Value>,
    },
    AddTask {
        task: Map<String, Value>,
    },
    RunAgent {
        task_id: String,
    },
    AnswerPrompt {
        prompt_id: String,
        answer: Answer,
    },
    WaitFor {
        task_id: String,
        states: Vec<WaitState>,
        timeout_sec: f64,
    },
    Explain {
        task_id: String,
        attempt: Option<u32>,
    },
}

/// Every tool, in the order `tools/list` gives them.
pub(super) fn all() -> Vec<Tool> {
    let tool = |name: &'static str, description: &'static str, schema: Arc<JsonObject>| {
        Tool::new(name, description, schema)
    };
    let reads = || ToolAnnotations::new().read_only(true);
    let writes = || ToolAnnotations::new().read_only(false).destructive(false);
    vec![
        tool(
            "list_tasks",
            "List the tasks of the tasks file with herd's verdict for each: status, attempts, \
             failure_type, failure_evidence, failure_cause, cost, and (while a herd runs the \
             file) what its attempt is doing. Optionally only some statuses.",
            input_schema::<ListTasks>(),
        )
        .annotate(reads()),
        tool(
            "get_task",
            "One task with herd's verdict: status, attempts, failure_type, failure_evidence, \
             failure_cause, the agent's questions and final text, and (while a herd runs the \
             file) the permission prompt waiting for an answer, with its prompt_id.",
            input_schema::<TaskRef>(),
        )
        .annotate(reads()),
        tool(
            "update_task",
            "Change a task's operator fields (enabled, prompt_template, inputs, max_retries, \
             timeout_sec, permission_policy, ...), checked like the tasks file and written into \
             it. Not herd's own fields (status, attempts, result): those are herd's verdicts.",
            input_schema::<UpdateTask>(),
        )
        .annotate(writes()),
        tool(
            "add_task",
            "Add a task to the tasks file (checked like the file: a unique task_id, a known \
             agent profile, a prompt). It starts pending; run_agent runs it.",
            input_schema::<AddTask>(),
        )
        .annotate(writes()),
        tool(
            "run_agent",
            "Run a task's agent now. When a herd runs the tasks file, it takes the task; \
             otherwise a background herd is started for this task alone. Returns at once; \
             wait_for waits for the verdict.",
            input_schema::<TaskRef>(),
        )
        .annotate(writes()),
        tool(
            "answer_prompt",
            "Answer a permission prompt that waits for the operator, by its prompt_id (from \
             get_task or list_tasks): approve, approve_always or deny. An answer never lands on \
             another dialog: a prompt that is gone or was answered is refused.",
            input_schema::<AnswerPrompt>(),
        )
        .annotate(writes()),
        tool(
            "wait_for",
            "Wait until a task reaches one of the given states (by default: completed, failed, \
             cancelled, needs_input; prompt_waiting: a permission prompt waits), at most \
             timeout_sec. Returns whether it did, and the task with herd's verdict.",
            input_schema::<WaitFor>(),
        )
        .annotate(reads()),
        tool(
            "explain",
            "What herd saw and decided in a task's attempt (the latest by default): the \
             timeline of prompts and answers with the guard's reasons, the ending, the verdict \
             with its evidence, and which of the profile's rules match the last screen.",
            input_schema::<Explain>(),
        )
        .annotate(reads()),
    ]
}

/// Checks the arguments of a call of tool `name`.
pub(super) fn parse(
    name: &str,
    arguments: Option<&Map<String, Value>>,
) -> Result<ToolCall, ToolError> {
    let args = Value::Object(arguments.cloned().unwrap_or_default());
    match name {
        "list_tasks" => {
            let list: ListTasks = decode(name, args)?;
            Ok(ToolCall::ListTasks {
                statuses: list
                    .status
                    .map(|words| words.into_iter().map(StatusWord::status).collect()),
            })
        }
        "get_task" => Ok(ToolCall::GetTask {
            task_id: task_id(decode::<TaskRef>(name, args)?.task_id)?,
        }),
        "run_agent" => Ok(ToolCall::RunAgent {
            task_id: task_id(decode::<TaskRef>(name, args)?.task_id)?,
        }),
        "update_task" => {
            let update: UpdateTask = decode(name, args)?;
            Ok(ToolCall::UpdateTask {
                task_id: task_id(update.task_id)?,
                patch: patch(update.patch)?,
            })
        }
        "add_task" => Ok(ToolCall::AddTask {
            task: new_task(decode::<AddTask>(name, args)?.task)?,
        }),
        "answer_prompt" => {
            let answer: AnswerPrompt = decode(name, args)?;
            if answer.prompt_id.trim().is_empty() {
                return Err(ToolError::new(
                    "invalid prompt_id",
                    "it is empty",
                    "give the prompt_id of the waiting prompt, from get_task's `prompt`",
                ));
            }
            Ok(ToolCall::AnswerPrompt {
                prompt_id: answer.prompt_id,
                answer: answer.answer,
            })
        }
        "wait_for" => wait_for(decode(name, args)?),
        "explain" => {
            let explain: Explain = decode(name, args)?;
            if explain.attempt == Some(0) {
                return Err(ToolError::new(
                    "invalid attempt",
                    "attempts are numbered from 1",
                    "give 1 for the first attempt, or leave attempt out for the latest",
                ));
            }
            Ok(ToolCall::Explain {
                task_id: task_id(explain.task_id)?,
                attempt: explain.attempt,
            })
        }
        other => Err(ToolError::new(
            format!("no tool named {other:?}"),
            "herd's MCP server has list_tasks, get_task, update_task, add_task, run_agent, \
             answer_prompt, wait_for and explain",
            "call one of those (tools/list gives their input schemas)",
        )),
    }
}

/// The input schema of a tool whose arguments are a `T`, in the portable form every client
/// reads (see `portable`).
fn input_schema<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let mut schema = Value::Object((*schema_for_type::<T>()).clone());
    portable(&mut schema);
    Arc::new(match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    })
}

/// Rewrites a schema so that every property has one type: `schemars` writes an `Option<T>` as
/// `"type": [T, "null"]` (or `anyOf: [T, {"type": "null"}]`), which clients that translate
/// schemas into function declarations (Gemini's, among others) refuse. An optional argument is
/// one that is not `required`, which the schema already says; a `null` sent for one is still
/// read as leaving it out.
fn portable(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Array(kinds)) = object.get("type") {
                let kinds: Vec<Value> = kinds
                    .iter()
                    .filter(|kind| kind.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if let [kind] = kinds.as_slice() {
                    object.insert("type".to_string(), kind.clone());
                }
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(branches)) = object.get_mut(key) else {
                    continue;
                };
                branches.retain(|branch| branch.get("type") != Some(&json!("null")));
                if let [only] = branches.as_slice() {
                    let only = only.clone();
                    object.remove(key);
                    if let Value::Object(fields) = only {
                        object.extend(fields);
                    }
                }
            }
            object.values_mut().for_each(portable);
        }
        Value::Array(items) => items.iter_mut().for_each(portable),
        _ => {}
    }
}

/// Reads the arguments as a `T`, after checking them against its schema so that a wrong one is
/// named in JSON's words; serde's own words remain for what the schema cannot say.
fn decode<T: DeserializeOwned + JsonSchema + std::any::Any>(
    tool: &str,
    args: Value,
) -> Result<T, ToolError> {
    if let Some(object) = args.as_object()
        && let Some(problem) = arguments::check(&input_schema::<T>(), object)
    {
        return Err(ToolError::new(
            format!("invalid arguments for {tool}"),
            problem.to_string(),
            format!("call {tool} with arguments that match its input schema (see tools/list)"),
        ));
    }
    serde_json::from_value(args).map_err(|error| {
        ToolError::new(
            format!("invalid arguments for {tool}"),
            error.to_string(),
            format!("call {tool} with arguments that match its input schema (see tools/list)"),
        )
    })
}

fn task_id(id: String) -> Result<String, ToolError> {
    if is_safe_task_id(&id) {
        Ok(id)
    } else {
        Err(ToolError::new(
            format!("invalid task_id {id:?}"),
            "a task_id is a non-empty name of letters, digits, `-`, `_` and `.` (not `.` or \
             `..`), since it names the task's folder under runs/",
            "give the task_id as list_tasks shows it",
        ))
    }
}

fn wait_for(wait: WaitFor) -> Result<ToolCall, ToolError> {
    let timeout_sec = wait.timeout_sec.unwrap_or(DEFAULT_WAIT_SEC);
    if !(timeout_sec.is_finite() && timeout_sec > 0.0 && timeout_sec <= MAX_WAIT_SEC) {
        return Err(ToolError::new(
            format!("invalid timeout_sec {timeout_sec}"),
            format!("it must be more than 0 and at most {MAX_WAIT_SEC} seconds"),
            "give a number of seconds below your client's tool-call timeout, or leave it out \
             for 50",
        ));
    }
    let states = match wait.states {
        Some(states) if states.is_empty() => {
            return Err(ToolError::new(
                "invalid states",
                "the list is empty, so nothing could end the wait",
                "name at least one state, or leave states out for completed, failed, \
                 cancelled and needs_input",
            ));
        }
        Some(states) => states,
        None => WaitState::SETTLED.to_vec(),
    };
    Ok(ToolCall::WaitFor {
        task_id: task_id(wait.task_id)?,
        states,
        timeout_sec,
    })
}

/// The fields a patch may not set: herd's own, and the task's name.
fn forbidden_field(key: &str) -> bool {
    key == "task_id" || key == "ran_on" || HERD_OWNED.contains(&key)
}

fn patch(patch: Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    if patch.is_empty() {
        return Err(ToolError::new(
            "empty patch",
            "it sets no field, so nothing would change",
            "give the fields to set, e.g. {\"enabled\": false} or {\"inputs\": {...}}",
        ));
    }
    let refused: Vec<&str> = patch
        .keys()
        .map(String::as_str)
        .filter(|key| forbidden_field(key))
        .collect();
    if !refused.is_empty() {
        return Err(ToolError::new(
            format!("cannot set {}", refused.join(", ")),
            "status, attempts, result and herd's other bookkeeping fields are herd's verdicts \
             (and task_id names the task's recordings), so only herd writes them",
            "leave them out of the patch: run_agent runs a task again (a failed or cancelled \
             one with a fresh retry budget); add_task makes a task under another id",
        ));
    }
    Ok(patch)
}

fn new_task(task: Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    match task.get("task_id") {
        Some(Value::String(id)) => {
            task_id(id.clone())?;
        }
        Some(_) | None => {
            return Err(ToolError::new(
                "the task has no task_id",
                "every task needs a unique task_id string: it names the task and its folder \
                 under runs/",
                "add \"task_id\": \"some-name\" to the task",
            ));
        }
    }
    let refused: Vec<&str> = task
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "task_id" && forbidden_field(key))
        .collect();
    if !refused.is_empty() {
        return Err(ToolError::new(
            format!("a new task cannot have {}", refused.join(", ")),
            "a new task starts pending with no attempts; those fields are herd's to write",
            "leave them out",
        ));
    }
    Ok(task)
}

#[cfg(test)]
mod tests;
