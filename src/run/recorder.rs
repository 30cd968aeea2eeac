//! Recordings of one attempt under `runs/<task_id>/`: the raw bytes (`.log`), an asciicast
//! (`.cast`) and the facts (`.json`), private and never through a link. Writes are buffered and
//! flushed within `FLUSH_EVERY` (a fleet's recordings together) and at the end, so a crash loses
//! only a moment. Keys the operator types in take-over are recorded as a count, never their
//! text (it may be a password); herd's own input is recorded in full: it is the audit.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use thiserror::Error;

use super::safe_fs::{self, SafeFsError};

/// The longest a write waits in memory before it is flushed to the recording files.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);

/// A pause after which the operator's typing so far is written as one marker.
pub const TYPING_PAUSE: Duration = Duration::from_secs(2);

/// Room for a burst of output between flushes, so bursts are written in a few large writes.
const BUFFER_BYTES: usize = 64 * 1024;

#[derive(Debug, Error)]
pub enum RecordingError {
    #[error(transparent)]
    Open(#[from] SafeFsError),
    #[error("cannot write the recording {}: {cause}", path.display())]
    Write { path: PathBuf, cause: io::Error },
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> RecordingError + use<> {
    let path = path.to_path_buf();
    move |cause| RecordingError::Write { path, cause }
}

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
    /// When the oldest write not yet flushed was made (attempt time), if there is one.
    unflushed_since: Option<Duration>,
    /// The operator's take-over keys not yet written as a marker.
    typing: Option<Typing>,
}

/// A run of keys the operator typed, counted, never kept.
#[derive(Debug, Clone, Copy)]
struct Typing {
    since: Duration,
    last: Duration,
    keys: usize,
    bytes: usize,
}

impl Typing {
    fn label(&self) -> String {
        let plural = |n: usize, one: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {one}s"),
        };
        format!(
            "operator typed {} ({}) from {:.3} s (not recorded)",
            plural(self.keys, "key"),
            plural(self.bytes, "byte"),
            round_time(self.since)
        )
    }
}

impl Recorder {
    /// Creates the files (replacing leftovers) and writes the cast header; refuses links.
    pub fn create(
        paths: AttemptPaths,
        cols: u16,
        rows: u16,
        unix_time: u64,
        title: &str,
    ) -> Result<Recorder, RecordingError> {
        if let Some(dir) = paths.log.parent() {
            safe_fs::create_real_dir(dir)?;
        }
        let open = |path: &Path| {
            safe_fs::create_file(path).map(|f| BufWriter::with_capacity(BUFFER_BYTES, f))
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
        writeln!(cast, "{header}")
            .and_then(|()| cast.flush())
            .map_err(write_error(&paths.cast))?;
        Ok(Recorder {
            paths,
            log,
            cast,
            carry: Vec::new(),
            unflushed_since: None,
            typing: None,
        })
    }

    pub fn paths(&self) -> &AttemptPaths {
        &self.paths
    }

    fn event(&mut self, at: Duration, kind: &str, data: &str) -> Result<(), RecordingError> {
        // `[time, kind, data]` written straight into the buffer, with no JSON value built.
        serde_json::to_writer(&mut self.cast, &(round_time(at), kind, data))
            .map_err(io::Error::from)
            .and_then(|()| self.cast.write_all(b"\n"))
            .map_err(write_error(&self.paths.cast))?;
        self.unflushed_since.get_or_insert(at);
        Ok(())
    }

    pub fn output(&mut self, at: Duration, bytes: &[u8]) -> Result<(), RecordingError> {
        self.log
            .write_all(bytes)
            .map_err(write_error(&self.paths.log))?;
        self.unflushed_since.get_or_insert(at);
        self.carry.extend_from_slice(bytes);
        let text = take_complete_utf8(&mut self.carry);
        if !text.is_empty() {
            self.event(at, "o", &text)?;
        }
        Ok(())
    }

    /// herd's own input to the agent, or the operator's with `--record-input`: in full.
    pub fn input(&mut self, at: Duration, bytes: &[u8]) -> Result<(), RecordingError> {
        self.end_typing(at)?;
        self.event(at, "i", &String::from_utf8_lossy(bytes))
    }

    /// Keys the operator typed in take-over mode: counted, their text never written.
    pub fn operator_typed(&mut self, at: Duration, bytes: &[u8]) -> Result<(), RecordingError> {
        if self
            .typing
            .is_some_and(|t| at.saturating_sub(t.last) >= TYPING_PAUSE)
        {
            self.end_typing(at)?;
        }
        let typing = self.typing.get_or_insert(Typing {
            since: at,
            last: at,
            keys: 0,
            bytes: 0,
        });
        typing.last = at;
        typing.keys += 1;
        typing.bytes += bytes.len();
        Ok(())
    }

    /// Writes the operator's typing so far as one marker, at `at` (never before what is written).
    fn end_typing(&mut self, at: Duration) -> Result<(), RecordingError> {
        match self.typing.take() {
            Some(typing) => self.event(at, "m", &typing.label()),
            None => Ok(()),
        }
    }

    pub fn resize(&mut self, at: Duration, cols: u16, rows: u16) -> Result<(), RecordingError> {
        self.end_typing(at)?;
        self.event(at, "r", &format!("{cols}x{rows}"))
    }

    pub fn marker(&mut self, at: Duration, label: &str) -> Result<(), RecordingError> {
        self.end_typing(at)?;
        self.event(at, "m", label)
    }

    /// When the held writes or the operator's typing are due, if either is pending.
    pub fn flush_due(&self) -> Option<Duration> {
        let flush = self.unflushed_since.map(|since| since + FLUSH_EVERY);
        let typing = self.typing.map(|t| t.last + TYPING_PAUSE);
        match (flush, typing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Writes the operator's typing once it paused, and whatever writes are held.
    pub fn flush_pending(&mut self, at: Duration) -> Result<(), RecordingError> {
        if self
            .typing
            .is_some_and(|t| at.saturating_sub(t.last) >= TYPING_PAUSE)
        {
            self.end_typing(at)?;
        }
        if self.unflushed_since.is_some() {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes everything buffered to the files.
    pub fn flush(&mut self) -> Result<(), RecordingError> {
        self.log.flush().map_err(write_error(&self.paths.log))?;
        self.cast.flush().map_err(write_error(&self.paths.cast))?;
        self.unflushed_since = None;
        Ok(())
    }

    /// Writes the attempt's facts and flushes everything.
    pub fn finish(
        &mut self,
        at: Duration,
        facts: &impl serde::Serialize,
    ) -> Result<(), RecordingError> {
        if !self.carry.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.carry)).into_owned();
            self.event(at, "o", &rest)?;
        }
        self.end_typing(at)?;
        self.flush()?;
        let text = serde_json::to_string_pretty(facts).unwrap_or_default();
        let mut file = safe_fs::create_file(&self.paths.facts)?;
        file.write_all(format!("{text}\n").as_bytes())
            .map_err(write_error(&self.paths.facts))
    }
}

fn round_time(at: Duration) -> f64 {
    (at.as_secs_f64() * 1_000_000.0).round() / 1_000_000.0
}

/// Takes the longest valid UTF-8 prefix of `buf`, leaving an incomplete last character in it.
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
    use std::fs;

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
        let lines: Vec<serde_json::Value> = cast
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

    #[test]
    fn output_is_held_until_the_flush_is_due_and_no_longer() {
        let dir = tempfile::tempdir().unwrap();
        let paths = AttemptPaths::new(&dir.path().join("t1"), 1);
        let mut rec = Recorder::create(paths.clone(), 80, 24, 1_700_000_000, "t1").unwrap();
        let start = Duration::from_secs(1);
        rec.output(start, b"first").unwrap();
        rec.output(start + FLUSH_EVERY / 2, b" second").unwrap();
        assert_eq!(fs::read(&paths.log).unwrap(), b"", "held in memory");
        assert_eq!(rec.flush_due(), Some(start + FLUSH_EVERY));
        rec.flush_pending(start + FLUSH_EVERY).unwrap();
        assert_eq!(fs::read(&paths.log).unwrap(), b"first second");
        assert_eq!(fs::read_to_string(&paths.cast).unwrap().lines().count(), 3);
        assert_eq!(rec.flush_due(), None);
        // Output alone writes nothing: the engine's tick flushes (`flush_pending` flushes what
        // is held before it is due, for a fleet's recordings to share one wakeup).
        rec.output(start * 2, b"!").unwrap();
        rec.output(start * 2 + FLUSH_EVERY, b"?").unwrap();
        assert_eq!(fs::read(&paths.log).unwrap(), b"first second");
        rec.flush_pending(start * 2 + FLUSH_EVERY).unwrap();
        assert_eq!(fs::read(&paths.log).unwrap(), b"first second!?");
        assert_eq!(rec.flush_due(), None);
        rec.flush_pending(start * 3).unwrap();
        assert_eq!(fs::read(&paths.log).unwrap(), b"first second!?");
    }

    #[test]
    fn the_operators_keys_are_counted_never_kept_and_the_cast_stays_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let paths = AttemptPaths::new(&dir.path().join("t1"), 1);
        let mut rec = Recorder::create(paths.clone(), 80, 24, 1_700_000_000, "t1").unwrap();
        let ms = Duration::from_millis;
        // A password at a prompt that does not echo: the keys, then Enter.
        for (i, key) in "s3cret!\r".bytes().enumerate() {
            rec.operator_typed(ms(1000 + 100 * i as u64), &[key])
                .unwrap();
        }
        // The agent's output meanwhile does not end the run of typing.
        rec.output(ms(1850), b"\r\n").unwrap();
        assert_eq!(
            rec.flush_due(),
            Some(ms(2100)),
            "the output's flush comes first"
        );
        rec.flush_pending(ms(2100)).unwrap();
        let typing_due = ms(1700) + TYPING_PAUSE;
        assert_eq!(rec.flush_due(), Some(typing_due));
        rec.flush_pending(typing_due).unwrap();
        // A second run, ended by herd's own answer, which is kept in full.
        rec.operator_typed(ms(5000), b"\x1b[A").unwrap();
        rec.input(ms(5100), b"1").unwrap();
        rec.operator_typed(ms(6000), b"y").unwrap();
        rec.finish(ms(6500), &json!({})).unwrap();
        let cast = fs::read_to_string(&paths.cast).unwrap();
        assert!(!cast.contains("s3cret"), "{cast}");
        let events: Vec<serde_json::Value> = cast
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            events,
            [
                json!([1.85, "o", "\r\n"]),
                json!([
                    3.7,
                    "m",
                    "operator typed 8 keys (8 bytes) from 1.000 s (not recorded)"
                ]),
                json!([
                    5.1,
                    "m",
                    "operator typed 1 key (3 bytes) from 5.000 s (not recorded)"
                ]),
                json!([5.1, "i", "1"]),
                json!([
                    6.5,
                    "m",
                    "operator typed 1 key (1 byte) from 6.000 s (not recorded)"
                ]),
            ]
        );
        let times: Vec<f64> = events.iter().map(|e| e[0].as_f64().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    }

    #[test]
    fn a_task_folder_that_is_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("t1")).unwrap();
        let paths = AttemptPaths::new(&dir.path().join("t1"), 1);
        let error = Recorder::create(paths, 80, 24, 0, "t1")
            .err()
            .expect("refused");
        assert!(
            error.to_string().contains("t1 is a symbolic link"),
            "{error}"
        );
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
