//! The ACP messages herd builds and the results it reads, as the types of
//! `agent-client-protocol-schema` (pinned, protocol version 1): the crate owns the shapes, herd's
//! session what to send when. Where herd must read more leniently it reads raw JSON (`mod.rs`
//! lists where and why). Pure.

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AGENT_METHOD_NAMES, AuthCapabilities, AuthenticateRequest, CLIENT_METHOD_NAMES,
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation,
    InitializeRequest, LoadSessionRequest, NewSessionRequest, NewSessionResponse, PromptRequest,
    SessionConfigKind, SessionConfigOptionCategory, SessionModeState, SessionUpdate,
    SetSessionModeRequest, TextContent,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// ACP's version herd speaks: the schema crate's version 1, the one every adapter answers.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V1;

pub const INITIALIZE: &str = AGENT_METHOD_NAMES.initialize;
pub const AUTHENTICATE: &str = AGENT_METHOD_NAMES.authenticate;
pub const SESSION_NEW: &str = AGENT_METHOD_NAMES.session_new;
pub const SESSION_LOAD: &str = AGENT_METHOD_NAMES.session_load;
pub const SESSION_SET_MODE: &str = AGENT_METHOD_NAMES.session_set_mode;
pub const SESSION_PROMPT: &str = AGENT_METHOD_NAMES.session_prompt;
pub const SESSION_CANCEL: &str = AGENT_METHOD_NAMES.session_cancel;
pub const SESSION_UPDATE: &str = CLIENT_METHOD_NAMES.session_update;
pub const REQUEST_PERMISSION: &str = CLIENT_METHOD_NAMES.session_request_permission;

/// A message's params as JSON (the crate's structs always serialize).
pub(super) fn to_json(message: &impl Serialize) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

/// `initialize`: no file system and no terminal offered (the agent's own tools are judged through
/// permission requests); only the agent's terminal login, which `herd acp login` runs.
pub fn initialize() -> Value {
    let capabilities = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(false)
            .write_text_file(false))
        .terminal(false)
        .auth(AuthCapabilities::new().terminal(true));
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

/// `session/set_mode`: the session's mode (for the adapters, its permission mode) by id.
pub fn set_mode(session_id: &str, mode_id: &str) -> Value {
    to_json(&SetSessionModeRequest::new(
        session_id.to_string(),
        mode_id.to_string(),
    ))
}

/// The session modes an agent offers in `session/new`'s or `session/load`'s result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modes {
    /// The mode the session is in (`currentModeId`).
    pub current: String,
    /// The ids of the modes it offers, in its order.
    pub offered: Vec<String>,
}

/// The `modes` of `session/new`'s or `session/load`'s result, when in the spec's shape.
pub fn session_modes(result: &Value) -> Option<Modes> {
    let state = SessionModeState::deserialize(result.get("modes")?).ok()?;
    Some(Modes {
        current: state.current_mode_id.0.to_string(),
        offered: state
            .available_modes
            .iter()
            .map(|mode| mode.id.0.to_string())
            .collect(),
    })
}

/// The mode a `session/update` says the session is in now (`current_mode_update`, or a mode
/// `config_option_update` as claude-agent-acp answers `set_mode`).
pub fn mode_of_update(update: &Value) -> Option<String> {
    match SessionUpdate::deserialize(update).ok()? {
        SessionUpdate::CurrentModeUpdate(changed) => Some(changed.current_mode_id.0.to_string()),
        SessionUpdate::ConfigOptionUpdate(options) => {
            options.config_options.iter().find_map(|option| {
                let is_mode = option.category == Some(SessionConfigOptionCategory::Mode);
                match &option.kind {
                    SessionConfigKind::Select(select) if is_mode => {
                        Some(select.current_value.0.to_string())
                    }
                    _ => None,
                }
            })
        }
        _ => None,
    }
}

/// `session/prompt` with one text block.
pub fn prompt(session_id: &str, text: &str) -> Value {
    let block = ContentBlock::Text(TextContent::new(text));
    to_json(&PromptRequest::new(session_id.to_string(), vec![block]))
}

pub fn cancel(session_id: &str) -> Value {
    to_json(&CancelNotification::new(session_id.to_string()))
}

/// The session's id in `session/new`'s result, when in the spec's shape.
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
                    "auth": {"terminal": true},
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
            set_mode("s1", "default"),
            json!({"sessionId": "s1", "modeId": "default"})
        );
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

    /// The `modes` of claude-agent-acp 0.101.0's `session/new` answer (it starts in `auto`) and
    /// codex-acp 2.6.0's (it starts in `agent`, "Auto review"), as they sent them.
    #[test]
    fn reads_the_modes_an_agent_offers_and_starts_in() {
        let claude = json!({"sessionId": "7ea9", "modes": {"currentModeId": "auto",
            "availableModes": [
                {"id": "default", "name": "Manual", "description": "Always ask before making changes"},
                {"id": "acceptEdits", "name": "Accept edits", "description": "Automatically accept all file edits"},
                {"id": "plan", "name": "Plan", "description": "Create a plan before making changes"},
                {"id": "auto", "name": "Auto", "description": "Claude handles permission decisions"},
                {"id": "bypassPermissions", "name": "Bypass permissions", "description": "Accepts all permissions"}]}});
        let modes = session_modes(&claude).unwrap();
        assert_eq!(modes.current, "auto");
        assert_eq!(
            modes.offered,
            [
                "default",
                "acceptEdits",
                "plan",
                "auto",
                "bypassPermissions"
            ]
        );
        let codex = json!({"sessionId": "01a2", "modes": {"currentModeId": "agent",
            "availableModes": [
                {"id": "read-only", "name": "Read-only", "description": "Requires approval to edit files and access the internet."},
                {"id": "workspace-write", "name": "Workspace access"},
                {"id": "agent", "name": "Auto review", "description": "Only ask for actions detected as potentially unsafe"},
                {"id": "agent-full-access", "name": "Full access"}]}});
        assert_eq!(session_modes(&codex).unwrap().offered[0], "read-only");
        assert_eq!(session_modes(&json!({"sessionId": "s"})), None);
        assert_eq!(session_modes(&json!({"modes": {"bogus": 1}})), None);
    }

    /// claude-agent-acp 0.101.0 confirms `session/set_mode` with a `config_option_update`
    /// (trimmed here to its mode option and one other); the spec's `current_mode_update` too.
    #[test]
    fn reads_the_mode_a_session_update_reports() {
        let claude = json!({"sessionUpdate": "config_option_update", "configOptions": [
            {"id": "mode", "name": "Mode", "description": "Session permission mode", "category": "mode",
             "type": "select", "currentValue": "default", "options": [
                {"value": "default", "name": "Manual"}, {"value": "auto", "name": "Auto"}]},
            {"id": "fast", "name": "Fast mode", "category": "model_config", "type": "select",
             "currentValue": "off", "options": [{"value": "on", "name": "On"}, {"value": "off", "name": "Off"}]}]});
        assert_eq!(mode_of_update(&claude).as_deref(), Some("default"));
        let spec = json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"});
        assert_eq!(mode_of_update(&spec).as_deref(), Some("plan"));
        let text = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}});
        assert_eq!(mode_of_update(&text), None);
    }
}
