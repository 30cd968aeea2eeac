//! Structured results from agents that print a JSON-lines event stream (Claude Code, Codex,
//! Gemini, claudeless): read out of raw PTY bytes, whatever the noise and splits, into
//! [`StreamFacts`], and the verdict they give on their own ([`judge`]). No screen, exit or clock.

mod events;
mod judge;
mod line;

use std::mem;

use serde::Serialize;

use crate::core::task::FailureType;

pub use judge::judge;
use line::Line;

/// A line longer than this is dropped (counted in `other_lines`), not kept up to its newline.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Buffer capacity kept between lines; a bigger buffer left by a long line is freed.
const KEPT_BUFFER_CAPACITY: usize = 64 * 1024;

/// Feeds raw PTY bytes in any split; only the unfinished line is buffered and each byte scanned
/// once, so a byte-at-a-time stream stays linear.
#[derive(Debug, Default)]
pub struct StreamParser {
    facts: StreamFacts,
    /// The start of the line not yet ended by `\n`.
    pending: Vec<u8>,
    /// Inside an over-long line, skipped to its newline: `Some(true)` when it began like JSON.
    skipping_long_line: Option<bool>,
    /// The last non-blank line was a JSON text that ended before it was complete.
    last_line_truncated: bool,
}

impl StreamParser {
    pub fn new() -> StreamParser {
        StreamParser::default()
    }

    /// Takes the next bytes of the stream, split anywhere (even inside a UTF-8 character).
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(at) = bytes.iter().position(|&b| b == b'\n') {
            let (line_end, rest) = bytes.split_at(at);
            self.end_line(line_end);
            bytes = rest.get(1..).unwrap_or_default();
        }
        self.extend_pending(bytes);
    }

    /// The end of the stream: a pending partial line is judged, and `cut_short` is set.
    pub fn finish(&mut self) {
        if let Some(looked_like_json) = self.skipping_long_line.take() {
            self.last_line_truncated = looked_like_json;
        } else if !self.pending.is_empty() {
            let line = mem::take(&mut self.pending);
            self.read_line(&line);
        }
        let facts = &mut self.facts;
        let ended_by_error = facts.errors.iter().any(|error| error.fatal);
        facts.cut_short = self.last_line_truncated
            || (facts.events > 0 && facts.result.is_none() && !ended_by_error);
    }

    pub fn facts(&self) -> &StreamFacts {
        &self.facts
    }

    /// Bytes held for the line not yet ended (memory use, for tests).
    #[cfg(test)]
    fn buffered(&self) -> usize {
        self.pending.capacity()
    }

    fn extend_pending(&mut self, bytes: &[u8]) {
        if bytes.is_empty() || self.skipping_long_line.is_some() {
            return;
        }
        if self.pending.len() + bytes.len() > MAX_LINE_BYTES {
            let head = if self.pending.is_empty() {
                bytes
            } else {
                &self.pending
            };
            let looked_like_json = line::starts_like_json(head);
            self.pending = Vec::new();
            self.skipping_long_line = Some(looked_like_json);
            self.count_dropped_line();
        } else {
            self.reserve_within_limit(bytes.len());
            self.pending.extend_from_slice(bytes);
        }
    }

    /// Grows the buffer for `more` bytes by doubling, never past [`MAX_LINE_BYTES`].
    fn reserve_within_limit(&mut self, more: usize) {
        let needed = self.pending.len() + more;
        let capacity = self.pending.capacity();
        if needed > capacity {
            let grown = needed.max(capacity * 2).clamp(256, MAX_LINE_BYTES);
            self.pending.reserve_exact(grown - self.pending.len());
        }
    }

    /// `line_end` is the part of the line before its `\n`.
    fn end_line(&mut self, line_end: &[u8]) {
        if self.skipping_long_line.take().is_some() {
            return;
        }
        if self.pending.len() + line_end.len() > MAX_LINE_BYTES {
            self.pending = Vec::new();
            self.count_dropped_line();
        } else if self.pending.is_empty() {
            self.read_line(line_end);
        } else {
            self.reserve_within_limit(line_end.len());
            let mut line = mem::take(&mut self.pending);
            line.extend_from_slice(line_end);
            self.read_line(&line);
            line.clear();
            if line.capacity() <= KEPT_BUFFER_CAPACITY {
                self.pending = line;
            }
        }
    }

    fn count_dropped_line(&mut self) {
        self.facts.other_lines = self.facts.other_lines.saturating_add(1);
        self.last_line_truncated = false;
    }

    fn read_line(&mut self, bytes: &[u8]) {
        match line::read(bytes) {
            Line::Blank => {}
            Line::Event(event) => {
                self.facts.events = self.facts.events.saturating_add(1);
                self.last_line_truncated = false;
                events::apply(&mut self.facts, &event);
            }
            Line::Truncated => {
                self.facts.other_lines = self.facts.other_lines.saturating_add(1);
                self.last_line_truncated = true;
            }
            Line::Other => {
                self.facts.other_lines = self.facts.other_lines.saturating_add(1);
                self.last_line_truncated = false;
                events::other_line(&mut self.facts, &line::plain_text(bytes));
            }
        }
    }
}

/// What the events of one stream said.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StreamFacts {
    /// JSON objects with a string "type" parsed so far.
    pub events: u32,
    /// Lines that were not such objects, counted only (blank and escape-only lines are not).
    pub other_lines: u32,
    /// The session or thread id, the first one seen.
    pub session_id: Option<String>,
    /// The model the agent announced (else the first assistant message's).
    pub model: Option<String>,
    /// The final event: Claude `result`, Codex `turn.completed` / `turn.failed`, Gemini `result`.
    pub result: Option<FinalResult>,
    /// The agent's final text: Claude `result.result` (else the last assistant text), Codex the
    /// last `agent_message`, Gemini the assistant messages after the last user message.
    pub result_text: Option<String>,
    /// Claude `total_cost_usd` (claudeless: `cost_usd`).
    pub cost_usd: Option<f64>,
    pub tokens: Tokens,
    /// Claude `num_turns`; Codex the count of `turn.completed`.
    pub num_turns: Option<u32>,
    /// Claude assistant `tool_use` blocks; Codex completed tool items; Gemini `tool_use` events.
    pub tool_calls: u32,
    /// Claude `result.permission_denials` as `Bash(touch x)`.
    pub permission_denials: Vec<String>,
    /// The tool calls as permission requests, written as `Bash(touch x)`.
    #[serde(serialize_with = "requests_as_text")]
    pub tool_requests: Vec<crate::core::guard::Request>,
    /// Tool calls refused, or not run for want of permission, whatever the model did next.
    pub refused_tools: Vec<String>,
    /// Tool calls herd's ACP client saw run unasked where the policy would have asked.
    pub unasked_tools: Vec<String>,
    /// herd's ACP client's session mode facts (offered, started in, set by herd, current).
    pub acp_mode: Option<serde_json::Value>,
    /// Claude's `system`/`api_retry` events: each failed request it is about to retry.
    pub retries: Vec<Retry>,
    /// In the order seen.
    pub errors: Vec<StreamError>,
    /// herd's ACP client's answers, from its first `result` event: the attempt's approvals.
    #[serde(skip)]
    pub client_approvals: Option<Vec<crate::core::approval::Approval>>,
    /// The stream ended inside a line, or without a final event after events began.
    pub cut_short: bool,
}

fn requests_as_text<S: serde::Serializer>(
    requests: &[crate::core::guard::Request],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(requests.iter().map(ToString::to_string))
}

/// Token counts as the agent reported them (Codex: summed over its turns).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tokens {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_creation: Option<u64>,
}

/// The event that ends a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalResult {
    /// Claude: not `is_error`; Codex: `turn.completed`; Gemini: status `success`.
    pub success: bool,
    /// Claude's result subtype (`success`, `error_max_turns`, ...).
    pub subtype: Option<String>,
}

/// An error the stream reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamError {
    /// The error's own name (`authentication_error`, `rate_limit`, `error_max_turns`, …).
    pub kind: Option<String>,
    /// An HTTP status: Claude `api_error_status`, an error object's, or Codex's message.
    pub status: Option<u16>,
    pub message: String,
    /// Ends the run (Claude `is_error`, Codex `turn.failed`, a Gemini error result, an error
    /// object); Codex `error` events and error items alone do not.
    pub fatal: bool,
}

/// One request the agent is retrying (Claude `api_retry`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retry {
    pub attempt: u32,
    pub max_retries: Option<u32>,
    pub status: Option<u16>,
    pub error: Option<String>,
    /// What the error said, when the source gives it (Claude's debug log has the API's body).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Retries that cannot heal by waiting: a rejected key (from the first retry) or a spent quota
/// (from the second in a row). `Some(evidence)` when the agent should end now.
pub fn hopeless_retry(facts: &StreamFacts) -> Option<(FailureType, String)> {
    if facts.result.is_some() {
        return None;
    }
    hopeless_retries(&facts.retries)
}

/// The retry is of a server error (5xx, overloaded): it may heal, but not while it repeats.
pub fn is_server_error(retry: &Retry) -> bool {
    let error = StreamError {
        kind: retry.error.clone(),
        status: retry.status,
        message: String::new(),
        fatal: false,
    };
    judge::retried_class(&error) == Some(FailureType::Process)
}

/// The same rule on retries from any source: failure and evidence when the agent should end.
pub fn hopeless_retries(retries: &[Retry]) -> Option<(FailureType, String)> {
    let last = retries.last()?;
    let kind_of = |retry: &Retry| {
        let error = retry.error.as_deref().unwrap_or_default();
        let error = StreamError {
            kind: Some(error.to_string()),
            status: retry.status,
            message: String::new(),
            fatal: false,
        };
        judge::hopeless_class(&error)
    };
    let class = kind_of(last)?;
    let in_a_row = retries
        .iter()
        .rev()
        .take_while(|r| kind_of(r) == Some(class))
        .count();
    let needed = if class == FailureType::Auth { 1 } else { 2 };
    (in_a_row >= needed).then(|| {
        let mut evidence = format!(
            "{} retries of {} (status {}), attempt {} of {}",
            in_a_row,
            last.error.as_deref().unwrap_or("an error"),
            last.status.map_or("?".to_string(), |s| s.to_string()),
            last.attempt,
            last.max_retries.map_or("?".to_string(), |m| m.to_string()),
        );
        if let Some(message) = last.message.as_deref().filter(|m| !m.trim().is_empty()) {
            evidence.push_str(": ");
            evidence.push_str(message.trim());
        }
        (class, evidence)
    })
}

/// Whether the agent's final text has the completion marker on one of its lines.
pub fn result_has_marker(facts: &StreamFacts, marker: &str) -> bool {
    let marker = marker.trim();
    !marker.is_empty()
        && facts
            .result_text
            .as_deref()
            .is_some_and(|text| text.lines().any(|line| line.trim().contains(marker)))
}

#[cfg(test)]
mod tests;
