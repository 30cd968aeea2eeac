//! What the operator has seen of a file's runs, kept in its runs folder: how the last run ended
//! (`last_run.json`, for `herd attach` after the end) and when the operator last looked
//! (`last_look`, where "since you left" starts). Best effort.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::rendezvous::RunMode;
use super::safe_fs;

/// How a run of the tasks file ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEnd {
    pub tasks: PathBuf,
    pub mode: RunMode,
    /// RFC 3339 (`RunEnd::started`).
    pub started_at: String,
    /// RFC 3339 (`RunEnd::ended`).
    pub ended_at: String,
    pub exit_code: i32,
    /// Where its output went: `runs/background.log` for a background run, else herd's own log.
    pub log_file: PathBuf,
}

impl RunEnd {
    pub fn started(&self) -> Option<Timestamp> {
        self.started_at.parse().ok()
    }

    pub fn ended(&self) -> Option<Timestamp> {
        self.ended_at.parse().ok()
    }

    fn path(runs_dir: &Path) -> PathBuf {
        runs_dir.join("last_run.json")
    }

    /// Writes the record (0600, replacing the last run's).
    pub fn write(&self, runs_dir: &Path) -> io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        write_private(&Self::path(runs_dir), &text)
    }

    /// The last run's end, if one was recorded.
    pub fn read(runs_dir: &Path) -> Option<RunEnd> {
        let text = fs::read_to_string(Self::path(runs_dir)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// What `herd run`'s exit status means (the contract's table).
pub fn exit_meaning(code: i32) -> &'static str {
    match code {
        0 => "every task completed",
        1 => "some task ended otherwise than completed",
        2 => "the tasks file, a profile or an argument was invalid",
        3 => "herd could not go on (see its log)",
        130 => "the operator stopped it",
        _ => "herd ended abnormally",
    }
}

fn look_path(runs_dir: &Path) -> PathBuf {
    runs_dir.join("last_look")
}

/// When the operator last looked at the file's runs (`herd status`, `herd attach`).
pub fn last_look(runs_dir: &Path) -> Option<Timestamp> {
    fs::read_to_string(look_path(runs_dir))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Notes that the operator looked at `at`.
pub fn record_look(runs_dir: &Path, at: Timestamp) -> io::Result<()> {
    write_private(&look_path(runs_dir), &format!("{at}\n"))
}

/// Writes `text` to `path` whole (a new file renamed over it), never through a link.
fn write_private(path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write;
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp-write");
    let temporary = PathBuf::from(name);
    let mut file = safe_fs::create_file(&temporary).map_err(io::Error::other)?;
    file.write_all(text.as_bytes())?;
    fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_end_and_a_look_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let rendezvous = dir.path();
        assert_eq!(RunEnd::read(rendezvous), None);
        assert_eq!(last_look(rendezvous), None);
        let end = RunEnd {
            tasks: "/w/t.json".into(),
            mode: RunMode::Background,
            started_at: "2026-11-29T01:00:00Z".into(),
            ended_at: "2026-11-29T03:00:00Z".into(),
            exit_code: 1,
            log_file: "/w/runs/background.log".into(),
        };
        end.write(rendezvous).unwrap();
        assert_eq!(RunEnd::read(rendezvous).as_ref(), Some(&end));
        assert_eq!(end.ended(), Some("2026-11-29T03:00:00Z".parse().unwrap()));
        let at: Timestamp = "2026-11-29T07:00:00Z".parse().unwrap();
        record_look(rendezvous, at).unwrap();
        assert_eq!(last_look(rendezvous), Some(at));
        assert_eq!(exit_meaning(130), "the operator stopped it");
    }
}
