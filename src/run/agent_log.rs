//! Finding and tailing the file an agent writes while it runs (the profile's `agent_log`): the
//! path herd gave it, or the Codex rollout its session started (never another session's). Never
//! fails loudly: anything amiss reads as nothing new.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::core::profile::AgentLogKind;

/// The most read in one poll: a log that grows faster is read over several polls.
const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;
/// A rollout's first line (`session_meta`) is read up to this size to learn its folder.
const META_BYTES: u64 = 64 * 1024;

/// One attempt's agent log as read so far.
#[derive(Debug)]
pub struct AgentLogTail {
    kind: AgentLogKind,
    path: Option<PathBuf>,
    offset: u64,
    env: BTreeMap<String, String>,
    cwd: PathBuf,
    since: SystemTime,
}

impl AgentLogTail {
    /// `named`: the path the agent was told (`{agent_log}`); `env` and `cwd` are the attempt's.
    pub fn new(
        kind: AgentLogKind,
        named: Option<PathBuf>,
        env: &BTreeMap<String, String>,
        cwd: &Path,
        since: SystemTime,
    ) -> AgentLogTail {
        AgentLogTail {
            kind,
            path: named,
            offset: 0,
            env: env.clone(),
            cwd: cwd.to_path_buf(),
            since,
        }
    }

    /// The file, once known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The bytes added since the last read (at most [`MAX_READ_BYTES`]).
    pub fn read_new(&mut self) -> Vec<u8> {
        if self.path.is_none() && self.kind == AgentLogKind::CodexRollout {
            self.path = find_rollout(&self.env, &self.cwd, self.since);
        }
        let Some(path) = &self.path else {
            return Vec::new();
        };
        let Ok(mut file) = File::open(path) else {
            return Vec::new();
        };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < self.offset {
            // Replaced or truncated: read it again from the start.
            self.offset = 0;
        }
        if len == self.offset || file.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut bytes = Vec::new();
        let _ = file.take(MAX_READ_BYTES).read_to_end(&mut bytes);
        self.offset += bytes.len() as u64;
        bytes
    }
}

/// Codex's home: `CODEX_HOME` (the attempt's environment, then herd's), else `<HOME>/.codex`.
fn codex_home(
    env: &BTreeMap<String, String>,
    process_env: impl Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    let set = |value: Option<String>| value.filter(|v| !v.is_empty());
    let from_env = |key: &str| set(env.get(key).cloned()).or_else(|| set(process_env(key)));
    from_env("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| from_env("HOME").map(|home| Path::new(&home).join(".codex")))
}

fn find_rollout(env: &BTreeMap<String, String>, cwd: &Path, since: SystemTime) -> Option<PathBuf> {
    let sessions = codex_home(env, |key| std::env::var(key).ok())?.join("sessions");
    let mut folders = vec![cwd.to_path_buf()];
    if let Ok(real) = cwd.canonicalize() {
        folders.push(real);
    }
    let mut found = Vec::new();
    for day in day_folders(&sessions, since) {
        let Ok(entries) = std::fs::read_dir(&day) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("rollout-")
                && name.ends_with(".jsonl")
                && written_since(&path, since)
                && rollout_cwd(&path).is_some_and(|c| folders.contains(&c))
            {
                found.push(path);
            }
        }
    }
    match found.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    }
}

/// `sessions/<year>/<month>/<day>` folders changed since `since` (a new file changes its folder).
fn day_folders(sessions: &Path, since: SystemTime) -> Vec<PathBuf> {
    let children = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default()
    };
    children(sessions)
        .iter()
        .flat_map(|year| children(year))
        .flat_map(|month| children(&month))
        .filter(|day| written_since(day, since))
        .collect()
}

fn written_since(path: &Path, since: SystemTime) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|modified| modified >= since)
}

/// The folder a rollout's `session_meta` (its first line) names.
fn rollout_cwd(path: &Path) -> Option<PathBuf> {
    let mut head = Vec::new();
    File::open(path)
        .ok()?
        .take(META_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let first = text.lines().next()?;
    let meta: serde_json::Value = serde_json::from_str(first).ok()?;
    meta["payload"]["cwd"].as_str().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(cwd: &Path) -> String {
        format!(
            "{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"s\",\"cwd\":\"{}\"}}}}\n",
            cwd.display()
        )
    }

    #[test]
    fn a_named_log_is_read_as_it_grows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("attempt_1.agent.log");
        let env = BTreeMap::new();
        let mut tail = AgentLogTail::new(
            AgentLogKind::ClaudeDebug,
            Some(path.clone()),
            &env,
            dir.path(),
            SystemTime::now(),
        );
        assert!(tail.read_new().is_empty(), "no file yet");
        std::fs::write(&path, "one\n").unwrap();
        assert_eq!(tail.read_new(), b"one\n");
        assert!(tail.read_new().is_empty());
        std::fs::write(&path, "one\ntwo\n").unwrap();
        assert_eq!(tail.read_new(), b"two\n");
    }

    #[test]
    fn the_rollout_of_the_tasks_folder_is_found_under_codex_home() {
        let home = tempfile::tempdir().unwrap();
        let since = SystemTime::now() - std::time::Duration::from_secs(5);
        let work = home.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let day = home.path().join(".codex/sessions/2026/11/25");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(
            day.join("rollout-a.jsonl"),
            meta(&home.path().join("other")),
        )
        .unwrap();
        let mine = day.join("rollout-b.jsonl");
        std::fs::write(&mine, format!("{}{{\"x\":1}}\n", meta(&work))).unwrap();
        let env = BTreeMap::from([(
            "CODEX_HOME".to_string(),
            home.path().join(".codex").display().to_string(),
        )]);
        let mut tail = AgentLogTail::new(AgentLogKind::CodexRollout, None, &env, &work, since);
        let first = tail.read_new();
        assert_eq!(tail.path(), Some(mine.as_path()));
        assert!(String::from_utf8_lossy(&first).ends_with("{\"x\":1}\n"));

        // Two sessions in the same folder: neither is taken.
        std::fs::write(day.join("rollout-c.jsonl"), meta(&work)).unwrap();
        let mut tail = AgentLogTail::new(AgentLogKind::CodexRollout, None, &env, &work, since);
        assert!(tail.read_new().is_empty());
        assert_eq!(tail.path(), None);
    }

    #[test]
    fn codex_home_falls_back_to_home() {
        let env = BTreeMap::from([("HOME".to_string(), "/h".to_string())]);
        assert_eq!(codex_home(&env, |_| None), Some(PathBuf::from("/h/.codex")));
        let env = BTreeMap::from([("CODEX_HOME".to_string(), "/c".to_string())]);
        assert_eq!(codex_home(&env, |_| None), Some(PathBuf::from("/c")));
    }
}
