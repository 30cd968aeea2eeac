//! What an ACP session shows: `session/update` notifications read into transcript entries
//! (agent text streamed, thoughts, tool calls with their status and output, the plan) plus
//! herd's own lines (notes, the permission request waiting, the answers given).
//!
//! Owns reading the update shapes into [`Shown`] and remembering each tool call's title so an
//! update that only changes a status still says which call it is. Pure; drawing is `render`'s.

use std::collections::HashMap;

use serde_json::Value;

/// The most output lines of one tool call kept for the transcript.
const OUTPUT_LINES: usize = 12;

/// One piece of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// herd's own line (what it sent, what it saw).
    Note(String),
    /// The prompt herd sent.
    Prompt(String),
    /// A chunk of the agent's message.
    Text(String),
    /// A chunk of the agent's thoughts.
    Thought(String),
    Tool(ToolLine),
    /// The plan: (status, entry).
    Plan(Vec<(String, String)>),
    /// A request waiting for the operator.
    Permission {
        request: String,
        decision: String,
        options: Vec<String>,
    },
    /// An answer given to a request.
    Answered {
        request: String,
        answer: String,
    },
}

/// A tool call as it is now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolLine {
    pub id: String,
    pub title: String,
    pub kind: String,
    /// `pending`, `in_progress`, `completed`, `failed`.
    pub status: String,
    /// Its output or diff, shortened.
    pub output: Vec<String>,
}

/// Tool calls seen so far, by id.
#[derive(Debug, Default)]
pub struct ToolCalls {
    calls: HashMap<String, ToolLine>,
}

impl ToolCalls {
    /// The transcript pieces of one `session/update`'s `update` object; nothing for updates
    /// herd does not show (available commands, modes).
    pub fn read(&mut self, update: &Value) -> Option<Shown> {
        let text = |key: &str| update.get(key).and_then(Value::as_str);
        match text("sessionUpdate")? {
            "agent_message_chunk" => content_text(update.get("content")).map(Shown::Text),
            "agent_thought_chunk" => content_text(update.get("content")).map(Shown::Thought),
            "tool_call" | "tool_call_update" => Some(Shown::Tool(self.tool(update))),
            "plan" => {
                let entries = update.get("entries").and_then(Value::as_array)?;
                let entries = entries
                    .iter()
                    .map(|entry| {
                        let field = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
                        (field("status").to_string(), field("content").to_string())
                    })
                    .collect();
                Some(Shown::Plan(entries))
            }
            _ => None,
        }
    }

    fn tool(&mut self, update: &Value) -> ToolLine {
        let text = |key: &str| update.get(key).and_then(Value::as_str).map(str::to_string);
        let id = text("toolCallId").unwrap_or_default();
        let line = self.calls.entry(id.clone()).or_insert_with(|| ToolLine {
            id,
            status: "pending".into(),
            ..ToolLine::default()
        });
        if let Some(title) = text("title") {
            line.title = title;
        }
        if let Some(kind) = text("kind") {
            line.kind = kind;
        }
        if let Some(status) = text("status") {
            line.status = status;
        }
        if let Some(content) = update.get("content").and_then(Value::as_array) {
            let output = tool_output(content);
            if !output.is_empty() {
                line.output = output;
            }
        }
        line.clone()
    }
}

/// The text of a content block (`{"type": "text", "text": …}`); other blocks by their type.
fn content_text(content: Option<&Value>) -> Option<String> {
    let content = content?;
    match content.get("type").and_then(Value::as_str) {
        Some("text") => content
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string),
        Some(other) => Some(format!("[{other}]")),
        None => None,
    }
}

/// The last lines of a tool call's content: text output, or which file a diff changes.
fn tool_output(content: &[Value]) -> Vec<String> {
    let mut lines = Vec::new();
    for item in content {
        match item.get("type").and_then(Value::as_str) {
            Some("content") => {
                if let Some(text) = content_text(item.get("content")) {
                    lines.extend(text.lines().map(str::to_string));
                }
            }
            Some("diff") => {
                let path = item.get("path").and_then(Value::as_str).unwrap_or("?");
                let new = item.get("newText").and_then(Value::as_str).unwrap_or("");
                lines.push(format!("diff {path} (+{} lines)", new.lines().count()));
            }
            Some("terminal") => lines.push("[terminal]".into()),
            _ => {}
        }
    }
    let skip = lines.len().saturating_sub(OUTPUT_LINES);
    lines.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_text_thoughts_tools_and_plans_and_remembers_titles() {
        let mut calls = ToolCalls::default();
        let chunk = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}});
        assert_eq!(calls.read(&chunk), Some(Shown::Text("Hi".into())));
        let thought = json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}});
        assert_eq!(calls.read(&thought), Some(Shown::Thought("hm".into())));
        let call = json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "npm test", "kind": "execute", "status": "pending"});
        let Some(Shown::Tool(line)) = calls.read(&call) else {
            panic!()
        };
        assert_eq!(
            (line.title.as_str(), line.status.as_str()),
            ("npm test", "pending")
        );
        let done = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "ok\n3 passed"}}]});
        let Some(Shown::Tool(line)) = calls.read(&done) else {
            panic!()
        };
        assert_eq!(line.title, "npm test");
        assert_eq!(line.status, "completed");
        assert_eq!(line.output, ["ok", "3 passed"]);
        let plan = json!({"sessionUpdate": "plan", "entries": [{"content": "a", "status": "completed", "priority": "high"}]});
        assert_eq!(
            calls.read(&plan),
            Some(Shown::Plan(vec![("completed".into(), "a".into())]))
        );
        assert_eq!(
            calls.read(&json!({"sessionUpdate": "current_mode_update"})),
            None
        );
        assert_eq!(calls.read(&json!({"no": "kind"})), None);
    }
}
