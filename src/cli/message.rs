//! `herd message`: leaves the operator's message for a task's agent session in the tasks file,
//! for scripts and headless runs (the dashboard's `m` does the same while herd runs). The next
//! `herd run` delivers it by resuming the session.

use std::io::Read;

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use super::args::MessageArgs;
use super::inputs::{EXIT_INVALID, load_profiles, print_problems, store_problems};
use crate::core::task::TaskStatus;
use crate::run::launch::last_session;
use crate::run::store::TaskStore;

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
    let profiles = match load_profiles(args.profiles.as_deref()) {
        Ok(p) => p,
        Err(problems) => {
            print_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let mut store = match TaskStore::open(&args.tasks) {
        Ok(store) => store,
        Err(e) => {
            print_problems(&store_problems(&e));
            return Ok(EXIT_INVALID);
        }
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
