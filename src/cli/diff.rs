//! `herd diff TASK [--stat] [--attempt N]`: what a task's agent changed in its folder (its
//! worktree for a `"worktree": true` task) since the attempt started: a summary line, the files
//! with their counts, and the unified diff. On a terminal it goes through the pager (`$PAGER`,
//! else `less -R`) in colour; into a pipe it is plain text. Reads the tasks file and the
//! repository, never writes either (`run::changes`).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use color_eyre::eyre::Result;

use super::args::DiffArgs;
use super::inputs::{EXIT_INVALID, print_problems};
use crate::core::facts::changes::{Changes, DiffLine, classify_diff};
use crate::run::changes::task::task_changes;
use crate::run::inputs::{default_runs_dir, store_problems};
use crate::run::store::TaskStore;

pub(super) fn diff(args: &DiffArgs) -> Result<i32> {
    let store = match TaskStore::read_only(&args.tasks) {
        Ok(store) => store,
        Err(e) => {
            print_problems(&store_problems(&e));
            return Ok(EXIT_INVALID);
        }
    };
    let Some(task) = store
        .file()
        .tasks()
        .iter()
        .find(|t| t.task_id == args.task_id)
    else {
        eprintln!(
            "herd: {} has no task \"{}\"",
            args.tasks.display(),
            args.task_id
        );
        return Ok(EXIT_INVALID);
    };
    let runs_dir = args
        .runs_dir
        .clone()
        .unwrap_or_else(|| default_runs_dir(&args.tasks));
    let read = task_changes(task, &args.tasks, &runs_dir, args.attempt, !args.stat);
    let (folder, attempt, found) = match read {
        Ok(read) => read,
        Err(error) => {
            eprintln!("herd: {error}");
            return Ok(EXIT_INVALID);
        }
    };
    let heading = heading(&task.task_id, attempt, &folder, &found.changes);
    show(&report(&heading, &found.changes, &found.text))?;
    Ok(0)
}

/// `fix-042 · attempt 2 · /src/app (main) · 3 files +120 −14`
fn heading(task_id: &str, attempt: u32, folder: &Path, changes: &Changes) -> String {
    let branch = match changes {
        Changes::InRepository(repo) => repo
            .branch
            .as_deref()
            .map(|b| format!(" ({b})"))
            .unwrap_or_default(),
        Changes::NotARepository => String::new(),
    };
    format!(
        "{task_id} · attempt {attempt} · {}{branch} · {}",
        folder.display(),
        changes.summary()
    )
}

/// The heading, the files with their counts, and the diff's text, as lines.
fn report(heading: &str, changes: &Changes, text: &str) -> String {
    let mut out = format!("{heading}\n");
    if let Changes::InRepository(repo) = changes {
        for line in repo.stat_lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if !text.is_empty() {
        out.push('\n');
        out.push_str(text);
    }
    out
}

/// Prints `text`: into the pager, coloured, on a terminal; as it is otherwise.
fn show(text: &str) -> Result<()> {
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        stdout.lock().write_all(text.as_bytes())?;
        return Ok(());
    }
    let coloured = colour(text);
    if let Some(mut pager) = pager() {
        if let Some(mut input) = pager.stdin.take() {
            // The operator may quit the pager before reading it all.
            let _ = input.write_all(coloured.as_bytes());
        }
        pager.wait()?;
        return Ok(());
    }
    stdout.lock().write_all(coloured.as_bytes())?;
    Ok(())
}

/// `$PAGER` (run by the shell, as git does), else `less -R`; `None` when neither starts.
fn pager() -> Option<std::process::Child> {
    let command = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -R".into());
    Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env(
            "LESS",
            std::env::var("LESS").unwrap_or_else(|_| "FRX".into()),
        )
        .stdin(Stdio::piped())
        .spawn()
        .ok()
}

/// The diff's lines in colour: file headers bold, hunks cyan, added green, removed red.
fn colour(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for (kind, line) in classify_diff(text) {
        let code = match kind {
            DiffLine::FileHeader if line.starts_with("diff --git") => "1",
            DiffLine::FileHeader => "",
            DiffLine::Hunk => "36",
            DiffLine::Added => "32",
            DiffLine::Removed => "31",
            DiffLine::Context => "",
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&format!("\x1b[{code}m{line}\x1b[0m"));
        }
        out.push('\n');
    }
    out
}
