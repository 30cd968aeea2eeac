//! What a failed attempt said went wrong, for the next attempt: error lines picked from the end
//! of its output, scored and categorised, as `attempt_<n>.errors.json` and the
//! `{previous_failure}` text. Pure and never panics: building it can never fail an attempt.

mod extract;
mod score;

use serde::Serialize;

use crate::core::task::FailureType;

pub use extract::extract;
pub use score::{categorise, score};

/// The longest text kept for one error line, in chars; longer lines are clipped with `…`.
pub const MAX_LINE_CHARS: usize = 500;
/// How many error lines [`FailureContext::build`] keeps (the most actionable ones).
pub const MAX_LINES: usize = 20;
/// Below this aggregate score the context is thin, so the changed files are attached.
pub const LOW_SCORE: u8 = 40;
/// How many changed files are kept.
pub const MAX_CHANGED_FILES: usize = 50;

const SUMMARY_LINES: usize = 8;
const SUMMARY_LINE_CHARS: usize = 300;
const SUMMARY_FILES: usize = 10;

/// Below this score a line is only an error word or a wrapper, and says less than the evidence.
pub const HEADLINE_SCORE: u8 = 20;

/// `FailureContext::headline` over `(text, score)` pairs, as readers of `errors.json` pick it.
pub fn headline_of<'a>(lines: impl Iterator<Item = (&'a str, u8)>) -> Option<&'a str> {
    let mut best: Option<(&str, u8)> = None;
    for (text, score) in lines {
        if score >= HEADLINE_SCORE && best.is_none_or(|(_, top)| score > top) {
            best = Some((text, score));
        }
    }
    best.map(|(text, _)| text)
}

/// Failures whose evidence is a fact about the process (`exit code 101`, a timeout, no marker):
/// for these the output's headline says more.
pub fn headline_says_more(failure: FailureType) -> bool {
    matches!(
        failure,
        FailureType::Process | FailureType::Incomplete | FailureType::Timeout
    )
}

/// One line for a failure: the output's headline with the evidence in parentheses, else the
/// evidence alone.
pub fn why_failed(evidence: Option<&str>, headline: Option<&str>) -> Option<String> {
    match (headline, evidence) {
        (Some(head), Some(evidence)) if head.contains(evidence) => Some(head.to_string()),
        (Some(head), Some(evidence)) if evidence.contains(head) => Some(evidence.to_string()),
        (Some(head), Some(evidence)) => Some(format!("{head} ({evidence})")),
        (Some(head), None) => Some(head.to_string()),
        (None, evidence) => evidence.map(str::to_string),
    }
}

/// The kind of failure a line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Syntax,
    Runtime,
    Assertion,
    Dependency,
    Build,
    Auth,
    Quota,
    Unknown,
}

/// One error line (possibly joined with its continuation lines), scored and categorised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorLine {
    pub text: String,
    /// 0–100: how actionable the line is; see [`score`].
    pub score: u8,
    pub category: Category,
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl ErrorLine {
    /// Cleans and scores `raw`; also the way in for a structured agent's error fields.
    pub fn new(raw: &str) -> Self {
        let text = extract::clean(raw);
        let (file, line) = score::locate(&text);
        Self {
            score: score(&text),
            category: categorise(&text),
            file,
            line,
            text,
        }
    }
}

/// Everything known about why an attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureContext {
    /// In output order.
    pub lines: Vec<ErrorLine>,
    /// The best line's score (0 when there is none): one precise error is enough.
    pub aggregate_score: u8,
    /// Files changed in the task's cwd since the attempt started; kept only when the score is
    /// low, where they are the best hint left.
    pub changed_files: Vec<String>,
}

impl FailureContext {
    /// Builds the context from the last rows of the output; `changed_files` come from git.
    pub fn build(tail_rows: &[String], changed_files: Vec<String>) -> Self {
        let lines = extract(tail_rows, MAX_LINES);
        let aggregate_score = lines.iter().map(|l| l.score).max().unwrap_or(0);
        let changed_files = if aggregate_score < LOW_SCORE {
            changed_files
                .iter()
                .map(|f| extract::clean(f))
                .filter(|f| !f.is_empty())
                .take(MAX_CHANGED_FILES)
                .collect()
        } else {
            Vec::new()
        };
        Self {
            lines,
            aggregate_score,
            changed_files,
        }
    }

    /// The one line that says best why the attempt failed, beside an evidence that is often only
    /// `exit code 101`: the most actionable, the first of equals; `None` for bare error words.
    pub fn headline(&self) -> Option<&str> {
        headline_of(self.lines.iter().map(|l| (l.text.as_str(), l.score)))
    }

    /// The content of `attempt_<n>.errors.json`.
    pub fn to_json(&self) -> serde_json::Value {
        // Plain strings, numbers and enums cannot fail to serialize; the fallback is never taken.
        serde_json::to_value(self)
            .unwrap_or_else(|err| serde_json::json!({ "error": err.to_string() }))
    }

    /// A short text for `{previous_failure}`: the best lines, then changed files, at most
    /// `max_chars`.
    pub fn summary(&self, max_chars: usize) -> String {
        let mut ranked: Vec<&ErrorLine> = self.lines.iter().collect();
        // Stable: equal scores keep output order.
        ranked.sort_by_key(|line| std::cmp::Reverse(line.score));
        let mut out = if ranked.is_empty() {
            String::from(
                "The previous attempt failed without a recognisable error message in its output.",
            )
        } else {
            String::from("The previous attempt failed. Errors, most actionable first:")
        };
        for line in ranked.iter().take(SUMMARY_LINES) {
            out.push_str("\n- ");
            out.push_str(&clip(&line.text, SUMMARY_LINE_CHARS));
        }
        if !self.changed_files.is_empty() {
            out.push_str("\nFiles changed since that attempt started: ");
            let shown: Vec<&str> = self
                .changed_files
                .iter()
                .take(SUMMARY_FILES)
                .map(String::as_str)
                .collect();
            out.push_str(&shown.join(", "));
            let more = self.changed_files.len().saturating_sub(SUMMARY_FILES);
            if more > 0 {
                out.push_str(&format!(" and {more} more"));
            }
        }
        clip(&out, max_chars)
    }
}

/// `text` cut to at most `max_chars` chars, ending in `…` when cut.
pub(crate) fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    if max_chars == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod extract_tests;
#[cfg(test)]
mod tests;
