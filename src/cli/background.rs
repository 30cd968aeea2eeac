//! `herd run --detach`: starts the session holder (`herd hold`, no terminal, its output in
//! runs/background.log), waits until its dashboard is up (or ended), and tells how to attach,
//! watch and stop it.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{IsTerminal, Read, Seek, SeekFrom};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};

use super::args::{HoldArgs, RunArgs};
use super::inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID};
use crate::run::console::{Console, note};
use crate::run::inputs::default_runs_dir;
use crate::run::ipc;
use crate::run::rendezvous::{Registration, Rendezvous, RunMode};
use crate::serve::background::holder;
use crate::serve::background::start::Starting;

/// How long the dashboard may take to come up before `--detach` gives up waiting.
const START_WAIT: Duration = Duration::from_secs(60);

/// The size the background dashboard starts at: this terminal's, else 120x40.
fn first_size() -> (u16, u16) {
    std::io::stdout()
        .is_terminal()
        .then(|| crossterm::terminal::size().ok())
        .flatten()
        .filter(|(c, r)| *c >= 20 && *r >= 5)
        .unwrap_or((120, 40))
}

pub(super) fn detach(args: &RunArgs) -> Result<i32> {
    let tasks = &args.tasks.tasks;
    let rendezvous = match Rendezvous::for_tasks(tasks) {
        Ok(r) => r,
        Err(error) => {
            note(&format!("herd: {}: {error}", tasks.display()));
            return Ok(EXIT_INVALID);
        }
    };
    // Held until the herd started here is up: a second --detach waits, then finds this one.
    let _starting = match Starting::take(&rendezvous.start) {
        Ok(starting) => starting,
        Err(error) => {
            note(&format!("herd: {}: {error}", rendezvous.start.display()));
            return Ok(EXIT_CANNOT_GO_ON);
        }
    };
    if let Some(gone) = rendezvous.clear_leftovers() {
        note(&format!("herd: {}: {}", tasks.display(), gone.gone_note()));
    }
    if let Some(running) = Registration::read_live(&rendezvous.registration) {
        let file = tasks.display();
        let reach = match running.mode {
            RunMode::Background => format!("see it with `herd attach --tasks {file}`"),
            _ => format!("talk to it with `herd ctl --tasks {file} ...`"),
        };
        note(&format!(
            "herd: a herd already runs {file} (pid {}, {}, since {}); nothing was started: {reach}",
            running.pid,
            running.mode.describe(),
            running.started_at
        ));
        return Ok(EXIT_INVALID);
    }
    let runs_dir = args
        .runs_dir
        .clone()
        .unwrap_or_else(|| default_runs_dir(tasks));
    let runs_dir = std::path::absolute(&runs_dir).unwrap_or(runs_dir);
    let log_path = runs_dir.join("background.log");
    let (log, start) = open_log(&runs_dir, &log_path)
        .wrap_err_with(|| format!("cannot open {}", log_path.display()))?;
    let (cols, rows) = first_size();
    let mut holder = Command::new(std::env::current_exe().wrap_err("cannot find herd's binary")?)
        .arg("hold")
        .arg("--tasks")
        .arg(tasks)
        .arg("--size")
        .arg(format!("{cols}x{rows}"))
        .arg("--")
        .args(dashboard_args())
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .wrap_err("cannot start the background herd")?;
    let deadline = Instant::now() + START_WAIT;
    loop {
        if let Some(status) = holder.try_wait()? {
            let code = status.code().unwrap_or(EXIT_CANNOT_GO_ON);
            Console::new(std::io::stderr(), "stderr").text(&log_since(&log_path, start));
            note(&format!(
                "herd: the background run ended at once (exit {code}); its output is above"
            ));
            return Ok(code);
        }
        // Up once it is registered (a second --detach then finds it) and attachable.
        if ipc::answers(&rendezvous.attach)
            && Registration::read_live(&rendezvous.registration).is_some()
        {
            break;
        }
        if Instant::now() >= deadline {
            note(&format!(
                "herd: the background herd (pid {}) is not up after {}s; see {}",
                holder.id(),
                START_WAIT.as_secs(),
                log_path.display()
            ));
            return Ok(EXIT_CANNOT_GO_ON);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = Registration::read_live(&rendezvous.registration).map_or(holder.id(), |r| r.pid);
    // The batch runs already: a closed stdout ends only this printing.
    Console::stdout().text(&started_text(tasks, pid, &log_path));
    // Its web view's token is printed here, never into its log.
    if args.web.is_some() {
        match super::web::start(tasks, None) {
            Ok((_, text)) => Console::stdout().text(&text),
            Err(why) => note(&format!("herd: the web view did not start: {why}")),
        }
    }
    Ok(0)
}

/// herd's own arguments less `--detach`: the dashboard's command line.
fn dashboard_args() -> Vec<OsString> {
    std::env::args_os()
        .skip(1)
        .filter(|arg| arg != "--detach")
        .collect()
}

/// runs/ (made private) and the log opened for appending; where this run's part of it starts.
fn open_log(runs_dir: &Path, log_path: &Path) -> std::io::Result<(fs::File, u64)> {
    if !runs_dir.exists() {
        fs::create_dir_all(runs_dir)?;
        fs::set_permissions(runs_dir, fs::Permissions::from_mode(0o700))?;
    }
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(log_path)?;
    let start = log.metadata()?.len();
    Ok((log, start))
}

fn log_since(path: &Path, start: u64) -> String {
    let mut text = String::new();
    if let Ok(mut file) = fs::File::open(path)
        && file.seek(SeekFrom::Start(start)).is_ok()
    {
        let _ = file.read_to_string(&mut text);
    }
    text
}

/// What `--detach` prints once the dashboard is up.
fn started_text(tasks: &Path, pid: u32, log: &Path) -> String {
    let file = shell_word(tasks);
    format!(
        "herd: the batch runs in the background (pid {pid}); its output goes to {log}\n\
         \x20 see it:   herd attach --tasks {file}   (Ctrl-\\ detaches; q asks: detach or stop)\n\
         \x20 status:   herd status --tasks {file}\n\
         \x20 events:   herd ctl --tasks {file} watch   (one JSON line per event)\n\
         \x20 stop it:  kill {pid}   (the running tasks go back to retryable)\n",
        log = log.display()
    )
}

/// The path as one shell word, quoted when it needs to be.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `herd hold`: the holder's exit code is the dashboard's.
pub(super) fn hold(args: &HoldArgs) -> i32 {
    let options = holder::HoldOptions {
        tasks: args.tasks.clone(),
        args: args.args.clone(),
        cols: args.size.0,
        rows: args.size.1,
    };
    match holder::hold(&options) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("herd hold: {error}");
            EXIT_CANNOT_GO_ON
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_started_text_says_how_to_attach_watch_and_stop() {
        let text = started_text(
            Path::new("my tasks.json"),
            42,
            Path::new("runs/background.log"),
        );
        assert!(
            text.contains("herd attach --tasks 'my tasks.json'"),
            "{text}"
        );
        assert!(
            text.contains("herd status --tasks 'my tasks.json'"),
            "{text}"
        );
        assert!(
            text.contains("herd ctl --tasks 'my tasks.json' watch"),
            "{text}"
        );
        assert!(text.contains("kill 42"), "{text}");
        assert!(text.contains("runs/background.log"), "{text}");
    }
}
