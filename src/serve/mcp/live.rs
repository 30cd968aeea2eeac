//! The tools when a herd runs the tasks file: calls on its control socket through
//! `serve::control::client` (line-framed JSON-RPC 2.0; the methods and error codes are the
//! control API's, `serve::control::protocol`), one connection per call. herd's error codes become tool errors
//! that say what, why and how to fix it.

use std::path::Path;

use serde_json::Value;

use super::tools::ToolError;
use crate::serve::control::client::{Client, ClientError};
use crate::serve::control::protocol::{
    INTERNAL_ERROR, INVALID_TASK, METHOD_NOT_FOUND as UNKNOWN_METHOD, NO_SUCH_TASK, REFUSED,
    STALE_PROMPT,
};

/// What a call on the control socket came to, short of a result.
#[derive(Debug)]
pub(super) enum CallError {
    /// The socket cannot be reached or answered nothing usable (the herd may be ending).
    Unreachable(String),
    /// herd answered with a JSON-RPC error.
    Answered {
        code: i64,
        message: String,
        data: Value,
    },
}

impl CallError {
    pub(super) fn is_unknown_method(&self) -> bool {
        matches!(self, CallError::Answered { code, .. } if *code == UNKNOWN_METHOD)
    }

    /// The error as the tool says it, for `what` (e.g. "change task \"a\"").
    pub(super) fn into_tool_error(self, what: &str) -> ToolError {
        match self {
            CallError::Unreachable(why) => ToolError::new(
                format!("cannot {what}: the running herd did not answer"),
                why,
                "try again in a moment (the herd may be ending; once it has, the tools work on \
                 the file itself)",
            ),
            CallError::Answered {
                code,
                message,
                data,
            } => answered(what, code, message, &data),
        }
    }
}

fn answered(what: &str, code: i64, message: String, data: &Value) -> ToolError {
    let what = format!("cannot {what}");
    match code {
        NO_SUCH_TASK => ToolError::new(
            what,
            message,
            "list_tasks shows the task ids; add_task adds a task",
        ),
        REFUSED => ToolError::new(
            what,
            message,
            "the message says what herd allows now; get_task shows the task's state",
        ),
        STALE_PROMPT => ToolError::new(
            what,
            message,
            "that dialog is gone or was answered; get_task shows the prompt waiting now, if \
             any, with its own prompt_id",
        ),
        INVALID_TASK => {
            let problems: Vec<String> = data
                .get("problems")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let why = if problems.is_empty() {
                message
            } else {
                format!("{message}: {}", problems.join("; "))
            };
            ToolError::new(
                what,
                why,
                "nothing was written; change the fields these problems name and try again",
            )
        }
        code => ToolError::new(
            what,
            format!("herd answered {code}: {message}"),
            "see runs/herd.log of the running herd",
        ),
    }
}

/// Calls `method` with `params` on the control socket at `socket` (`serve::control::client`);
/// its result.
pub(super) fn call(socket: &Path, method: &str, params: Value) -> Result<Value, CallError> {
    let unreachable = |error: ClientError| CallError::Unreachable(error.to_string());
    let mut client = Client::connect(socket).map_err(unreachable)?;
    let error = match client.call(method, &params).map_err(unreachable)? {
        Ok(result) => return Ok(result),
        Err(error) => error,
    };
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_string();
    // A herd that is ending answers that it cannot serve the call: as good as gone.
    if code == INTERNAL_ERROR {
        return Err(CallError::Unreachable(message));
    }
    Err(CallError::Answered {
        code,
        message,
        data: error.get("data").cloned().unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;

    /// A control socket that answers each request line with `answer(request)`.
    fn serve(answer: fn(&Value) -> Vec<Value>) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.sock");
        let listener = UnixListener::bind(&path).expect("bind");
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_ok() && !line.is_empty() {
                    let request: Value = serde_json::from_str(&line).expect("json");
                    let mut out = &stream;
                    for reply in answer(&request) {
                        let _ = writeln!(out, "{reply}");
                    }
                }
            }
        });
        (dir, path)
    }

    #[test]
    fn a_result_is_read_past_notifications() {
        let (_dir, socket) = serve(|request| {
            vec![
                json!({"jsonrpc": "2.0", "method": "event", "params": {}}),
                json!({"jsonrpc": "2.0", "id": request["id"], "result": {"echo": request["method"]}}),
            ]
        });
        let result = call(&socket, "tasks.get", json!({"task_id": "a"})).expect("result");
        assert_eq!(result, json!({"echo": "tasks.get"}));
    }

    #[test]
    fn herd_errors_become_what_why_and_fix() {
        let (_dir, socket) = serve(|request| {
            let (code, message, data) = match request["method"].as_str() {
                Some("prompts.answer") => (STALE_PROMPT, "prompt a/1/1 was answered", json!(null)),
                Some("tasks.add") => (
                    INVALID_TASK,
                    "invalid task",
                    json!({"problems": ["tasks.json: task \"n\": unknown agent \"nope\""]}),
                ),
                Some("tasks.get") => (INTERNAL_ERROR, "herd is ending", json!(null)),
                _ => (UNKNOWN_METHOD, "no such method", json!(null)),
            };
            vec![json!({"jsonrpc": "2.0", "id": request["id"],
                        "error": {"code": code, "message": message, "data": data}})]
        });
        let stale = call(&socket, "prompts.answer", json!({})).expect_err("stale");
        let error = stale.into_tool_error("answer prompt \"a/1/1\"");
        assert_eq!(error.what, "cannot answer prompt \"a/1/1\"");
        assert_eq!(error.why, "prompt a/1/1 was answered");
        assert!(error.fix.contains("its own prompt_id"), "{error:?}");
        let invalid = call(&socket, "tasks.add", json!({})).expect_err("invalid");
        let error = invalid.into_tool_error("add task \"n\"");
        assert!(error.why.contains("unknown agent \"nope\""), "{error:?}");
        let unknown = call(&socket, "tasks.run", json!({})).expect_err("unknown");
        assert!(unknown.is_unknown_method());
        let ending = call(&socket, "tasks.get", json!({})).expect_err("ending");
        assert!(matches!(ending, CallError::Unreachable(_)), "{ending:?}");
    }

    #[test]
    fn a_missing_socket_is_unreachable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = call(&dir.path().join("none.sock"), "hello", json!({})).expect_err("none");
        assert!(matches!(error, CallError::Unreachable(_)), "{error:?}");
        let error = error.into_tool_error("list the tasks");
        assert!(error.what.contains("did not answer"), "{error:?}");
    }
}
