//! `herd status`: the table of a tasks file's tasks (or their JSON rows); reads the file, never
//! writes it.

use std::path::Path;

use color_eyre::eyre::Result;

use super::args::StatusArgs;
use super::inputs::{EXIT_INVALID, print_problems, store_problems};
use crate::run::background::answers;
use crate::run::clock::local_now;
use crate::run::rendezvous::{Registration, Rendezvous, RunMode};
use crate::run::store::TaskStore;
use crate::run::summary;

pub(super) fn status(args: &StatusArgs) -> Result<i32> {
    let store = match TaskStore::read_only(&args.tasks.tasks) {
        Ok(store) => store,
        Err(e) => {
            print_problems(&store_problems(&e));
            return Ok(EXIT_INVALID);
        }
    };
    let file = store.file();
    let all: Vec<usize> = (0..file.tasks().len()).collect();
    if args.json {
        let rows: Vec<serde_json::Value> = file.tasks().iter().map(summary::row).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!(
            "{}",
            summary::table_for(
                file,
                &args.tasks.tasks,
                &all,
                summary::stdout_width(),
                &local_now()
            )
        );
        println!("{}", running_herd(&args.tasks.tasks));
    }
    Ok(0)
}

/// Whether a herd runs the file now (its registration names a live process), how, and how to
/// reach it: what the sockets of its rendezvous answer.
fn running_herd(tasks: &Path) -> String {
    let Ok(rendezvous) = Rendezvous::for_tasks(tasks) else {
        return "No herd runs this file now.".into();
    };
    let Some(running) = Registration::read_live(&rendezvous.registration) else {
        return "No herd runs this file now.".into();
    };
    let mode = running.mode.describe();
    let mut text = format!(
        "A herd runs this file now: pid {}, {mode}, since {} (herd {}).",
        running.pid, running.started_at, running.herd_version
    );
    let file = tasks.display();
    if running.mode == RunMode::Background {
        if answers(&rendezvous.attach) {
            text.push_str(&format!("\nSee it: herd attach --tasks {file}"));
        } else {
            text.push_str("\nIts attach socket does not answer (it may be starting or ending).");
        }
    }
    if answers(&rendezvous.control) {
        text.push_str(&format!("\nControl it: herd ctl --tasks {file} ..."));
    }
    text
}
