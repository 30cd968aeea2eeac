//! Process hygiene: nothing an attempt starts outlives it, nor a herd that was killed. Every
//! agent gets a cookie (`HERD_ATTEMPT_ID`) that every process it starts inherits; an attempt's
//! processes are those whose environment holds it, plus descendants. They get TERM, a grace,
//! then KILL, a pid signalled only while its start time is the one seen (never a reused pid).
//! The cookie's file tag finds survivors of a dead herd at the next start. Blocks: the engine
//! runs it on a worker.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use serde::Serialize;

/// The environment variable that marks an attempt's processes.
pub const COOKIE_VAR: &str = "HERD_ATTEMPT_ID";
/// Between TERM and KILL to the processes an attempt left behind.
pub const SWEEP_GRACE: Duration = Duration::from_secs(2);
/// How often the processes are looked for again while they are being ended.
const POLL: Duration = Duration::from_millis(50);
/// Bound on the rounds of a sweep: a fork bomb is not followed forever.
const MAX_ROUNDS: u32 = 400;

/// One process as `/proc` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    pub ppid: u32,
    /// Session id: a process that called `setsid` has left the agent's session.
    pub sid: u32,
    /// Start time in clock ticks since boot: with the pid, it names one process for good.
    pub start_time: u64,
    pub argv: Vec<String>,
    /// Its `HERD_ATTEMPT_ID`, if it carries one.
    pub cookie: Option<String>,
}

/// A process herd ended, for the attempt's facts and the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndedProcess {
    pub pid: u32,
    pub argv: Vec<String>,
    /// The strongest signal it was sent: `TERM` or `KILL`.
    pub signal: &'static str,
    /// The attempt it belonged to, when it carried a cookie.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
}

/// The tag of a tasks file: a stable hash of its absolute path.
pub fn file_tag(tasks_file: &Path) -> String {
    let path = std::fs::canonicalize(tasks_file).unwrap_or_else(|_| tasks_file.to_path_buf());
    // FNV-1a: stable across builds and runs, unlike `DefaultHasher`.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// A cookie unique to one attempt of one task of the tasks file tagged `tag`.
pub fn new_cookie(tag: &str, task_id: &str, attempt: u32) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nonce = format!("{:x}{nanos:x}{count:x}", std::process::id());
    format!("{tag}.{attempt}.{nonce}.{task_id}")
}

/// The task id a cookie names (the task ids may hold dots: it is the rest after the third).
pub fn cookie_task(cookie: &str) -> Option<&str> {
    cookie.splitn(4, '.').nth(3)
}

/// Parses `/proc/PID/stat`: (ppid, sid, start time), counted from the last `)`.
fn parse_stat(stat: &str) -> Option<(u32, u32, u64, char)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ppid(4) pgrp(5) session(6) ... starttime(22).
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let sid = fields.get(3)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, sid, start, state))
}

fn split_nul(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == 0).filter(|s| !s.is_empty())
}

/// The variable the launch script on a host sets (`run::remote`).
const HOST_VAR: &[u8] = b"HERD_HOST=";

/// A process's cookie; one started through a host's launcher is the host's to end.
fn cookie_in(environ: &[u8]) -> Option<String> {
    if split_nul(environ).any(|entry| entry.starts_with(HOST_VAR)) {
        return None;
    }
    let prefix = format!("{COOKIE_VAR}=");
    split_nul(environ)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// Whose environment a scan reads: reading `environ` costs far more than `stat`, so only
/// processes that can hold the cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieScan {
    /// Every process (a survivor of a herd that died can be of any age).
    Everyone,
    /// Processes started at or after this (a new cookie is only in those).
    StartedSince(u64),
    /// No process (only the process tree is needed).
    Nobody,
}

impl CookieScan {
    fn reads(self, start_time: u64) -> bool {
        match self {
            CookieScan::Everyone => true,
            CookieScan::StartedSince(since) => start_time >= since,
            CookieScan::Nobody => false,
        }
    }
}

/// One live process, its cookie read when `cookies` says so (argv: [`read_argv`]).
fn read_process(pid: u32, cookies: CookieScan) -> Option<ProcessInfo> {
    let dir = Path::new("/proc").join(pid.to_string());
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let (ppid, sid, start_time, state) = parse_stat(&stat)?;
    if matches!(state, 'Z' | 'X') {
        return None;
    }
    // Another user's environment is unreadable: it cannot be one of ours anyway.
    let cookie = cookies
        .reads(start_time)
        .then(|| std::fs::read(dir.join("environ")).ok())
        .flatten()
        .and_then(|e| cookie_in(&e));
    Some(ProcessInfo {
        pid,
        ppid,
        sid,
        start_time,
        argv: Vec::new(),
        cookie,
    })
}

/// A process's command line, for the record of what was ended (empty once it is gone).
fn read_argv(pid: u32) -> Vec<String> {
    std::fs::read(Path::new("/proc").join(pid.to_string()).join("cmdline"))
        .map(|bytes| {
            split_nul(&bytes)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Now on `/proc/PID/stat`'s clock: taken before a spawn, it is at or before the agent's start.
pub fn start_time_now() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    let ticks = rustix::param::clock_ticks_per_second();
    let whole = u64::try_from(now.tv_sec).unwrap_or(0).saturating_mul(ticks);
    let part = u64::try_from(now.tv_nsec)
        .unwrap_or(0)
        .saturating_mul(ticks)
        / 1_000_000_000;
    whole + part
}

/// Every live process but herd itself, with the cookies `cookies` asks for.
pub fn scan(cookies: CookieScan) -> Vec<ProcessInfo> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter_map(|pid| read_process(pid, cookies))
        .collect()
}

/// The processes `owned` picks, plus every descendant of them and of `roots`.
pub fn select(
    processes: &[ProcessInfo],
    owned: &dyn Fn(&ProcessInfo) -> bool,
    roots: &[u32],
) -> Vec<ProcessInfo> {
    let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
    for p in processes {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut picked: BTreeMap<u32, &ProcessInfo> = BTreeMap::new();
    let mut stack: Vec<u32> = roots.to_vec();
    for p in processes.iter().filter(|p| owned(p)) {
        picked.insert(p.pid, p);
        stack.push(p.pid);
    }
    let mut seen = BTreeSet::new();
    while let Some(pid) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        for child in children.get(&pid).into_iter().flatten() {
            picked.insert(child.pid, child);
            stack.push(child.pid);
        }
    }
    picked.into_values().cloned().collect()
}

/// Whether `pid` is still the process first seen (same start time) and alive.
fn still_same(pid: u32, start_time: u64) -> bool {
    read_process(pid, CookieScan::Nobody).is_some_and(|p| p.start_time == start_time)
}

fn send(pid: u32, signal: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        // Gone already, or not ours: nothing to end.
        let _ = kill_process(pid, signal);
    }
}

/// Ends every process `owned` picks and the descendants: TERM, up to `grace`, then KILL; forks
/// are found on the next look. Blocks for up to `grace`.
pub fn end_processes(
    owned: &dyn Fn(&ProcessInfo) -> bool,
    cookies: CookieScan,
    roots: &[u32],
    grace: Duration,
) -> Vec<EndedProcess> {
    let deadline = Instant::now() + grace;
    let mut ended: BTreeMap<(u32, u64), EndedProcess> = BTreeMap::new();
    for _ in 0..MAX_ROUNDS {
        let found = select(&scan(cookies), owned, roots);
        if found.is_empty() {
            break;
        }
        let kill = Instant::now() >= deadline;
        // Stop them all first so none forks or restarts another while the others are ended.
        if kill {
            for p in &found {
                if still_same(p.pid, p.start_time) {
                    send(p.pid, Signal::STOP);
                }
            }
        }
        for p in &found {
            let id = (p.pid, p.start_time);
            let first_look = !ended.contains_key(&id);
            let entry = ended.entry(id).or_insert_with(|| EndedProcess {
                pid: p.pid,
                argv: read_argv(p.pid),
                signal: "TERM",
                cookie: p.cookie.clone(),
            });
            if !still_same(p.pid, p.start_time) {
                continue;
            }
            if kill {
                entry.signal = "KILL";
                send(p.pid, Signal::KILL);
            } else if first_look {
                send(p.pid, Signal::TERM);
                // A stopped process would not act on TERM until continued.
                send(p.pid, Signal::CONT);
            }
        }
        std::thread::sleep(POLL);
    }
    ended.into_values().collect()
}

/// The descendants of live `pid` with their start times, to find children that cleared their
/// environment.
pub fn descendants_of(pid: u32) -> Vec<(u32, u64)> {
    let none = |_: &ProcessInfo| false;
    select(&scan(CookieScan::Nobody), &none, &[pid])
        .into_iter()
        .map(|p| (p.pid, p.start_time))
        .collect()
}

/// Ends the processes of attempt `cookie` and the `known` ones; `since` spares reading older
/// processes' environments.
pub fn end_attempt(
    cookie: &str,
    known: &[(u32, u64)],
    since: Option<u64>,
    grace: Duration,
) -> Vec<EndedProcess> {
    let owned = |p: &ProcessInfo| {
        p.cookie.as_deref() == Some(cookie) || known.contains(&(p.pid, p.start_time))
    };
    let cookies = since.map_or(CookieScan::Everyone, CookieScan::StartedSince);
    end_processes(&owned, cookies, &[], grace)
}

/// The survivors of every attempt on the tasks file tagged `tag` (a herd that died).
pub fn end_survivors(tag: &str, grace: Duration) -> Vec<EndedProcess> {
    let prefix = format!("{tag}.");
    let owned = |p: &ProcessInfo| p.cookie.as_deref().is_some_and(|c| c.starts_with(&prefix));
    end_processes(&owned, CookieScan::Everyone, &[], grace)
}

/// `pid argv… (SIGNAL)` for logs.
pub fn describe(ended: &EndedProcess) -> String {
    format!("{} {} ({})", ended.pid, ended.argv.join(" "), ended.signal)
}

#[cfg(test)]
#[path = "hygiene_tests.rs"]
mod tests;
