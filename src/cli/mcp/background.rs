//! Who runs the tasks file now, and starting a herd in the background for `run_agent` when none
//! does: `herd run --headless --tasks FILE --only ID` in a session of its own (no terminal, so it
//! outlives the MCP client and its terminal), its output appended to `mcp-herd.log` in the runs
//! folder. The herd ends by itself once the task has its verdict.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::files::Setup;
use super::tools::ToolError;
use crate::core::classify::ExitStatus;
use crate::run::rendezvous::{Registration, Rendezvous, RunMode, process_alive};
use crate::run::spawn::{DetachedRequest, spawn_detached, wait_for_exit};
use crate::run::store::lock_path;

/// The name of the log of the herds `run_agent` starts, in the runs folder.
pub(super) const LOG_NAME: &str = "mcp-herd.log";

/// How long `run_agent` waits for the herd it started to take the tasks file.
const START_WAIT: Duration = Duration::from_secs(20);

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

/// The herds this server started that have ended, and how: each is reaped by a thread of its
/// own, so none is left a zombie while the server runs.
#[derive(Debug, Clone, Default)]
pub(super) struct Children {
    ended: Arc<Mutex<HashMap<u32, ExitStatus>>>,
}

impl Children {
    fn watch(&self, pid: u32) {
        let ended = Arc::clone(&self.ended);
        std::thread::spawn(move || {
            let status = wait_for_exit(pid);
            ended
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(pid, status);
        });
    }

    fn ended(&self, pid: u32) -> Option<ExitStatus> {
        self.ended
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&pid)
            .cloned()
    }
}

/// A background herd started for one task.
#[derive(Debug, Clone)]
pub(super) struct Started {
    pub(super) pid: u32,
    pub(super) command: Vec<String>,
    pub(super) log: PathBuf,
    /// It has already ended (the task was quick), with exit code 0 or 1.
    pub(super) ended: Option<i32>,
}

/// Starts a background herd for task `task_id` alone (`--retry` it when it failed or was
/// cancelled) and waits until it holds the tasks file or has ended.
pub(super) fn start(
    setup: &Setup,
    task_id: &str,
    retry: bool,
    children: &Children,
) -> Result<Started, ToolError> {
    let failed = |what: &str, error: std::io::Error| {
        ToolError::new(
            format!("cannot start a herd for task {task_id:?}"),
            format!("{what}: {error}"),
            "check that the runs folder can be written, or start `herd run --tasks FILE` \
             yourself",
        )
    };
    let tasks = std::path::absolute(&setup.tasks).map_err(|e| failed("the tasks file", e))?;
    let runs_dir =
        std::path::absolute(&setup.runs_dir).map_err(|e| failed("the runs folder", e))?;
    let program = std::env::current_exe().map_err(|e| failed("herd's own path", e))?;
    let command = command_line(setup, &program, &tasks, &runs_dir, task_id, retry);
    make_private_folder(&runs_dir).map_err(|e| failed(&runs_dir.display().to_string(), e))?;
    let log = runs_dir.join(LOG_NAME);
    let header = format!(
        "--- {} herd mcp starts: {}\n",
        jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        command.join(" ")
    );
    append(&log, &header).map_err(|e| failed(&log.display().to_string(), e))?;
    let cwd = tasks.parent().unwrap_or(Path::new("/"));
    let pid = spawn_detached(&DetachedRequest {
        program: &program,
        argv: &command,
        cwd,
        log: &log,
    })
    .map_err(|e| failed("spawn", e))?;
    children.watch(pid);
    let ended = wait_until_up(&tasks, pid, children);
    match ended {
        Some(ExitStatus {
            code: Some(code @ (0 | 1)),
            ..
        }) => Ok(Started {
            pid,
            command,
            log,
            ended: Some(code),
        }),
        Some(status) => Err(ToolError::new(
            format!(
                "the herd started for task {task_id:?} ended at once ({})",
                ended_how(&status)
            ),
            log_since(&log, &header),
            "fix what herd says above (`herd validate --tasks FILE` checks the file and \
             profiles), then run_agent again",
        )),
        None => Ok(Started {
            pid,
            command,
            log,
            ended: None,
        }),
    }
}

fn ended_how(status: &ExitStatus) -> String {
    match (&status.code, &status.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "no exit status".into(),
    }
}

/// `herd run --headless` for the task alone, with the paths and files `herd mcp` was given.
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
        "--headless".into(),
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

/// Waits until herd `pid` holds the tasks file (its registration or its lock names it) or has
/// ended; how it ended, if it did.
fn wait_until_up(tasks: &Path, pid: u32, children: &Children) -> Option<ExitStatus> {
    let deadline = Instant::now() + START_WAIT;
    while Instant::now() < deadline {
        if let Some(status) = children.ended(pid) {
            return Some(status);
        }
        if running_herd(tasks).is_some_and(|herd| herd.pid == pid) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    children.ended(pid)
}

fn make_private_folder(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn append(log: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)?;
    file.write_all(text.as_bytes())
}

/// What herd wrote into the log after `header` (its last 20 lines): why it did not start.
fn log_since(log: &Path, header: &str) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let after = text
        .rfind(header)
        .map_or(text.as_str(), |at| &text[at + header.len()..]);
    let lines: Vec<&str> = after.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(20)..];
    if tail.is_empty() {
        format!("it wrote nothing into {}", log.display())
    } else {
        tail.join("\n")
    }
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
            "/bin/herd run --headless --tasks /w/tasks.json --runs-dir /w/runs --only t1 \
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
