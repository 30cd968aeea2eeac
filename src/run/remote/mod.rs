//! Attempts on other hosts: the local command that carries a launch plan there (`ssh -tt`, or an
//! exec launcher), and launcher runs without a terminal for sweeps and probes (worker threads).
//!
//! The environment never travels on a command line: a local `sh` wrapper holds the launch script
//! in its own environment and pipes it through the launcher into a private file on the host,
//! which the script deletes first. Not ssh's `SetEnv` (values in `ps`) or `SendEnv` (needs
//! `AcceptEnv`), nor typing it into the remote terminal (echoed into the pane).

pub mod files;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::hygiene::{COOKIE_VAR, EndedProcess};
use super::jobs::{self, Job};
use super::launch::LaunchPlan;
use crate::core::guard::shell_words::quote;
use crate::core::remote;
use crate::core::remote::hosts::{Host, HostSet, Target, launcher_argv};
use crate::core::remote::script::{
    ProbeFacts, RemoteEnded, RemoteLaunch, SweepScope, UPLOAD_FAILED,
};

/// The variable of the local wrapper that holds the launch script.
const SCRIPT_VAR: &str = "HERD_REMOTE_SCRIPT";
/// Longest a sweep or probe may take (connect timeout, grace, a slow host).
const PLAIN_TIMEOUT: Duration = Duration::from_secs(40);

/// The working folder on the host: an absolute `cwd` as it is, else under `workdir`.
pub fn remote_cwd(task_cwd: Option<&str>, host: &Host, local_cwd: &Path) -> String {
    match (task_cwd, &host.workdir) {
        (Some(cwd), _) if cwd.starts_with('/') => cwd.to_string(),
        (Some(cwd), Some(workdir)) => format!("{}/{cwd}", workdir.trim_end_matches('/')),
        (None, Some(workdir)) => workdir.clone(),
        _ => local_cwd.display().to_string(),
    }
}

/// The local plan that runs `plan` on `host` from `local_dir`; `log` gets ssh's own messages.
pub fn wrap(
    plan: &LaunchPlan,
    host: &Host,
    remote_cwd: &str,
    cookie: &str,
    log: &Path,
    local_dir: &Path,
) -> LaunchPlan {
    let mut env: BTreeMap<String, String> = host.env.clone();
    env.extend(plan.env.clone());
    env.remove(COOKIE_VAR);
    env.insert("HERD_HOST".into(), host.name.clone());
    let script = remote::script::launch_script(&RemoteLaunch {
        argv: &plan.argv,
        cwd: remote_cwd,
        env: &env,
        cookie,
        host: &host.name,
    });
    let log_text = log.display().to_string();
    let upload = launcher_argv(
        host,
        false,
        Some(&log_text),
        &remote::script::upload_command(cookie),
    );
    let run = launcher_argv(
        host,
        true,
        Some(&log_text),
        &remote::script::run_command(cookie),
    );
    let words = |argv: &[String]| argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
    let log_q = quote(&log_text);
    // ssh's errors go to the log (-E), an exec launcher's by redirection; no launcher inherits
    // the environment.
    let wrapper = format!(
        "script=\"${SCRIPT_VAR}\"\n\
         unset {SCRIPT_VAR}\n\
         printf '%s' \"$script\" | {upload} 2>>{log_q}\n\
         rc=$?\n\
         unset script\n\
         if [ \"$rc\" -ne 0 ]; then echo \"{UPLOAD_FAILED} (exit $rc)\" >>{log_q}; exit 255; fi\n\
         exec {run}\n",
        upload = words(&upload),
        run = words(&run),
    );
    let mut local_env = BTreeMap::new();
    for key in ["TERM", "COLORTERM"] {
        if let Some(value) = plan.env.get(key) {
            local_env.insert(key.to_string(), value.clone());
        }
    }
    // The local ssh carries the cookie too: the local sweep ends it with the attempt.
    local_env.insert(COOKIE_VAR.to_string(), cookie.to_string());
    local_env.insert(SCRIPT_VAR.to_string(), script);
    LaunchPlan {
        argv: vec![
            "/bin/sh".into(),
            "-c".into(),
            wrapper,
            format!("herd-remote:{}", host.name),
        ],
        cwd: local_dir.to_path_buf(),
        env: local_env,
        ..plan.clone()
    }
}

/// The log of an attempt's launcher, beside its recordings.
pub fn log_path(run_dir: &Path, attempt: u32) -> PathBuf {
    run_dir.join(format!("attempt_{attempt}.launcher.log"))
}

/// What a launcher run without a terminal printed.
#[derive(Debug, Clone)]
pub struct PlainRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs shell code on `host` without a terminal for up to `timeout`, on stdin (it may hold
/// `env`).
pub fn run_plain(host: &Host, script: &str, timeout: Duration) -> std::io::Result<PlainRun> {
    let run = run_plain_bytes(host, script, timeout)?;
    Ok(PlainRun {
        code: run.code,
        stdout: String::from_utf8_lossy(&run.stdout).into_owned(),
        stderr: run.stderr,
        timed_out: run.timed_out,
    })
}

/// What a launcher run without a terminal printed, its output as bytes (file contents).
#[derive(Debug, Clone)]
pub struct PlainBytes {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub timed_out: bool,
}

/// Starts `script` on `host` (on stdin), output piped, in its own process group so a time-out
/// ends all of it.
pub fn spawn_script(host: &Host, script: &str) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let argv = launcher_argv(host, false, None, "exec sh -s");
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        let script = script.to_string();
        // A launcher that does not read its stdin must not block us.
        jobs::spawn_thread("remote-script", move || {
            use std::io::Write;
            let _ = stdin.write_all(script.as_bytes());
        })?;
    }
    Ok(child)
}

/// [`run_plain`], its output kept as bytes.
pub fn run_plain_bytes(
    host: &Host,
    script: &str,
    timeout: Duration,
) -> std::io::Result<PlainBytes> {
    let mut child = spawn_script(host, script)?;
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let deadline = Instant::now() + timeout;
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait()? {
            break (Some(status), false);
        }
        if Instant::now() >= deadline {
            if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            break (child.wait().ok(), true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let join = |h: Option<Job<Vec<u8>>>| h.and_then(Job::join).unwrap_or_default();
    Ok(PlainBytes {
        code: status.and_then(|s| s.code()),
        stdout: join(out),
        stderr: String::from_utf8_lossy(&join(err)).into_owned(),
        timed_out,
    })
}

/// All `pipe` says until it closes, read on a thread of its own (nothing when none starts).
fn drain(mut pipe: impl Read + Send + 'static) -> Job<Vec<u8>> {
    let reading = jobs::spawn_thread("remote-drain", move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    });
    reading.unwrap_or_else(|not| {
        tracing::warn!("{not}");
        Job::done(Vec::new())
    })
}

/// Ends the processes of an attempt (or of a file) on `host` by cookie: TERM, grace, KILL.
pub fn sweep(
    host: &Host,
    scope: SweepScope<'_>,
    grace: Duration,
) -> Result<Vec<RemoteEnded>, String> {
    let grace_sec = u32::try_from(grace.as_secs().max(1)).unwrap_or(u32::MAX);
    let script = remote::script::sweep_script(scope, grace_sec);
    let run = run_plain(host, &script, PLAIN_TIMEOUT)
        .map_err(|e| format!("cannot run {}: {e}", host.program()))?;
    remote::script::parse_sweep(&run.stdout).ok_or_else(|| {
        let why = run
            .stderr
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("");
        format!(
            "the sweep on host {} did not finish (exit {:?}{}){}",
            host.name,
            run.code,
            if run.timed_out { ", timed out" } else { "" },
            if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            }
        )
    })
}

/// A remote sweep's processes as the attempt's facts record them (`host:` before the command).
pub fn as_ended(host: &Host, ended: Vec<RemoteEnded>) -> Vec<EndedProcess> {
    ended
        .into_iter()
        .map(|e| EndedProcess {
            pid: e.pid,
            argv: vec![format!("{}:", host.name), e.command],
            signal: e.signal,
            cookie: Some(e.cookie),
        })
        .collect()
}

/// What is wrong with a task's `host`: unknown, or its launcher is not installed here.
pub fn host_problem(name: &str, hosts: &HostSet) -> Option<String> {
    let members = match hosts.target(name) {
        None => return Some(hosts.unknown_target_message(name)),
        Some(Target::Host(host)) => vec![host],
        Some(Target::Group(members)) => members,
    };
    let missing: Vec<String> = members
        .iter()
        .filter(|h| !launcher_installed(h))
        .map(|h| format!("{} needs \"{}\"", h.name, h.program()))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "host \"{name}\": the launcher program is not installed here ({}); install it or fix the hosts file",
            missing.join(", ")
        )
    })
}

/// What keeps a task from running on its host: `host_problem`.
pub fn task_problem(task: &crate::core::task::TaskSpec, hosts: &HostSet) -> Option<String> {
    host_problem(task.host.as_deref()?, hosts)
}

/// Whether the launcher program can be found on herd's PATH.
pub fn launcher_installed(host: &Host) -> bool {
    let program = host.program();
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Why a host could not be probed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("\"{launcher}\" is not installed here")]
    NoLauncher { launcher: String },
    #[error("cannot run {launcher}: {source}")]
    CannotRun {
        launcher: String,
        source: std::io::Error,
    },
    /// The launcher ran but the probe did not: its exit and its last words.
    #[error("exit {code}: {why}")]
    NoAnswer { code: String, why: String },
}

/// Probes `host`: reachable, the agent programs, Node's version; `Err` says why unreachable.
pub fn probe(host: &Host, programs: &[&str]) -> Result<ProbeFacts, ProbeError> {
    // With the host's environment, as its agents have it (its PATH finds their programs).
    let mut script = String::new();
    for (key, value) in &host.env {
        if crate::core::guard::shell_words::is_env_name(key) {
            script.push_str(&format!("export {key}={}\n", quote(value)));
        }
    }
    script.push_str(&remote::script::probe_script(programs));
    let run = run_plain(host, &script, PLAIN_TIMEOUT).map_err(|source| ProbeError::CannotRun {
        launcher: host.program().to_string(),
        source,
    })?;
    let facts = remote::script::parse_probe(&run.stdout);
    if facts.ran {
        return Ok(facts);
    }
    let why = run
        .stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(if run.timed_out {
            "timed out"
        } else {
            "no answer"
        })
        .to_string();
    let code = run
        .code
        .map_or("by a signal".to_string(), |c| c.to_string());
    Err(ProbeError::NoAnswer { code, why })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
mod shellcheck_tests;
