//! The shell code herd runs on a host: an attempt's launch script, the sweep that ends its
//! processes by cookie, the probe of `herd hosts check`. Secrets never travel on a command line:
//! the launch script goes on stdin into a private file it deletes first. Pure.

use std::collections::BTreeMap;

use super::template::{Fill, render};
use crate::core::guard::shell_words::{is_env_name, quote};

/// The OSC sequence the launch script prints with the agent's exit code: without it, an exit of
/// 255 means the connection was lost.
pub const TRAILER_PREFIX: &[u8] = b"\x1b]777;herd-exit;";
/// Longest trailer: prefix, a code of up to 3 digits, BEL.
const TRAILER_MAX: usize = TRAILER_PREFIX.len() + 4;
/// The variable that marks an attempt's processes (as `run::hygiene::COOKIE_VAR`).
const COOKIE_VAR: &str = "HERD_ATTEMPT_ID";

/// The end of the launch script: the agent's exit code, then the trailer that carries it.
const LAUNCH_END: &str = include_str!("scripts/launch_end.sh");
/// The sweep of [`sweep_script`].
const SWEEP: &str = include_str!("scripts/sweep.sh");

/// Where the launch script of attempt `cookie` lives on the host (cookies are safe file names).
fn script_path(cookie: &str) -> String {
    format!("\"${{HOME:-/tmp}}/.herd/run/{cookie}.sh\"")
}

/// Stores stdin as the launch script, readable by the user only.
pub fn upload_command(cookie: &str) -> String {
    format!(
        "umask 077 && mkdir -p \"${{HOME:-/tmp}}/.herd/run\" && cat > {}",
        script_path(cookie)
    )
}

/// Runs the uploaded launch script (with the terminal the launcher gave it).
pub fn run_command(cookie: &str) -> String {
    format!("exec sh {}", script_path(cookie))
}

/// What an attempt runs on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteLaunch<'a> {
    pub argv: &'a [String],
    pub cwd: &'a str,
    pub env: &'a BTreeMap<String, String>,
    pub cookie: &'a str,
    pub host: &'a str,
}

/// The launch script: deletes itself, sets cookie and environment, enters the folder, runs the
/// agent (not `exec`: the shell reports a signal as 128+n and prints the trailer).
pub fn launch_script(launch: &RemoteLaunch<'_>) -> String {
    let mut s = String::from("rm -f \"$0\"\n");
    s.push_str(&format!("export {COOKIE_VAR}={}\n", quote(launch.cookie)));
    for (key, value) in launch.env {
        // Names are checked where they are read; an odd one is skipped rather than run.
        if is_env_name(key) && key != COOKIE_VAR {
            s.push_str(&format!("export {key}={}\n", quote(value)));
        }
    }
    let cwd = quote(launch.cwd);
    s.push_str(&format!(
        "cd {cwd} || {{ echo \"herd: cannot enter {} on host {}\" >&2; exit 126; }}\n",
        launch.cwd.replace(['"', '\\', '$', '`'], "?"),
        launch.host
    ));
    let argv: Vec<String> = launch.argv.iter().map(|a| quote(a)).collect();
    s.push_str(&argv.join(" "));
    s.push('\n');
    s.push_str(LAUNCH_END);
    s
}

/// Finds the trailer in the agent's output; `carry` keeps the end of the previous chunk.
pub fn scan_trailer(carry: &mut Vec<u8>, bytes: &[u8]) -> Option<i32> {
    carry.extend_from_slice(bytes);
    let mut found = None;
    let mut from = 0;
    while let Some(at) = find(&carry[from..], TRAILER_PREFIX) {
        let start = from + at + TRAILER_PREFIX.len();
        let rest = &carry[start..];
        match rest.iter().position(|b| *b == 0x07) {
            Some(end) => {
                found = std::str::from_utf8(&rest[..end])
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .or(found);
                from = start + end;
            }
            None => break,
        }
    }
    // Only a trailer's beginning can still be completed by the next chunk.
    let keep_from = carry.len().saturating_sub(TRAILER_MAX).max(from);
    carry.drain(..keep_from);
    found
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Which processes a sweep ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepScope<'a> {
    /// The processes of one attempt.
    Attempt(&'a str),
    /// Every attempt of the tasks file with this tag (a herd that died).
    File(&'a str),
}

/// Ends the processes whose environment holds the cookie (TERM, grace, KILL), printing each.
pub fn sweep_script(scope: SweepScope<'_>, grace_sec: u32) -> String {
    // Cookies and tags are file-name safe (no quote, no space); a tag is hex.
    let (options, pattern) = match scope {
        SweepScope::Attempt(cookie) => ("-x -F", format!("{COOKIE_VAR}={cookie}")),
        SweepScope::File(tag) => ("-E", format!("^{COOKIE_VAR}={tag}[.]")),
    };
    // GNU grep reads every environment in one run; elsewhere (busybox) each one alone.
    render(
        SWEEP,
        &[
            ("grace_sec", Fill::number(grace_sec.into())),
            ("options", Fill::code(options)),
            ("pattern", Fill::quoted(&pattern)),
            ("cookie_var", Fill::code(COOKIE_VAR)),
        ],
    )
}

/// One process a remote sweep ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEnded {
    pub pid: u32,
    /// `TERM` or `KILL` (the strongest sent).
    pub signal: &'static str,
    pub cookie: String,
    pub command: String,
}

/// Reads a sweep's output: each process with its strongest signal; `None` when unfinished.
pub fn parse_sweep(output: &str) -> Option<Vec<RemoteEnded>> {
    let mut ended: Vec<RemoteEnded> = Vec::new();
    let mut done = false;
    for line in output.lines() {
        if line.trim() == "sweep done" {
            done = true;
            continue;
        }
        let Some(rest) = line.strip_prefix("ended ") else {
            continue;
        };
        let mut parts = rest.splitn(4, ' ');
        let (Some(pid), Some(signal), Some(cookie)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let signal = if signal == "KILL" { "KILL" } else { "TERM" };
        let command = parts.next().unwrap_or_default().trim_end().to_string();
        match ended.iter_mut().find(|e| e.pid == pid) {
            Some(entry) => {
                if signal == "KILL" {
                    entry.signal = "KILL";
                }
                if entry.command.is_empty() {
                    entry.command = command;
                }
            }
            None => ended.push(RemoteEnded {
                pid,
                signal,
                cookie: cookie.to_string(),
                command,
            }),
        }
    }
    done.then_some(ended)
}

/// Prints `key=value` facts of a host: the agent programs found, Node's version.
pub fn probe_script(programs: &[&str]) -> String {
    let mut s = String::from("echo herd-probe=1\n");
    for program in programs {
        let p = quote(program);
        s.push_str(&format!(
            "printf 'program.%s=%s\\n' {p} \"$(command -v {p} 2>/dev/null)\"\n"
        ));
    }
    s.push_str("printf 'node=%s\\n' \"$(node --version 2>/dev/null)\"\n");
    s.push_str("printf 'uname=%s\\n' \"$(uname -sm 2>/dev/null)\"\n");
    s
}

/// What a probe found on a host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeFacts {
    /// The probe ran (the host answered and ran the shell code).
    pub ran: bool,
    /// Program → its path on the host (empty: not found).
    pub programs: BTreeMap<String, String>,
    pub node: Option<String>,
    pub system: Option<String>,
}

pub fn parse_probe(output: &str) -> ProbeFacts {
    let mut facts = ProbeFacts::default();
    for line in output.lines() {
        let Some((key, value)) = line.trim_end_matches('\r').split_once('=') else {
            continue;
        };
        let value = value.trim();
        match key {
            "herd-probe" => facts.ran = true,
            "node" => facts.node = (!value.is_empty()).then(|| value.to_string()),
            "uname" => facts.system = (!value.is_empty()).then(|| value.to_string()),
            _ => {
                if let Some(program) = key.strip_prefix("program.") {
                    facts
                        .programs
                        .insert(program.to_string(), value.to_string());
                }
            }
        }
    }
    facts
}

/// How a remote attempt's launcher ended, beside the agent's own verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LauncherEnd {
    /// The agent ran and ended (the trailer was seen) or herd ended it: judge it as usual.
    Agent,
    /// The host could not be reached: the attempt did not happen; the host leaves rotation.
    Unreachable { reason: String },
    /// The connection went away while the agent ran: the attempt ends retryable.
    Lost { reason: String },
}

/// Decides from the launcher's exit code, the trailer, whether herd ended it, and its log.
pub fn launcher_end(
    exit_code: Option<i32>,
    trailer: Option<i32>,
    ended_by_herd: bool,
    log: &str,
) -> LauncherEnd {
    let reason = || last_line(log).unwrap_or_else(|| "the launcher exited with 255".into());
    if log.contains(UPLOAD_FAILED) {
        return LauncherEnd::Unreachable { reason: reason() };
    }
    if trailer.is_some() || ended_by_herd {
        return LauncherEnd::Agent;
    }
    match exit_code {
        Some(255) => LauncherEnd::Lost { reason: reason() },
        _ => LauncherEnd::Agent,
    }
}

/// What the local wrapper writes to the log when the launch script could not be sent.
pub const UPLOAD_FAILED: &str = "herd: the launch script could not be sent";

fn last_line(log: &str) -> Option<String> {
    log.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with(UPLOAD_FAILED))
        .map(str::to_string)
}

#[cfg(test)]
#[path = "script_tests.rs"]
mod tests;
