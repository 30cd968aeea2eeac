//! What an ACP session shows: `session/update`s read into transcript entries (text, thoughts,
//! tool calls, the plan) plus herd's own lines, each tool call's title remembered for its
//! later updates. Pure; drawing is `render`'s.

use std::collections::HashMap;

use agent_client_protocol_schema::v1::{
    ContentBlock, SessionUpdate, ToolCallContent, ToolCallUpdate,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wire::to_json;

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
    /// The transcript pieces of one `session/update`; nothing for updates herd does not show.
    pub fn read(&mut self, update: &Value) -> Option<Shown> {
        match SessionUpdate::deserialize(update).ok()? {
            SessionUpdate::AgentMessageChunk(chunk) => {
                Some(Shown::Text(content_text(&chunk.content)))
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                Some(Shown::Thought(content_text(&chunk.content)))
            }
            SessionUpdate::ToolCall(call) => Some(Shown::Tool(self.tool(call.into()))),
            SessionUpdate::ToolCallUpdate(update) => Some(Shown::Tool(self.tool(update))),
            SessionUpdate::Plan(plan) => Some(Shown::Plan(
                plan.entries
                    .into_iter()
                    .map(|entry| (wire_name(&entry.status), entry.content))
                    .collect(),
            )),
            _ => None,
        }
    }

    fn tool(&mut self, update: ToolCallUpdate) -> ToolLine {
        let id = update.tool_call_id.0.to_string();
        let fields = update.fields;
        let line = self.calls.entry(id.clone()).or_insert_with(|| ToolLine {
            id,
            status: "pending".into(),
            ..ToolLine::default()
        });
        if let Some(title) = fields.title {
            line.title = title;
        }
        if let Some(kind) = fields.kind {
            line.kind = wire_name(&kind);
        }
        if let Some(status) = fields.status {
            line.status = wire_name(&status);
        }
        if let Some(content) = fields.content {
            let output = tool_output(&content);
            if !output.is_empty() {
                line.output = output;
            }
        }
        line.clone()
    }
}

/// An enum's name on the wire (`in_progress`, `execute`), or its tag (`image`) for a tagged one.
fn wire_name(value: &impl Serialize) -> String {
    match to_json(value) {
        Value::String(name) => name,
        tagged => tagged
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
    }
}

/// The text of a content block; other blocks by their type (`[image]`).
fn content_text(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        other => format!("[{}]", wire_name(other)),
    }
}

/// The last lines of a tool call's content: text output, or which file a diff changes.
fn tool_output(content: &[ToolCallContent]) -> Vec<String> {
    let mut lines = Vec::new();
    for item in content {
        match item {
            ToolCallContent::Content(content) => {
                let text = content_text(&content.content);
                lines.extend(text.lines().map(str::to_string));
            }
            ToolCallContent::Diff(diff) => {
                let path = diff.path.display();
                let new = diff.new_text.lines().count();
                lines.push(format!("diff {path} (+{new} lines)"));
            }
            ToolCallContent::Terminal(_) => lines.push("[terminal]".into()),
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

    #[test]
    fn reads_other_blocks_by_type_and_diffs_and_terminals_by_what_they_are() {
        let mut calls = ToolCalls::default();
        let image = json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}});
        assert_eq!(calls.read(&image), Some(Shown::Text("[image]".into())));
        let edit = json!({"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit a.rs",
            "kind": "edit", "status": "in_progress", "content": [
                {"type": "diff", "path": "/w/a.rs", "oldText": "x", "newText": "a\nb"},
                {"type": "terminal", "terminalId": "t9"},
                {"type": "bogus"}]});
        let Some(Shown::Tool(line)) = calls.read(&edit) else {
            panic!()
        };
        assert_eq!(
            (line.kind.as_str(), line.status.as_str()),
            ("edit", "in_progress")
        );
        assert_eq!(line.output, ["diff /w/a.rs (+2 lines)", "[terminal]"]);
        let unknown_kind =
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "e1", "kind": "teleport"});
        let Some(Shown::Tool(line)) = calls.read(&unknown_kind) else {
            panic!()
        };
        assert_eq!(
            (line.title.as_str(), line.kind.as_str()),
            ("Edit a.rs", "other")
        );
        let usage = json!({"sessionUpdate": "usage_update", "used": null, "size": 200000});
        assert_eq!(calls.read(&usage), None);
    }
}
