//! `herd status`: the tasks' table (or JSON rows), how the file's run stands or its last one
//! ended, and "since you left". Never writes the file; the table (not `--json`) counts as the
//! operator's look for the next digest.

use std::path::Path;

use color_eyre::eyre::Result;

use super::args::StatusArgs;
use super::inputs::{EXIT_INVALID, loaded};
use crate::core::operator::clock_words;
use crate::core::operator::digest::{self, Since};
use crate::run::clock::local_now;
use crate::run::inputs::{default_runs_dir, store_problems};
use crate::run::ipc::answers;
use crate::run::last_run::{self, RunEnd};
use crate::run::rendezvous::{Registration, Rendezvous, RunMode};
use crate::run::store::TaskStore;
use crate::serve::control::client::Client;
use crate::serve::summary;
use serde_json::json;

pub(super) fn status(args: &StatusArgs) -> Result<i32> {
    let opened = TaskStore::read_only(&args.tasks.tasks).map_err(|e| store_problems(&e));
    let Some(store) = loaded(opened) else {
        return Ok(EXIT_INVALID);
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
        if let Some((_, lines)) = since_you_left(file, &args.tasks.tasks) {
            print!("\n{}\n", lines.join("\n"));
        }
    }
    Ok(0)
}

/// "Since you left": from the operator's last look, else from the start of the file's run;
/// nothing when herd never ran the file here. Notes this look.
pub(super) fn since_you_left(
    file: &crate::core::taskfile::TaskFile,
    tasks: &Path,
) -> Option<(Since, Vec<String>)> {
    let local = local_now();
    let running = Rendezvous::for_tasks(tasks)
        .ok()
        .and_then(|rendezvous| Registration::read_live(&rendezvous.registration));
    let runs_dir = runs_dir_of(tasks, running.as_ref());
    let run_start = running
        .as_ref()
        .and_then(|r| r.started_at.parse().ok())
        .or_else(|| RunEnd::read(&runs_dir).and_then(|end| end.started()));
    let since = match (last_run::last_look(&runs_dir), run_start) {
        (Some(look), _) => Since::LastLook(look),
        (None, Some(start)) => Since::RunStart(start),
        (None, None) => return None,
    };
    let prompts = running
        .and_then(|_| Client::for_tasks(tasks).ok())
        .and_then(|mut client| client.call("prompts.list", &json!({})).ok())
        .and_then(Result::ok)
        .map(|answer| summary::waiting_prompts(&answer))
        .unwrap_or_default();
    let facts = summary::digest_facts(file, &local);
    let lines = digest::digest(
        &facts,
        &prompts,
        since,
        &tasks.display().to_string(),
        &local,
    );
    if let Err(error) = last_run::record_look(&runs_dir, local.now) {
        tracing::debug!("cannot note this look: {error}");
    }
    Some((since, lines))
}

/// Whether a herd runs the file now, how, and how to reach it.
fn running_herd(tasks: &Path) -> String {
    let Ok(rendezvous) = Rendezvous::for_tasks(tasks) else {
        return "No herd runs this file now.".into();
    };
    if let Some(gone) = rendezvous.clear_leftovers() {
        return format!("No herd runs this file now: {}.", gone.gone_note());
    }
    let Some(running) = Registration::read_live(&rendezvous.registration) else {
        return match RunEnd::read(&runs_dir_of(tasks, None)) {
            Some(end) => format!("No herd runs this file now. {}", how_it_ended(&end)),
            None => "No herd runs this file now.".into(),
        };
    };
    let mode = running.mode.describe();
    let local = local_now();
    // On the operator's clock (`02:40 (3 h ago)`); the registration's own text if it is odd.
    let since = running.started_at.parse().map_or_else(
        |_| running.started_at.clone(),
        |at| {
            format!(
                "{} ({})",
                clock_words::clock_time(at, &local.zone, local.now),
                clock_words::from_now(at, local.now)
            )
        },
    );
    let mut text = format!(
        "A herd runs this file now: pid {}, {mode}, since {since} (herd {}).",
        running.pid, running.herd_version
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

/// The runs folder of `tasks`: the running herd's, else the default one beside the file.
pub(super) fn runs_dir_of(tasks: &Path, running: Option<&Registration>) -> std::path::PathBuf {
    running.map_or_else(|| default_runs_dir(tasks), |r| r.runs_dir.clone())
}

/// `The last run (in the background) ended at 03:12 (5 h ago): exit 1, some task ended
/// otherwise than completed. Its log: runs/background.log`.
pub(super) fn how_it_ended(end: &RunEnd) -> String {
    let local = local_now();
    let when = end.ended().map_or_else(
        || end.ended_at.clone(),
        |at| clock_words::clock_time_from_now(at, &local.zone, local.now),
    );
    format!(
        "The last run ({}) ended at {when}: exit {}, {}.\nIts log: {}",
        end.mode.describe(),
        end.exit_code,
        last_run::exit_meaning(end.exit_code),
        end.log_file.display()
    )
}
