//! JSON-RPC 2.0 as ACP uses it over stdio: one message per line, requests both ways. Each line
//! is a request, a notification, a response or garbage (reported, never fatal). Pure.

use serde_json::{Map, Value, json};
use thiserror::Error;

pub use crate::core::wire::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};

/// One message from the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// The agent asks herd something and waits for the answer.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// The agent tells herd something (`session/update`).
    Notification { method: String, params: Value },
    /// The answer to one of herd's requests.
    Response {
        id: Value,
        outcome: Result<Value, RpcError>,
    },
}

/// Why a line from the agent is not a JSON-RPC message, in a few words.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LineError {
    #[error("not JSON ({detail})")]
    NotJson { detail: String },
    #[error("JSON but not an object")]
    NotAnObject,
    #[error("a response with neither result nor error")]
    EmptyResponse,
    #[error("JSON without method or id")]
    NoMethodOrId,
}

/// Reads one line. `Err` says why it is not a JSON-RPC message.
pub fn parse_line(line: &str) -> Result<Message, LineError> {
    let value: Value = serde_json::from_str(line.trim()).map_err(|e| LineError::NotJson {
        detail: e.to_string().replace('\n', " "),
    })?;
    let Value::Object(object) = value else {
        return Err(LineError::NotAnObject);
    };
    from_object(object)
}

fn from_object(mut object: Map<String, Value>) -> Result<Message, LineError> {
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = object.remove("id").filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => Ok(Message::Request {
            id,
            method,
            params: object.remove("params").unwrap_or(Value::Null),
        }),
        (Some(method), None) => Ok(Message::Notification {
            method,
            params: object.remove("params").unwrap_or(Value::Null),
        }),
        (None, Some(id)) => {
            if let Some(error) = object.remove("error") {
                Ok(Message::Response {
                    id,
                    outcome: Err(RpcError::from_json(&error)),
                })
            } else if let Some(result) = object.remove("result") {
                Ok(Message::Response {
                    id,
                    outcome: Ok(result),
                })
            } else {
                Err(LineError::EmptyResponse)
            }
        }
        (None, None) => Err(LineError::NoMethodOrId),
    }
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": RpcError::new(code, message).to_json()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_requests_notifications_responses_and_garbage_apart() {
        let request = parse_line(
            r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"a":1}}"#,
        );
        assert!(
            matches!(request, Ok(Message::Request { ref method, .. }) if method == "session/request_permission")
        );
        let note = parse_line(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#);
        assert!(matches!(note, Ok(Message::Notification { .. })));
        let ok = parse_line(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#);
        assert!(matches!(ok, Ok(Message::Response { outcome: Ok(_), .. })));
        let failed = parse_line(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"Authentication required","data":"401"}}"#,
        );
        let Ok(Message::Response {
            outcome: Err(error),
            ..
        }) = failed
        else {
            panic!("{failed:?}")
        };
        assert_eq!(error.describe(), "-32000: Authentication required (401)");
        for garbage in [
            "",
            "hello",
            "[1,2]",
            "{\"id\":1}",
            "{\"jsonrpc\":\"2.0\"}",
            "{\"id\":",
        ] {
            assert!(parse_line(garbage).is_err(), "{garbage:?}");
        }
    }
}
