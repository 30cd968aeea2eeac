//! How an ACP session ended, as facts, and those facts as the Claude-style `result` event the
//! stream reader already judges (success with the agent's text, or an error with its kind and
//! status, plus denials and answers). The verdict stays `classify`'s. Pure.

use agent_client_protocol_schema::v1::ErrorCode;
use regex::Regex;
use serde_json::{Value, json};

use super::audit;
use super::audit::Answer;
use super::permission::as_denial;
use super::rpc::RpcError;
use crate::core::guard::Request;

/// The result event's list of tool calls that ran without asking.
pub const UNASKED_FIELD: &str = "unasked_tools";
/// The result event's session mode facts (the attempt's `stream.acp_mode`).
pub const MODE_FIELD: &str = "acp_mode";

/// The facts of a finished session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub success: bool,
    /// The stop reason, or the failure's kind (`authentication_failed`, `agent_exited`, …).
    pub kind: String,
    /// What went wrong, in the agent's words where it gave any.
    pub message: String,
    /// The agent's message text over the whole session.
    pub text: String,
    pub status: Option<u16>,
    pub session_id: Option<String>,
    pub denials: Vec<Request>,
    /// Every answer to a permission request, automatic or by the operator.
    pub answers: Vec<Answer>,
    /// Tool calls that ran unasked where the policy would have asked.
    pub unasked: Vec<String>,
    /// The session's permission mode: offered, started in, set by herd, current.
    pub mode: Option<ModeFacts>,
}

impl Outcome {
    pub fn failed(kind: &str, message: &str) -> Outcome {
        Outcome {
            kind: kind.to_string(),
            message: message.to_string(),
            status: http_status(message),
            ..Outcome::default()
        }
    }

    /// A turn that ended with `stopReason`: only `end_turn` is a finished turn.
    pub fn stopped(stop_reason: &str) -> Outcome {
        if stop_reason == "end_turn" {
            return Outcome {
                success: true,
                kind: stop_reason.to_string(),
                ..Outcome::default()
            };
        }
        let message = format!("the turn ended with stopReason {stop_reason}");
        Outcome::failed(&format!("stop_{stop_reason}"), &message)
    }

    /// A JSON-RPC error answering `during`: its kind from ACP's code or the message, its HTTP
    /// status from its data or its text.
    pub fn from_error(during: &str, error: &RpcError) -> Outcome {
        let described = error.describe();
        let lower = described.to_ascii_lowercase();
        let auth_required = i32::try_from(error.code)
            .is_ok_and(|code| ErrorCode::from(code) == ErrorCode::AuthRequired);
        let by_class = error.data.as_ref().and_then(kind_of_error_class);
        let kind = if auth_required {
            "authentication_failed"
        } else if let Some(kind) = by_class {
            kind
        } else if lower.contains("auth") && lower.contains("required") {
            "authentication_failed"
        } else if [
            "rate limit",
            "rate_limit",
            "quota",
            "exhausted",
            "usage limit",
            "too many requests",
        ]
        .iter()
        .any(|w| lower.contains(w))
        {
            "rate_limit"
        } else {
            "error_during_execution"
        };
        let mut outcome = Outcome::failed(kind, &format!("{during} failed: {described}"));
        if let Some(status) = error.data.as_ref().and_then(status_in_data) {
            outcome.status = Some(status);
        }
        outcome
    }

    /// The event the engine's stream reader takes as the attempt's final result.
    pub fn event(&self) -> Value {
        // Each refusal with its reason, so the verdict's evidence says why.
        let denials: Vec<Value> = self
            .denials
            .iter()
            .map(|request| {
                let mut denial = as_denial(request);
                let reason = self
                    .answers
                    .iter()
                    .filter(|a| a.request.as_ref() == Some(request))
                    .find_map(Answer::refusal);
                if let Some(reason) = reason {
                    denial["reason"] = json!(reason);
                }
                denial
            })
            .collect();
        let mut event = json!({
            "type": "result",
            "subtype": if self.success { "success" } else { self.kind.as_str() },
            "is_error": !self.success,
            "result": if self.success { &self.text } else { &self.message },
            "permission_denials": denials,
        });
        event[audit::FIELD] = self.answers.iter().map(audit::to_value).collect();
        if !self.unasked.is_empty() {
            event[UNASKED_FIELD] = json!(self.unasked);
        }
        if let Some(mode) = &self.mode {
            event[MODE_FIELD] = mode.to_value();
        }
        if let Some(id) = &self.session_id {
            event["session_id"] = json!(id);
        }
        if let Some(status) = self.status {
            event["api_error_status"] = json!(status);
        }
        event
    }
}

/// An HTTP error status written in a message (`429 Too Many Requests`, `status: 401`).
fn http_status(text: &str) -> Option<u16> {
    let pattern = Regex::new(r"\b([45]\d\d)\b").ok()?;
    pattern
        .captures_iter(text)
        .filter_map(|c| c.get(1)?.as_str().parse::<u16>().ok())
        .find(|s| matches!(s, 401 | 402 | 403 | 429 | 500..=599))
}

/// The kind an agent's own error class names (codex-acp's `codexErrorInfo`).
fn kind_of_error_class(data: &Value) -> Option<&'static str> {
    let class = data.get("codexErrorInfo")?;
    let name = match class {
        Value::String(name) => name.as_str(),
        Value::Object(object) => object.keys().next()?.as_str(),
        _ => return None,
    };
    match name {
        "unauthorized" => Some("authentication_failed"),
        "usageLimitExceeded" | "rateLimitExceeded" => Some("rate_limit"),
        "serverOverloaded"
        | "internalServerError"
        | "httpConnectionFailed"
        | "responseStreamConnectionFailed"
        | "responseStreamDisconnected"
        | "responseTooManyFailedAttempts" => Some("server_error"),
        _ => None,
    }
}

/// An HTTP status in an error's data, at its top or nested in an object (codex-acp's
/// `{"codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": 503}}}`).
fn status_in_data(data: &Value) -> Option<u16> {
    status_within(data, 3)
}

fn status_within(data: &Value, depth: u8) -> Option<u16> {
    let here = [
        "status",
        "statusCode",
        "code",
        "httpStatus",
        "httpStatusCode",
    ]
    .iter()
    .find_map(|key| data.get(key).and_then(Value::as_u64))
    .and_then(|n| u16::try_from(n).ok())
    .filter(|s| (400..600).contains(s));
    if here.is_some() || depth == 0 {
        return here;
    }
    data.as_object()?
        .values()
        .filter(|v| v.is_object())
        .find_map(|v| status_within(v, depth - 1))
}

/// What herd knows of the session's mode, for the attempt's facts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModeFacts {
    /// The mode herd was told to set (the task's or the profile's `acp_mode`).
    pub wanted: Option<String>,
    /// The mode the agent opened the session in.
    pub started_in: Option<String>,
    /// The modes the agent offers.
    pub offered: Vec<String>,
    /// The mode the session is in, as last confirmed.
    pub current: Option<String>,
    /// herd's `session/set_mode` was accepted.
    pub set_by_herd: bool,
}

impl ModeFacts {
    /// As the `acp_mode` of the session's result event (and so of the attempt's facts).
    pub fn to_value(&self) -> Value {
        json!({
            "wanted": self.wanted,
            "started_in": self.started_in,
            "offered": self.offered,
            "current": self.current,
            "set_by_herd": self.set_by_herd,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(message: &str, data: Option<Value>) -> RpcError {
        RpcError {
            code: -32603,
            message: message.into(),
            data,
        }
    }

    #[test]
    fn errors_become_kinds_and_statuses_the_stream_judge_knows() {
        let auth = Outcome::from_error("session/new", &error("Authentication required", None));
        assert_eq!(auth.kind, "authentication_failed");
        let quota = Outcome::from_error(
            "session/prompt",
            &error("[429 Too Many Requests] Resource has been exhausted", None),
        );
        assert_eq!(
            (quota.kind.as_str(), quota.status),
            ("rate_limit", Some(429))
        );
        let key = Outcome::from_error(
            "session/prompt",
            &error(
                "Internal error",
                Some(json!({"status": 401, "message": "bad key"})),
            ),
        );
        assert_eq!(key.status, Some(401));
        let event = key.event();
        assert_eq!(event["is_error"], true);
        assert_eq!(event["api_error_status"], 401);
        assert!(
            event["result"]
                .as_str()
                .unwrap()
                .starts_with("session/prompt failed")
        );
    }

    /// codex-acp 2.6.0's answers to a 401 and a 429 from the model API (captured against the
    /// mock API): ACP's code decides auth; Codex's error class rides in the data. A status
    /// nested in the class is read too, in the shape codex-acp's own reader expects
    /// (`getHttpStatusCode`: the class's first value's `httpStatusCode`).
    #[test]
    fn acp_error_codes_and_the_datas_statuses_decide() {
        let auth = RpcError {
            code: -32000,
            message: "Authentication required".into(),
            data: None,
        };
        assert_eq!(
            Outcome::from_error("session/prompt", &auth).kind,
            "authentication_failed"
        );
        let unnamed = RpcError {
            code: -32000,
            message: "Unauthorized".into(),
            data: None,
        };
        assert_eq!(
            Outcome::from_error("session/prompt", &unnamed).kind,
            "authentication_failed"
        );
        let quota = RpcError {
            code: -32603,
            message: "Internal error".into(),
            data: Some(
                json!({"message": "Quota exceeded. Check your plan and billing details.",
                "codexErrorInfo": "usageLimitExceeded"}),
            ),
        };
        assert_eq!(
            Outcome::from_error("session/prompt", &quota).kind,
            "rate_limit"
        );
        let overloaded = RpcError {
            code: -32603,
            message: "Internal error".into(),
            data: Some(json!({"message": "stream disconnected",
                "codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": 503}}})),
        };
        assert_eq!(
            Outcome::from_error("session/prompt", &overloaded).status,
            Some(503)
        );
    }

    #[test]
    fn only_end_turn_is_a_finished_turn() {
        let mut done = Outcome::stopped("end_turn");
        done.text = "all good DONE".into();
        let event = done.event();
        assert_eq!(
            (event["subtype"].as_str(), event["result"].as_str()),
            (Some("success"), Some("all good DONE"))
        );
        let cut = Outcome::stopped("max_tokens");
        assert!(!cut.success);
        assert_eq!(cut.event()["subtype"], "stop_max_tokens");
        assert_eq!(
            Outcome::stopped("refusal").message,
            "the turn ended with stopReason refusal"
        );
    }
}
