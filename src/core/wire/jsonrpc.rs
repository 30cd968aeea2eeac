//! JSON-RPC 2.0's error object and its standard codes, shared by ACP (herd reads agents'
//! errors, leniently) and the control socket (herd writes them). Pure.

use serde_json::{Value, json};

/// The request is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON, but not a request.
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A response's error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The error object of a response someone else wrote: missing fields read as 0, `(no
    /// message)`, none.
    pub fn from_json(error: &Value) -> RpcError {
        RpcError {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
                .to_string(),
            data: error.get("data").filter(|d| !d.is_null()).cloned(),
        }
    }

    /// The spec's object: `code`, `message` and `data` when there is any.
    pub fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }

    /// `code: message (data)` on one line, for evidence.
    pub fn describe(&self) -> String {
        let mut text = format!("{}: {}", self.code, self.message.trim());
        if let Some(data) = &self.data {
            let data = match data {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if !data.is_empty() && !self.message.contains(&data) {
                text.push_str(&format!(" ({data})"));
            }
        }
        text.replace(['\n', '\r'], " ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_describes_the_error_object() {
        let cases = [
            (
                json!({"code": -32000, "message": "Authentication required", "data": "401"}),
                "-32000: Authentication required (401)",
                json!({"code": -32000, "message": "Authentication required", "data": "401"}),
            ),
            (
                json!({"code": -32603, "message": "quota exhausted", "data": null}),
                "-32603: quota exhausted",
                json!({"code": -32603, "message": "quota exhausted"}),
            ),
            (
                json!({"message": "line\none", "data": {"status": 429}}),
                "0: line one ({\"status\":429})",
                json!({"code": 0, "message": "line\none", "data": {"status": 429}}),
            ),
            (
                json!({"code": 1, "message": "limit 429 hit", "data": "429"}),
                "1: limit 429 hit",
                json!({"code": 1, "message": "limit 429 hit", "data": "429"}),
            ),
            (
                json!({}),
                "0: (no message)",
                json!({"code": 0, "message": "(no message)"}),
            ),
        ];
        for (wire, described, written) in cases {
            let error = RpcError::from_json(&wire);
            assert_eq!(error.describe(), described, "{wire}");
            assert_eq!(error.to_json(), written, "{wire}");
        }
        assert_eq!(
            RpcError::new(INVALID_PARAMS, "bad").to_json(),
            json!({"code": -32602, "message": "bad"})
        );
    }
}
