//! `herd message`: the operator's message for a task's agent session. Through the control socket
//! of the herd that runs the file (as the dashboard's `m`), else left in the tasks file for the
//! next `herd run`.

use std::io::Read;

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use super::args::MessageArgs;
use super::inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID, loaded};
use crate::core::task::TaskStatus;
use crate::run::inputs::{load_profiles, store_problems};
use crate::run::launch::last_session;
use crate::run::store::TaskStore;
use crate::serve::control::client::{Client, ClientError};

pub(super) fn message(args: &MessageArgs) -> Result<i32> {
    let text = if args.text == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .wrap_err("cannot read the message from standard input")?;
        text
    } else {
        args.text.clone()
    };
    if text.trim().is_empty() {
        eprintln!("herd message: the message is empty; nothing was written");
        return Ok(EXIT_INVALID);
    }
    match Client::for_tasks(&args.tasks) {
        Ok(client) => return Ok(through_the_run(client, args, &text)),
        // No herd runs the file: the message waits in it for the next run.
        Err(
            ClientError::NotRunning { .. }
            | ClientError::NoTasksFile { .. }
            | ClientError::NoRendezvous { .. },
        ) => {}
        Err(error) => {
            eprintln!("herd message: {error}; nothing was sent");
            return Ok(EXIT_CANNOT_GO_ON);
        }
    }
    into_the_file(args, &text)
}

/// The message to the herd that runs the file, through its control socket; the exit code.
fn through_the_run(mut client: Client, args: &MessageArgs, text: &str) -> i32 {
    let task_id = args.task_id.as_str();
    let status = match client.call("tasks.get", &json!({ "task_id": task_id })) {
        Ok(Ok(reply)) => reply["task"]["status"].as_str().map(str::to_string),
        Ok(Err(error)) => return refused(&error),
        Err(error) => return unreachable_run(&error),
    };
    if status.as_deref() == Some(TaskStatus::Completed.as_str()) && !args.reopen {
        eprintln!(
            "herd message: task {task_id} is completed; a message would run it again. Add \
             --reopen to continue its session with the message anyway; nothing was sent"
        );
        return EXIT_INVALID;
    }
    let params = json!({ "task_id": task_id, "text": text });
    match client.call("tasks.message", &params) {
        Ok(Ok(reply)) => {
            let said = reply["message"].as_str().unwrap_or("message sent");
            println!(
                "{said} (through the herd that runs {})",
                args.tasks.display()
            );
            0
        }
        Ok(Err(error)) => refused(&error),
        Err(error) => unreachable_run(&error),
    }
}

/// The running herd's refusal (an unknown task, a task that cannot take a message now).
fn refused(error: &serde_json::Value) -> i32 {
    let said = error["message"]
        .as_str()
        .map_or_else(|| error.to_string(), str::to_string);
    eprintln!("herd message: {said}; nothing was sent");
    EXIT_INVALID
}

fn unreachable_run(error: &ClientError) -> i32 {
    eprintln!("herd message: {error}; the message may not have been delivered");
    EXIT_CANNOT_GO_ON
}

/// The message left in the tasks file for the next `herd run`; the exit code.
fn into_the_file(args: &MessageArgs, text: &str) -> Result<i32> {
    let Some(profiles) = loaded(load_profiles(args.profiles.as_deref())) else {
        return Ok(EXIT_INVALID);
    };
    let Some(mut store) = loaded(TaskStore::open(&args.tasks).map_err(|e| store_problems(&e)))
    else {
        return Ok(EXIT_INVALID);
    };
    let Some(index) = store.file().task_index(&args.task_id) else {
        eprintln!(
            "herd message: no task has task_id {:?} in {}",
            args.task_id,
            args.tasks.display()
        );
        return Ok(EXIT_INVALID);
    };
    let task = store.file().tasks()[index].clone();
    if !(task.status.is_runnable() || task.status.can_become(TaskStatus::Retryable)) {
        eprintln!(
            "herd message: task {} is {}; a message goes to a task that is not running",
            task.task_id, task.status
        );
        return Ok(EXIT_INVALID);
    }
    if task.status == TaskStatus::Completed && !args.reopen {
        eprintln!(
            "herd message: task {} is completed; a message would run it again. Add --reopen to \
             continue its session with the message anyway; nothing was written",
            task.task_id
        );
        return Ok(EXIT_INVALID);
    }
    let resumable = profiles
        .get(&task.agent)
        .is_some_and(crate::core::profile::Profile::can_resume);
    let session = last_session(&task).filter(|_| resumable);
    let file = store.file_mut();
    file.set_field(index, "resume_message", json!(text));
    file.set_status(index, TaskStatus::Retryable);
    file.remove_field(index, "retry_at");
    store.save().wrap_err("cannot write the tasks file")?;
    match session {
        Some(id) => println!(
            "{}: the next `herd run` resumes session {id} with the message",
            task.task_id
        ),
        None => println!(
            "{}: no session to resume; the next `herd run` starts a fresh attempt with the message in its prompt",
            task.task_id
        ),
    }
    Ok(0)
}
