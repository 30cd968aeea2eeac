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

/// How the text around a value is written, so a rewritten or new value looks like its siblings.
#[derive(Debug, Clone)]
struct Style {
    newline: &'static str,
    /// One level of indentation (of the object's members relative to the object's own line).
    unit: String,
    /// Between a key and its value, for values written afresh: `": "` or `":"`.
    colon: &'static str,
    /// Between members of an inline container: `", "` or `","`.
    comma: &'static str,
    /// Inside the braces of an inline object: `" "` or `""`.
    pad: &'static str,
}

/// The object text with every key in `keys` set to its value in `object` (or removed).
fn rewrite_object(
    text: &str,
    object: &serde_json::Map<String, Value>,
    keys: &BTreeSet<String>,
) -> Option<String> {
    let found = members(text)?;
    let first = found.first()?;
    let last = found.last()?;
    let prefix = &text[..first.key_start];
    let suffix = &text[last.value.end..];
    // Separators: seps[i] lies between member i and member i + 1 (it holds the comma).
    let seps: Vec<&str> = found
        .windows(2)
        .map(|w| &text[w[0].value.end..w[1].key_start])
        .collect();
    let multiline = text.contains('\n');
    let style = style_of(text, &found, multiline);
    let indent = line_indent(text, last.key_start);
    // The last occurrence of a repeated key is the one serde_json read.
    let mut last_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in found.iter().enumerate() {
        last_of.insert(&m.key, i);
    }
    // Each kept member with the original index it had, so it keeps the separator before it.
    let mut kept: Vec<(usize, String)> = Vec::with_capacity(found.len());
    for (i, m) in found.iter().enumerate() {
        let changed = keys.contains(&m.key) && last_of.get(m.key.as_str()) == Some(&i);
        if !changed {
            kept.push((i, text[m.key_start..m.value.end].to_string()));
        } else if let Some(value) = object.get(&m.key) {
            let old = &text[m.value.clone()];
            let inline = !multiline || (!old.contains('\n') && is_filled_container(old));
            let rendered = render(value, inline, &line_indent(text, m.key_start), &style);
            kept.push((
                i,
                format!("{}{rendered}", &text[m.key_start..m.value.start]),
            ));
        }
        // A removed member goes with the separator before it (or, first, after it).
    }
    // What separates a new member from the one before it: the siblings' own separator.
    let new_sep = seps.last().map_or_else(
        || {
            if multiline {
                format!(",{}{}", style.newline, indent)
            } else {
                style.comma.to_string()
            }
        },
        |s| (*s).to_string(),
    );
    let present: BTreeSet<&str> = found.iter().map(|m| m.key.as_str()).collect();
    let key_colon = separator_after_key(text, last).unwrap_or_else(|| style.colon.to_string());
    let mut added = Vec::new();
    for (key, value) in object {
        if keys.contains(key) && !present.contains(key.as_str()) {
            added.push(format!(
                "{}{key_colon}{}",
                Value::String(key.clone()),
                render(value, !multiline, &indent, &style)
            ));
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(prefix);
    for (n, (i, piece)) in kept.iter().enumerate() {
        if n > 0 {
            out.push_str(seps.get(i - 1).copied().unwrap_or(&new_sep));
        }
        out.push_str(piece);
    }
    let mut first = kept.is_empty();
    for piece in added {
        if !first {
            out.push_str(&new_sep);
        }
        first = false;
        out.push_str(&piece);
    }
    out.push_str(suffix);
    Some(out)
}

fn is_filled_container(value: &str) -> bool {
    let inner = value.get(1..value.len().saturating_sub(1)).unwrap_or("");
    value.starts_with(['{', '[']) && !inner.trim().is_empty()
}

/// The text between a member's key and its value (`": "`, `" : "`, `":"`).
fn separator_after_key(text: &str, member: &Member) -> Option<String> {
    let key_end = skip_string(text.as_bytes(), member.key_start)?;
    text.get(key_end..member.value.start).map(str::to_string)
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn style_of(text: &str, found: &[Member], multiline: bool) -> Style {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let colon = found
        .iter()
        .find_map(|m| separator_after_key(text, m))
        .map_or(": ", |s| if s.ends_with(' ') { ": " } else { ":" });
    let comma = if multiline {
        ", "
    } else {
        found.windows(2).next().map_or(", ", |w| {
            if text[w[0].value.end..w[1].key_start].ends_with(' ') {
                ", "
            } else {
                ","
            }
        })
    };
    let pad = if text.starts_with("{ ") { " " } else { "" };
    let member_indent = found
        .first()
        .map(|m| line_indent(text, m.key_start))
        .unwrap_or_default();
    // The closing brace of a multi-line object sits at the object's own indentation.
    let object_indent = line_indent(text, text.len().saturating_sub(1));
    let unit = member_indent
        .strip_prefix(object_indent.as_str())
        .filter(|u| !u.is_empty())
        .unwrap_or("  ")
        .to_string();
    Style {
        newline,
        unit,
        colon,
        comma,
        pad,
    }
}

/// `value` as JSON text: on one line (`inline`), or one member per line indented from `indent`
/// (the indentation of the line the value starts on).
fn render(value: &Value, inline: bool, indent: &str, style: &Style) -> String {
    let mut out = String::new();
    write_value(&mut out, value, inline, indent, style);
    out
}

fn write_value(out: &mut String, value: &Value, inline: bool, indent: &str, style: &Style) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let items = map.iter().map(|(k, v)| (Some(k), v));
            write_container(out, ('{', '}'), items, inline, indent, style);
        }
        Value::Array(list) if !list.is_empty() => {
            let items = list.iter().map(|v| (None, v));
            write_container(out, ('[', ']'), items, inline, indent, style);
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn write_container<'a>(
    out: &mut String,
    (open, close): (char, char),
    items: impl Iterator<Item = (Option<&'a String>, &'a Value)>,
    inline: bool,
    indent: &str,
    style: &Style,
) {
    let inner = format!("{indent}{}", style.unit);
    out.push(open);
    if inline && open == '{' {
        out.push_str(style.pad);
    }
    for (n, (key, item)) in items.enumerate() {
        if n > 0 {
            out.push_str(if inline { style.comma } else { "," });
        }
        if !inline {
            out.push_str(style.newline);
            out.push_str(&inner);
        }
        if let Some(key) = key {
            out.push_str(&Value::String(key.clone()).to_string());
            out.push_str(style.colon);
        }
        write_value(out, item, inline, &inner, style);
    }
    if inline {
        if open == '{' {
            out.push_str(style.pad);
        }
    } else {
        out.push_str(style.newline);
        out.push_str(indent);
    }
    out.push(close);
}

#[cfg(test)]
#[path = "splice_tests.rs"]
mod tests;
