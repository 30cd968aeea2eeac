//! Helpers of the process-hygiene end-to-end tests: agents that misbehave on purpose (ignore
//! SIGHUP and TERM, escape their session), the tasks files that run them, and a look at `/proc`
//! for every process they started (each carries `TORTURE_DIR` in its environment).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The agent: lock, log, misbehave as told by `$2`, work `$3` seconds, print the marker.
pub(crate) const AGENT: &str = r#"
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

pub(crate) const KINDS: &[&str] = &["plain", "hup", "escape"];

pub(crate) fn agent_task(id: &str, kind: &str, work: &str, dir: &Path, extra: &str) -> String {
    format!(
        r#"{{"task_id": "{id}", "agent": "generic", "prompt_template": "work",
  "command": ["sh", "-c", {script}, "agent", "{id}", "{kind}", "{work}"],
  "env": {{"TORTURE_DIR": "{dir}"}}{extra}}}"#,
        script = serde_json::to_string(AGENT).unwrap(),
        dir = dir.display(),
    )
}

pub(crate) fn write_tasks(dir: &Path, tasks: &[String]) -> PathBuf {
    let path = dir.join("tasks.json");
    let body = format!(
        "{{\"run_id\": \"torture\", \"tasks\": [\n{}\n]}}\n",
        tasks.join(",\n")
    );
    std::fs::write(&path, body).unwrap();
    path
}

/// Processes whose environment names `dir` (every agent and everything it started).
pub(crate) fn processes_of(dir: &Path) -> Vec<String> {
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
pub(crate) struct Reaper<'a>(pub &'a Path);

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        for line in processes_of(self.0) {
            if let Some(pid) = line.split(':').next() {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
    }
}

pub(crate) fn wait_until(
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

pub(crate) fn read_doc(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the tasks file is not valid JSON: {e}\n{text}"))
}

/// Per task: (status, attempts).
pub(crate) fn states(doc: &Value) -> BTreeMap<String, (String, u64)> {
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
