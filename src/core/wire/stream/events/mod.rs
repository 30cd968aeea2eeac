//! What each kind of event adds to the facts (Claude Code, Codex, Gemini, claudeless); missing
//! or odd fields are skipped. Claude's and the shared readers here, `codex` and `gemini` apart.

use serde_json::{Map, Value};

use super::{FinalResult, Retry, StreamError, StreamFacts, Tokens};
use crate::core::guard::{Request, tool_use};

mod codex;
mod gemini;

use codex::{codex_item, codex_turn_completed, codex_turn_failed};
use gemini::{gemini_message, gemini_tool_result};

type Object = Map<String, Value>;

pub(super) fn apply(facts: &mut StreamFacts, event: &Object) {
    match text(event, "type").unwrap_or_default() {
        "system" if text(event, "subtype") == Some("init") => announce(facts, event),
        "system" if text(event, "subtype") == Some("api_retry") => claude_retry(facts, event),
        "init" => announce(facts, event),
        "assistant" => claude_assistant(facts, event),
        "result" => final_result(facts, event),
        "error" => error_event(facts, event),
        "thread.started" => fill(&mut facts.session_id, text(event, "thread_id")),
        "item.completed" => codex_item(facts, event),
        "turn.completed" => codex_turn_completed(facts, event),
        "turn.failed" => codex_turn_failed(facts, event),
        "message" => gemini_message(facts, event),
        "tool_use" => record_tool_use(facts, event),
        "tool_result" => gemini_tool_result(facts, event),
        _ => {}
    }
}

/// Claude `api_retry`: kept as a retry and as a non-fatal error (a run cut mid-retries still
/// names the cause).
fn claude_retry(facts: &mut StreamFacts, event: &Object) {
    let as_u32 = |key: &str| {
        event
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let status = as_u32("error_status").and_then(|n| u16::try_from(n).ok());
    let error = text(event, "error").map(str::to_string);
    let retry = Retry {
        attempt: as_u32("attempt").unwrap_or(0),
        max_retries: as_u32("max_retries"),
        status,
        error: error.clone(),
        message: None,
    };
    facts.errors.push(StreamError {
        kind: error.clone(),
        status,
        message: format!(
            "API error {} ({}), retry {}",
            status.map_or("?".to_string(), |s| s.to_string()),
            error.as_deref().unwrap_or("no details"),
            retry.attempt
        ),
        fatal: false,
    });
    facts.retries.push(retry);
}

/// A line that is not an event: Codex reports a command refused under its approval policy only
/// as a tracing `ERROR` line.
pub(super) fn other_line(facts: &mut StreamFacts, line: &str) {
    let refused = line.contains("ERROR")
        && (line.contains("reject command") || line.contains("approval policy is"));
    if refused {
        let what = line
            .split_once("error=")
            .map_or(line, |(_, message)| message);
        facts.refused_tools.push(what.trim().to_string());
    }
}

/// Claude `system`/`init`, Gemini `init`.
fn announce(facts: &mut StreamFacts, event: &Object) {
    fill(&mut facts.session_id, text(event, "session_id"));
    if let Some(model) = text(event, "model") {
        facts.model = Some(model.to_string());
    }
}

fn claude_assistant(facts: &mut StreamFacts, event: &Object) {
    let message = event.get("message").and_then(Value::as_object);
    let blocks = message
        .and_then(|message| message.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut said = String::new();
    for block in blocks.iter().filter_map(Value::as_object) {
        match text(block, "type") {
            Some("tool_use") => record_tool_use(facts, block),
            Some("text") => said.push_str(text(block, "text").unwrap_or_default()),
            _ => {}
        }
    }
    // A subagent's messages carry the tool call they belong to; they are not the final text.
    let top_level = event.get("parent_tool_use_id").is_none_or(Value::is_null);
    if top_level && !said.is_empty() {
        facts.result_text = Some(said.clone());
    }
    // Claude's stand-in messages for errors name the model `<synthetic>`.
    let model = message
        .and_then(|message| text(message, "model"))
        .filter(|model| !model.starts_with('<'));
    fill(&mut facts.model, model);
    fill(&mut facts.session_id, text(event, "session_id"));
    if let Some(kind) = text(event, "error") {
        let message = if said.is_empty() {
            kind.to_string()
        } else {
            said
        };
        facts.errors.push(StreamError {
            kind: Some(kind.to_string()),
            status: None,
            message,
            fatal: false,
        });
    }
}

/// Claude's and Gemini's `result`.
fn final_result(facts: &mut StreamFacts, event: &Object) {
    let subtype = text(event, "subtype");
    let success = match text(event, "status") {
        Some(status) => status == "success",
        None => {
            let is_error = event.get("is_error").and_then(Value::as_bool) == Some(true);
            !is_error && subtype.is_none_or(|subtype| !subtype.starts_with("error"))
        }
    };
    facts.result = Some(FinalResult {
        success,
        subtype: subtype.map(str::to_string),
    });
    fill(&mut facts.session_id, text(event, "session_id"));
    if let Some(result) = text(event, "result") {
        facts.result_text = Some(result.to_string());
    }
    if let Some(turns) = event.get("num_turns").and_then(Value::as_u64) {
        facts.num_turns = u32::try_from(turns).ok();
    }
    let cost = event
        .get("total_cost_usd")
        .or_else(|| event.get("cost_usd"));
    if let Some(cost) = cost.and_then(Value::as_f64) {
        facts.cost_usd = Some(cost);
    }
    if let Some(usage) = object(event, "usage") {
        facts.tokens = Tokens {
            input: number(usage, "input_tokens"),
            output: number(usage, "output_tokens"),
            cache_read: number(usage, "cache_read_input_tokens"),
            cache_creation: number(usage, "cache_creation_input_tokens"),
        };
    } else if let Some(stats) = object(event, "stats") {
        facts.tokens = Tokens {
            input: number(stats, "input_tokens"),
            output: number(stats, "output_tokens"),
            cache_read: number(stats, "cached"),
            cache_creation: None,
        };
    }
    if let Some(denials) = event.get("permission_denials").and_then(Value::as_array) {
        facts.permission_denials.extend(
            denials
                .iter()
                .filter_map(Value::as_object)
                .map(describe_denial),
        );
    }
    if facts.client_approvals.is_none() {
        facts.client_approvals = crate::core::wire::acp::audit::read(event);
    }
    acp_session(facts, event);
    if !success {
        facts.errors.push(result_error(event, subtype));
    }
}

/// herd's ACP client's own facts in its result: unasked tool calls, the permission mode.
fn acp_session(facts: &mut StreamFacts, event: &Object) {
    use crate::core::wire::acp::outcome::{MODE_FIELD, UNASKED_FIELD};
    if let Some(unasked) = event.get(UNASKED_FIELD).and_then(Value::as_array) {
        let described = unasked.iter().filter_map(Value::as_str).map(str::to_string);
        facts.unasked_tools.extend(described);
    }
    if facts.acp_mode.is_none() {
        facts.acp_mode = event.get(MODE_FIELD).filter(|m| m.is_object()).cloned();
    }
}

/// The error an unsuccessful result reports: Gemini's error object, or Claude's result text.
fn result_error(event: &Object, subtype: Option<&str>) -> StreamError {
    if let Some(error) = object(event, "error") {
        return error_object(error, true);
    }
    let kind = subtype.filter(|subtype| *subtype != "success");
    let errors = event
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| errors.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default()
        .join("; ");
    let message = text(event, "result")
        .filter(|result| !result.trim().is_empty())
        .map(str::to_string)
        .or_else(|| Some(errors).filter(|errors| !errors.is_empty()))
        .or_else(|| kind.map(str::to_string))
        .unwrap_or_else(|| "error".to_string());
    let status = event
        .get("api_error_status")
        .and_then(Value::as_u64)
        .and_then(http_status);
    StreamError {
        kind: kind.map(str::to_string),
        status,
        message,
        fatal: true,
    }
}

/// `Bash(touch x)`, read as the guard reads requests, with herd's ACP client's reason when it
/// gives one (`Bash(rm -rf ~) — refuse: …`).
fn describe_denial(denial: &Object) -> String {
    let tool = text(denial, "tool_name").unwrap_or("tool");
    let request = tool_use::read(tool, denial.get("tool_input")).to_string();
    match text(denial, "reason") {
        Some(reason) => format!("{request} — {reason}"),
        None => request,
    }
}

/// A `tool_use` block or event as a request (`name`/`tool_name`, `input`/`parameters`).
fn record_tool_use(facts: &mut StreamFacts, block: &Object) {
    facts.tool_calls = facts.tool_calls.saturating_add(1);
    let name = text(block, "name").or_else(|| text(block, "tool_name"));
    if let Some(name) = name {
        let input = block.get("input").or_else(|| block.get("parameters"));
        facts.tool_requests.push(tool_use::read(name, input));
    }
}

/// A top-level `error`: with an error object it ends the run; with a message only it does not.
fn error_event(facts: &mut StreamFacts, event: &Object) {
    let error = match object(event, "error") {
        Some(error) => error_object(error, true),
        None => message_error(text(event, "message").unwrap_or_default(), false),
    };
    facts.errors.push(error);
}

fn error_object(error: &Object, fatal: bool) -> StreamError {
    let status = ["status", "code"]
        .into_iter()
        .find_map(|key| error.get(key).and_then(Value::as_u64))
        .and_then(http_status);
    let message = text(error, "message").unwrap_or_default();
    StreamError {
        kind: text(error, "type").map(str::to_string),
        status: status.or_else(|| status_in_text(message)),
        message: message.to_string(),
        fatal,
    }
}

fn message_error(message: &str, fatal: bool) -> StreamError {
    StreamError {
        kind: None,
        status: status_in_text(message),
        message: message.to_string(),
        fatal,
    }
}

/// The HTTP status in a Codex message (`unexpected status 401`, `last status: 503`).
fn status_in_text(message: &str) -> Option<u16> {
    ["unexpected status ", "last status: "]
        .into_iter()
        .find_map(|lead| {
            let at = message.find(lead)? + lead.len();
            let digits = message.get(at..at + 3)?;
            if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            let after = message[at + 3..].chars().next();
            if after.is_some_and(|c| c.is_ascii_alphanumeric()) {
                return None;
            }
            digits.parse::<u64>().ok().and_then(http_status)
        })
}

fn http_status(code: u64) -> Option<u16> {
    u16::try_from(code)
        .ok()
        .filter(|code| (100..=599).contains(code))
}

fn text<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

fn object<'a>(parent: &'a Object, key: &str) -> Option<&'a Object> {
    parent.get(key).and_then(Value::as_object)
}

fn number(object: &Object, key: &str) -> Option<u64> {
    object.get(key).and_then(Value::as_u64)
}

fn fill(slot: &mut Option<String>, value: Option<&str>) {
    if slot.is_none() {
        *slot = value.map(str::to_string);
    }
}

fn add(total: &mut Option<u64>, value: Option<u64>) {
    if let Some(value) = value {
        *total = Some(total.unwrap_or(0).saturating_add(value));
    }
}
