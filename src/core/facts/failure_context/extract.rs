//! Picking error lines out of the last rows of an attempt's output, and cleaning them. Parts
//! that only make sense together are joined: rustc's error with its location, labels and help,
//! pytest's `E` lines, a run of `npm ERR!`, a panic, an exception with its frame.

use std::collections::HashSet;

use super::score::{Pattern, is};
use super::{ErrorLine, MAX_LINE_CHARS, categorise, clip};

macro_rules! pattern {
    ($name:ident, $re:expr) => {
        pub(super) static $name: Pattern = std::sync::LazyLock::new(|| regex::Regex::new($re).ok());
    };
}

pattern!(RUST_HEADER, r"^(?:error|warning)(?:\[[A-Za-z]+\d+\])?: ");
pattern!(JS_FRAME, r"^at\s.*?((?:[A-Za-z]:)?[^\s()]+?):(\d+):\d+\)?$");
pattern!(PYTHON_FRAME_LINE, r#"^File "([^"]+)", line (\d+)"#);
pattern!(
    EXCEPTION_LINE,
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::|$)|^Error:"
);
pattern!(
    NOT_ERROR,
    r"(?i)\b(?:0|no) (?:errors?|failures?|failed|problems?)\b|^warning(?:\[\w+\])?:|\bwarning:"
);
pattern!(
    BANNER,
    r"^[=_-]{3,}.*[=_-]{3,}$|^Traceback \(most recent call last\)|^>\s"
);
pattern!(PYTEST_LOCATION, r"^(\S+:\d+): ([\w.]+)$");
pattern!(NPM, r"^npm (?:ERR!|error)(?:\s|$)");
pattern!(PANIC, r"panicked at");

const MAX_JOINED_PARTS: usize = 8;
const FRAME_LOOKAHEAD: usize = 12;

/// Error lines from the end of the output, in order, deduplicated; past `max_lines`, the highest
/// scores are kept (later lines win ties).
pub fn extract(tail_rows: &[String], max_lines: usize) -> Vec<ErrorLine> {
    let rows: Vec<String> = tail_rows.iter().map(|r| clean(r)).collect();
    let mut seen = HashSet::new();
    let mut lines: Vec<ErrorLine> = joined_errors(&rows)
        .into_iter()
        .filter(|text| seen.insert(text.clone()))
        .map(|text| ErrorLine::new(&text))
        .collect();
    if lines.len() > max_lines {
        let mut ranked: Vec<usize> = (0..lines.len()).collect();
        ranked.sort_by(|&a, &b| lines[b].score.cmp(&lines[a].score).then(b.cmp(&a)));
        let keep: HashSet<usize> = ranked.into_iter().take(max_lines).collect();
        lines = lines
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, line)| line)
            .collect();
    }
    lines
}

/// Escape sequences and control characters (except tab) dropped, decoration trimmed, clipped.
pub(super) fn clean(raw: &str) -> String {
    let mut out = String::new();
    let mut kept = 0;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            skip_escape(&mut chars);
            continue;
        }
        if c.is_control() && c != '\t' {
            continue;
        }
        if kept == MAX_LINE_CHARS * 2 {
            // Enough to trim and clip; the rest cannot change the result.
            out.push('…');
            break;
        }
        out.push(c);
        kept += 1;
    }
    clip(out.trim_matches(is_decoration), MAX_LINE_CHARS)
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next_if_eq(&'\\');
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Whitespace and the borders and bullets agent TUIs draw around their messages.
fn is_decoration(c: char) -> bool {
    c.is_whitespace()
        || ('\u{2500}'..='\u{257f}').contains(&c)
        || matches!(c, '⎿' | '●' | '⏺' | '✗' | '✘' | '×' | '•' | '·')
}

fn is_error_looking(row: &str) -> bool {
    !is(&NOT_ERROR, row)
        && (is(&super::score::ERROR_WORD, row)
            || is(&EXCEPTION_LINE, row)
            || categorise(row) != super::Category::Unknown)
}

/// The error texts in `rows`, continuation lines joined in.
fn joined_errors(rows: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut python_frame: Option<String> = None;
    let mut i = 0;
    while i < rows.len() {
        let row = rows[i].as_str();
        i += 1;
        if row.is_empty() || is(&BANNER, row) {
            continue;
        }
        if let Some(frame) = captured_location(&PYTHON_FRAME_LINE, row) {
            python_frame = Some(frame);
            continue;
        }
        if is(&RUST_HEADER, row) {
            let (text, next) = rust_block(rows, i - 1);
            i = next;
            if !row.starts_with("warning") {
                out.push(text);
            }
            continue;
        }
        if row.starts_with("E ") || row == "E" {
            let (text, next) = pytest_block(rows, i - 1);
            i = next;
            out.push(text);
            continue;
        }
        if is(&NPM, row) {
            let (text, next) = npm_block(rows, i - 1);
            i = next;
            if !text.is_empty() {
                out.push(text);
            }
            continue;
        }
        if is(&PANIC, row) {
            let (text, next) = panic_block(rows, i - 1);
            i = next;
            out.push(text);
            continue;
        }
        if !is_error_looking(row) {
            continue;
        }
        let mut text = row.to_string();
        if is(&EXCEPTION_LINE, row) && super::score::locate(row).0.is_none() {
            let frame = python_frame.take().or_else(|| js_frame_after(rows, i));
            if let Some(frame) = frame {
                text = format!("{text} at {frame}");
            }
        }
        out.push(text);
    }
    out
}

fn captured_location(pattern: &Pattern, row: &str) -> Option<String> {
    let caps = pattern.as_ref()?.captures(row)?;
    Some(format!(
        "{}:{}",
        caps.get(1)?.as_str(),
        caps.get(2)?.as_str()
    ))
}

/// The first non-internal Node stack frame in the rows after an exception.
fn js_frame_after(rows: &[String], start: usize) -> Option<String> {
    rows.iter()
        .skip(start)
        .take(FRAME_LOOKAHEAD)
        .take_while(|r| !r.is_empty())
        .filter_map(|r| captured_location(&JS_FRAME, r))
        .find(|loc| !loc.starts_with("node:"))
}

/// A rustc diagnostic: location, labels, `help:` and notes. Ends at a blank row or the next one.
fn rust_block(rows: &[String], start: usize) -> (String, usize) {
    let mut text = rows[start].clone();
    let mut parts = 0;
    let mut i = start + 1;
    while i < rows.len() {
        let row = rows[i].as_str();
        if row.is_empty() || is(&RUST_HEADER, row) {
            break;
        }
        i += 1;
        if parts >= MAX_JOINED_PARTS {
            continue;
        }
        if row.starts_with("-->") {
            text = format!("{text} {row}");
            parts += 1;
            continue;
        }
        if let Some(part) = rust_part(row) {
            text = format!("{text}; {part}");
            parts += 1;
        }
    }
    (text, i)
}

fn rust_part(row: &str) -> Option<String> {
    let note = row.strip_prefix("= ").unwrap_or(row);
    if note.starts_with("help:")
        || (note.starts_with("note:") && (note.contains("expected") || note.contains("found")))
    {
        return Some(note.to_string());
    }
    // Source lines carry a line number before `|`; labels have only the gutter.
    let label = row.strip_prefix('|')?;
    if !label.contains(['^', '-']) {
        return None;
    }
    let label = label.trim_start_matches([' ', '\t', '|', '^', '-', '~', '_', '+']);
    (!label.is_empty()).then(|| label.to_string())
}

/// pytest's `E` lines, joined, behind the `file:line: ErrorType` row that follows them.
fn pytest_block(rows: &[String], start: usize) -> (String, usize) {
    let mut parts = Vec::new();
    let mut i = start;
    while i < rows.len() && (rows[i].starts_with("E ") || rows[i] == "E") {
        let part = rows[i][1..].trim();
        if !part.is_empty() && parts.len() < MAX_JOINED_PARTS {
            parts.push(part.to_string());
        }
        i += 1;
    }
    let joined = parts.join("; ");
    let next = rows[i..].iter().position(|r| !r.is_empty()).map(|p| i + p);
    let location = next.and_then(|n| {
        let caps = PYTEST_LOCATION.as_ref()?.captures(&rows[n])?;
        Some((n, caps.get(1)?.as_str(), caps.get(2)?.as_str()))
    });
    match location {
        Some((n, place, kind)) if joined.starts_with(kind) => (format!("{place}: {joined}"), n + 1),
        Some((n, place, kind)) => (format!("{place}: {kind}: {joined}"), n + 1),
        None => (joined, i),
    }
}

/// A run of `npm ERR!` rows as one line, without the pointer to npm's own log.
fn npm_block(rows: &[String], start: usize) -> (String, usize) {
    let mut parts: Vec<String> = Vec::new();
    let mut i = start;
    while i < rows.len() && is(&NPM, &rows[i]) {
        let row = rows[i].as_str();
        let body = row
            .trim_start_matches("npm ERR!")
            .trim_start_matches("npm error")
            .trim();
        let noise = body.is_empty() || is(&super::score::WRAPPER, body) || body.contains("_logs");
        if !noise && parts.len() < MAX_JOINED_PARTS {
            parts.push(body.to_string());
        }
        i += 1;
    }
    if parts.is_empty() {
        return (String::new(), i);
    }
    (format!("npm ERR! {}", parts.join("; ")), i)
}

/// `thread 'main' panicked at src/main.rs:2:5:` and the message rows under it.
fn panic_block(rows: &[String], start: usize) -> (String, usize) {
    let mut text = rows[start].clone();
    let mut i = start + 1;
    let mut parts = 0;
    while i < rows.len() && parts < MAX_JOINED_PARTS {
        let row = rows[i].as_str();
        if row.is_empty() || row.starts_with("note:") || row.starts_with("stack backtrace") {
            break;
        }
        text = format!("{text} {row}");
        parts += 1;
        i += 1;
    }
    (text, i)
}

#[cfg(test)]
pub(super) const PATTERNS: [&Pattern; 9] = [
    &RUST_HEADER,
    &JS_FRAME,
    &PYTHON_FRAME_LINE,
    &EXCEPTION_LINE,
    &NOT_ERROR,
    &BANNER,
    &PYTEST_LOCATION,
    &NPM,
    &PANIC,
];
