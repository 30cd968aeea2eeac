//! `herd attach`: finds the background herd of a tasks file (or this user's only one) and
//! attaches this terminal to it; says how it ended.

use std::io::IsTerminal;
use std::path::PathBuf;

use color_eyre::eyre::Result;

use super::args::AttachArgs;
use super::status::{how_it_ended, runs_dir_of, since_you_left};
use crate::run::last_run::RunEnd;
use crate::run::rendezvous::{Registration, Rendezvous, RunMode};
use crate::serve::background::client::{self, Ending};

pub(super) fn attach(args: &AttachArgs) -> Result<i32> {
    let mut tasks_file = args.tasks.clone();
    let socket = match (&args.socket, &args.tasks) {
        (Some(socket), _) => socket.clone(),
        (None, Some(tasks)) => {
            let rendezvous = match Rendezvous::for_tasks(tasks) {
                Ok(r) => r,
                Err(error) => {
                    eprintln!("herd: {}: {error}", tasks.display());
                    return Ok(1);
                }
            };
            if let Some(gone) = rendezvous.clear_leftovers() {
                let file = tasks.display();
                eprintln!(
                    "herd: {file}: {}; start it again with `herd run --detach --tasks {file}`",
                    gone.gone_note()
                );
                return Ok(1);
            }
            match Registration::read_live(&rendezvous.registration) {
                Some(running) if running.mode != RunMode::Background => {
                    eprintln!(
                        "herd: {} runs {} (pid {}); only a background run (herd run --detach) \
                         can be attached; herd ctl --tasks {} ... talks to this one",
                        tasks.display(),
                        running.mode.describe(),
                        running.pid,
                        tasks.display()
                    );
                    return Ok(1);
                }
                None => {
                    ended_run(tasks);
                    return Ok(1);
                }
                _ => rendezvous.attach,
            }
        }
        (None, None) => match only_background_herd() {
            Ok((socket, tasks)) => {
                tasks_file = Some(tasks);
                socket
            }
            Err(code) => return Ok(code),
        },
    };
    // Said first: no herd to attach to matters more than where this runs.
    if let Err(error) = crate::run::ipc::connect(&socket) {
        eprintln!(
            "herd: no background herd answers on {}: {error}",
            socket.display()
        );
        return Ok(1);
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("herd: attach needs a terminal");
        return Ok(1);
    }
    if let Some(tasks) = &tasks_file
        && !args.no_digest
    {
        show_digest_first(tasks, args.digest);
    }
    let hint = args
        .tasks
        .as_ref()
        .map(|t| format!(" (herd attach --tasks {} to come back)", t.display()))
        .unwrap_or_default();
    match client::attach(&socket) {
        Ok(Ending::DetachKey) => println!("herd: detached; the batch runs on{hint}"),
        Ok(Ending::Said(text)) if text.starts_with("herd: detached") => println!("{text}{hint}"),
        Ok(Ending::Said(text)) => println!("{text}"),
        Ok(Ending::TerminalClosed) => {}
        Ok(Ending::Lost) => println!("herd: the background herd closed the connection"),
        Err(error) => {
            eprintln!("herd: {error}");
            return Ok(1);
        }
    }
    Ok(0)
}

/// "Since you left" as the first screen before the dashboard, when the operator was away long
/// enough for it to be news, or with `--digest`. Only this client knows its operator came back.
fn show_digest_first(tasks: &std::path::Path, always: bool) {
    let Ok(store) = crate::run::store::TaskStore::read_only(tasks) else {
        return;
    };
    let Some((since, lines)) = since_you_left(store.file(), tasks) else {
        return;
    };
    let now = jiff::Timestamp::now();
    if !always && !crate::core::operator::digest::worth_a_first_screen(&lines, since, now) {
        return;
    }
    if let Err(error) = first_screen(&lines) {
        eprintln!("herd: cannot show what happened since you left: {error}");
    }
}

/// Leaves raw mode and the alternate screen however the first screen ends.
struct FirstScreenGuard;

impl Drop for FirstScreenGuard {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
        let _ = crossterm::execute!(std::io::stdout(), crossterm::terminal::LeaveAlternateScreen);
    }
}

/// `lines` on a screen of their own until a key is pressed.
fn first_screen(lines: &[String]) -> std::io::Result<()> {
    use crossterm::{cursor, event, execute, terminal};
    use std::io::Write;
    let mut out = std::io::stdout();
    execute!(
        out,
        terminal::EnterAlternateScreen,
        terminal::Clear(terminal::ClearType::All),
        cursor::MoveTo(0, 0)
    )?;
    let _guard = FirstScreenGuard;
    terminal::enable_raw_mode()?;
    for line in lines {
        write!(out, "{line}\r\n")?;
    }
    write!(out, "\r\nPress any key to open the dashboard.")?;
    out.flush()?;
    loop {
        if let event::Event::Key(key) = event::read()?
            && key.kind == event::KeyEventKind::Press
        {
            return Ok(());
        }
    }
}

/// No herd runs `tasks`: how its last run ended and what happened since the operator last
/// looked, else how to start one.
fn ended_run(tasks: &std::path::Path) {
    let file = tasks.display();
    let start = format!("start one in the background with `herd run --detach --tasks {file}`");
    let Some(end) = RunEnd::read(&runs_dir_of(tasks, None)) else {
        eprintln!("herd: no herd runs {file}: {start}");
        return;
    };
    eprintln!("herd: no herd runs {file} now. {}", how_it_ended(&end));
    let file_now = crate::run::store::TaskStore::read_only(tasks);
    if let Some((_, lines)) = file_now
        .ok()
        .and_then(|store| since_you_left(store.file(), tasks))
    {
        eprint!("\n{}\n", lines.join("\n"));
    }
    // Exit 0: every enabled task completed, nothing is left to run.
    if end.exit_code != 0 {
        eprintln!("\nTo run what is left: herd run --detach --tasks {file}");
    }
}

/// The attach socket of this user's one background herd; when there is none or several, says so
/// and gives the exit code.
fn only_background_herd() -> Result<(PathBuf, PathBuf), i32> {
    let folder = match crate::run::rendezvous::folder() {
        Ok(folder) => folder,
        Err(error) => {
            eprintln!("herd: {error}");
            return Err(1);
        }
    };
    let mut found: Vec<(Registration, PathBuf)> = std::fs::read_dir(&folder)
        .map(|entries| entries.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .filter_map(|path| {
            let key = path.file_stem()?.to_str()?.to_string();
            if let Some(gone) = Rendezvous::in_folder(&folder, &key).clear_leftovers() {
                eprintln!("herd: {}: {}", gone.tasks.display(), gone.gone_note());
            }
            let running = Registration::read_live(&path)?;
            (running.mode == RunMode::Background)
                .then(|| (running, Rendezvous::in_folder(&folder, &key).attach))
        })
        .collect();
    match found.len() {
        0 => {
            eprintln!("herd: no background herd of yours runs (start one with herd run --detach)");
            Err(1)
        }
        1 => {
            let (running, socket) = found.remove(0);
            Ok((socket, running.tasks))
        }
        _ => {
            eprintln!("herd: several background herds run; name one with --tasks:");
            found.sort_by(|a, b| a.0.tasks.cmp(&b.0.tasks));
            for (running, _) in &found {
                eprintln!(
                    "  herd attach --tasks {}   (pid {}, since {})",
                    running.tasks.display(),
                    running.pid,
                    running.started_at
                );
            }
            Err(2)
        }
    }
}
