//! The tasks file's own text, kept between writes, and the edits that put herd's changes into it
//! without touching anything else: only the values of the fields that changed are rewritten, in
//! the style around them (indentation, line ends, an inline `{ ... }` task stays inline), and a
//! new field is written the way its siblings are separated.
//!
//! Owns the byte layout (where each task object is) and the splicing. Pure: no file I/O. Copying
//! the text once per write is its only cost that grows with the file; finding a task is an index
//! lookup, and only the changed tasks' own text is scanned. Must not decide what a valid tasks
//! file is (that is `taskfile`): it works on text serde_json already accepted, and when it cannot
//! make sense of the text it says so and the caller writes the document in full instead.
//!
//! This file holds the text and finds the task objects; `rewrite` rewrites one object.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

/// The keys changed per task, by the task's position in the document's `tasks` list.
pub type Changes = BTreeMap<usize, BTreeSet<String>>;

/// The text of a tasks file (without a byte order mark) and where each task object is in it.
#[derive(Debug, Clone)]
pub struct TaskText {
    /// Shared, so a writer can hold one version while the next is spliced (a new `String` is
    /// built per splice anyway; the old one lives on as long as a writer holds it).
    text: Arc<String>,
    /// `tasks[slot]` spans `spans[slot]` (from its `{` to just past its `}`; other values too).
    /// `None` when the text is not a JSON object with a `tasks` list: nothing can be spliced.
    spans: Option<Vec<Range<usize>>>,
}

impl TaskText {
    /// Keeps `text` and finds the tasks in it.
    pub fn new(text: String) -> TaskText {
        let spans = task_spans(text.as_bytes());
        TaskText {
            text: Arc::new(text),
            spans,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text itself, shared without copying it.
    pub fn shared(&self) -> Arc<String> {
        Arc::clone(&self.text)
    }

    /// Writes the current value in `doc` of every changed key into the text (a key gone from the
    /// document is removed from it); true when the text changed. `None`, with the text left as it
    /// was, when a changed task is not an object in the text or in `doc`.
    pub fn apply(&mut self, doc: &Value, changes: &Changes) -> Option<bool> {
        let tasks = doc.get("tasks")?.as_array()?;
        let spans = self.spans.as_mut()?;
        let mut rewritten = Vec::with_capacity(changes.len());
        for (&slot, keys) in changes {
            let span = spans.get(slot)?.clone();
            let object = tasks.get(slot)?.as_object()?;
            let fresh = rewrite_object(&self.text[span.clone()], object, keys)?;
            rewritten.push((span, fresh));
        }
        let grown: usize = rewritten.iter().map(|(_, f)| f.len()).sum();
        let mut text = String::with_capacity(self.text.len() + grown);
        let mut copied = 0;
        for (span, fresh) in &rewritten {
            text.push_str(&self.text[copied..span.start]);
            text.push_str(fresh);
            copied = span.end;
        }
        text.push_str(&self.text[copied..]);
        // Every task after a rewritten one moves by the growth of those before it.
        let mut shift: isize = 0;
        let mut next = rewritten.iter().zip(changes.keys()).peekable();
        for (slot, span) in spans.iter_mut().enumerate() {
            let start = span.start.saturating_add_signed(shift);
            if let Some(((old, fresh), _)) = next.next_if(|(_, s)| **s == slot) {
                shift += fresh.len() as isize - old.len() as isize;
            }
            *span = start..span.end.saturating_add_signed(shift);
        }
        let changed = rewritten
            .iter()
            .any(|(span, fresh)| self.text[span.clone()] != **fresh);
        self.text = Arc::new(text);
        Some(changed)
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
