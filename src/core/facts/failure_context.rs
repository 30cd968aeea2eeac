//! What a failed attempt said went wrong, in a form the next attempt can use.
//!
//! Owns: picking error lines out of the end of an attempt's output ([`extract`]), scoring how
//! actionable each one is ([`score`]), putting it in a [`Category`] ([`categorise`]), and turning
//! the lot into a [`FailureContext`] that becomes `attempt_<n>.errors.json` ([`FailureContext::to_json`])
//! and the `{previous_failure}` text ([`FailureContext::summary`]).
//!
//! Pure: no files, no git, no clock. The shell reads the output, lists the files changed in the
//! task's cwd and writes the JSON; this module only works on the strings it is given, and never
//! panics on them, so building the context can never fail an attempt.

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

/// Below this score a line is only an error word (`Error`, `failed`) or a wrapper, and says
/// less than the verdict's own evidence.
pub const HEADLINE_SCORE: u8 = 20;

/// `FailureContext::headline` over `(text, score)` pairs in output order: also how readers of
/// an `errors.json` pick it.
pub fn headline_of<'a>(lines: impl Iterator<Item = (&'a str, u8)>) -> Option<&'a str> {
    let mut best: Option<(&str, u8)> = None;
    for (text, score) in lines {
        if score >= HEADLINE_SCORE && best.is_none_or(|(_, top)| score > top) {
            best = Some((text, score));
        }
    }
    best.map(|(text, _)| text)
}

/// Failures whose evidence is a fact about the process (`exit code 101`, `timeout after 1800
/// s`, no marker) rather than a text the agent printed: for these the output's headline says
/// more. An auth, quota or permission verdict's evidence is already the deciding text.
pub fn headline_says_more(failure: FailureType) -> bool {
    matches!(
        failure,
        FailureType::Process | FailureType::Incomplete | FailureType::Timeout
    )
}

/// What to say of a failure in one line: the headline of its output when there is one, with
/// the verdict's evidence after it in parentheses (`error: could not find Cargo.toml (exit code
/// 101)`), else the evidence alone.
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
    /// Cleans `raw` (control characters and escape sequences dropped, clipped to
    /// [`MAX_LINE_CHARS`]) and scores it. Also the way in for a structured agent's error fields.
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
    /// The best line's score (0 when there is none): one precise error is enough for the next
    /// attempt to act on, and noise around it should not drag it down.
    pub aggregate_score: u8,
    /// Files changed in the task's cwd since the attempt started; kept only when
    /// `aggregate_score < LOW_SCORE`, where they are the best hint left.
    pub changed_files: Vec<String>,
}

impl FailureContext {
    /// Builds the context from the last rows of the attempt's output. `changed_files` comes from
    /// the caller (git); it is kept only if the error lines alone are not actionable enough.
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

    /// The one line that says best why the attempt failed (`error: could not find Cargo.toml`,
    /// a panic line), for the dashboard, `herd status` and `herd explain` beside the verdict's
    /// evidence (which is often only `exit code 101`). The most actionable line, the first of
    /// equals; `None` when no line says more than an error word.
    pub fn headline(&self) -> Option<&str> {
        headline_of(self.lines.iter().map(|l| (l.text.as_str(), l.score)))
    }

    /// The content of `attempt_<n>.errors.json`.
    pub fn to_json(&self) -> serde_json::Value {
        // Plain strings, numbers and enums cannot fail to serialize; the fallback is never taken.
        serde_json::to_value(self)
            .unwrap_or_else(|err| serde_json::json!({ "error": err.to_string() }))
    }

    /// A short text for `{previous_failure}`: the most actionable lines first, then the changed
    /// files if any; never more than `max_chars` chars (clipped with `…`).
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
