//! A `Command` carried out on the engine, in the loop's turn, and its JSON result or error.
//! The engine decides (every status transition is its `ControlOutcome`); this maps words to
//! codes: an unknown task is `NO_SUCH_TASK`, a refusal `REFUSED`, a stale prompt id
//! `STALE_PROMPT`, an invalid task `INVALID_TASK`.

use serde_json::{Value, json};

use super::protocol::{
    self, Command, INTERNAL_ERROR, NO_SUCH_TASK, REFUSED, RpcError, STALE_PROMPT,
};
use crate::run::clock::Now;
use crate::run::engine::Engine;
use crate::run::engine::api::{Added, AnswerRefused, PromptInfo};
use crate::run::engine::control::ControlOutcome;

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
pub fn handle(engine: &mut Engine, command: Command, hello: &Value, now: Now) -> Handled {
    if let Command::Stop = command {
        return stop(engine);
    }
    let reply = match carry_out(engine, command, hello, now) {
        Ok(reply) => reply,
        Err(error) => {
            tracing::error!("a control command failed: {error:#}");
            Err(RpcError::new(INTERNAL_ERROR, format!("{error:#}")))
        }
    };
    Handled::reply(reply)
}

fn stop(engine: &Engine) -> Handled {
    if engine.is_stopping() {
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

fn carry_out(
    engine: &mut Engine,
    command: Command,
    hello: &Value,
    now: Now,
) -> color_eyre::Result<Reply> {
    let task = index_of;
    Ok(match command {
        Command::Hello => Ok(hello.clone()),
        Command::ListTasks { status } => Ok(json!({ "tasks": rows(engine, status.as_deref()) })),
        Command::GetTask { task_id } => task(engine, &task_id).map(|index| {
            let mut row = row(engine, index);
            row["prompt"] = engine
                .waiting_prompt(index)
                .map_or(Value::Null, |p| prompt_json(&p));
            json!({ "task": row })
        }),
        Command::AddTask { task } => match engine.add_task(task, now)? {
            Added::Added { task_id } => Ok(json!({ "task_id": task_id })),
            Added::Invalid(problems) => Err(protocol::invalid_task(problems)),
            Added::Refused(message) => Err(RpcError::new(REFUSED, message)),
        },
        Command::UpdateTask { task_id, patch } => match task(engine, &task_id) {
            Err(error) => Err(error),
            Ok(index) => match engine.update_task(index, &patch)? {
                Ok(ControlOutcome::Done(message)) => {
                    Ok(json!({ "task": row(engine, index), "message": message }))
                }
                Ok(ControlOutcome::Refused(message)) => Err(RpcError::new(REFUSED, message)),
                Err(problems) => Err(protocol::invalid_task(problems)),
            },
        },
        Command::Cancel { task_id } => on_task(engine, &task_id, |e, i| e.cancel_task(i, now))?,
        Command::Retry { task_id } => on_task(engine, &task_id, |e, i| e.retry_now(i, now))?,
        Command::Run { task_id } => on_task(engine, &task_id, |e, i| e.run_task(i, now))?,
        Command::Message { task_id, text } => {
            on_task(engine, &task_id, |e, i| e.send_message(i, &text, now))?
        }
        Command::Pause => Ok(pause(engine, true)),
        Command::Resume => Ok(pause(engine, false)),
        Command::Concurrency { n } => {
            engine.set_concurrency(n);
            Ok(outcome_json(&ControlOutcome::Done(format!(
                "concurrency {}",
                engine.concurrency()
            ))))
        }
        Command::Stop => stop(engine).reply,
        Command::ListPrompts => {
            let list: Vec<Value> = engine.waiting_prompts().iter().map(prompt_json).collect();
            Ok(json!({ "prompts": list }))
        }
        Command::Answer { prompt_id, answer } => {
            match engine.answer_prompt(&prompt_id, answer, now)? {
                Ok(message) => Ok(outcome_json(&ControlOutcome::Done(message))),
                Err(AnswerRefused::Stale(message)) => Err(RpcError::new(STALE_PROMPT, message)),
                Err(AnswerRefused::NotOffered(message)) => Err(RpcError::new(REFUSED, message)),
            }
        }
        Command::Screen { task_id } => task(engine, &task_id).and_then(|index| {
            engine
                .screen_text(index)
                .map(|(rows, cols, text)| json!({"rows": rows, "cols": cols, "text": text}))
                .ok_or_else(|| {
                    RpcError::new(REFUSED, format!("{task_id} is not running: it has no pane"))
                })
        }),
    })
}

/// An action on one task, its outcome as `{done, message}` or `REFUSED`.
fn on_task(
    engine: &mut Engine,
    task_id: &str,
    act: impl FnOnce(&mut Engine, usize) -> color_eyre::Result<ControlOutcome>,
) -> color_eyre::Result<Reply> {
    let index = match index_of(engine, task_id) {
        Ok(index) => index,
        Err(error) => return Ok(Err(error)),
    };
    Ok(match act(engine, index)? {
        ControlOutcome::Refused(message) => Err(RpcError::new(REFUSED, message)),
        done => Ok(outcome_json(&done)),
    })
}

/// The task `task_id` names in the file (not one the operator removed during the run).
fn index_of(engine: &Engine, task_id: &str) -> Result<usize, RpcError> {
    let file = engine.store().file();
    file.task_index(task_id)
        .filter(|&i| !file.is_removed(i))
        .ok_or_else(|| {
            RpcError::new(
                NO_SUCH_TASK,
                format!("no task {task_id:?} in the tasks file"),
            )
        })
}

fn pause(engine: &mut Engine, paused: bool) -> Value {
    engine.set_paused(paused);
    let message = match paused {
        true => "queue paused: running agents go on, nothing new starts",
        false => "queue resumed",
    };
    outcome_json(&ControlOutcome::Done(message.into()))
}

fn outcome_json(outcome: &ControlOutcome) -> Value {
    json!({ "done": outcome.is_done(), "message": outcome.message() })
}

/// A task's row (`herd status --json`) and what runs of it now.
pub fn row(engine: &Engine, index: usize) -> Value {
    let task = &engine.store().file().tasks()[index];
    let mut row = crate::run::summary::row(task);
    row["live"] = engine.live_for_task(index).map_or(Value::Null, |live| {
        let state = if live.attempt.is_ending() {
            "ending"
        } else if live.attempt.waiting().is_some() {
            "waiting_for_operator"
        } else {
            "running"
        };
        json!({
            "attempt": live.number,
            "state": state,
            "prompt_id": live.prompts.current(),
        })
    });
    row
}

fn rows(engine: &Engine, status: Option<&[crate::core::task::TaskStatus]>) -> Vec<Value> {
    let file = engine.store().file();
    (0..file.tasks().len())
        .filter(|&i| !file.is_removed(i))
        .filter(|&i| status.is_none_or(|s| s.contains(&file.tasks()[i].status)))
        .map(|i| row(engine, i))
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
