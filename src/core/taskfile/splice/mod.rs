//! The tasks file's own text, kept between writes, and the edits that put herd's changes into it
//! without touching anything else: only changed values are rewritten, in the style around them.
//! The text is kept in pieces of a few tasks each, so a splice copies and scans only the changed
//! tasks' pieces. When it cannot make sense of the text it says so, and the caller writes the
//! document in full. `rewrite` rewrites one object.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

/// The keys changed per task, by the task's position in the document's `tasks` list.
pub type Changes = BTreeMap<usize, BTreeSet<String>>;

/// How many tasks share a piece of the text: a splice's cost is a few tasks' text, whatever the
/// file's length.
const TASKS_PER_PIECE: usize = 64;

/// The text of a tasks file (without a BOM) in pieces, piece `p` holding tasks from
/// `p * TASKS_PER_PIECE` (the first and last also what surrounds the list), and where each task
/// object is.
#[derive(Debug, Clone)]
pub struct TaskText {
    /// Each shared, so a writer holds one version (`SharedText`) while the next is spliced.
    pieces: Vec<Arc<String>>,
    /// `tasks[slot]` spans `spans[slot]` of its piece. `None` when the text is not an object with
    /// a `tasks` list: nothing can be spliced, and the text is one piece.
    spans: Option<Vec<Range<usize>>>,
    /// `TASKS_PER_PIECE`, smaller in tests.
    tasks_per_piece: usize,
}

/// One version of the text, sharing its pieces: unchanged by later splices, and cheap.
#[derive(Debug, Clone, Default)]
pub struct SharedText {
    pieces: Vec<Arc<String>>,
}

impl SharedText {
    /// The text in order, as pieces to write one after the other.
    pub fn pieces(&self) -> impl ExactSizeIterator<Item = &str> {
        self.pieces.iter().map(|piece| piece.as_str())
    }

    /// The length of the whole text in bytes.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(|piece| piece.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes at the start of `self` and `other` are the same (shared pieces are skipped
    /// unread).
    pub fn common_prefix_len(&self, other: &SharedText) -> usize {
        let shared = self
            .pieces
            .iter()
            .zip(&other.pieces)
            .take_while(|(a, b)| Arc::ptr_eq(a, b))
            .count();
        let skipped: usize = self.pieces[..shared].iter().map(|p| p.len()).sum();
        let mut mine = self.pieces[shared..].iter().map(|p| p.as_bytes());
        let mut theirs = other.pieces[shared..].iter().map(|p| p.as_bytes());
        let (mut a, mut b): (&[u8], &[u8]) = (&[], &[]);
        let mut same = skipped;
        loop {
            if a.is_empty() {
                match mine.next() {
                    Some(next) => a = next,
                    None => return same,
                }
                continue;
            }
            if b.is_empty() {
                match theirs.next() {
                    Some(next) => b = next,
                    None => return same,
                }
                continue;
            }
            let n = a.len().min(b.len());
            let equal = a[..n]
                .iter()
                .zip(&b[..n])
                .take_while(|(x, y)| x == y)
                .count();
            same += equal;
            if equal < n {
                return same;
            }
            (a, b) = (&a[n..], &b[n..]);
        }
    }

    /// The text from byte `offset` on, as pieces of bytes.
    pub fn bytes_from(&self, offset: usize) -> impl Iterator<Item = &[u8]> {
        let mut skip = offset;
        self.pieces.iter().filter_map(move |piece| {
            let bytes = piece.as_bytes();
            let from = skip.min(bytes.len());
            skip -= from;
            (from < bytes.len()).then(|| &bytes[from..])
        })
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pieces().try_for_each(|piece| f.write_str(piece))
    }
}

impl TaskText {
    /// Keeps `text` and finds the tasks in it.
    pub fn new(text: String) -> TaskText {
        TaskText::in_pieces_of(TASKS_PER_PIECE, text)
    }

    fn in_pieces_of(tasks_per_piece: usize, text: String) -> TaskText {
        let Some(whole) = task_spans(text.as_bytes()) else {
            return TaskText {
                pieces: vec![Arc::new(text)],
                spans: None,
                tasks_per_piece,
            };
        };
        // Each piece but the first starts at its first task's `{`.
        let starts: Vec<usize> = std::iter::once(0)
            .chain(
                whole
                    .iter()
                    .step_by(tasks_per_piece)
                    .skip(1)
                    .map(|s| s.start),
            )
            .collect();
        let ends = starts.iter().skip(1).copied().chain([text.len()]);
        let pieces = starts
            .iter()
            .zip(ends)
            .map(|(&start, end)| Arc::new(text[start..end].to_string()))
            .collect();
        let spans = whole
            .iter()
            .enumerate()
            .map(|(slot, span)| {
                let start = starts[slot / tasks_per_piece];
                span.start - start..span.end - start
            })
            .collect();
        TaskText {
            pieces,
            spans: Some(spans),
            tasks_per_piece,
        }
    }

    /// The text as it is now, shared without copying it.
    pub fn shared(&self) -> SharedText {
        SharedText {
            pieces: self.pieces.clone(),
        }
    }

    /// Writes the current value in `doc` of every changed key into the text (a key gone is
    /// removed); true when it changed. `None`, text untouched, when a task is not an object.
    pub fn apply(&mut self, doc: &Value, changes: &Changes) -> Option<bool> {
        let tasks = doc.get("tasks")?.as_array()?;
        let per_piece = self.tasks_per_piece;
        let spans = self.spans.as_mut()?;
        // Every rewrite first: a task that cannot be rewritten leaves the text as it was.
        let mut rewritten = Vec::with_capacity(changes.len());
        for (&slot, keys) in changes {
            let span = spans.get(slot)?.clone();
            let piece = &self.pieces[slot / per_piece];
            let object = tasks.get(slot)?.as_object()?;
            let fresh = rewrite_object(&piece[span.clone()], object, keys)?;
            rewritten.push((slot, fresh));
        }
        let mut changed = false;
        // `changes` is ordered by slot, so the rewrites of one piece are next to each other.
        for in_piece in rewritten.chunk_by(|(a, _), (b, _)| a / per_piece == b / per_piece) {
            let piece = in_piece[0].0 / per_piece;
            let old = &self.pieces[piece];
            let grown: usize = in_piece.iter().map(|(_, fresh)| fresh.len()).sum();
            let mut text = String::with_capacity(old.len() + grown);
            let mut copied = 0;
            for (slot, fresh) in in_piece {
                let span = &spans[*slot];
                changed |= old[span.clone()] != **fresh;
                text.push_str(&old[copied..span.start]);
                text.push_str(fresh);
                copied = span.end;
            }
            text.push_str(&old[copied..]);
            // Later tasks of the piece move by the growth before them; other pieces do not.
            let first = piece * per_piece;
            let last = (first + per_piece).min(spans.len());
            let mut shift: isize = 0;
            let mut next = in_piece.iter().peekable();
            for (slot, span) in spans[first..last].iter_mut().enumerate() {
                let start = span.start.saturating_add_signed(shift);
                if let Some((_, fresh)) = next.next_if(|(s, _)| *s == first + slot) {
                    shift += fresh.len() as isize - span.len() as isize;
                }
                *span = start..span.end.saturating_add_signed(shift);
            }
            self.pieces[piece] = Arc::new(text);
        }
        Some(changed)
    }
}

impl fmt::Display for TaskText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pieces.iter().try_for_each(|piece| f.write_str(piece))
    }
}

/// One `"key": value` of an object, as byte offsets into the object's text.
#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Range<usize>,
}

/// The members of the object text `object` (from `{` to `}`), in text order.
pub fn members(object: &str) -> Option<Vec<Member>> {
    let bytes = object.as_bytes();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_ws(bytes, at + 1);
    let mut found = Vec::new();
    if bytes.get(at) == Some(&b'}') {
        return Some(found);
    }
    loop {
        let key_start = at;
        let key_end = skip_string(bytes, at)?;
        let key: String = serde_json::from_str(&object[key_start..key_end]).ok()?;
        at = skip_ws(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(bytes, at + 1);
        let value_end = skip_value(bytes, value_start)?;
        found.push(Member {
            key,
            key_start,
            value: value_start..value_end,
        });
        at = skip_ws(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_ws(bytes, at + 1),
            Some(b'}') => return Some(found),
            _ => return None,
        }
    }
}

/// `text` with `task` appended to its `tasks` list, laid out as the elements before it. `None`
/// when the list is missing or empty: the caller writes the document in full.
pub fn with_task_appended(text: &str, task: &Value) -> Option<String> {
    let bytes = text.as_bytes();
    let spans = task_spans(bytes)?;
    let last = spans.last()?.clone();
    // The separator between two elements as the file writes it: `,` and the blank after it.
    let blank_before = |start: usize| {
        let from = bytes[..start]
            .iter()
            .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .map_or(0, |i| i + 1);
        &text[from..start]
    };
    let blank = blank_before(match spans.len() {
        1 => last.start,
        n => spans[n - 1].start,
    });
    let indent = blank.rsplit(['\n', '\r']).next().unwrap_or("");
    let line_end = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let body = if blank.contains('\n') {
        let pretty = serde_json::to_string_pretty(task).ok()?;
        pretty
            .lines()
            .collect::<Vec<_>>()
            .join(&format!("{line_end}{indent}"))
    } else {
        serde_json::to_string(task).ok()?
    };
    let mut out = String::with_capacity(text.len() + body.len() + blank.len() + 1);
    out.push_str(&text[..last.end]);
    out.push(',');
    out.push_str(blank);
    out.push_str(&body);
    out.push_str(&text[last.end..]);
    Some(out)
}

/// The spans of the root object's `tasks` list's elements.
fn task_spans(bytes: &[u8]) -> Option<Vec<Range<usize>>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let root_start = skip_ws(bytes, 0);
    let root_end = skip_value(bytes, root_start)?;
    // serde_json keeps the last of repeated keys; so does this.
    let tasks = members(&text[root_start..root_end])?
        .into_iter()
        .rfind(|m| m.key == "tasks")?;
    let start = root_start + tasks.value.start;
    if bytes.get(start) != Some(&b'[') {
        return None;
    }
    let mut spans = Vec::new();
    let mut at = skip_ws(bytes, start + 1);
    if bytes.get(at) == Some(&b']') {
        return Some(spans);
    }
    loop {
        let end = skip_value(bytes, at)?;
        spans.push(at..end);
        at = skip_ws(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_ws(bytes, at + 1),
            Some(b']') => return Some(spans),
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Just past the string starting at `at` (its opening quote).
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Just past the value starting at `at`. Iterative, so deep nesting cannot overflow the stack.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    loop {
        match bytes.get(i)? {
            b'"' => i = skip_string(bytes, i)?,
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' if depth > 0 => i += 1,
            _ if depth > 0 => i += 1,
            _ => {
                // A number, true, false or null.
                while matches!(bytes.get(i), Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'))
                {
                    i += 1;
                }
                if i == at {
                    return None;
                }
            }
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

mod rewrite;

use rewrite::rewrite_object;

#[cfg(test)]
mod tests;
