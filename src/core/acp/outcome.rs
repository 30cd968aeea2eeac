//! How an ACP session ended, as facts, and those facts as the one structured event herd's
//! stream reader already judges (a Claude-style `result`): success with the agent's text (the
//! engine looks for the marker in it), or an error with its kind and HTTP status, plus the
//! requests refused on the way (`permission_denials`) and every answer given (`audit`).
//!
//! Owns the mapping from stop reasons and JSON-RPC errors to those facts; the verdict itself
//! stays `classify`'s and `stream::judge`'s, as for every structured agent. Pure.

use regex::Regex;
use serde_json::{Value, json};

use super::audit;
use super::audit::Answer;
use super::permission::as_denial;
use super::rpc::RpcError;
use super::session::ModeFacts;
use crate::core::guard::Request;

/// The result event's list of tool calls that ran without asking (the stream reader's
/// `unasked_tools`).
pub const UNASKED_FIELD: &str = "unasked_tools";
/// The result event's session mode facts (the attempt's `stream.acp_mode`).
pub const MODE_FIELD: &str = "acp_mode";

/// The facts of a finished session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub success: bool,
    /// The stop reason, or the failure's kind (`authentication_failed`, `rate_limit`,
    /// `agent_exited`, …).
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
    /// Tool calls that ran without asking where the task's policy would have asked
    /// (`the agent ran Bash(touch x) without asking: …`).
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

    /// A JSON-RPC error answering `during`: its kind from ACP's auth error or the words of the
    /// message, its HTTP status from its text or data.
    pub fn from_error(during: &str, error: &RpcError) -> Outcome {
        let described = error.describe();
        let lower = described.to_ascii_lowercase();
        let kind = if lower.contains("auth") && lower.contains("required") {
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

fn status_in_data(data: &Value) -> Option<u16> {
    ["status", "statusCode", "code", "httpStatus"]
        .iter()
        .find_map(|key| data.get(key).and_then(Value::as_u64))
        .and_then(|n| u16::try_from(n).ok())
        .filter(|s| (400..600).contains(s))
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
