//! Reading the request a permission prompt asks about from the screen with the profile's
//! `requests` patterns (borders stripped, hard-wrapped rows joined). A new CLI is a profile entry,
//! never code here.

use regex::Regex;

use super::request::{Request, RequestKind};

/// How to read the request a permission prompt asks about, from the screen.
#[derive(Debug, Clone)]
pub struct RequestCapture {
    /// `shell`, `edit`, `write`, `read`, `fetch` or a tool name.
    pub kind: String,
    /// Matched on the prompt's rows; group `text` is the request, optional group `tool` the tool.
    pub pattern: Regex,
    /// The last line of `text` is a description, not part of the request (Claude's Bash dialog).
    pub drop_last_line: bool,
}

/// Columns from the right edge within which a row counts as wrapped (its text goes on below).
const WRAP_SLACK: usize = 6;

/// The request shown in `rows[first..=last]`, when a pattern of the profile matches.
pub fn extract(
    captures: &[RequestCapture],
    rows: &[String],
    cols: usize,
    first: usize,
    last: usize,
) -> Option<Request> {
    let last = last.min(rows.len().checked_sub(1)?);
    if first > last {
        return None;
    }
    let cleaned: Vec<(String, bool)> = rows[first..=last]
        .iter()
        .map(|row| clean_row(row, cols))
        .collect();
    let text = cleaned
        .iter()
        .map(|(r, _)| r.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for capture in captures {
        let Some(caps) = capture.pattern.captures_iter(&text).last() else {
            continue;
        };
        let Some(group) = caps.name("text") else {
            continue;
        };
        let first_row = text[..group.start()].matches('\n').count();
        let mut lines: Vec<String> = Vec::new();
        let mut joining = false;
        for (i, piece) in group.as_str().split('\n').enumerate() {
            let piece = piece.trim();
            if joining && let Some(line) = lines.last_mut() {
                line.push_str(piece);
            } else if !piece.is_empty() {
                lines.push(piece.to_string());
            }
            joining =
                cleaned.get(first_row + i).is_some_and(|(_, full)| *full) && !piece.is_empty();
        }
        let pieces: Vec<&str> = group
            .as_str()
            .split('\n')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        let alternatives = vec![pieces.join(" "), pieces.join("\n"), lines.join("\n")];
        if capture.drop_last_line && lines.len() >= 2 {
            lines.pop();
        }
        let request_text = lines.join("\n");
        if request_text.is_empty() {
            continue;
        }
        let kind = match caps.name("tool") {
            Some(tool) => tool.as_str().to_string(),
            None => capture.kind.clone(),
        };
        let mut request = Request::from_parts(&kind, &request_text);
        if let RequestKind::Tool { name, .. } = &request.kind
            && name.is_empty()
        {
            request.kind = RequestKind::Unread {
                what: String::new(),
            };
        }
        // The options are drawn below what is asked.
        let end_row = text[..group.end()].matches('\n').count();
        request.options = options(cleaned.get(end_row..).unwrap_or_default());
        request.alternatives = alternatives
            .into_iter()
            .filter(|a| *a != request_text)
            .fold(Vec::new(), |mut acc, a| {
                if !acc.contains(&a) {
                    acc.push(a);
                }
                acc
            });
        return Some(request);
    }
    None
}

/// The row without box borders and surrounding blanks, and whether its text reaches the edge.
fn clean_row(row: &str, cols: usize) -> (String, bool) {
    let trimmed_end = row.trim_end();
    let mut text = trimmed_end;
    // Nested boxes put several borders on each side.
    loop {
        let next = text
            .trim()
            .trim_start_matches('│')
            .trim_end_matches('│')
            .trim();
        if next.len() == text.len() {
            break;
        }
        text = next;
    }
    let content_end = match text.is_empty() {
        true => 0,
        false => {
            let offset = trimmed_end.rfind(text).map_or(0, |i| i + text.len());
            trimmed_end[..offset].chars().count()
        }
    };
    let full = cols > WRAP_SLACK && content_end + WRAP_SLACK >= cols;
    (text.to_string(), full)
}

/// The numbered options the dialog offers (`1. Yes`, `2. No`), cursor glyphs removed.
fn options(rows: &[(String, bool)]) -> Vec<String> {
    rows.iter()
        .filter_map(|(row, _)| {
            let row = row.trim_start_matches(['❯', '›', '●', '>', ' ']);
            let digits = row.chars().take_while(char::is_ascii_digit).count();
            (digits > 0 && row[digits..].starts_with(". ")).then(|| row.to_string())
        })
        .collect()
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
