//! Process hygiene end to end, with the real binary: `kill -9` of herd at random (seeded) moments
//! over a mixed batch of agents that ignore SIGHUP and TERM and escape their session (setsid
//! grandchildren, nohup'd daemons), restarting herd each time; and timeouts and Ctrl-C with
//! escaping children. Nothing here is timed: the kill moments are random, the checks are facts.
//!
//! Every agent takes an exclusive `flock` on its task's lock file, inherited by everything it
//! starts: a new attempt that cannot take it found something of a previous attempt of the same
//! task still alive (an overlap). Every agent appends `start <task> <cookie>` to a shared log.
//!
//! `HERD_TORTURE_KILLS` (default 6) and `HERD_TORTURE_SEED` (default 1) scale and vary the run.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{describe, herd};

/// The agent: lock, log, misbehave as told by `$2`, work `$3` seconds, print the marker.
const AGENT: &str = r#"
exec 9>>"$TORTURE_DIR/$1.lock"
flock -n 9 || echo "overlap $1 $HERD_ATTEMPT_ID" >> "$TORTURE_DIR/log"
echo "start $1 $HERD_ATTEMPT_ID" >> "$TORTURE_DIR/log"
case "$2" in
  hup) trap '' HUP TERM ;;
  escape)
    setsid sh -c 'trap "" HUP TERM; sleep 600' &
    ( nohup sh -c 'sleep 600' >/dev/null 2>&1 & ) ;;
esac
sleep "$3"
echo "TASK_COMPLETE:$1"
"#;

const KINDS: &[&str] = &["plain", "hup", "escape"];

fn agent_task(id: &str, kind: &str, work: &str, dir: &Path, extra: &str) -> String {
    format!(
        r#"{{"task_id": "{id}", "agent": "generic", "prompt_template": "work",
  "command": ["sh", "-c", {script}, "agent", "{id}", "{kind}", "{work}"],
  "env": {{"TORTURE_DIR": "{dir}"}}{extra}}}"#,
        script = serde_json::to_string(AGENT).unwrap(),
        dir = dir.display(),
    )
}

fn write_tasks(dir: &Path, tasks: &[String]) -> PathBuf {
    let path = dir.join("tasks.json");
    let body = format!(
        "{{\"run_id\": \"torture\", \"tasks\": [\n{}\n]}}\n",
        tasks.join(",\n")
    );
    std::fs::write(&path, body).unwrap();
    path
}

/// Processes whose environment names `dir` (every agent and everything it started).
fn processes_of(dir: &Path) -> Vec<String> {
    let needle = format!("TORTURE_DIR={}", dir.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !zombie && environ.split(|b| *b == 0).any(|e| e == needle.as_bytes()) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// Kills whatever a failed test left behind, so one failure does not leak processes.
struct Reaper<'a>(&'a Path);

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        for line in processes_of(self.0) {
            if let Some(pid) = line.split(':').next() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
    }
}

fn wait_until(
    what: &str,
    timeout: Duration,
    mut cond: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n{}",
            context()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_doc(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the tasks file is not valid JSON: {e}\n{text}"))
}

/// Per task: (status, attempts).
fn states(doc: &Value) -> BTreeMap<String, (String, u64)> {
    doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task_id"].as_str().unwrap().to_string(),
                (
                    t["status"].as_str().unwrap_or("pending").to_string(),
                    t["attempts"].as_u64().unwrap_or(0),
                ),
            )
        })
        .collect()
}

/// The agents' log: starts per task, and the overlaps seen.
fn read_log(dir: &Path) -> (BTreeMap<String, usize>, Vec<String>) {
    let text = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
    let mut starts = BTreeMap::new();
    let mut overlaps = Vec::new();
    for line in text.lines() {
        let mut words = line.split(' ');
        match (words.next(), words.next()) {
            (Some("start"), Some(task)) => *starts.entry(task.to_string()).or_insert(0) += 1,
            (Some("overlap"), Some(_)) => overlaps.push(line.to_string()),
            _ => {}
        }
    }
    (starts, overlaps)
}

/// A small seeded generator (xorshift): the same seed gives the same kill moments.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn spawn_herd(tasks: &Path) -> Child {
    herd()
        .args(["run", "--headless", "--concurrency", "4", "--tasks"])
        .arg(tasks)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn kill_9_of_herd_never_loses_reruns_or_overlaps_and_leaves_no_process() {
    let kills = env_number("HERD_TORTURE_KILLS", 6);
    let mut random = Seeded(
        env_number("HERD_TORTURE_SEED", 1)
            .max(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    // Enough work that every kill lands while agents run.
    let count = 9.max(usize::try_from(kills).unwrap_or(9) * 3 / 2);
    let tasks: Vec<String> = (0..count)
        .map(|i| {
            let work = ["0.5", "1.5", "3"][i % 3];
            agent_task(
                &format!("t{i}"),
                KINDS[i % KINDS.len()],
                work,
                dir.path(),
                "",
            )
        })
        .collect();
    let path = write_tasks(dir.path(), &tasks);
    let ids: BTreeSet<String> = states(&read_doc(&path)).into_keys().collect();
    // Completed tasks and how many times each had started when it was first seen completed.
    let mut completed: BTreeMap<String, usize> = BTreeMap::new();
    let mut reruns = Vec::new();
    let mut orphans_seen = 0;
    let mut killed = 0;
    for round in 0..kills {
        let mut child = spawn_herd(&path);
        // A random moment: 100 ms to 3 s after the start, whatever herd is doing then.
        let delay = Duration::from_millis(100 + random.next() % 2900);
        let deadline = Instant::now() + delay;
        while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(10));
        }
        // Only a herd still running counts as killed (it may have finished the batch).
        if child.try_wait().unwrap().is_none() && child.kill().is_ok() {
            killed += 1;
        }
        child.wait().unwrap();
        orphans_seen += processes_of(dir.path()).len();
        let doc = read_doc(&path);
        let now = states(&doc);
        assert_eq!(
            now.keys().cloned().collect::<BTreeSet<_>>(),
            ids,
            "round {round}: a task was lost"
        );
        let (starts, _) = read_log(dir.path());
        for (id, starts_then) in &completed {
            let starts_now = starts.get(id).copied().unwrap_or(0);
            if starts_now != *starts_then || now[id].0 != "completed" {
                reruns.push(format!("round {round}: {id} ran again after it completed"));
            }
        }
        for (id, (status, _)) in &now {
            if status == "completed" {
                completed
                    .entry(id.clone())
                    .or_insert_with(|| starts.get(id).copied().unwrap_or(0));
            }
        }
        if now.values().all(|(s, _)| s == "completed") {
            break;
        }
    }
    // The last herd runs to the end.
    let out = herd()
        .args(["run", "--headless", "--concurrency", "4", "--tasks"])
        .arg(&path)
        .output()
        .unwrap();
    let doc = read_doc(&path);
    let end = states(&doc);
    let (starts, overlaps) = read_log(dir.path());
    for (id, starts_then) in &completed {
        if starts.get(id).copied().unwrap_or(0) != *starts_then {
            reruns.push(format!("{id} ran again after it completed"));
        }
    }
    // Given a moment to be reaped, nothing may be left (it was ended before herd exited).
    let mut left = processes_of(dir.path());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = processes_of(dir.path());
    }
    println!(
        "torture: tasks={count} kills={killed} orphans_alive_after_kills={orphans_seen} overlaps={} reruns={} orphans_at_end={} attempts={}",
        overlaps.len(),
        reruns.len(),
        left.len(),
        end.values().map(|(_, a)| a).sum::<u64>()
    );
    assert!(overlaps.is_empty(), "{overlaps:#?}");
    assert!(reruns.is_empty(), "{reruns:#?}");
    assert!(left.is_empty(), "{left:#?}");
    assert_eq!(out.status.code(), Some(0), "{}\n{end:#?}", describe(&out));
    assert!(end.values().all(|(s, _)| s == "completed"), "{end:#?}");
    let with_survivors = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["result"].get("survivors_ended").is_some())
        .count();
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap_or_default();
    let survivors_logged = log
        .matches("ended a survivor of an interrupted attempt")
        .count();
    println!(
        "torture: survivors ended by a restarted herd (herd.log): {survivors_logged}; tasks whose record lists them: {with_survivors}"
    );
}

#[test]
fn a_timeout_leaves_no_escaped_process_and_records_what_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let task = agent_task(
        "slow",
        "escape",
        "600",
        dir.path(),
        r#", "timeout_sec": 2, "max_retries": 0"#,
    );
    let path = write_tasks(dir.path(), &[task]);
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let doc = read_doc(&path);
    assert_eq!(
        doc["tasks"][0]["result"]["failure_type"], "failed_timeout",
        "{doc:#}"
    );
    assert!(
        processes_of(dir.path()).is_empty(),
        "{:#?}",
        processes_of(dir.path())
    );
    let facts: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("runs/slow/attempt_1.json")).unwrap(),
    )
    .unwrap();
    let ended = facts["ended_processes"].as_array().unwrap();
    assert!(
        ended
            .iter()
            .any(|p| p["signal"] == "KILL" && p["argv"][0] == "sleep"),
        "the TERM-ignoring setsid'd sleep was killed: {ended:#?}"
    );
}

#[test]
fn ctrl_c_leaves_no_escaped_process() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let tasks: Vec<String> = (0..2)
        .map(|i| {
            agent_task(
                &format!("e{i}"),
                "escape",
                "600",
                dir.path(),
                r#", "max_retries": 50"#,
            )
        })
        .collect();
    let path = write_tasks(dir.path(), &tasks);
    let child = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "both agents and their escapes to run",
        Duration::from_secs(30),
        || processes_of(dir.path()).len() >= 2 * 4,
        || format!("{:#?}", processes_of(dir.path())),
    );
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert!(
        processes_of(dir.path()).is_empty(),
        "{:#?}",
        processes_of(dir.path())
    );
    let doc = read_doc(&path);
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "retryable", "{t:#}");
    }
}

#[test]
fn agents_that_cannot_start_for_lack_of_files_wait_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let tasks: Vec<String> = (0..8)
        .map(|i| agent_task(&format!("f{i}"), "plain", "1", dir.path(), ""))
        .collect();
    let path = write_tasks(dir.path(), &tasks);
    // A hard limit herd cannot raise: room for a few agents, not eight.
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 40 && exec "$0" run --headless --concurrency 8 --tasks "$1""#)
        .arg(env!("CARGO_BIN_EXE_herd"))
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let end = states(&read_doc(&path));
    assert_eq!(out.status.code(), Some(0), "{}\n{end:#?}", describe(&out));
    assert!(
        end.values().all(|(s, a)| s == "completed" && *a == 1),
        "no attempt was spent on the shortage: {end:#?}"
    );
    assert!(
        stdout.contains("waits: the agent could not start"),
        "the shortage was said: {stdout}"
    );
}

#[test]
fn the_success_rule_holds_for_plain_commands() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let task = |id: &str, script: &str, extra: &str| {
        format!(
            r#"{{"task_id": "{id}", "agent": "generic", "prompt_template": "p", "max_retries": 0,
  "command": ["sh", "-c", {script}], "env": {{"TORTURE_DIR": "{dir}"}}{extra}}}"#,
            script = serde_json::to_string(script).unwrap(),
            dir = dir.path().display(),
        )
    };
    let tasks = [
        task("exit3", "echo TASK_COMPLETE:exit3; exit 3", ""),
        task("segv", "echo TASK_COMPLETE:segv; kill -SEGV $$", ""),
        task(
            "finishes",
            "echo TASK_COMPLETE:finishes; sleep 6; exit 0",
            "",
        ),
        task(
            "too_long",
            "echo TASK_COMPLETE:too_long; sleep 600",
            r#", "timeout_sec": 3"#,
        ),
    ];
    let path = write_tasks(dir.path(), &tasks);
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .output()
        .unwrap();
    let doc = read_doc(&path);
    let verdict = |id: &str| {
        let t = doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task_id"] == id)
            .unwrap();
        (
            t["status"].as_str().unwrap_or("").to_string(),
            t["result"]["failure_type"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            t["result"]["failure_evidence"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    };
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let (status, failure, evidence) = verdict("exit3");
    assert_eq!(
        (status.as_str(), failure.as_str()),
        ("failed", "failed_process")
    );
    assert!(evidence.contains("exit code 3"), "{evidence}");
    let (status, failure, evidence) = verdict("segv");
    assert_eq!(
        (status.as_str(), failure.as_str()),
        ("failed", "failed_process")
    );
    assert!(evidence.starts_with("killed by signal"), "{evidence}");
    assert_eq!(
        verdict("finishes").0,
        "completed",
        "left to finish after the marker"
    );
    assert_eq!(verdict("too_long").1, "failed_timeout");
}
