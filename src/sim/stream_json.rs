//! Claude Code's print-mode event stream, one JSON object per line, shaped like the captured
//! fixtures. Pure; ids derive from the session id and a counter, so a run is reproducible.

use serde_json::{Map, Value, json};

use super::structured::{JsonError, JsonInit, JsonResult, JsonTool};

/// The tools an init event lists (Claude Code 2.1's defaults).
const TOOLS: &[&str] = &[
    "Task",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "NotebookEdit",
    "Read",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];
const CLAUDE_CODE_VERSION: &str = "2.1.197";
/// The model named when no `json_init` step came first.
const DEFAULT_MODEL: &str = "claude-opus-4-8[1m]";

/// One print-mode run's stream: who it belongs to and the ids handed out so far.
#[derive(Debug, Clone)]
pub(super) struct StreamSession {
    session_id: String,
    cwd: String,
    /// As `json_init` named it (`claude-opus-4-8[1m]`).
    model: String,
    /// Ids handed out so far; each new id hashes the session id with it.
    issued: u64,
    /// Tool calls made: (tool, command, tool_use id), so a denial can name its call.
    tool_calls: Vec<(String, String, String)>,
}

impl StreamSession {
    pub(super) fn new(session_id: &str, cwd: &str) -> StreamSession {
        StreamSession {
            session_id: session_id.to_string(),
            cwd: cwd.to_string(),
            model: DEFAULT_MODEL.to_string(),
            issued: 0,
            tool_calls: Vec::new(),
        }
    }

    /// `{"type":"system","subtype":"init",...}`; later events name its model.
    pub(super) fn init(&mut self, init: &JsonInit) -> String {
        self.model = init.model.clone();
        let mut event = Map::new();
        event.insert("type".into(), json!("system"));
        event.insert("subtype".into(), json!("init"));
        event.insert("cwd".into(), json!(self.cwd));
        event.insert("session_id".into(), json!(self.session_id));
        event.insert("tools".into(), json!(TOOLS));
        event.insert("mcp_servers".into(), json!([]));
        event.insert("model".into(), json!(self.model));
        event.insert("permissionMode".into(), json!("default"));
        event.insert(
            "slash_commands".into(),
            json!(["compact", "context", "init", "review"]),
        );
        event.insert("apiKeySource".into(), json!("ANTHROPIC_API_KEY"));
        event.insert("claude_code_version".into(), json!(CLAUDE_CODE_VERSION));
        event.insert("output_style".into(), json!("default"));
        event.insert("agents".into(), json!(["general-purpose"]));
        event.insert("skills".into(), json!([]));
        event.insert("plugins".into(), json!([]));
        event.insert("analytics_disabled".into(), json!(false));
        event.insert("product_feedback_disabled".into(), json!(false));
        event.insert("uuid".into(), json!(self.next_uuid()));
        let memory = format!("~/.claude/projects/{}/memory/", self.cwd.replace('/', "-"));
        event.insert("memory_paths".into(), json!({ "auto": memory }));
        event.insert("fast_mode_state".into(), json!("off"));
        Value::Object(event).to_string()
    }

    /// An assistant message with one text block.
    pub(super) fn say(&mut self, text: &str) -> String {
        self.assistant(json!([{ "type": "text", "text": text }]))
    }

    /// The assistant's `tool_use` event and the `user` event with its `tool_result` at
    /// `timestamp`.
    pub(super) fn tool(&mut self, tool: &JsonTool, timestamp: &str) -> [String; 2] {
        let id = format!("toolu_sim{:012x}", self.next_number() >> 80);
        self.tool_calls
            .push((tool.name.clone(), tool.command.clone(), id.clone()));
        let call = json!([{
            "type": "tool_use",
            "id": id,
            "name": tool.name,
            "input": tool_input(&tool.command, tool.description.as_deref()),
        }]);
        let tool_use_result = if tool.is_error {
            json!(format!("Error: {}", tool.result))
        } else {
            json!({
                "stdout": tool.result,
                "stderr": "",
                "interrupted": false,
                "isImage": false,
            })
        };
        let answer = json!({
            "type": "user",
            "message": {
                "role": "user",
                "content": [{
                    "type": "tool_result",
                    "content": tool.result,
                    "is_error": tool.is_error,
                    "tool_use_id": id,
                }],
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": self.next_uuid(),
            "timestamp": timestamp,
            "tool_use_result": tool_use_result,
        });
        [self.assistant(call), answer.to_string()]
    }

    /// The final `result` event, after Claude's synthetic error record when it names one.
    pub(super) fn result(&mut self, result: &JsonResult, duration_ms: u64) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(error) = &result.assistant_error {
            lines.push(self.assistant_error(error, &result.text, result.api_error_status));
        }
        let denials: Vec<Value> = result
            .denials
            .iter()
            .map(|denial| {
                json!({
                    "tool_name": denial.tool,
                    "tool_use_id": self.tool_use_id(&denial.tool, &denial.command),
                    "tool_input": tool_input(&denial.command, None),
                })
            })
            .collect();
        let stop_reason = if result.is_error {
            "stop_sequence"
        } else {
            "end_turn"
        };
        let mut event = Map::new();
        event.insert("type".into(), json!("result"));
        event.insert("subtype".into(), json!(result.subtype));
        event.insert("is_error".into(), json!(result.is_error));
        event.insert("api_error_status".into(), json!(result.api_error_status));
        event.insert("duration_ms".into(), json!(duration_ms));
        let reached_the_api = result.assistant_error.is_none();
        let api_ms = if reached_the_api { duration_ms / 2 } else { 0 };
        event.insert("duration_api_ms".into(), json!(api_ms));
        if reached_the_api {
            // Time to the first token: only a request that got an answer has one.
            event.insert("ttft_ms".into(), json!(api_ms));
            event.insert("ttft_stream_ms".into(), json!(api_ms));
            event.insert("time_to_request_ms".into(), json!(duration_ms - api_ms));
        }
        let rest = json!({
            "num_turns": result.turns,
            "result": result.text,
            "stop_reason": stop_reason,
            "session_id": self.session_id,
            "total_cost_usd": cost(result.cost_usd),
            "usage": result_usage(result),
            "modelUsage": self.model_usage(result),
            "permission_denials": denials,
            "terminal_reason": "completed",
            "fast_mode_state": "off",
            "uuid": self.next_uuid(),
        });
        if let Value::Object(rest) = rest {
            event.extend(rest);
        }
        lines.push(Value::Object(event).to_string());
        lines
    }

    /// `{"type":"error","error":{"type":...,"message":...}}`.
    pub(super) fn error(error: &JsonError) -> String {
        json!({
            "type": "error",
            "error": { "type": error.kind, "message": error.message },
        })
        .to_string()
    }

    fn assistant(&mut self, content: Value) -> String {
        let message_id = format!("msg_sim_{:012x}", self.next_number() >> 80);
        json!({
            "type": "assistant",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": self.message_model(),
                "content": content,
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": 10,
                    "output_tokens": 5,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
                "context_management": null,
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": self.next_uuid(),
            "request_id": "req_sim",
        })
        .to_string()
    }

    /// Claude's record for a failed request: a `<synthetic>` message with the error as its text.
    fn assistant_error(&mut self, error: &str, text: &str, api_status: Option<u16>) -> String {
        let mut event = json!({
            "type": "assistant",
            "message": {
                "id": self.next_uuid(),
                "container": null,
                "model": "<synthetic>",
                "role": "assistant",
                "stop_details": null,
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "type": "message",
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "server_tool_use": { "web_search_requests": 0, "web_fetch_requests": 0 },
                    "service_tier": null,
                    "cache_creation": {
                        "ephemeral_1h_input_tokens": 0,
                        "ephemeral_5m_input_tokens": 0,
                    },
                    "inference_geo": null,
                    "iterations": null,
                    "speed": null,
                },
                "content": [{ "type": "text", "text": text }],
                "context_management": null,
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": self.next_uuid(),
            "error": error,
        });
        if api_status.is_some()
            && let Some(fields) = event.as_object_mut()
        {
            fields.insert("request_id".into(), json!("req_sim"));
        }
        event.to_string()
    }

    /// Per-model usage; empty when nothing was used, as for a refused request.
    fn model_usage(&self, result: &JsonResult) -> Value {
        if result.cost_usd == 0.0 && result.input_tokens == 0 && result.output_tokens == 0 {
            return json!({});
        }
        let mut models = Map::new();
        models.insert(
            self.model.clone(),
            json!({
                "inputTokens": result.input_tokens,
                "outputTokens": result.output_tokens,
                "cacheReadInputTokens": result.cache_read_tokens,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": cost(result.cost_usd),
                "contextWindow": 1_000_000,
                "maxOutputTokens": 64_000,
            }),
        );
        Value::Object(models)
    }

    /// The id of the last call of this tool with this command; a fresh one when there was none.
    fn tool_use_id(&mut self, tool: &str, command: &str) -> String {
        let known = self
            .tool_calls
            .iter()
            .rev()
            .find(|(name, called, _)| name == tool && called == command)
            .map(|(_, _, id)| id.clone());
        known.unwrap_or_else(|| format!("toolu_sim{:012x}", self.next_number() >> 80))
    }

    /// Message events name the model without its context-window suffix (`[1m]`).
    fn message_model(&self) -> &str {
        match self.model.split_once('[') {
            Some((model, _)) => model,
            None => &self.model,
        }
    }

    /// A fresh 128-bit number: FNV-1a over the session id and the count so far.
    fn next_number(&mut self) -> u128 {
        self.issued += 1;
        let hash = |seed: u64| {
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
            for byte in self.session_id.bytes().chain(self.issued.to_le_bytes()) {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            hash
        };
        (u128::from(hash(1)) << 64) | u128::from(hash(2))
    }

    /// A version-4-shaped UUID, `8-4-4-4-12` lower-case hex.
    fn next_uuid(&mut self) -> String {
        let number = self.next_number();
        let number = (number & !(0xf << 76)) | (0x4 << 76);
        let number = (number & !(0x3 << 62)) | (0x2 << 62);
        let hex = format!("{number:032x}");
        format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }
}

/// A Bash-like tool input: the command, and the description when there is one.
fn tool_input(command: &str, description: Option<&str>) -> Value {
    match description {
        Some(description) => json!({ "command": command, "description": description }),
        None => json!({ "command": command }),
    }
}

/// Dollars as Claude prints them: a whole `0` when nothing was spent.
fn cost(dollars: f64) -> Value {
    if dollars == 0.0 {
        json!(0)
    } else {
        json!(dollars)
    }
}

fn result_usage(result: &JsonResult) -> Value {
    json!({
        "input_tokens": result.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": result.cache_read_tokens,
        "output_tokens": result.output_tokens,
        "server_tool_use": { "web_search_requests": 0, "web_fetch_requests": 0 },
        "service_tier": "standard",
        "cache_creation": { "ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0 },
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
    })
}

#[cfg(test)]
#[path = "tests/stream_json.rs"]
mod tests;
