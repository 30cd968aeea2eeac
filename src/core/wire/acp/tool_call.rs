//! An ACP tool call read into the guard's request, whatever shape the agent states it in (a
//! command under many keys, paths in `rawInput`, `locations` or a diff, a URL, Gemini's title).
//! Anything it cannot account for makes the request `Unread`, which only the operator can
//! approve; the agent's `kind` only says how to read paths. Pure.

use serde_json::Value;

use crate::core::guard::input::{self, Fields};
use crate::core::guard::{Request, RequestKind, tool_use};
use crate::core::wire::app_server;

/// What codex-acp passes on from Codex's approval request besides the command and folder
/// (network access and sandbox permissions are not among them: those stay unread).
const CODEX_EVENT_PASS: [&str; 11] = [
    "call_id",
    "turn_id",
    "approval_id",
    "started_at_ms",
    "environment_id",
    "reason",
    "parsed_cmd",
    "available_decisions",
    "proposed_execpolicy_amendment",
    "proposed_network_policy_amendments",
    "skill_metadata",
];

/// A search's pattern and options, a web search's query and domains, a call's own status.
const SEARCH_PASS: [&str; 19] = [
    "pattern",
    "glob",
    "output_mode",
    "-i",
    "-n",
    "-o",
    "-A",
    "-B",
    "-C",
    "context",
    "type",
    "head_limit",
    "offset",
    "multiline",
    "query",
    "allowed_domains",
    "blocked_domains",
    "status",
    "limit",
];

/// Keys that carry no action of their own (descriptions, limits, an edit's text, a read's range,
/// a search's pattern, Codex's approval request).
const PASS_OVER: [&[&str]; 6] = [
    &tool_use::SHELL_PASS,
    &tool_use::EDIT_PASS,
    &tool_use::READ_PASS,
    &SEARCH_PASS,
    &CODEX_EVENT_PASS,
    &app_server::COMMAND_PASS_OVER,
];

/// What the agent's `kind` says the paths of a call are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stated {
    Execute,
    Change,
    Read,
    Fetch,
    /// No kind: the input alone says what the call does.
    Unsaid,
    /// A kind herd does not read (`think`, `other`, `switch_mode`, or one it never saw).
    Unknown,
}

fn stated(kind: Option<&str>) -> Stated {
    match kind {
        Some("execute") => Stated::Execute,
        Some("edit" | "delete" | "move") => Stated::Change,
        Some("read" | "search") => Stated::Read,
        Some("fetch") => Stated::Fetch,
        None => Stated::Unsaid,
        Some(_) => Stated::Unknown,
    }
}

/// Everything a tool call states, gathered before it is judged.
struct Statement {
    stated: Stated,
    commands: Vec<String>,
    paths: Vec<String>,
    url: Option<String>,
    workdir: Option<String>,
    /// What could not be accounted for, as an excerpt.
    unread: Option<String>,
}

/// The request a tool call asks about; `Unread` when any part of it cannot be read.
pub fn request_of(tool_call: &Value) -> Request {
    let statement = statement_of(tool_call);
    let mut request = match request_from(&statement) {
        Ok(request) => request,
        Err(what) => Request::unread(&what),
    };
    // Every text the call carries is judged as a command too.
    request.alternatives = texts_of(tool_call)
        .into_iter()
        .filter(|t| request.text() != t)
        .collect();
    request
}

fn statement_of(tool_call: &Value) -> Statement {
    let stated = stated(tool_call.get("kind").and_then(Value::as_str));
    let raw = tool_call.get("rawInput");
    let mut fields = Fields::of(raw);
    let commands = fields.commands();
    let mut workdir = fields.workdir();
    let mut paths = fields.paths();
    for path in located_paths(tool_call) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    let url = fields.text(&["url", "uri"]);
    if url.is_some() {
        fields.pass_over(&["prompt"]);
    }
    let said_in_input = raw.map(input::strings).unwrap_or_default();
    let said_in_input: Vec<String> = said_in_input.into_iter().map(str::to_string).collect();
    for list in PASS_OVER {
        fields.pass_over(list);
    }
    let mut unread = fields.finish().err().map(|left| format!("rawInput {left}"));
    let mut commands = commands;
    // Content is the agent's account of the call: beside what the input states, a description
    // (judged as another reading); alone, the only statement of what runs, unread (except
    // Gemini's account of where its titled command runs).
    let input_states = !commands.is_empty() || !paths.is_empty() || url.is_some();
    for text in content_texts(tool_call) {
        if input_states || said_in_input.contains(&text) {
            continue;
        }
        match gemini_context(&text) {
            Some(dir) if stated == Stated::Execute => workdir = workdir.or(Some(dir)),
            _ => unread = unread.or_else(|| Some(format!("content \"{text}\""))),
        }
    }
    // Gemini CLI states its shell command only as the title of the call.
    let title = tool_call.get("title").and_then(Value::as_str);
    if stated == Stated::Execute
        && commands.is_empty()
        && raw.is_none()
        && let Some(title) = title.filter(|t| !t.trim().is_empty())
    {
        commands.push(unquoted(title));
    }
    Statement {
        stated,
        commands,
        paths,
        url,
        workdir,
        unread,
    }
}

/// The request a statement makes, or what herd could not read of it.
fn request_from(statement: &Statement) -> Result<Request, String> {
    if let Some(unread) = &statement.unread {
        return Err(unread.clone());
    }
    // Each command is judged on its own, as the agent runs it.
    let mut parts: Vec<RequestKind> = statement
        .commands
        .iter()
        .map(|command| RequestKind::Shell {
            command: command.clone(),
        })
        .collect();
    let path_kind = |path: String| match statement.stated {
        Stated::Read | Stated::Execute => RequestKind::Read { path },
        _ => RequestKind::Edit { path },
    };
    match statement.stated {
        Stated::Unknown => {
            return Err("a kind of tool call herd does not read".to_string());
        }
        Stated::Execute if statement.commands.is_empty() => {
            return Err("a command herd could not find".to_string());
        }
        // A search names no path when it searches the task's folder.
        Stated::Read if statement.paths.is_empty() => parts.push(RequestKind::Read {
            path: ".".to_string(),
        }),
        _ => {}
    }
    parts.extend(statement.paths.iter().cloned().map(path_kind));
    if let Some(url) = &statement.url {
        parts.push(RequestKind::Fetch { url: url.clone() });
    }
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Err("no command, path or URL".to_string());
    };
    let mut request = Request::new(first);
    request.also = parts.collect();
    request.workdir = statement.workdir.clone();
    Ok(request)
}

/// The paths of `locations` and of `diff` content.
fn located_paths(tool_call: &Value) -> Vec<String> {
    let path = |v: &Value| v.get("path").and_then(Value::as_str).map(str::to_string);
    let locations = tool_call.get("locations").and_then(Value::as_array);
    let diffs = tool_call
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("diff"));
    let mut paths: Vec<String> = Vec::new();
    for found in locations
        .into_iter()
        .flatten()
        .chain(diffs)
        .filter_map(path)
    {
        if !found.trim().is_empty() && !paths.contains(&found) {
            paths.push(found);
        }
    }
    paths
}

/// The texts of `content` blocks (`{"type": "content", "content": {"type": "text", …}}`).
fn content_texts(tool_call: &Value) -> Vec<String> {
    tool_call
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("content"))
        .filter_map(|c| c.pointer("/content/text").and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Every text a tool call carries: its title, its input's strings and its content's texts.
fn texts_of(tool_call: &Value) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    if let Some(title) = tool_call.get("title").and_then(Value::as_str) {
        texts.push(unquoted(title));
    }
    if let Some(raw) = tool_call.get("rawInput") {
        texts.extend(input::strings(raw).into_iter().map(str::to_string));
    }
    texts.extend(content_texts(tool_call));
    let mut unique: Vec<String> = Vec::new();
    for t in texts {
        if !t.trim().is_empty() && !unique.contains(&t) {
            unique.push(t);
        }
    }
    unique
}

/// The folder in Gemini CLI's account of its shell command (`[current working directory /x]
/// …`, `[in src] …`).
fn gemini_context(text: &str) -> Option<String> {
    let rest = text.trim().strip_prefix('[')?;
    let (place, rest) = rest.split_once(']')?;
    let dir = place
        .strip_prefix("current working directory ")
        .or_else(|| place.strip_prefix("in "))?;
    let rest = rest.trim();
    let rest = rest.strip_suffix("[background]").unwrap_or(rest).trim();
    let described = rest.is_empty() || (rest.starts_with('(') && rest.ends_with(')'));
    described.then(|| dir.to_string())
}

/// A title in backticks (`` `npm test` ``) without them.
fn unquoted(title: &str) -> String {
    let trimmed = title.trim();
    trimmed
        .strip_prefix('`')
        .and_then(|t| t.strip_suffix('`'))
        .unwrap_or(trimmed)
        .to_string()
}

#[cfg(test)]
#[path = "tool_call_tests.rs"]
mod tests;
