//! Claude Code's hooks as herd uses them (`PreToolUse`, `PermissionRequest`, `Stop`,
//! `StopFailure`, checked against 2.1.332) and Gemini CLI's `BeforeTool` (0.61.0, deny only):
//! the settings that route them to herd, what a call says, and herd's answer in the CLI's JSON
//! (an empty object is no decision). The decision is the guard's. Pure.

use serde_json::{Value, json};

use crate::core::guard::shell_words;
use crate::core::guard::{Decision, Request, tool_use};
use crate::core::task::FailureType;

/// The environment variables that tell `herd hook` where the running herd listens.
pub const SOCKET_ENV: &str = "HERD_HOOK_SOCKET";
pub const TOKEN_ENV: &str = "HERD_HOOK_TOKEN";

/// Seconds the CLI waits for one hook call (bounds a herd that is gone).
const HOOK_TIMEOUT_SEC: u64 = 30;

/// Where in the CLI's handling of a tool call a hook was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStage {
    /// Before every tool call, whatever the permission mode.
    PreToolUse,
    /// Behind a permission dialog the CLI is about to show.
    PermissionRequest,
    /// Gemini CLI's hook before every tool call: herd only denies there.
    BeforeTool,
}

impl ToolStage {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStage::PreToolUse => "PreToolUse",
            ToolStage::PermissionRequest => "PermissionRequest",
            ToolStage::BeforeTool => "BeforeTool",
        }
    }
}

/// One hook call, read.
#[derive(Debug, Clone, PartialEq)]
pub enum HookCall {
    /// A tool call to judge.
    Tool { stage: ToolStage, request: Request },
    /// The turn ended normally.
    TurnEnded,
    /// The turn ended on an API error: its class (`rate_limit`…) and details.
    TurnFailed {
        error: String,
        details: Option<String>,
    },
    /// Any other event (answered with no decision).
    Other { event: String },
}

/// What a hook's input JSON says.
pub fn read(input: &Value) -> HookCall {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
    let event = text("hook_event_name").unwrap_or_default();
    let tool = |stage| {
        let name = text("tool_name").unwrap_or_default();
        HookCall::Tool {
            stage,
            request: tool_use::read(&name, input.get("tool_input")),
        }
    };
    match event.as_str() {
        "PreToolUse" => tool(ToolStage::PreToolUse),
        "PermissionRequest" => tool(ToolStage::PermissionRequest),
        "BeforeTool" => tool(ToolStage::BeforeTool),
        "Stop" => HookCall::TurnEnded,
        // The error's text is the turn's last message, `error_details` when it has more; the
        // message says when a spent limit resets.
        "StopFailure" => {
            let said = [text("error_details"), text("last_assistant_message")];
            let mut parts: Vec<String> = Vec::new();
            for part in said.into_iter().flatten() {
                if !part.is_empty() && !parts.contains(&part) {
                    parts.push(part);
                }
            }
            HookCall::TurnFailed {
                error: text("error").unwrap_or_else(|| "unknown".into()),
                details: (!parts.is_empty()).then(|| parts.join(" · ")),
            }
        }
        _ => HookCall::Other { event },
    }
}

/// The failure a `StopFailure` error class names, when retrying cannot heal it soon.
pub fn failure_of(error: &str) -> Option<FailureType> {
    match error {
        "authentication_failed"
        | "oauth_org_not_allowed"
        | "account_on_hold"
        | "verification_required"
        | "cloud_credential_error" => Some(FailureType::Auth),
        "billing_error" | "rate_limit" => Some(FailureType::Quota),
        "overloaded" | "server_error" => Some(FailureType::Process),
        _ => None,
    }
}

/// herd's answer to a tool call at `stage`; `None` leaves it to the CLI's dialog.
pub fn tool_answer(stage: ToolStage, decision: &Decision) -> Option<Value> {
    let event = stage.as_str();
    match (stage, decision) {
        (_, Decision::Ask { .. }) => None,
        (ToolStage::PreToolUse, Decision::Allow { rule }) => Some(json!({
            "hookSpecificOutput": {"hookEventName": event, "permissionDecision": "allow",
                                   "permissionDecisionReason": format!("herd: allowed by {rule}")}
        })),
        (ToolStage::PreToolUse, Decision::Refuse { reason }) => Some(json!({
            "hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                   "permissionDecisionReason": refusal(reason)}
        })),
        (ToolStage::PermissionRequest, Decision::Allow { .. }) => Some(json!({
            "hookSpecificOutput": {"hookEventName": event, "decision": {"behavior": "allow"}}
        })),
        (ToolStage::PermissionRequest, Decision::Refuse { reason }) => Some(json!({
            "hookSpecificOutput": {"hookEventName": event,
                                   "decision": {"behavior": "deny", "message": refusal(reason)}}
        })),
        // Gemini's approvals stay on its screen: its hook only says no.
        (ToolStage::BeforeTool, Decision::Allow { .. }) => None,
        (ToolStage::BeforeTool, Decision::Refuse { reason }) => {
            Some(json!({"decision": "deny", "reason": refusal(reason)}))
        }
    }
}

/// What the agent is told about a refusal.
fn refusal(reason: &str) -> String {
    format!("herd refused this request: {reason}. Do not try to get around this.")
}

/// The text printed for no decision: an empty object.
pub const NO_DECISION: &str = "{}";

/// The inline settings (`claude --settings`) that route the hooks to `herd_exe hook`.
pub fn claude_settings(herd_exe: &str) -> String {
    let command = format!("{} hook", shell_words::quote(herd_exe));
    let handler = json!([{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SEC}]);
    let on_tools = json!([{"matcher": "*", "hooks": handler}]);
    let always = json!([{"hooks": handler}]);
    json!({"hooks": {
        "PreToolUse": on_tools,
        "PermissionRequest": on_tools,
        "Stop": always,
        "StopFailure": always,
    }})
    .to_string()
}

/// Gemini CLI's settings for an attempt: the user's own, with herd's `BeforeTool` hook whose
/// own environment carries the socket and token (Gemini clears secret-looking variables).
pub fn gemini_settings(
    existing: Option<&str>,
    herd_exe: &str,
    hook_env: &[(String, String)],
) -> Result<String, String> {
    let mut doc: Value = match existing.map(str::trim).filter(|t| !t.is_empty()) {
        None => json!({}),
        // Gemini allows comments in its settings files.
        Some(text) => serde_json::from_str(&crate::core::taskfile::jsonc::strip_comments(text))
            .map_err(|e| e.to_string())?,
    };
    let env: serde_json::Map<String, Value> = hook_env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let command = format!("{} hook", shell_words::quote(herd_exe));
    let ours = json!({"matcher": "*", "hooks": [{"name": "herd", "type": "command", "command": command,
                      "timeout": HOOK_TIMEOUT_SEC * 1000, "env": env}]});
    let root = doc
        .as_object_mut()
        .ok_or_else(|| "the settings are not a JSON object".to_string())?;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| "the settings' hooks are not an object".to_string())?;
    let before = hooks.entry("BeforeTool").or_insert_with(|| json!([]));
    before
        .as_array_mut()
        .ok_or_else(|| "the settings' BeforeTool hooks are not a list".to_string())?
        .push(ours);
    serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())
}

/// The settings for an attempt herd cannot reach by a hook (an agent on another host): none.
pub const NO_SETTINGS: &str = "{}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::guard::RequestKind;

    #[test]
    fn tool_calls_are_read_as_requests() {
        let input = json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "touch x", "description": "d"}, "tool_use_id": "toolu_1"});
        assert_eq!(
            read(&input),
            HookCall::Tool {
                stage: ToolStage::PreToolUse,
                request: Request::new(RequestKind::Shell {
                    command: "touch x".into()
                }),
            }
        );
        let input = json!({"hook_event_name": "PermissionRequest", "tool_name": "Write",
            "tool_input": {"file_path": "/w/a.txt", "content": "hi"}});
        assert_eq!(
            read(&input),
            HookCall::Tool {
                stage: ToolStage::PermissionRequest,
                request: Request::new(RequestKind::Write {
                    path: "/w/a.txt".into()
                }),
            }
        );
    }

    #[test]
    fn turn_ends_and_failures_are_read() {
        assert_eq!(
            read(&json!({"hook_event_name": "Stop", "stop_hook_active": false})),
            HookCall::TurnEnded
        );
        assert_eq!(
            read(
                &json!({"hook_event_name": "StopFailure", "error": "rate_limit",
                         "error_details": "429 rate_limit_error"})
            ),
            HookCall::TurnFailed {
                error: "rate_limit".into(),
                details: Some("429 rate_limit_error".into())
            }
        );
        // The message is kept beside the details: it is where a spent limit says when it
        // resets.
        assert_eq!(
            read(
                &json!({"hook_event_name": "StopFailure", "error": "rate_limit",
                         "error_details": "429",
                         "last_assistant_message": "Claude AI usage limit reached|1893553445"})
            ),
            HookCall::TurnFailed {
                error: "rate_limit".into(),
                details: Some("429 · Claude AI usage limit reached|1893553445".into())
            }
        );
        // As 2.1.332 sends it.
        assert_eq!(
            read(
                &json!({"hook_event_name": "StopFailure", "error": "authentication_failed",
                         "last_assistant_message": "Invalid API key · Fix external API key"})
            ),
            HookCall::TurnFailed {
                error: "authentication_failed".into(),
                details: Some("Invalid API key · Fix external API key".into())
            }
        );
        assert_eq!(
            read(&json!({"hook_event_name": "SessionStart"})),
            HookCall::Other {
                event: "SessionStart".into()
            }
        );
    }

    #[test]
    fn error_classes_map_to_failures() {
        let table = [
            ("authentication_failed", Some(FailureType::Auth)),
            ("oauth_org_not_allowed", Some(FailureType::Auth)),
            ("billing_error", Some(FailureType::Quota)),
            ("rate_limit", Some(FailureType::Quota)),
            ("overloaded", Some(FailureType::Process)),
            ("server_error", Some(FailureType::Process)),
            ("max_output_tokens", None),
            ("invalid_request", None),
            ("unknown", None),
        ];
        for (error, failure) in table {
            assert_eq!(failure_of(error), failure, "{error}");
        }
    }

    #[test]
    fn answers_are_in_the_clis_words() {
        let allow = Decision::Allow {
            rule: "auto_press_1".into(),
        };
        let refuse = Decision::Refuse {
            reason: "it pipes a download into a shell".into(),
        };
        let ask = Decision::Ask {
            reason: "no rule allows it".into(),
        };
        let pre = tool_answer(ToolStage::PreToolUse, &allow).unwrap();
        assert_eq!(pre["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(pre["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        let pre = tool_answer(ToolStage::PreToolUse, &refuse).unwrap();
        assert_eq!(pre["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(
            pre["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("it pipes a download into a shell")
        );
        let asked = tool_answer(ToolStage::PermissionRequest, &allow).unwrap();
        assert_eq!(asked["hookSpecificOutput"]["decision"]["behavior"], "allow");
        let asked = tool_answer(ToolStage::PermissionRequest, &refuse).unwrap();
        assert_eq!(asked["hookSpecificOutput"]["decision"]["behavior"], "deny");
        assert_eq!(tool_answer(ToolStage::PreToolUse, &ask), None);
        assert_eq!(tool_answer(ToolStage::PermissionRequest, &ask), None);
    }

    #[test]
    fn gemini_hears_a_refusal_and_nothing_else() {
        let refuse = Decision::Refuse {
            reason: "it runs a download".into(),
        };
        let answer = tool_answer(ToolStage::BeforeTool, &refuse).unwrap();
        assert_eq!(answer["decision"], "deny");
        assert!(
            answer["reason"]
                .as_str()
                .unwrap()
                .contains("it runs a download")
        );
        let allow = Decision::Allow {
            rule: "auto_press_1".into(),
        };
        assert_eq!(tool_answer(ToolStage::BeforeTool, &allow), None);
        let input = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                           "tool_input": {"command": "ls"}});
        assert_eq!(
            read(&input),
            HookCall::Tool {
                stage: ToolStage::BeforeTool,
                request: Request::new(RequestKind::Shell {
                    command: "ls".into()
                }),
            }
        );
    }

    #[test]
    fn gemini_settings_keep_the_users_own_and_add_the_hook() {
        let env = [("HERD_HOOK_SOCKET".to_string(), "/run/h.sock".to_string())];
        let existing = r#"{"security": {"auth": {"enforcedType": "gemini-api-key"}},
            "hooks": {"BeforeTool": [{"matcher": "x", "hooks": []}]}}"#;
        let text = gemini_settings(Some(existing), "/bin/herd", &env).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["security"]["auth"]["enforcedType"], "gemini-api-key");
        let list = doc["hooks"]["BeforeTool"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["hooks"][0]["command"], "/bin/herd hook");
        assert_eq!(
            list[1]["hooks"][0]["env"]["HERD_HOOK_SOCKET"],
            "/run/h.sock"
        );
        assert!(gemini_settings(None, "/bin/herd", &env).is_ok());
        let commented = "{\n  // the user's note\n  \"ui\": {\"theme\": \"ANSI\"} /* kept */\n}";
        let text = gemini_settings(Some(commented), "/bin/herd", &env).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["ui"]["theme"], "ANSI");
        assert!(doc["hooks"]["BeforeTool"].is_array());
        assert!(gemini_settings(Some("[1]"), "/bin/herd", &env).is_err());
    }

    #[test]
    fn settings_route_every_hook_to_herd() {
        let text = claude_settings("/opt/my tools/herd");
        let settings: Value = serde_json::from_str(&text).unwrap();
        for event in ["PreToolUse", "PermissionRequest", "Stop", "StopFailure"] {
            let hook = &settings["hooks"][event][0]["hooks"][0];
            assert_eq!(hook["type"], "command", "{event}");
            assert_eq!(hook["command"], "'/opt/my tools/herd' hook", "{event}");
        }
        assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "*");
        assert_eq!(settings["hooks"]["PermissionRequest"][0]["matcher"], "*");
    }
}
