//! `herd diff TASK [--stat] [--attempt N]`: what a task's agent changed in its folder (its
//! worktree for a `"worktree": true` task) in the attempt, from its start to its end (to now
//! while it runs): a summary line, the files
//! with their counts, and the unified diff. On a terminal it goes through the pager (`$PAGER`,
//! else `less -R`) in the diff view's colours (the code in its language's); into a pipe it is
//! plain text. Reads the tasks file and the
//! repository, never writes either (`run::changes`).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use color_eyre::eyre::Result;

use super::args::DiffArgs;
use super::inputs::{EXIT_INVALID, print_problems};
use ratatui::style::{Color, Modifier, Style};

use crate::core::facts::changes::Changes;
use crate::run::changes::task::task_changes;
use crate::run::inputs::{default_runs_dir, store_problems};
use crate::run::store::TaskStore;
use crate::ui::diff_view::{DiffView, coloured_lines};

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
    show(&report(&heading, &found.changes), &found.text)?;
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
        Changes::NotARepository | Changes::NotRecorded { .. } => String::new(),
    };
    format!(
        "{task_id} · attempt {attempt} · {}{branch} · {}",
        folder.display(),
        changes.summary()
    )
}

/// The heading and the files with their counts, as lines.
fn report(heading: &str, changes: &Changes) -> String {
    let mut out = format!("{heading}\n");
    if let Changes::InRepository(repo) = changes {
        for line in repo.stat_lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// Prints `report`, then (after a blank line) the diff `text`: into the pager, the diff
/// coloured, on a terminal; as they are otherwise.
fn show(report: &str, text: &str) -> Result<()> {
    let stdout = std::io::stdout();
    let gap = if text.is_empty() { "" } else { "\n" };
    if !stdout.is_terminal() {
        stdout
            .lock()
            .write_all(format!("{report}{gap}{text}").as_bytes())?;
        return Ok(());
    }
    let coloured = format!("{report}{gap}{}", colour(text));
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

/// The diff's lines in the colours of the dashboard's diff view (`ui::diff_view`): file headers
/// bold, hunks cyan, added lines on green and removed on red, the code in its language's colours.
fn colour(text: &str) -> String {
    let view = DiffView::new("", &Changes::NotARepository, text.to_string());
    let mut out = String::with_capacity(text.len() * 2);
    for line in coloured_lines(&view) {
        for span in &line.spans {
            let style = line.style.patch(span.style);
            match sgr(style) {
                codes if codes.is_empty() => out.push_str(&span.content),
                codes => out.push_str(&format!("\x1b[{codes}m{}\x1b[0m", span.content)),
            }
        }
        out.push('\n');
    }
    out
}

/// The terminal's select-graphic-rendition codes for `style` (`1;32`), empty for none.
fn sgr(style: Style) -> String {
    let colour = |colour: Color, base: u8| match colour {
        Color::Rgb(r, g, b) => Some(format!("{};2;{r};{g};{b}", base + 8)),
        Color::Red => Some((base + 1).to_string()),
        Color::Green => Some((base + 2).to_string()),
        Color::Cyan => Some((base + 6).to_string()),
        _ => None,
    };
    let modifiers = [(Modifier::BOLD, "1"), (Modifier::DIM, "2")];
    let codes = (modifiers.into_iter())
        .filter(|(modifier, _)| style.add_modifier.contains(*modifier))
        .map(|(_, code)| code.to_string())
        .chain(style.fg.and_then(|fg| colour(fg, 30)))
        .chain(style.bg.and_then(|bg| colour(bg, 40)));
    codes.collect::<Vec<_>>().join(";")
}
