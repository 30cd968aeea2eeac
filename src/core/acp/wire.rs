//! The ACP messages herd builds, and the results it reads by the spec's shape, as the types of
//! `agent-client-protocol-schema` (pinned, protocol version 1): the crate owns the wire's
//! field names and shapes, herd's session owns what to send when.
//!
//! Built here: `initialize`, `authenticate`, `session/new`, `session/load`, `session/prompt`,
//! `session/cancel` and the answers to `session/request_permission` (in `permission`). Read
//! here: `session/new`'s result. The agent's `session/update`s are read as the crate's
//! `SessionUpdate` in `transcript`. Where herd reads the agent's messages more leniently than
//! the crate would, it keeps reading raw JSON; `mod.rs` lists those places and why. Pure.

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AGENT_METHOD_NAMES, AuthenticateRequest, CLIENT_METHOD_NAMES, CancelNotification,
    ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation, InitializeRequest,
    LoadSessionRequest, NewSessionRequest, NewSessionResponse, PromptRequest, TextContent,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// ACP's version herd speaks: the schema crate's version 1, the one every adapter answers.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V1;

pub const INITIALIZE: &str = AGENT_METHOD_NAMES.initialize;
pub const AUTHENTICATE: &str = AGENT_METHOD_NAMES.authenticate;
pub const SESSION_NEW: &str = AGENT_METHOD_NAMES.session_new;
pub const SESSION_LOAD: &str = AGENT_METHOD_NAMES.session_load;
pub const SESSION_PROMPT: &str = AGENT_METHOD_NAMES.session_prompt;
pub const SESSION_CANCEL: &str = AGENT_METHOD_NAMES.session_cancel;
pub const SESSION_UPDATE: &str = CLIENT_METHOD_NAMES.session_update;
pub const REQUEST_PERMISSION: &str = CLIENT_METHOD_NAMES.session_request_permission;

/// A message's params as JSON. The crate's types are plain structs with string keys, which
/// `serde_json` always serializes; `Null` is never sent in practice.
pub(super) fn to_json(message: &impl Serialize) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

/// `initialize`: herd offers the agent no file system and no terminal of its own (the agent
/// uses its own tools, which herd's guard judges through permission requests). The crate also
/// writes the spec's default `auth: {terminal: false}`: herd runs no terminal login either.
pub fn initialize() -> Value {
    let capabilities = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(false)
            .write_text_file(false))
        .terminal(false);
    to_json(
        &InitializeRequest::new(PROTOCOL_VERSION)
            .client_capabilities(capabilities)
            .client_info(Implementation::new("herd", env!("CARGO_PKG_VERSION"))),
    )
}

pub fn authenticate(method_id: &str) -> Value {
    to_json(&AuthenticateRequest::new(method_id.to_string()))
}

/// `session/new` in the task's folder, without MCP servers.
pub fn new_session(cwd: &str) -> Value {
    to_json(&NewSessionRequest::new(cwd))
}

/// `session/load` of an earlier session, in the task's folder.
pub fn load_session(session_id: &str, cwd: &str) -> Value {
    to_json(&LoadSessionRequest::new(session_id.to_string(), cwd))
}

/// `session/prompt` with one text block.
pub fn prompt(session_id: &str, text: &str) -> Value {
    let block = ContentBlock::Text(TextContent::new(text));
    to_json(&PromptRequest::new(session_id.to_string(), vec![block]))
}

pub fn cancel(session_id: &str) -> Value {
    to_json(&CancelNotification::new(session_id.to_string()))
}

/// The session's id in `session/new`'s result; `None` when the result is not the spec's
/// shape (no `sessionId`).
pub fn new_session_id(result: &Value) -> Option<String> {
    let response = NewSessionResponse::deserialize(result).ok()?;
    Some(response.session_id.0.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn builds_the_requests_herd_sends_in_the_specs_shape() {
        assert_eq!(
            initialize(),
            json!({
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": false, "writeTextFile": false},
                    "terminal": false,
                    "auth": {"terminal": false},
                },
                "clientInfo": {"name": "herd", "version": env!("CARGO_PKG_VERSION")},
            })
        );
        assert_eq!(
            new_session("/work/task"),
            json!({"cwd": "/work/task", "mcpServers": []})
        );
        assert_eq!(
            load_session("s1", "/work/task"),
            json!({"mcpServers": [], "cwd": "/work/task", "sessionId": "s1"})
        );
        assert_eq!(
            prompt("s1", "Do it"),
            json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "Do it"}]})
        );
        assert_eq!(cancel("s1"), json!({"sessionId": "s1"}));
        assert_eq!(
            authenticate("gemini-api-key"),
            json!({"methodId": "gemini-api-key"})
        );
    }

    #[test]
    fn reads_the_session_id_of_session_new() {
        let cases = [
            (json!({"sessionId": "s1"}), Some("s1")),
            (
                json!({"sessionId": "s2", "modes": {"bogus": true}}),
                Some("s2"),
            ),
            (json!({}), None),
            (json!({"sessionId": 7}), None),
            (Value::Null, None),
        ];
        for (result, id) in cases {
            assert_eq!(new_session_id(&result).as_deref(), id, "{result}");
        }
    }
}
