//! Facts an interactive agent writes to a file of its own while it runs, read live beside its
//! screen, which says less: Claude Code's debug log (each failed request's status and body),
//! Gemini CLI's debug log (its retries) and Codex CLI's session rollout (tool calls, those it
//! refused by itself included). Pure: the shell hands in the new bytes; an unexpected line is
//! skipped.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::core::profile::AgentLogKind;
use crate::core::task::FailureType;
use crate::core::wire::stream::{self, Retry};

/// Server errors retried in a row for this long (and at least `SERVER_ERROR_TRIES` times) are
/// not waited out further: the attempt fails and herd's own retries take over.
pub const SERVER_ERROR_PATIENCE: Duration = Duration::from_secs(10);
/// A pause this long between two server errors means the agent got answers in between.
const SERVER_ERROR_GAP: Duration = Duration::from_secs(60);
/// Server-error retries a run needs before it counts, however long it lasted.
const SERVER_ERROR_TRIES: u32 = 3;

/// Characters of a tool's output kept in the evidence.
const OUTPUT_CHARS: usize = 200;
/// A line longer than this is dropped unread (a rollout line carrying a whole file, say).
const MAX_LINE_BYTES: usize = 1 << 20;

/// What the file said so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentLogFacts {
    /// Lines read.
    pub lines: u32,
    /// Failed requests the agent is retrying, in order.
    pub retries: Vec<Retry>,
    /// Tool calls seen (Codex `function_call` items).
    pub tool_calls: u32,
    /// Tool calls the agent refused to run itself, as `exec_command(touch x) — <its reason>`.
    pub refused_tools: Vec<String>,
}

/// Reads an agent's file as it grows: whole lines only, the unfinished tail kept for later.
#[derive(Debug, Clone)]
pub struct AgentLogParser {
    kind: AgentLogKind,
    partial: Vec<u8>,
    /// Codex call id → what was called, so an output can name its command.
    calls: BTreeMap<String, String>,
    facts: AgentLogFacts,
}

impl AgentLogParser {
    pub fn new(kind: AgentLogKind) -> AgentLogParser {
        AgentLogParser {
            kind,
            partial: Vec::new(),
            calls: BTreeMap::new(),
            facts: AgentLogFacts::default(),
        }
    }

    pub fn kind(&self) -> AgentLogKind {
        self.kind
    }

    pub fn facts(&self) -> &AgentLogFacts {
        &self.facts
    }

    /// Takes the bytes appended to the file since the last call.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            if line.len() <= MAX_LINE_BYTES {
                self.line(&String::from_utf8_lossy(&line));
            }
        }
        if self.partial.len() > MAX_LINE_BYTES {
            self.partial.clear();
        }
    }

    fn line(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        self.facts.lines += 1;
        match self.kind {
            AgentLogKind::ClaudeDebug => {
                if let Some(retry) = claude_api_error(line) {
                    self.facts.retries.push(retry);
                }
            }
            AgentLogKind::GeminiDebug => {
                if let Some(retry) = gemini_retry(line) {
                    self.facts.retries.push(retry);
                }
            }
            AgentLogKind::CodexRollout => self.codex_record(line),
        }
    }

    fn codex_record(&mut self, line: &str) {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let item = &record["payload"];
        if record["type"] != "response_item" {
            return;
        }
        let call_id = item["call_id"].as_str().unwrap_or_default().to_string();
        match item["type"].as_str() {
            Some("function_call" | "custom_tool_call" | "local_shell_call") => {
                self.facts.tool_calls += 1;
                self.calls.insert(call_id, codex_call(item));
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let output = output_text(&item["output"]);
                if let Some(reason) = codex_refusal(&output) {
                    let call = self
                        .calls
                        .get(&call_id)
                        .cloned()
                        .unwrap_or_else(|| "a tool call".to_string());
                    self.facts.refused_tools.push(format!("{call} — {reason}"));
                }
            }
            _ => {}
        }
    }
}

/// `… [ERROR] API error (attempt 3/11): 401 401 {"type":"error",…}`: the request, its status and
/// the error's type; also without a body (`API error (attempt 2/11): Connection error.`).
fn claude_api_error(line: &str) -> Option<Retry> {
    const HEAD: &str = "API error (attempt ";
    let rest = &line[line.find(HEAD)? + HEAD.len()..];
    let (counts, rest) = rest.split_once("):")?;
    let (attempt, of) = counts.split_once('/')?;
    let attempt = attempt.trim().parse().ok()?;
    let max_retries = of.trim().parse::<u32>().ok().map(|n| n.saturating_sub(1));
    let rest = rest.trim();
    let status = rest
        .split_whitespace()
        .next()
        .and_then(|word| word.parse::<u16>().ok())
        .filter(|code| (100..600).contains(code));
    let body = rest
        .find('{')
        .and_then(|at| serde_json::from_str::<Value>(&rest[at..]).ok());
    let error = body
        .as_ref()
        .and_then(|b| b["error"]["type"].as_str().map(str::to_string))
        .or_else(|| (status.is_none() && !rest.is_empty()).then(|| rest.to_string()));
    let message = body
        .as_ref()
        .and_then(|b| b["error"]["message"].as_str().map(str::to_string));
    Some(Retry {
        attempt,
        max_retries,
        status,
        error,
        message,
    })
}

/// Gemini's retry lines: `Attempt 3 failed with status 503. Retrying with backoff...`, `… with
/// 429 error …`, `… with 5xx error…`, and `Attempt 2 failed: <message>. Retrying after 20512ms`.
fn gemini_retry(line: &str) -> Option<Retry> {
    const HEAD: &str = "Attempt ";
    let rest = &line[line.find(HEAD)? + HEAD.len()..];
    let (number, rest) = rest.split_once(' ')?;
    let attempt = number.parse().ok()?;
    let rest = rest.strip_prefix("failed")?;
    let retry = |status: u16, error: Option<&str>| Retry {
        attempt,
        max_retries: None,
        status: Some(status),
        error: error.map(str::to_string),
        message: None,
    };
    if let Some(after) = rest.strip_prefix(" with status ") {
        let status = after
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        return Some(retry(status, None));
    }
    if rest.starts_with(" with 429 error") {
        return Some(retry(429, None));
    }
    if rest.starts_with(" with 5xx error") {
        return Some(retry(500, None));
    }
    (rest.starts_with(':') && rest.contains("Retrying after"))
        .then(|| retry(429, Some("rate_limit")))
}

/// `exec_command(touch x)`: the tool and its command, as far as the arguments name one.
fn codex_call(item: &Value) -> String {
    let name = item["name"].as_str().unwrap_or("shell");
    let arguments = match &item["arguments"] {
        Value::String(text) => serde_json::from_str::<Value>(text).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let command = match (&arguments["cmd"], &arguments["command"], &item["action"]) {
        (Value::String(cmd), _, _) => cmd.clone(),
        (_, Value::String(cmd), _) => cmd.clone(),
        (_, Value::Array(parts), _) => join_argv(parts),
        (_, _, action) => action["command"]
            .as_array()
            .map(|parts| join_argv(parts))
            .unwrap_or_default(),
    };
    if command.is_empty() {
        name.to_string()
    } else {
        format!("{name}({command})")
    }
}

/// `["bash", "-lc", "touch x"]` → `touch x`; other argvs joined with spaces.
fn join_argv(parts: &[Value]) -> String {
    let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
    match words.as_slice() {
        [shell, flag, script]
            if flag.starts_with('-') && flag.ends_with('c') && !shell.is_empty() =>
        {
            script.to_string()
        }
        _ => words.join(" "),
    }
}

/// A tool output as text: a string, or `{"content": "..."}`.
fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => other["content"].as_str().unwrap_or_default().to_string(),
    }
}

/// Why Codex did not run a call, when its output says it refused it (its approval policy, or the
/// operator): the part before the dash, cut to [`OUTPUT_CHARS`].
fn codex_refusal(output: &str) -> Option<String> {
    let head = output.lines().next().unwrap_or_default().trim();
    let refused = head.contains("reject command")
        || head.starts_with("approval policy is")
        || head.contains("rejected by user");
    if !refused {
        return None;
    }
    let reason = head.split(" — ").next().unwrap_or(head).trim();
    Some(match reason.char_indices().nth(OUTPUT_CHARS) {
        Some((cut, _)) => format!("{}…", &reason[..cut]),
        None => reason.to_string(),
    })
}

/// Decides, retry by retry, when an agent's retry loop is not worth waiting for: auth or quota
/// at once, server errors after [`SERVER_ERROR_PATIENCE`].
#[derive(Debug, Clone, Default)]
pub struct RetryWatch {
    /// Retries already looked at.
    seen: usize,
    /// The current run of server errors: when it began, when the last came, how many.
    run: Option<(Duration, Duration, u32)>,
}

impl RetryWatch {
    /// Looks at the retries not seen yet: `Some((failure, evidence))` when the agent should end.
    pub fn check(&mut self, retries: &[Retry], now: Duration) -> Option<(FailureType, String)> {
        let new = retries.get(self.seen..).unwrap_or_default();
        if new.is_empty() {
            return None;
        }
        self.seen = retries.len();
        for retry in new {
            self.run = match self.run {
                _ if !stream::is_server_error(retry) => None,
                Some((since, last, tries)) if now.saturating_sub(last) <= SERVER_ERROR_GAP => {
                    Some((since, now, tries + 1))
                }
                _ => Some((now, now, 1)),
            };
        }
        if let Some(hopeless) = stream::hopeless_retries(retries) {
            return Some(hopeless);
        }
        let (since, _, tries) = self.run?;
        let lasted = now.saturating_sub(since);
        let last = retries.last()?;
        (tries >= SERVER_ERROR_TRIES && lasted >= SERVER_ERROR_PATIENCE).then(|| {
            let status = last.status.map_or("?".to_string(), |s| s.to_string());
            let what = last
                .error
                .as_deref()
                .map(|e| format!(" {e}"))
                .unwrap_or_default();
            (
                FailureType::Process,
                format!(
                    "server errors for {} s: {tries} retries in a row, the last of status \
                     {status}{what} (attempt {})",
                    lasted.as_secs(),
                    last.attempt
                ),
            )
        })
    }
}

#[cfg(test)]
#[path = "agent_log_tests.rs"]
mod tests;
