//! `herd replay PATH`: resolves the path, indexes the file (with a progress line for big ones),
//! then runs the player full-screen. `--print` skips all of it.

use std::io::{BufReader, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use crossterm::event::{self, Event};

use super::args::ReplayArgs;
use super::inputs::EXIT_INVALID;
use crate::replay::cast::CastError;
use crate::replay::print::{resolve_cast, screen_at};
use crate::replay::view::{Handled, ReplayOptions, ReplayView};
use crate::term::Session;

/// Problems listed one per line before the summary says "and N more".
const PROBLEMS_LISTED: usize = 10;

pub(super) fn replay(args: &ReplayArgs) -> Result<i32> {
    let cast = match resolve_cast(&args.path) {
        Ok(cast) => cast,
        Err(error) => return Ok(refuse(&args.path, &error)),
    };
    if args.print {
        return Ok(print(&cast, args.at));
    }
    if !std::io::stdout().is_terminal() {
        eprintln!(
            "herd: the player needs a terminal; for text use: herd replay {} --print [--at SECONDS]",
            args.path.display()
        );
        return Ok(EXIT_INVALID);
    }
    let options = ReplayOptions {
        speed: args.speed,
        idle_limit: args.idle_limit,
        start_at: args.at,
        autoplay: args.at.is_none(),
    };
    match open_with_progress(&cast, options) {
        Ok(view) => run_player(view),
        Err(error) => Ok(refuse(&cast, &error)),
    }
}

/// Says why `path` cannot be replayed; the exit status.
fn refuse(path: &Path, error: &dyn std::fmt::Display) -> i32 {
    eprintln!("herd: {}: {error}", path.display());
    EXIT_INVALID
}

fn print(cast: &Path, at: Option<f64>) -> i32 {
    let printed = match std::fs::File::open(cast) {
        Ok(file) => screen_at(BufReader::new(file), at),
        Err(error) => Err(CastError::Io(error)),
    };
    let printed = match printed {
        Ok(printed) => printed,
        Err(error) => return refuse(cast, &error),
    };
    println!("{}", printed.text);
    for problem in printed.problems.iter().take(PROBLEMS_LISTED) {
        eprintln!("herd: {}:{problem}", cast.display());
    }
    if printed.problems.len() > PROBLEMS_LISTED {
        eprintln!(
            "herd: {}: {} more problem(s)",
            cast.display(),
            printed.problems.len() - PROBLEMS_LISTED
        );
    }
    0
}

/// `runs/<task>/attempt_<n>.cast` is shown as `<task> attempt <n>`.
fn display_name(cast: &Path) -> String {
    let file = cast
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let task = cast
        .parent()
        .and_then(Path::file_name)
        .map(|d| d.to_string_lossy().into_owned());
    let attempt = file
        .strip_prefix("attempt_")
        .and_then(|rest| rest.strip_suffix(".cast"));
    match (task, attempt) {
        (Some(task), Some(n)) => format!("{task} · attempt {n}"),
        _ => file,
    }
}

fn open_with_progress(cast: &Path, options: ReplayOptions) -> Result<ReplayView, CastError> {
    let total = std::fs::metadata(cast).map(|m| m.len()).unwrap_or(0);
    let started = Instant::now();
    let mut shown = false;
    let mut progress = |read: u64| {
        if started.elapsed() > Duration::from_millis(300) && total > 0 {
            shown = true;
            eprint!(
                "\rherd: indexing {} … {}%",
                cast.display(),
                read * 100 / total
            );
            let _ = std::io::stderr().flush();
        }
    };
    let view = ReplayView::open(cast, display_name(cast), options, &mut progress);
    if shown {
        eprintln!();
    }
    view
}

fn run_player(mut view: ReplayView) -> Result<i32> {
    let mut session = Session::enter(false)?;
    let mut dirty = true;
    loop {
        let now = Instant::now();
        if view.tick(now) || dirty {
            session
                .terminal
                .draw(|frame| view.draw_at(frame, frame.area(), now))
                .wrap_err("cannot draw")?;
            dirty = false;
        }
        let now = Instant::now();
        let timeout = view
            .next_wakeup(now)
            .map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(now)
            });
        if !event::poll(timeout).wrap_err("cannot read the keyboard")? {
            continue;
        }
        match event::read().wrap_err("cannot read the keyboard")? {
            Event::Key(key) => match view.handle_key(key) {
                Handled::Exit => break,
                Handled::Yes => dirty = true,
                Handled::Ignored => {}
            },
            Event::Resize(..) => dirty = true,
            _ => {}
        }
    }
    session.restore();
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_named_after_their_task() {
        assert_eq!(
            display_name(Path::new("runs/fix-issue-142/attempt_2.cast")),
            "fix-issue-142 · attempt 2"
        );
        assert_eq!(display_name(Path::new("demo.cast")), "demo.cast");
    }
}
