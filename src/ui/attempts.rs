//! A task's recorded attempts, for replaying one inside the dashboard: the list read from
//! `<runs_dir>/<task_id>/` (newest first, with verdicts) and the player opened on one. Read on a
//! worker (`reads`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::replay::cast::CastError;
use crate::replay::{ReplayOptions, ReplayView};

/// What an attempt's facts file says about it.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptFacts {
    /// No facts file: the attempt is running, or herd stopped before writing it.
    Missing,
    /// A facts file that is not the JSON herd writes.
    Damaged,
    Read {
        verdict: Option<String>,
        failure_type: Option<String>,
        duration_sec: Option<f64>,
    },
}

/// One recorded attempt of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptEntry {
    pub number: u32,
    pub cast: PathBuf,
    pub facts: AttemptFacts,
}

impl AttemptEntry {
    /// The attempt's verdict in a few words: `completed · 12.3 s`, `failed_auth · 4.0 s`.
    pub fn summary(&self) -> String {
        match &self.facts {
            AttemptFacts::Missing => "no verdict yet (running, or interrupted)".into(),
            AttemptFacts::Damaged => "its facts file cannot be read".into(),
            AttemptFacts::Read {
                verdict,
                failure_type,
                duration_sec,
            } => {
                let what = failure_type
                    .as_deref()
                    .or(verdict.as_deref())
                    .unwrap_or("no verdict");
                match duration_sec {
                    Some(secs) => format!("{what} · {secs:.1} s"),
                    None => what.to_string(),
                }
            }
        }
    }
}

/// The recorded attempts in `task_dir`, newest first (none when it does not exist).
pub fn list(task_dir: &Path) -> Vec<AttemptEntry> {
    let Ok(entries) = std::fs::read_dir(task_dir) else {
        return Vec::new();
    };
    let mut list: Vec<AttemptEntry> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name();
            let number = name
                .to_str()?
                .strip_prefix("attempt_")?
                .strip_suffix(".cast")?
                .parse::<u32>()
                .ok()?;
            Some(AttemptEntry {
                number,
                cast: task_dir.join(name),
                facts: facts(&task_dir.join(format!("attempt_{number}.json"))),
            })
        })
        .collect();
    list.sort_by_key(|a| std::cmp::Reverse(a.number));
    list
}

fn facts(path: &Path) -> AttemptFacts {
    let Ok(text) = std::fs::read_to_string(path) else {
        return AttemptFacts::Missing;
    };
    let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(&text) else {
        return AttemptFacts::Damaged;
    };
    let text_of = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_string);
    AttemptFacts::Read {
        verdict: text_of("verdict"),
        failure_type: text_of("failure_type"),
        duration_sec: doc.get("duration_sec").and_then(Value::as_f64),
    }
}

/// The player open inside the dashboard.
pub struct Replaying {
    pub task: usize,
    pub attempt: u32,
    pub view: ReplayView,
}

/// Why an attempt's recording could not be opened in the player.
#[derive(Debug, thiserror::Error)]
#[error("cannot replay attempt {attempt}: {source}")]
pub struct OpenError {
    pub attempt: u32,
    pub source: CastError,
}

/// Opens the player on `entry`; a recording still being written opens as far as it goes.
pub fn open(task: usize, task_id: &str, entry: &AttemptEntry) -> Result<Replaying, OpenError> {
    let name = format!("{task_id} · attempt {}", entry.number);
    let options = ReplayOptions {
        autoplay: true,
        ..ReplayOptions::default()
    };
    let view =
        ReplayView::open(&entry.cast, name, options, &mut |_| {}).map_err(|source| OpenError {
            attempt: entry.number,
            source,
        })?;
    Ok(Replaying {
        task,
        attempt: entry.number,
        view,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).expect("write");
    }

    #[test]
    fn attempts_are_listed_newest_first_with_their_verdicts() {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        for n in [1, 2, 10] {
            write(d, &format!("attempt_{n}.cast"), "{\"version\": 2}\n");
        }
        write(d, "attempt_3.log", "not a recording");
        write(d, "attempt_x.cast", "not numbered");
        write(
            d,
            "attempt_1.json",
            r#"{"verdict": "failed_process", "failure_type": "failed_process", "duration_sec": 4.25}"#,
        );
        write(
            d,
            "attempt_2.json",
            r#"{"verdict": "completed", "failure_type": null, "duration_sec": 12}"#,
        );
        write(d, "attempt_10.json", "{\"verdict\": \"compl");
        let list = list(d);
        let numbers: Vec<u32> = list.iter().map(|a| a.number).collect();
        assert_eq!(numbers, vec![10, 2, 1], "10 is newer than 2");
        assert_eq!(list[0].facts, AttemptFacts::Damaged);
        assert_eq!(list[0].cast, d.join("attempt_10.cast"));
        assert_eq!(
            list[1].facts,
            AttemptFacts::Read {
                verdict: Some("completed".into()),
                failure_type: None,
                duration_sec: Some(12.0),
            }
        );
        assert_eq!(list[1].summary(), "completed · 12.0 s");
        assert_eq!(list[2].summary(), "failed_process · 4.2 s");
        assert_eq!(list[0].summary(), "its facts file cannot be read");
    }

    #[test]
    fn a_running_attempt_has_no_facts_and_a_task_that_never_ran_no_attempts() {
        let dir = tempfile::tempdir().expect("temp dir");
        write(dir.path(), "attempt_1.cast", "{\"version\": 2}\n");
        write(dir.path(), "attempt_2.json", "[1, 2]");
        let list = list(dir.path());
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].facts, AttemptFacts::Missing);
        assert!(list[0].summary().contains("running"));
        assert_eq!(super::list(&dir.path().join("never-ran")), Vec::new());
    }

    #[test]
    fn a_recording_cut_short_opens() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = "{\"version\": 2, \"width\": 20, \"height\": 3}\n[0.1, \"o\", \"hello\"]\n[0.2, \"o\", \"wor";
        write(dir.path(), "attempt_1.cast", text);
        let entry = &list(dir.path())[0];
        let replaying = open(4, "t", entry).expect("opens");
        assert_eq!((replaying.task, replaying.attempt), (4, 1));
        assert!(
            open(
                4,
                "t",
                &AttemptEntry {
                    cast: dir.path().join("gone.cast"),
                    ..entry.clone()
                }
            )
            .is_err()
        );
    }
}
