//! Who runs the tasks file now, and starting a herd in the background for `run_agent` when none
//! does: `herd run --detach --tasks FILE --only ID`, the background dashboard (`herd attach`
//! shows it; its output goes to `background.log` in the runs folder), which ends by itself once
//! the task has its verdict.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::files::Setup;
use super::tools::ToolError;
use crate::run::rendezvous::{Registration, Rendezvous, RunMode, process_alive};
use crate::run::store::lock_path;

/// How long `run_agent` waits for the background herd to take the tasks file.
const HOLD_WAIT: Duration = Duration::from_secs(20);

/// A herd that runs the tasks file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunningHerd {
    pub(super) pid: u32,
    /// From its registration; `None` when only its lock on the file says it runs.
    pub(super) mode: Option<RunMode>,
    pub(super) runs_dir: Option<PathBuf>,
    /// Its control socket, when it registered one.
    pub(super) control: Option<PathBuf>,
}

impl RunningHerd {
    pub(super) fn to_json(herd: Option<&RunningHerd>) -> Value {
        match herd {
            None => json!({"running": false}),
            Some(herd) => json!({"running": true, "pid": herd.pid, "mode": herd.mode}),
        }
    }
}

/// The herd that runs `tasks`, if one does: its registration beside its control socket, else
/// the lock it holds on the file (`pid N` in `FILE.lock`, of a process that still runs and is not
/// this one, which holds the lock for a moment while it writes a change).
pub(super) fn running_herd(tasks: &Path) -> Option<RunningHerd> {
    if let Ok(rendezvous) = Rendezvous::for_tasks(tasks)
        && let Some(registration) = Registration::read_live(&rendezvous.registration)
    {
        return Some(RunningHerd {
            pid: registration.pid,
            mode: Some(registration.mode),
            runs_dir: Some(registration.runs_dir),
            control: Some(rendezvous.control),
        });
    }
    let target = fs::canonicalize(tasks).ok()?;
    let text = fs::read_to_string(lock_path(&target)).ok()?;
    let pid: u32 = text
        .lines()
        .next()?
        .strip_prefix("pid ")?
        .trim()
        .parse()
        .ok()?;
    (pid != std::process::id() && process_alive(pid)).then_some(RunningHerd {
        pid,
        mode: None,
        runs_dir: None,
        control: None,
    })
}

/// A background herd started for one task.
#[derive(Debug, Clone)]
pub(super) struct Started {
    /// The background herd's pid, as `herd run --detach` printed it.
    pub(super) pid: Option<u32>,
    pub(super) command: Vec<String>,
    pub(super) log: PathBuf,
    /// What `herd run --detach` printed: how to see the run, or that it ended at once.
    pub(super) said: String,
    /// Its exit status when the batch had already ended by then (1: the task did not complete).
    pub(super) ended: Option<i32>,
}

/// Starts a background herd for task `task_id` alone (`--retry` it when it failed or was
/// cancelled); returns once its dashboard is up (or the task has already ended).
pub(super) fn start(setup: &Setup, task_id: &str, retry: bool) -> Result<Started, ToolError> {
    let failed = |what: &str, error: std::io::Error| {
        ToolError::new(
            format!("cannot start a herd for task {task_id:?}"),
            format!("{what}: {error}"),
            "check that herd and the runs folder are where they were, or start \
             `herd run --tasks FILE` yourself",
        )
    };
    let tasks = std::path::absolute(&setup.tasks).map_err(|e| failed("the tasks file", e))?;
    let runs_dir =
        std::path::absolute(&setup.runs_dir).map_err(|e| failed("the runs folder", e))?;
    let program = std::env::current_exe().map_err(|e| failed("herd's own path", e))?;
    let command = command_line(setup, &program, &tasks, &runs_dir, task_id, retry);
    let output = Command::new(&program)
        .args(&command[1..])
        .current_dir(tasks.parent().unwrap_or(Path::new("/")))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed("herd run --detach", e))?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
    .trim()
    .to_string();
    let log = runs_dir.join("background.log");
    match output.status.code() {
        Some(code @ (0 | 1)) => {
            let pid = pid_in(&said);
            if let Some(pid) = pid {
                wait_until_it_holds(&tasks, pid);
            }
            Ok(Started {
                pid,
                command,
                log,
                said,
                ended: pid.is_none().then_some(code),
            })
        }
        code => Err(ToolError::new(
            format!(
                "the background herd for task {task_id:?} did not start (exit {})",
                code.map_or_else(|| "by a signal".to_string(), |c| c.to_string())
            ),
            said,
            "fix what herd says (`herd validate --tasks FILE` checks the file and profiles), \
             then run_agent again",
        )),
    }
}

/// Waits (at most `HOLD_WAIT`) until a herd holds the tasks file or the background herd `pid`
/// has ended: `--detach` returns once the dashboard's holder answers, which may be before the
/// herd in it has taken the file, and a `wait_for` right after must see it running.
fn wait_until_it_holds(tasks: &Path, pid: u32) {
    let deadline = Instant::now() + HOLD_WAIT;
    while Instant::now() < deadline && running_herd(tasks).is_none() && process_alive(pid) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid in `herd run --detach`'s `... in the background (pid N) ...`.
fn pid_in(said: &str) -> Option<u32> {
    let at = said.find("(pid ")? + "(pid ".len();
    let digits: String = said[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `herd run --detach` for the task alone, with the paths and files `herd mcp` was given.
fn command_line(
    setup: &Setup,
    program: &Path,
    tasks: &Path,
    runs_dir: &Path,
    task_id: &str,
    retry: bool,
) -> Vec<String> {
    let text = |path: &Path| path.display().to_string();
    let mut command = vec![
        text(program),
        "run".into(),
        "--detach".into(),
        "--tasks".into(),
        text(tasks),
        "--runs-dir".into(),
        text(runs_dir),
        "--only".into(),
        task_id.into(),
    ];
    if retry {
        command.extend(["--retry".into(), task_id.into()]);
    }
    for (flag, path) in [("--profiles", &setup.profiles), ("--hosts", &setup.hosts)] {
        if let Some(path) = path {
            let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            command.extend([flag.into(), text(&path)]);
        }
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_runs_the_task_alone_with_the_given_files() {
        let setup = Setup {
            tasks: PathBuf::from("/w/tasks.json"),
            profiles: Some(PathBuf::from("/w/p.toml")),
            hosts: None,
            runs_dir: PathBuf::from("/w/runs"),
        };
        let program = Path::new("/bin/herd");
        let plain = command_line(
            &setup,
            program,
            Path::new("/w/tasks.json"),
            Path::new("/w/runs"),
            "t1",
            false,
        );
        assert_eq!(
            plain.join(" "),
            "/bin/herd run --detach --tasks /w/tasks.json --runs-dir /w/runs --only t1 \
             --profiles /w/p.toml"
        );
        let again = command_line(
            &setup,
            program,
            Path::new("/w/tasks.json"),
            Path::new("/w/runs"),
            "t1",
            true,
        );
        assert!(
            again.join(" ").contains("--only t1 --retry t1"),
            "{again:?}"
        );
    }

    #[test]
    fn the_pid_is_read_from_what_detach_prints() {
        let said = "herd: the batch runs in the background (pid 41207); its output goes to x";
        assert_eq!(pid_in(said), Some(41207));
        assert_eq!(
            pid_in("herd: the background run ended at once (exit 0)"),
            None
        );
    }

    #[test]
    fn a_lock_held_by_a_live_process_is_a_running_herd_and_a_stale_one_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tasks = dir.path().join("tasks.json");
        fs::write(&tasks, "{\"tasks\": []}").expect("write");
        assert_eq!(running_herd(&tasks), None);
        let lock = lock_path(&tasks);
        // pid 1 runs in every container; this process is left out (its own short writes).
        fs::write(&lock, "pid 1\nstarted 0\n").expect("write");
        assert_eq!(running_herd(&tasks).map(|h| h.pid), Some(1));
        fs::write(&lock, format!("pid {}\n", std::process::id())).expect("write");
        assert_eq!(running_herd(&tasks), None);
        fs::write(&lock, format!("pid {}\n", i32::MAX)).expect("write");
        assert_eq!(running_herd(&tasks), None);
    }
}
