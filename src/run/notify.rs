//! Runs the operator's `notify` command, one run per event with its JSON on stdin, on a worker:
//! the loop never waits, and a failure (or a run past `TIME_LIMIT`, killed) is only logged.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::jobs::{self, Job};

/// How long one run of the command may take before it is killed.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);
/// How much of the command's standard error the log keeps.
const STDERR_KEPT: usize = 400;

/// One run of the command: what to run and what it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyJob {
    pub argv: Vec<String>,
    /// The event, one line of JSON.
    pub payload: String,
    /// `HERD_EVENT`, `HERD_TASK_ID`, `HERD_MESSAGE`: the event's gist for one-line commands.
    pub env: Vec<(String, String)>,
    /// Where it runs: the tasks file's folder, so relative paths mean the same.
    pub cwd: Option<std::path::PathBuf>,
}

/// The worker that runs the jobs in order, one at a time.
pub struct Notifier {
    jobs: Option<mpsc::Sender<NotifyJob>>,
    worker: Option<Job<()>>,
    /// Jobs handed over and not yet done, to bound the wait at the end.
    pending: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    time_limit: Duration,
}

impl Notifier {
    /// Starts the worker; each run may take `time_limit`.
    pub fn start(time_limit: Duration) -> Notifier {
        let (jobs, inbox) = mpsc::channel::<NotifyJob>();
        let pending = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let left = pending.clone();
        let worker = jobs::spawn_thread("notify", move || {
            for job in inbox {
                run_logged(&job, time_limit);
                left.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        let worker = match worker {
            Ok(handle) => Some(handle),
            Err(jobs::NotStarted { error, .. }) => {
                tracing::warn!(
                    "notify: cannot start its worker thread ({error}); no notifications"
                );
                None
            }
        };
        Notifier {
            jobs: worker.as_ref().map(|_| jobs),
            worker,
            pending,
            time_limit,
        }
    }

    /// Hands a job to the worker; never waits.
    pub fn send(&self, job: NotifyJob) {
        let Some(jobs) = &self.jobs else { return };
        self.pending
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if jobs.send(job).is_err() {
            self.pending
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            tracing::warn!("notify: the worker is gone; an event was not sent");
        }
    }
}

impl Drop for Notifier {
    /// Sends the last events before herd exits, each within its time limit.
    fn drop(&mut self) {
        self.jobs = None;
        let Some(worker) = self.worker.take() else {
            return;
        };
        let left = self.pending.load(std::sync::atomic::Ordering::SeqCst) as u32;
        let deadline = Instant::now() + (self.time_limit + Duration::from_secs(1)) * left.max(1);
        while !worker.is_finished() {
            if Instant::now() >= deadline {
                tracing::warn!("notify: events still being sent when herd exits were left");
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = worker.join();
    }
}

/// How one run of the command went.
#[derive(Debug)]
pub enum NotifyRun {
    Done,
    Failed { status: ExitStatus, stderr: String },
    TimedOut,
    CannotStart(std::io::Error),
}

fn run_logged(job: &NotifyJob, time_limit: Duration) {
    let event = job
        .env
        .iter()
        .find(|(k, _)| k == "HERD_EVENT")
        .map_or("", |(_, v)| v.as_str());
    let program = job.argv.first().map_or("", String::as_str);
    match run(job, time_limit) {
        NotifyRun::Done => tracing::info!(event, "notify: {program} ran"),
        NotifyRun::Failed { status, stderr } => {
            tracing::warn!(event, "notify: {program} failed ({status}): {stderr}")
        }
        NotifyRun::TimedOut => tracing::warn!(
            event,
            "notify: {program} did not end within {} s and was killed",
            time_limit.as_secs()
        ),
        NotifyRun::CannotStart(error) => {
            tracing::warn!(event, "notify: cannot run {program}: {error}")
        }
    }
}

/// Runs one job to its end or its time limit.
pub fn run(job: &NotifyJob, time_limit: Duration) -> NotifyRun {
    let mut child = match spawn(job) {
        Ok(child) => child,
        Err(error) => return NotifyRun::CannotStart(error),
    };
    let stderr = child.stderr.take().map(read_in_background);
    if let Some(mut stdin) = child.stdin.take() {
        let payload = job.payload.clone();
        // A command that does not read its stdin must not hold the worker.
        let feeding = jobs::spawn_thread("notify-stdin", move || {
            let _ = stdin.write_all(payload.as_bytes());
            let _ = stdin.write_all(b"\n");
        });
        if let Err(not) = feeding {
            // Its stdin closed unwritten: the command reads an end, and the run goes on.
            tracing::warn!("notify: {not}");
        }
    }
    let deadline = Instant::now() + time_limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) | Err(_) => {
                kill(&mut child);
                return NotifyRun::TimedOut;
            }
        }
    };
    if status.success() {
        return NotifyRun::Done;
    }
    let stderr = stderr
        .and_then(|r| r.recv_timeout(Duration::from_secs(1)).ok())
        .unwrap_or_default();
    NotifyRun::Failed {
        status,
        stderr: last_chars(stderr.trim(), STDERR_KEPT),
    }
}

fn spawn(job: &NotifyJob) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let (program, args) = job
        .argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("the notify command is empty"))?;
    let mut command = Command::new(program);
    if let Some(cwd) = &job.cwd {
        command.current_dir(cwd);
    }
    command
        .args(args)
        .envs(job.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own group: on a time-out everything it started goes with it.
        .process_group(0)
        .spawn()
}

fn kill(child: &mut Child) {
    if let Some(group) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    // Not started, its sender goes with the work: the run is told of no stderr.
    let _ = jobs::spawn_thread("notify-stderr", move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

fn last_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let tail: String = text.chars().skip(count - max).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(script: &str) -> NotifyJob {
        NotifyJob {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            payload: r#"{"event":"batch_ended"}"#.into(),
            env: vec![("HERD_EVENT".into(), "batch_ended".into())],
            cwd: None,
        }
    }

    #[test]
    fn the_command_reads_the_event_on_stdin_and_its_env() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("got");
        let script = format!(
            "cat > '{}'; echo \"$HERD_EVENT\" >> '{}'",
            out.display(),
            out.display()
        );
        assert!(matches!(run(&job(&script), TIME_LIMIT), NotifyRun::Done));
        let got = std::fs::read_to_string(&out).expect("written");
        assert_eq!(got, "{\"event\":\"batch_ended\"}\nbatch_ended\n");
    }

    #[test]
    fn the_command_runs_in_the_folder_it_is_given() {
        let dir = tempfile::tempdir().expect("temp dir");
        let here = NotifyJob {
            cwd: Some(dir.path().to_path_buf()),
            ..job("cat > got")
        };
        assert!(matches!(run(&here, TIME_LIMIT), NotifyRun::Done));
        assert!(dir.path().join("got").exists());
    }

    #[test]
    fn failures_are_told_apart() {
        match run(&job("echo nope >&2; exit 3"), TIME_LIMIT) {
            NotifyRun::Failed { status, stderr } => {
                assert_eq!(status.code(), Some(3));
                assert_eq!(stderr, "nope");
            }
            other => panic!("{other:?}"),
        }
        let missing = NotifyJob {
            argv: vec!["/nonexistent/herd-notify".into()],
            ..job("")
        };
        assert!(matches!(
            run(&missing, TIME_LIMIT),
            NotifyRun::CannotStart(_)
        ));
    }

    #[test]
    fn a_command_that_hangs_is_killed_at_the_time_limit_with_its_children() {
        let started = Instant::now();
        let outcome = run(&job("sleep 30 & sleep 30"), Duration::from_millis(300));
        assert!(matches!(outcome, NotifyRun::TimedOut), "{outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn the_worker_sends_what_it_was_handed_before_it_is_dropped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("got");
        let notifier = Notifier::start(TIME_LIMIT);
        for _ in 0..3 {
            notifier.send(job(&format!("cat >> '{}'", out.display())));
        }
        drop(notifier);
        let got = std::fs::read_to_string(&out).expect("written");
        assert_eq!(got.lines().count(), 3, "{got}");
    }
}
