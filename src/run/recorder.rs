//! Recordings of one attempt under `runs/<task_id>/`: the raw bytes (`.log`), an asciicast v2
//! (`.cast`) with output, input, resize and marker events, and the attempt's facts (`.json`).
//!
//! Writes are flushed as they happen so a recording cut short by a crash still plays up to the
//! crash. Output is split into valid UTF-8 for the cast (a multi-byte character split across two
//! reads is carried to the next event); the `.log` keeps the bytes exactly as received.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr};
use serde_json::{Value, json};

/// Paths of one attempt's recordings.
#[derive(Debug, Clone)]
pub struct AttemptPaths {
    pub log: PathBuf,
    pub cast: PathBuf,
    pub facts: PathBuf,
}

impl AttemptPaths {
    pub fn new(task_dir: &Path, attempt: u32) -> AttemptPaths {
        AttemptPaths {
            log: task_dir.join(format!("attempt_{attempt}.log")),
            cast: task_dir.join(format!("attempt_{attempt}.cast")),
            facts: task_dir.join(format!("attempt_{attempt}.json")),
        }
    }
}

pub struct Recorder {
    paths: AttemptPaths,
    log: BufWriter<File>,
    cast: BufWriter<File>,
    /// Bytes of an incomplete UTF-8 character held for the next output event.
    carry: Vec<u8>,
}

impl Recorder {
    /// Creates the files (replacing leftovers of an attempt with the same number) and writes the
    /// cast header.
    pub fn create(
        paths: AttemptPaths,
        cols: u16,
        rows: u16,
        unix_time: u64,
        title: &str,
    ) -> Result<Recorder> {
        if let Some(dir) = paths.log.parent() {
            fs::create_dir_all(dir)
                .wrap_err_with(|| format!("cannot create the runs folder {}", dir.display()))?;
        }
        let open = |path: &Path| {
            File::create(path)
                .map(BufWriter::new)
                .wrap_err_with(|| format!("cannot create {}", path.display()))
        };
        let log = open(&paths.log)?;
        let mut cast = open(&paths.cast)?;
        let header = json!({
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": unix_time,
            "title": title,
            "env": {"TERM": "xterm-256color"},
        });
        writeln!(cast, "{header}").wrap_err("cannot write the cast header")?;
        cast.flush()?;
        Ok(Recorder {
            paths,
            log,
            cast,
            carry: Vec::new(),
        })
    }

    pub fn paths(&self) -> &AttemptPaths {
        &self.paths
    }

    fn event(&mut self, at: Duration, kind: &str, data: &str) -> Result<()> {
        let line = json!([round_time(at), kind, data]);
        writeln!(self.cast, "{line}")?;
        self.cast.flush()?;
        Ok(())
    }

    pub fn output(&mut self, at: Duration, bytes: &[u8]) -> Result<()> {
        self.log.write_all(bytes)?;
        self.log.flush()?;
        self.carry.extend_from_slice(bytes);
        let text = take_complete_utf8(&mut self.carry);
        if !text.is_empty() {
            self.event(at, "o", &text)?;
        }
        Ok(())
    }

    pub fn input(&mut self, at: Duration, bytes: &[u8]) -> Result<()> {
        self.event(at, "i", &String::from_utf8_lossy(bytes))
    }

    pub fn resize(&mut self, at: Duration, cols: u16, rows: u16) -> Result<()> {
        self.event(at, "r", &format!("{cols}x{rows}"))
    }

    pub fn marker(&mut self, at: Duration, label: &str) -> Result<()> {
        self.event(at, "m", label)
    }

    /// Writes the attempt's facts and flushes everything.
    pub fn finish(&mut self, at: Duration, facts: &Value) -> Result<()> {
        if !self.carry.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.carry)).into_owned();
            self.event(at, "o", &rest)?;
        }
        self.log.flush()?;
        self.cast.flush()?;
        let text = serde_json::to_string_pretty(facts)?;
        fs::write(&self.paths.facts, text + "\n")
            .wrap_err_with(|| format!("cannot write {}", self.paths.facts.display()))
    }
}

fn round_time(at: Duration) -> f64 {
    (at.as_secs_f64() * 1_000_000.0).round() / 1_000_000.0
}

/// Takes the longest valid prefix of `buf` as text, replacing invalid bytes, and leaves an
/// incomplete trailing character (at most 3 bytes) in `buf`.
fn take_complete_utf8(buf: &mut Vec<u8>) -> String {
    let mut out = String::new();
    let mut rest: &[u8] = buf;
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                rest = &[];
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match e.error_len() {
                    Some(bad) => {
                        out.push('\u{FFFD}');
                        rest = &after[bad..];
                    }
                    None => {
                        rest = after;
                        break;
                    }
                }
            }
        }
    }
    let keep = rest.to_vec();
    *buf = keep;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_are_carried() {
        let bytes = "a❯b".as_bytes();
        let mut buf = bytes[..2].to_vec();
        assert_eq!(take_complete_utf8(&mut buf), "a");
        assert_eq!(buf.len(), 1);
        buf.extend_from_slice(&bytes[2..]);
        assert_eq!(take_complete_utf8(&mut buf), "❯b");
        assert!(buf.is_empty());
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut buf = b"x\xffy".to_vec();
        assert_eq!(take_complete_utf8(&mut buf), "x\u{FFFD}y");
    }

    #[test]
    fn a_recording_is_valid_asciicast() {
        let dir = tempfile::tempdir().unwrap();
        let paths = AttemptPaths::new(&dir.path().join("t1"), 1);
        let mut rec = Recorder::create(paths.clone(), 80, 24, 1_700_000_000, "t1").unwrap();
        rec.output(Duration::from_millis(10), "hi ❯".as_bytes()[..4].as_ref())
            .unwrap();
        rec.output(Duration::from_millis(20), &"hi ❯".as_bytes()[4..])
            .unwrap();
        rec.input(Duration::from_millis(30), b"1").unwrap();
        rec.resize(Duration::from_millis(40), 100, 30).unwrap();
        rec.marker(Duration::from_millis(50), "verdict: completed")
            .unwrap();
        rec.finish(Duration::from_millis(60), &json!({"exit_code": 0}))
            .unwrap();
        let cast = fs::read_to_string(&paths.cast).unwrap();
        let lines: Vec<Value> = cast
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(lines[0]["width"], 80);
        assert_eq!(lines[1], json!([0.01, "o", "hi "]));
        assert_eq!(lines[2], json!([0.02, "o", "❯"]));
        assert_eq!(lines[3], json!([0.03, "i", "1"]));
        assert_eq!(lines[4], json!([0.04, "r", "100x30"]));
        assert_eq!(lines[5], json!([0.05, "m", "verdict: completed"]));
        assert_eq!(fs::read(&paths.log).unwrap(), "hi ❯".as_bytes());
        assert!(paths.facts.exists());
    }
}
