//! Facts from a Claude Code session transcript (`<config dir>/projects/<dir>/<session>.jsonl`):
//! how the last turn ended, tool calls, Bash failures, token use. Pure and lenient: a line that
//! is not JSON is counted. Claude writes one record per content block, repeating the message's
//! `id` and `usage`, so messages and tokens count once per id.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

/// What a transcript says about its session.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TranscriptFacts {
    /// The first `sessionId` in the file.
    pub session_id: Option<String>,
    /// Lines that are JSON objects.
    pub records: u32,
    /// Lines that are not JSON objects (a torn last line, garbage); never fatal.
    pub bad_lines: u32,
    /// Assistant messages, counted once per message id.
    pub assistant_messages: u32,
    /// Assistant messages whose `stop_reason` is `end_turn`.
    pub end_turns: u32,
    /// The `stop_reason` of the last assistant record that has one.
    pub last_stop_reason: Option<String>,
    /// Tool name → calls (each `tool_use` block once, by its id).
    pub tool_calls: BTreeMap<String, u32>,
    /// Bash commands that ended with a non-zero exit code, in order.
    pub bash_failures: Vec<BashFailure>,
    /// Tokens, each assistant message's usage counted once.
    pub tokens: TranscriptTokens,
}

/// Token sums over a transcript's assistant messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TranscriptTokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

/// A Bash tool call that exited non-zero. `command` is known when the result links to its call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BashFailure {
    pub command: Option<String>,
    pub exit_code: i32,
}

impl TranscriptFacts {
    /// Whether the last turn ended normally (last_stop_reason == "end_turn").
    pub fn ended_turn(&self) -> bool {
        self.last_stop_reason.as_deref() == Some("end_turn")
    }
}

/// The folder name Claude Code gives a working directory under `projects/` (`/tmp/cl` →
/// `-tmp-cl`).
pub fn project_dir_name(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Reads a transcript's text; a non-blank line that is not a JSON object counts in `bad_lines`.
pub fn parse(text: &str) -> TranscriptFacts {
    let mut reader = Reader::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(record @ Value::Object(_)) => reader.record(&record),
            _ => reader.facts.bad_lines += 1,
        }
    }
    reader.finish()
}

/// A tool call seen in an assistant record, kept to name the command of its result.
struct ToolUse {
    name: String,
    command: Option<String>,
}

#[derive(Default)]
struct Reader {
    facts: TranscriptFacts,
    /// Per assistant message id, the largest value seen of each usage field.
    usage: BTreeMap<String, TranscriptTokens>,
    ended: BTreeSet<String>,
    tool_uses: BTreeMap<String, ToolUse>,
    /// Assistant records without a message id, each its own message.
    anonymous: u32,
}

impl Reader {
    fn record(&mut self, record: &Value) {
        self.facts.records += 1;
        if self.facts.session_id.is_none() {
            self.facts.session_id = ["sessionId", "session_id"]
                .iter()
                .find_map(|key| record.get(*key).and_then(Value::as_str))
                .filter(|s| !s.is_empty())
                .map(str::to_string);
        }
        match record.get("type").and_then(Value::as_str) {
            Some("assistant") => self.assistant(record),
            Some("user") => self.user(record),
            Some("result") => {
                if let Some(code) = record
                    .get("result")
                    .and_then(Value::as_str)
                    .and_then(exit_code)
                {
                    self.facts.bash_failures.push(BashFailure {
                        command: None,
                        exit_code: code,
                    });
                }
            }
            _ => {}
        }
    }

    fn assistant(&mut self, record: &Value) {
        let Some(message) = record.get("message").filter(|m| m.is_object()) else {
            return;
        };
        let id = match message.get("id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => {
                self.anonymous += 1;
                // A NUL never appears in a real id, so these cannot collide with one.
                format!("\0anonymous {}", self.anonymous)
            }
        };
        let usage = self.usage.entry(id.clone()).or_default();
        if let Some(u) = message.get("usage") {
            let field = |key: &str| u.get(key).and_then(Value::as_u64).unwrap_or(0);
            usage.input = usage.input.max(field("input_tokens"));
            usage.output = usage.output.max(field("output_tokens"));
            usage.cache_read = usage.cache_read.max(field("cache_read_input_tokens"));
            usage.cache_creation = usage
                .cache_creation
                .max(field("cache_creation_input_tokens"));
        }
        if let Some(reason) = message.get("stop_reason").and_then(Value::as_str) {
            self.facts.last_stop_reason = Some(reason.to_string());
            if reason == "end_turn" {
                self.ended.insert(id);
            }
        }
        for block in blocks(message) {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                self.tool_use(block);
            }
        }
    }

    fn tool_use(&mut self, block: &Value) {
        let name = block
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        if let Some(id) = block.get("id").and_then(Value::as_str) {
            if self.tool_uses.contains_key(id) {
                return;
            }
            let command = block
                .get("input")
                .and_then(|i| i.get("command"))
                .and_then(Value::as_str)
                .map(str::to_string);
            self.tool_uses.insert(
                id.to_string(),
                ToolUse {
                    name: name.clone(),
                    command,
                },
            );
        }
        *self.facts.tool_calls.entry(name).or_default() += 1;
    }

    fn user(&mut self, record: &Value) {
        let message = record.get("message").unwrap_or(&Value::Null);
        for block in blocks(message) {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let Some(code) = result_text(block).and_then(exit_code) else {
                continue;
            };
            let call = block
                .get("tool_use_id")
                .and_then(Value::as_str)
                .and_then(|id| self.tool_uses.get(id));
            // Another tool's output that happens to start with "Exit code" is not a Bash failure.
            if call.is_some_and(|c| c.name != "Bash") {
                continue;
            }
            self.facts.bash_failures.push(BashFailure {
                command: call.and_then(|c| c.command.clone()),
                exit_code: code,
            });
        }
    }

    fn finish(mut self) -> TranscriptFacts {
        self.facts.assistant_messages = count(self.usage.len());
        self.facts.end_turns = count(self.ended.len());
        for usage in self.usage.values() {
            let tokens = &mut self.facts.tokens;
            tokens.input = tokens.input.saturating_add(usage.input);
            tokens.output = tokens.output.saturating_add(usage.output);
            tokens.cache_read = tokens.cache_read.saturating_add(usage.cache_read);
            tokens.cache_creation = tokens.cache_creation.saturating_add(usage.cache_creation);
        }
        self.facts
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A message's content blocks; a string content has none.
fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A tool result's text: its `content` string, or the first text block of its content array.
fn result_text(block: &Value) -> Option<&str> {
    match block.get("content")? {
        Value::String(s) => Some(s),
        Value::Array(parts) => parts
            .iter()
            .find_map(|p| p.get("text").and_then(Value::as_str)),
        _ => None,
    }
}

/// The non-zero exit code a Bash result opens with (`Exit code N`, `Error: Exit code: N`).
fn exit_code(text: &str) -> Option<i32> {
    let text = text.trim_start();
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    let rest = text.strip_prefix("Exit code")?;
    let rest = rest
        .strip_prefix(':')
        .unwrap_or(rest)
        .trim_start_matches(' ');
    let sign = usize::from(rest.starts_with('-'));
    let digits = rest[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let code: i32 = rest[..sign + digits].parse().ok()?;
    (code != 0).then_some(code)
}

#[cfg(test)]
mod tests;
