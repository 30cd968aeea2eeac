//! Seeking in a recording of any size: one pass builds an [`Index`] of markers, idle gaps,
//! problems and terminal checkpoints every megabyte or so (within a memory budget: past it, every
//! other one is dropped). A [`Playhead`] reaches any time from the nearest checkpoint before it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use super::cast::{
    CastError, CastReader, Event, EventKind, Header, Problem, ProblemKind, ReadPos, Step,
    parse_size, read_header,
};
use super::term::{Snapshot, Term, scrollback_for};
use super::timeline::{Gap, MIN_IDLE_LIMIT, Marker, MarkerKind, Timeline};

/// Problems kept word for word; the rest are only counted.
const MAX_PROBLEMS_KEPT: usize = 100;
/// Marker labels longer than this are cut (a damaged file must not make the timeline huge).
const MAX_LABEL_CHARS: usize = 300;
/// Characters of an event shown in the readout.
const PREVIEW_CHARS: usize = 100;

/// How densely checkpoints are taken.
#[derive(Debug, Clone, Copy)]
pub struct IndexOptions {
    /// File bytes between checkpoints, at first.
    pub every_bytes: u64,
    /// Most bytes all checkpoints may hold together.
    pub budget_bytes: usize,
}

impl Default for IndexOptions {
    fn default() -> IndexOptions {
        IndexOptions {
            every_bytes: 1 << 20,
            budget_bytes: 32 << 20,
        }
    }
}

/// The event a screen was last changed by, for the readout.
#[derive(Debug, Clone, PartialEq)]
pub struct EventInfo {
    /// 1-based count of events.
    pub number: u64,
    pub line: u64,
    pub time: f64,
    pub kind: EventKind,
    /// Bytes of data.
    pub len: usize,
    /// The data with control characters made visible, cut to a readable length.
    pub preview: String,
}

impl EventInfo {
    fn of(event: &Event, number: u64) -> EventInfo {
        EventInfo {
            number,
            line: event.line,
            time: event.time,
            kind: event.kind,
            len: event.data.len(),
            preview: preview(&event.data, PREVIEW_CHARS),
        }
    }
}

/// Control characters as `\e`, `\r`, `\n`, `\xNN`; at most `max` characters, then `…`.
pub fn preview(data: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in data.chars().enumerate() {
        if count >= max {
            out.push('…');
            break;
        }
        match c {
            '\x1b' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// The terminal as it was after `events` events.
pub struct Checkpoint {
    pub time: f64,
    pub pos: ReadPos,
    pub events: u64,
    last: Option<EventInfo>,
    snapshot: Snapshot,
}

/// What one pass over a recording learned.
pub struct Index {
    pub header: Header,
    pub timeline: Timeline,
    pub checkpoints: Vec<Checkpoint>,
    /// The first problems, in file order.
    pub problems: Vec<Problem>,
    pub problem_count: u64,
    pub events: u64,
    pub output_bytes: u64,
    pub file_bytes: u64,
    /// Where the first event line starts.
    start: ReadPos,
    /// Scrollback rows of the replayed terminal (the same for every checkpoint).
    scrollback: usize,
}

impl Index {
    /// Indexes the file at `path`; `progress` hears the bytes read so far now and then.
    pub fn build_file(
        path: &Path,
        options: IndexOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Index, CastError> {
        let file = File::open(path)?;
        Index::build(BufReader::with_capacity(1 << 16, file), options, progress)
    }

    pub fn build<R: BufRead>(
        src: R,
        options: IndexOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Index, CastError> {
        let (header, problems, mut reader) = read_header(src)?;
        let scrollback = scrollback_for(header.rows);
        let mut term = Term::new(header.rows, header.cols, scrollback);
        let mut index = Index {
            start: reader.pos(),
            problem_count: problems.len() as u64,
            problems,
            header,
            timeline: Timeline::default(),
            checkpoints: Vec::new(),
            events: 0,
            output_bytes: 0,
            file_bytes: 0,
            scrollback,
        };
        let mut markers = Vec::new();
        let mut gaps = Vec::new();
        let mut every = options.every_bytes.max(1);
        let mut last_checkpoint = index.start.offset;
        let mut last_progress = 0;
        let mut last_time = 0.0;
        while let Some(step) = reader.next_step()? {
            let event = match step {
                Step::Problem(problem) => {
                    index.note_problem(problem);
                    continue;
                }
                Step::Event(event) => event,
            };
            if event.time - last_time >= MIN_IDLE_LIMIT {
                gaps.push(Gap {
                    start: last_time,
                    len: event.time - last_time,
                });
            }
            last_time = event.time;
            match event.kind {
                EventKind::Marker => markers.push(Marker {
                    time: event.time,
                    event: index.events + 1,
                    kind: MarkerKind::of(&event.data),
                    label: preview(&event.data, MAX_LABEL_CHARS),
                }),
                EventKind::Resize if parse_size(&event.data).is_none() => {
                    index.note_problem(Problem {
                        line: event.line,
                        kind: ProblemKind::BadResize(preview(&event.data, 40)),
                    });
                }
                EventKind::Output => index.output_bytes += event.data.len() as u64,
                _ => {}
            }
            term.apply(&event);
            index.events += 1;
            let pos = reader.pos();
            if term.at_ground() && pos.offset - last_checkpoint >= every {
                last_checkpoint = pos.offset;
                index.checkpoints.push(Checkpoint {
                    time: event.time,
                    pos,
                    events: index.events,
                    last: Some(EventInfo::of(&event, index.events)),
                    snapshot: term.snapshot(),
                });
                every = index.thin_checkpoints(every, options.budget_bytes);
            }
            if pos.offset - last_progress >= 4 << 20 {
                last_progress = pos.offset;
                progress(pos.offset);
            }
        }
        index.file_bytes = reader.pos().offset;
        index.timeline = Timeline::new(last_time, markers, gaps);
        Ok(index)
    }

    fn note_problem(&mut self, problem: Problem) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS_KEPT {
            self.problems.push(problem);
        }
    }

    /// Drops every other checkpoint while they hold more than `budget`; returns the new spacing.
    fn thin_checkpoints(&mut self, mut every: u64, budget: usize) -> u64 {
        while self.checkpoint_bytes() > budget && self.checkpoints.len() > 1 {
            let mut keep = false;
            self.checkpoints.retain(|_| {
                keep = !keep;
                keep
            });
            every = every.saturating_mul(2);
        }
        every
    }

    /// Bytes the checkpoints hold.
    pub fn checkpoint_bytes(&self) -> usize {
        self.checkpoints.iter().map(|c| c.snapshot.bytes()).sum()
    }

    /// The last checkpoint at or before `time`.
    fn checkpoint_before(&self, time: f64) -> Option<&Checkpoint> {
        let i = self.checkpoints.partition_point(|c| c.time <= time);
        i.checked_sub(1).and_then(|i| self.checkpoints.get(i))
    }

    fn blank_term(&self) -> Term {
        Term::new(self.header.rows, self.header.cols, self.scrollback)
    }
}

/// A position in a recording, with the terminal as it is there.
pub struct Playhead<R = BufReader<File>> {
    index: Arc<Index>,
    /// `None` only while it is being moved to a new offset.
    reader: Option<CastReader<R>>,
    term: Term,
    /// The first event not applied yet, when it was read already.
    pending: Option<Event>,
    /// No event after this time has been applied.
    time: f64,
    applied: u64,
    last: Option<EventInfo>,
}

impl Playhead<BufReader<File>> {
    pub fn open(path: &Path, index: Arc<Index>) -> io::Result<Playhead<BufReader<File>>> {
        Playhead::new(BufReader::with_capacity(1 << 16, File::open(path)?), index)
    }
}

impl<R> Playhead<R> {
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    pub fn term(&self) -> &Term {
        &self.term
    }

    /// Recorded time the screen stands at.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Events applied so far.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The last event applied.
    pub fn last_event(&self) -> Option<&EventInfo> {
        self.last.as_ref()
    }
}

impl<R: BufRead + Seek> Playhead<R> {
    /// A playhead at the start; `src` is the indexed file (anywhere: it is moved).
    pub fn new(mut src: R, index: Arc<Index>) -> io::Result<Playhead<R>> {
        src.seek(SeekFrom::Start(index.start.offset))?;
        Ok(Playhead {
            reader: Some(CastReader::resume(src, index.header.version, index.start)),
            term: index.blank_term(),
            index,
            pending: None,
            time: 0.0,
            applied: 0,
            last: None,
        })
    }

    /// Moves to recorded time `time`: every event at or before it applied, none after.
    pub fn seek(&mut self, time: f64) -> io::Result<()> {
        let time = time.max(0.0);
        let index = Arc::clone(&self.index);
        let checkpoint = index.checkpoint_before(time);
        if time < self.time || checkpoint.is_some_and(|c| c.events > self.applied) {
            self.restore(checkpoint)?;
        }
        self.advance(time)
    }

    /// Moves to just after event `number` (1-based; 0 is the start).
    pub fn seek_event(&mut self, number: u64) -> io::Result<()> {
        let index = Arc::clone(&self.index);
        let i = index.checkpoints.partition_point(|c| c.events <= number);
        let checkpoint = i.checked_sub(1).and_then(|i| index.checkpoints.get(i));
        if number < self.applied || checkpoint.is_some_and(|c| c.events > self.applied) {
            self.restore(checkpoint)?;
        }
        while self.applied < number && self.step(1, usize::MAX)? {}
        Ok(())
    }

    /// Applies the events up to `time` (never goes back).
    pub fn advance(&mut self, time: f64) -> io::Result<()> {
        while let Some(event) = self.next_event()? {
            if event.time > time {
                self.pending = Some(event);
                break;
            }
            self.apply(event);
        }
        self.time = self.time.max(time);
        Ok(())
    }

    /// Applies whole events until `max_events` or `max_bytes` of data; `false` at the end.
    pub fn step(&mut self, max_events: usize, max_bytes: usize) -> io::Result<bool> {
        let (mut events, mut bytes) = (0, 0);
        while events < max_events && bytes < max_bytes {
            let Some(event) = self.next_event()? else {
                return Ok(false);
            };
            events += 1;
            bytes += event.data.len();
            self.time = self.time.max(event.time);
            self.apply(event);
        }
        Ok(true)
    }

    fn next_event(&mut self) -> io::Result<Option<Event>> {
        if let Some(event) = self.pending.take() {
            return Ok(Some(event));
        }
        match self.reader.as_mut() {
            Some(reader) => reader.next_event(),
            None => Ok(None),
        }
    }

    fn apply(&mut self, event: Event) {
        self.term.apply(&event);
        self.applied += 1;
        self.last = Some(EventInfo::of(&event, self.applied));
    }

    /// Goes back to a checkpoint (or the start).
    fn restore(&mut self, checkpoint: Option<&Checkpoint>) -> io::Result<()> {
        let pos = checkpoint.map_or(self.index.start, |c| c.pos);
        let reader = self
            .reader
            .take()
            .ok_or_else(|| io::Error::other("recording closed"))?;
        let mut src = reader.into_inner();
        src.seek(SeekFrom::Start(pos.offset))?;
        self.reader = Some(CastReader::resume(src, self.index.header.version, pos));
        self.pending = None;
        match checkpoint {
            Some(c) => {
                self.term.restore(&c.snapshot);
                self.time = c.time;
                self.applied = c.events;
                self.last = c.last.clone();
            }
            None => {
                self.term = self.index.blank_term();
                self.time = 0.0;
                self.applied = 0;
                self.last = None;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "seek_tests.rs"]
mod tests;
