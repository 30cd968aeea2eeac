//! asciicast recordings (v2 and v3) read as a stream of events, each with its byte offset and
//! line, so a large file can be indexed without holding it. Damage (a bad line, invalid UTF-8, a
//! time going back, a cut last line) becomes a [`Problem`]; only a missing header is an error.

use std::io::{self, BufRead};

use serde::Deserialize;
use serde_json::Value;

/// Largest recorded size honoured; bigger is clamped (a damaged header must not allocate much).
pub const MAX_COLS: u16 = 1000;
pub const MAX_ROWS: u16 = 500;

/// What the header line says.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: u8,
    pub cols: u16,
    pub rows: u16,
    pub title: Option<String>,
    /// Unix time the recording started.
    pub timestamp: Option<i64>,
    /// The recorder's suggested idle cap (`asciinema rec -i`).
    pub idle_time_limit: Option<f64>,
}

/// The event codes of asciicast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `o`: bytes the program wrote.
    Output,
    /// `i`: bytes sent to the program (herd's answers, the operator's keys).
    Input,
    /// `r`: the terminal was resized to `COLSxROWS`.
    Resize,
    /// `m`: a marker (herd: prompts, answers, the verdict).
    Marker,
    /// `x`: the program exited (v3).
    Exit,
    Other(char),
}

impl EventKind {
    fn from_code(code: &str) -> EventKind {
        match code {
            "o" => EventKind::Output,
            "i" => EventKind::Input,
            "r" => EventKind::Resize,
            "m" => EventKind::Marker,
            "x" => EventKind::Exit,
            other => EventKind::Other(other.chars().next().unwrap_or('?')),
        }
    }

    pub fn code(self) -> char {
        match self {
            EventKind::Output => 'o',
            EventKind::Input => 'i',
            EventKind::Resize => 'r',
            EventKind::Marker => 'm',
            EventKind::Exit => 'x',
            EventKind::Other(c) => c,
        }
    }
}

/// One event, with its time in seconds from the start of the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub time: f64,
    pub kind: EventKind,
    pub data: String,
    /// 1-based line number in the file.
    pub line: u64,
}

/// Something wrong in the file that the reader stepped over.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct Problem {
    pub line: u64,
    pub kind: ProblemKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProblemKind {
    #[error("cut short: the recording ends in the middle of an event (was the recorder killed?)")]
    CutShort,
    #[error("not an event, skipped: {0}")]
    NotAnEvent(EventLineError),
    #[error("invalid UTF-8; the bad bytes are dropped")]
    InvalidUtf8,
    #[error("the time goes backwards ({time:.3} s after {before:.3} s); kept in order")]
    TimeBackwards { time: f64, before: f64 },
    #[error("bad resize {0:?} (expected COLSxROWS), ignored")]
    BadResize(String),
    #[error("{0}")]
    Header(String),
}

/// Why a line is not an event `[time, code, data]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventLineError {
    /// serde_json's own words.
    #[error("{0}")]
    NotJson(String),
    #[error("not a JSON array")]
    NotAnArray,
    #[error("the first item is not a time")]
    NoTime,
    #[error("the second item is not an event code")]
    NoCode,
}

/// Why a file cannot be replayed at all.
#[derive(Debug, thiserror::Error)]
pub enum CastError {
    #[error("cannot read the recording: {0}")]
    Io(#[from] io::Error),
    #[error("the recording is empty")]
    Empty,
    #[error("not an asciicast recording: the first line is not a JSON header ({0})")]
    NoHeader(String),
    #[error(
        "asciicast version {0} is not supported (herd replays versions 2 and 3; convert with `asciinema convert`)"
    )]
    Version(u64),
}

/// Where the reader stands: enough to resume reading from here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadPos {
    /// Byte offset of the next line.
    pub offset: u64,
    /// Line number of the last line read (the header is line 1).
    pub line: u64,
    /// Time of the last event (v3 times are relative to it; v2 times must not go below it).
    pub time: f64,
}

/// One step of the reader.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Event(Event),
    Problem(Problem),
}

/// Reads events one line at a time from any `BufRead` positioned at `pos.offset`.
pub struct CastReader<R> {
    src: R,
    version: u8,
    pos: ReadPos,
    buf: Vec<u8>,
    /// An event read together with a problem, handed out after it.
    queued: Option<Event>,
}

/// Parses `COLSxROWS`, clamped to a usable size.
pub fn parse_size(text: &str) -> Option<(u16, u16)> {
    let (cols, rows) = text.trim().split_once(['x', 'X'])?;
    let cols: u64 = cols.trim().parse().ok()?;
    let rows: u64 = rows.trim().parse().ok()?;
    Some((clamp_dim(cols, MAX_COLS), clamp_dim(rows, MAX_ROWS)))
}

fn clamp_dim(n: u64, max: u16) -> u16 {
    u16::try_from(n.clamp(1, u64::from(max))).unwrap_or(max)
}

/// Reads the header line. Problems with it (a missing size) come back beside it.
pub fn read_header<R: BufRead>(
    mut src: R,
) -> Result<(Header, Vec<Problem>, CastReader<R>), CastError> {
    let mut buf = Vec::new();
    let read = src.read_until(b'\n', &mut buf)?;
    if read == 0 {
        return Err(CastError::Empty);
    }
    let text = String::from_utf8_lossy(&buf);
    let value: Value =
        serde_json::from_str(text.trim()).map_err(|e| CastError::NoHeader(e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(CastError::NoHeader("it is not an object".to_string()));
    };
    let version = map.get("version").and_then(Value::as_u64).unwrap_or(2);
    if version != 2 && version != 3 {
        return Err(CastError::Version(version));
    }
    let term = map.get("term");
    let dim = |v2: &str, v3: &str| {
        map.get(v2)
            .or_else(|| term.and_then(|t| t.get(v3)))
            .and_then(Value::as_u64)
    };
    let mut problems = Vec::new();
    let mut size = |v2: &str, v3: &str, default: u16, max: u16| match dim(v2, v3) {
        Some(n) => clamp_dim(n, max),
        None => {
            problems.push(Problem {
                line: 1,
                kind: ProblemKind::Header(format!("the header has no {v2}; {default} assumed")),
            });
            default
        }
    };
    let cols = size("width", "cols", 80, MAX_COLS);
    let rows = size("height", "rows", 24, MAX_ROWS);
    let header = Header {
        version: if version == 3 { 3 } else { 2 },
        cols,
        rows,
        title: map.get("title").and_then(Value::as_str).map(str::to_string),
        timestamp: map.get("timestamp").and_then(Value::as_i64),
        idle_time_limit: map
            .get("idle_time_limit")
            .and_then(Value::as_f64)
            .filter(|l| l.is_finite() && *l > 0.0),
    };
    let pos = ReadPos {
        offset: read as u64,
        line: 1,
        time: 0.0,
    };
    let reader = CastReader::resume(src, header.version, pos);
    Ok((header, problems, reader))
}

/// The strict shape of an event line; anything else goes through `serde_json::Value`.
#[derive(Deserialize)]
struct RawEvent(f64, String, String);

impl<R: BufRead> CastReader<R> {
    /// A reader over `src`, which must already stand at `pos.offset`.
    pub fn resume(src: R, version: u8, pos: ReadPos) -> CastReader<R> {
        CastReader {
            src,
            version,
            pos,
            buf: Vec::new(),
            queued: None,
        }
    }

    pub fn pos(&self) -> ReadPos {
        self.pos
    }

    pub fn into_inner(self) -> R {
        self.src
    }

    /// The next event or problem; `None` at the end of the file.
    pub fn next_step(&mut self) -> io::Result<Option<Step>> {
        if let Some(event) = self.queued.take() {
            return Ok(Some(Step::Event(event)));
        }
        loop {
            self.buf.clear();
            let read = self.src.read_until(b'\n', &mut self.buf)?;
            if read == 0 {
                return Ok(None);
            }
            self.pos.offset += read as u64;
            self.pos.line += 1;
            let complete = self.buf.last() == Some(&b'\n');
            let line = self.buf.trim_ascii();
            if line.is_empty() || (self.version == 3 && line.starts_with(b"#")) {
                continue;
            }
            return Ok(Some(self.parse_line(complete)));
        }
    }

    /// The next event, skipping problems.
    pub fn next_event(&mut self) -> io::Result<Option<Event>> {
        while let Some(step) = self.next_step()? {
            if let Step::Event(event) = step {
                return Ok(Some(event));
            }
        }
        Ok(None)
    }

    fn parse_line(&mut self, complete: bool) -> Step {
        let line = self.pos.line;
        let problem = |kind| Step::Problem(Problem { line, kind });
        let (raw_time, code, data, lossy) = match parse_event(self.buf.trim_ascii()) {
            Ok(parsed) => parsed,
            Err(_) if !complete => return problem(ProblemKind::CutShort),
            Err(why) => return problem(ProblemKind::NotAnEvent(why)),
        };
        let (time, backwards) = self.place_in_time(raw_time);
        let event = Event {
            time,
            kind: EventKind::from_code(&code),
            data,
            line,
        };
        // A damaged event still plays: its problem goes out first, the event on the next call.
        let kind = if lossy {
            Some(ProblemKind::InvalidUtf8)
        } else {
            backwards
        };
        match kind {
            Some(kind) => {
                self.queued = Some(event);
                problem(kind)
            }
            None => Step::Event(event),
        }
    }

    /// Turns the line's time into seconds from the start; reports a time that goes backwards.
    fn place_in_time(&mut self, raw: f64) -> (f64, Option<ProblemKind>) {
        let raw = if raw.is_finite() { raw.max(0.0) } else { 0.0 };
        let before = self.pos.time;
        let (time, problem) = if self.version == 3 {
            (before + raw, None)
        } else if raw < before {
            (
                before,
                Some(ProblemKind::TimeBackwards { time: raw, before }),
            )
        } else {
            (raw, None)
        };
        self.pos.time = time;
        (time, problem)
    }
}

/// Parses one event line into (time, code, data, had invalid UTF-8).
fn parse_event(line: &[u8]) -> Result<(f64, String, String, bool), EventLineError> {
    if let Ok(RawEvent(time, code, data)) = serde_json::from_slice::<RawEvent>(line) {
        return Ok((time, code, data, false));
    }
    let (text, lossy) = match std::str::from_utf8(line) {
        Ok(text) => (std::borrow::Cow::Borrowed(text), false),
        Err(_) => (String::from_utf8_lossy(line), true),
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|e| EventLineError::NotJson(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(EventLineError::NotAnArray);
    };
    let time = items
        .first()
        .and_then(Value::as_f64)
        .ok_or(EventLineError::NoTime)?;
    let code = items
        .get(1)
        .and_then(Value::as_str)
        .ok_or(EventLineError::NoCode)?
        .to_string();
    let data = match items.get(2) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Ok((time, code, data, lossy))
}

#[cfg(test)]
#[path = "cast_tests.rs"]
mod tests;
