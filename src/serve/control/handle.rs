//! A `Method` carried out on the engine, in the loop's turn, and its JSON result or error.
//! What changes the batch goes through the engine's one entry point, `Engine::apply`, as the
//! dashboard's keys do; the engine decides (every status transition is its `ControlOutcome`);
//! this maps words to codes: an unknown task is `NO_SUCH_TASK`, a refusal `REFUSED`, a stale prompt id
//! `STALE_PROMPT`, an invalid task `INVALID_TASK`.

use serde_json::{Value, json};

use super::protocol::{
    self, INTERNAL_ERROR, Method, NO_SUCH_TASK, REFUSED, RpcError, STALE_PROMPT,
};
use crate::core::approval::AnsweredBy;
use crate::run::clock::Now;
use crate::run::engine::api::{Added, PromptInfo};
use crate::run::engine::command::Command as EngineCommand;
use crate::run::engine::control::ControlOutcome;
use crate::run::engine::{BatchView, Engine};

/// What a command came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    pub reply: Result<Value, RpcError>,
    /// `batch.stop` was accepted: the frontend stops the run as on its first Ctrl-C.
    pub stop: bool,
}

impl Handled {
    fn reply(reply: Result<Value, RpcError>) -> Handled {
        Handled { reply, stop: false }
    }
}

/// Carries out `command`; `hello` is the run's `hello` result.
pub fn handle(engine: &mut Engine, request: Asked, hello: &Value, now: Now) -> Handled {
    if let Method::Stop = request.0 {
        return stop(engine);
    }
    let reply = match carry_out(engine, request, hello, now) {
        Ok(reply) => reply,
        Err(error) => {
            tracing::error!("a control command failed: {error:#}");
            Err(RpcError::new(INTERNAL_ERROR, format!("{error:#}")))
        }
    };
    Handled::reply(reply)
}

fn stop(batch: &dyn BatchView) -> Handled {
    if batch.is_stopping() {
        return Handled::reply(Ok(outcome_json(&ControlOutcome::Done(
            "herd is already stopping".into(),
        ))));
    }
    Handled {
        reply: Ok(outcome_json(&ControlOutcome::Done(
            "stopping: ending running agents (their tasks go back to retryable)".into(),
        ))),
        stop: true,
    }
}

type Reply = Result<Value, RpcError>;

/// A method, and whose answer it gives when it answers a prompt.
pub type Asked = (Method, AnsweredBy);

fn carry_out(
    engine: &mut Engine,
    (command, by): Asked,
    hello: &Value,
    now: Now,
) -> color_eyre::Result<Reply> {
    let task = index_of;
    Ok(match command {
        Method::Hello => Ok(hello.clone()),
        Method::ListTasks { status } => Ok(json!({ "tasks": rows(engine, status.as_deref()) })),
        Method::GetTask { task_id } => task(engine, &task_id).map(|index| {
            let mut row = row(engine, index);
            row["prompt"] = engine
                .view()
                .waiting_prompt(index)
                .map_or(Value::Null, |p| prompt_json(&p));
            json!({ "task": row })
        }),
        Method::AddTask { task } => match engine.add_task(task, now)? {
            Added::Added { task_id } => Ok(json!({ "task_id": task_id })),
            Added::Invalid(problems) => Err(protocol::invalid_task(problems)),
            Added::Refused(message) => Err(RpcError::new(REFUSED, message)),
        },
        Method::UpdateTask { task_id, patch } => match task(engine, &task_id) {
            Err(error) => Err(error),
            Ok(index) => match engine.update_task(index, &patch)? {
                Ok(ControlOutcome::Done(message)) => {
                    Ok(json!({ "task": row(engine, index), "message": message }))
                }
                Ok(refused) => reply_of(refused),
                Err(problems) => Err(protocol::invalid_task(problems)),
            },
        },
        Method::Cancel { task_id } => {
            on_task(engine, &task_id, now, |task| EngineCommand::Cancel { task })?
        }
        Method::Retry { task_id } => on_task(engine, &task_id, now, |task| {
            EngineCommand::RetryNow { task }
        })?,
        Method::Run { task_id } => {
            on_task(engine, &task_id, now, |task| EngineCommand::Run { task })?
        }
        Method::Message { task_id, text } => match task(engine, &task_id) {
            Err(error) => Err(error),
            Ok(index) => {
                let command = message_command(engine.view(), index, text);
                reply_of(engine.apply(command, now)?)
            }
        },
        Method::Pause => reply_of(engine.apply(EngineCommand::Pause, now)?),
        Method::Resume => reply_of(engine.apply(EngineCommand::Resume, now)?),
        Method::Concurrency { n } => {
            engine.apply(EngineCommand::SetConcurrency(n), now)?;
            // The socket's own words for it, as before.
            Ok(outcome_json(&ControlOutcome::Done(format!(
                "concurrency {}",
                engine.view().concurrency()
            ))))
        }
        Method::Stop => stop(engine).reply,
        Method::ListPrompts => {
            let list: Vec<Value> = engine
                .view()
                .waiting_prompts()
                .iter()
                .map(prompt_json)
                .collect();
            Ok(json!({ "prompts": list }))
        }
        Method::Answer { prompt_id, answer } => {
            let answer = EngineCommand::AnswerPrompt {
                prompt_id,
                answer,
                by,
            };
            reply_of(engine.apply(answer, now)?)
        }
        Method::Digest => Ok(json!({ "lines": digest(engine.view(), hello) })),
        Method::WebStart { .. } => Err(RpcError::new(
            REFUSED,
            "the web view starts in a run's loop only",
        )),
        Method::Screen { task_id, styled } => task(engine, &task_id).and_then(|index| {
            screen(engine.view(), index, styled).ok_or_else(|| {
                RpcError::new(REFUSED, format!("{task_id} is not running: it has no pane"))
            })
        }),
    })
}

/// Task `index`'s pane as text, and with `styled` as runs of text with their colours.
fn screen(batch: &dyn BatchView, index: usize, styled: bool) -> Option<Value> {
    let live = batch.live_attempt(index)?;
    let (rows, cols, text) = live.screen_text();
    let mut screen = json!({"rows": rows, "cols": cols, "text": text});
    if styled {
        let lines = crate::core::screen::styled::rows(live.attempt().screen().vt());
        screen["lines"] = json!(lines);
    }
    Some(screen)
}

/// The "since you left" digest of the run: what ended since it started (`hello`'s
/// `started_at`) and what waits now.
fn digest(batch: &dyn BatchView, hello: &Value) -> Vec<String> {
    use crate::core::operator::digest::{self, PromptFact, Since};
    let local = crate::run::clock::local_now();
    let started = hello["started_at"].as_str().and_then(|t| t.parse().ok());
    let since = Since::RunStart(started.unwrap_or(local.now));
    let prompts: Vec<PromptFact> = batch
        .waiting_prompts()
        .into_iter()
        .map(|p| PromptFact {
            task_id: p.task_id,
            prompt_id: p.prompt_id,
            asks: p.request,
        })
        .collect();
    let facts = crate::serve::summary::digest_facts(batch.file(), &local);
    let file = batch.tasks_path().display().to_string();
    digest::digest(&facts, &prompts, since, &file, &local)
}

/// A command about the task `task_id` names, its outcome as `reply_of` words it.
fn on_task(
    engine: &mut Engine,
    task_id: &str,
    now: Now,
    command: impl FnOnce(usize) -> EngineCommand,
) -> color_eyre::Result<Reply> {
    let index = match index_of(engine, task_id) {
        Ok(index) => index,
        Err(error) => return Ok(Err(error)),
    };
    Ok(reply_of(engine.apply(command(index), now)?))
}

/// A message for task `index`, as the dashboard's `m` sends it: typed into its running agent,
/// else to its session (answers to the questions of a task that needs input, or a follow-up),
/// which its next attempt resumes at once.
fn message_command(batch: &dyn BatchView, index: usize, text: String) -> EngineCommand {
    if batch.live_attempt(index).is_some() {
        EngineCommand::SendMessage { task: index, text }
    } else {
        EngineCommand::ResumeWithMessage { task: index, text }
    }
}

/// An outcome as `{done, message}`, `REFUSED` or `STALE_PROMPT`.
fn reply_of(outcome: ControlOutcome) -> Reply {
    match outcome {
        ControlOutcome::Refused(message) => Err(RpcError::new(REFUSED, message)),
        ControlOutcome::Stale(message) => Err(RpcError::new(STALE_PROMPT, message)),
        done => Ok(outcome_json(&done)),
    }
}

/// The task `task_id` names in the file (not one the operator removed during the run).
fn index_of(batch: &dyn BatchView, task_id: &str) -> Result<usize, RpcError> {
    let file = batch.file();
    file.task_index(task_id)
        .filter(|&i| !file.is_removed(i))
        .ok_or_else(|| {
            RpcError::new(
                NO_SUCH_TASK,
                format!("no task {task_id:?} in the tasks file"),
            )
        })
}

fn outcome_json(outcome: &ControlOutcome) -> Value {
    json!({ "done": outcome.is_done(), "message": outcome.message() })
}

/// A task's row (`herd status --json`) and what runs of it now.
pub fn row(batch: &dyn BatchView, index: usize) -> Value {
    let task = &batch.tasks()[index];
    let mut row = crate::serve::summary::row(task);
    row["live"] = batch.live_attempt(index).map_or(Value::Null, |live| {
        let state = if live.attempt().is_ending() {
            "ending"
        } else if live.is_waiting() {
            "waiting_for_operator"
        } else {
            "running"
        };
        json!({
            "attempt": live.number(),
            "state": state,
            "prompt_id": live.prompt_id(),
        })
    });
    row
}

fn rows(batch: &dyn BatchView, status: Option<&[crate::core::task::TaskStatus]>) -> Vec<Value> {
    let file = batch.file();
    (0..file.tasks().len())
        .filter(|&i| !file.is_removed(i))
        .filter(|&i| status.is_none_or(|s| s.contains(&file.tasks()[i].status)))
        .map(|i| row(batch, i))
        .collect()
}

pub fn prompt_json(prompt: &PromptInfo) -> Value {
    json!({
        "prompt_id": prompt.prompt_id,
        "task_id": prompt.task_id,
        "attempt": prompt.attempt,
        "request": prompt.request,
        "guard": prompt.guard.as_ref().map(|(decision, reason)| json!({"decision": decision, "reason": reason})),
        "options": prompt.options.iter().map(|o| o.as_str()).collect::<Vec<_>>(),
        "since": prompt.since,
    })
}
