//! The control socket's wire: line-framed JSON-RPC 2.0 (one JSON object per line), the methods
//! and their parameters as a typed `Method`, and the error codes.
//!
//! Requests carry an `id`; the server answers each, in order, on the same connection. After
//! `events.subscribe` the server also sends notifications (no `id`):
//! `{"jsonrpc":"2.0","method":"event","params":{"event":"started",...}}`.
//!
//! Errors: the JSON-RPC codes (`PARSE_ERROR`, `INVALID_REQUEST`, `METHOD_NOT_FOUND`,
//! `INVALID_PARAMS`) and herd's own: `NO_SUCH_TASK`, `REFUSED` (the message says why),
//! `STALE_PROMPT` (the prompt id names no waiting dialog), `INVALID_TASK` (the problems in
//! `data.problems`). The error object and the JSON-RPC codes are `core::jsonrpc`'s, the same
//! as herd's ACP client reads from its agents. Pure: no I/O.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::core::task::TaskStatus;
use crate::run::engine::api::ApiAnswer;

pub use crate::core::wire::jsonrpc::{
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError,
};
pub const NO_SUCH_TASK: i64 = -32001;
pub const REFUSED: i64 = -32002;
pub const STALE_PROMPT: i64 = -32003;
pub const INVALID_TASK: i64 = -32004;

/// What the run is asked to do or tell (every method but `events.subscribe`, which the server
/// answers itself).
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    Hello,
    ListTasks {
        status: Option<Vec<TaskStatus>>,
    },
    GetTask {
        task_id: String,
    },
    AddTask {
        task: Map<String, Value>,
    },
    UpdateTask {
        task_id: String,
        patch: Map<String, Value>,
    },
    Cancel {
        task_id: String,
    },
    Retry {
        task_id: String,
    },
    Run {
        task_id: String,
    },
    Message {
        task_id: String,
        text: String,
    },
    Pause,
    Resume,
    Concurrency {
        n: usize,
    },
    Stop,
    ListPrompts,
    Answer {
        prompt_id: String,
        answer: ApiAnswer,
    },
    Screen {
        task_id: String,
        /// Also each row as runs of text with their colours (`core::screen::styled`).
        styled: bool,
    },
    /// The "since you left" digest of the run (since it started).
    Digest,
    /// Starts the run's web view (or says where it runs), on `addr` or its default.
    WebStart {
        addr: Option<String>,
    },
}

/// A request's method, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Method(Method),
    Subscribe,
}

/// `INVALID_TASK` with each problem in `data.problems`.
pub fn invalid_task(problems: Vec<String>) -> RpcError {
    RpcError {
        code: INVALID_TASK,
        message: format!("the task is not valid: {}", problems.join("; ")),
        data: Some(json!({ "problems": problems })),
    }
}

/// One line read from a client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Call {
        id: Value,
        call: Call,
    },
    /// A request that cannot be carried out: answered with the error (`id` null when it could
    /// not be read).
    Invalid {
        id: Value,
        error: RpcError,
    },
    /// A notification from the client (no `id`): nothing is answered.
    Notification,
    /// An empty line (whitespace only): nothing is answered.
    Blank,
}

/// Every method: name, parameters, result; `herd ctl --help` and the README list these.
pub const METHODS: &[(&str, &str, &str)] = &[
    (
        "hello",
        "{}",
        "{herd_version, pid, tasks, runs_dir, mode, started_at}",
    ),
    ("tasks.list", "{status?: [STATUS..]}", "{tasks: [row]}"),
    ("tasks.get", "{task_id}", "{task: row + prompt}"),
    ("tasks.add", "{task: {task_id, agent, ...}}", "{task_id}"),
    (
        "tasks.update",
        "{task_id, patch: {field: value|null}}",
        "{task: row, message}",
    ),
    ("tasks.run", "{task_id}", "{done, message}"),
    ("tasks.cancel", "{task_id}", "{done, message}"),
    ("tasks.retry", "{task_id}", "{done, message}"),
    ("tasks.message", "{task_id, text}", "{done, message}"),
    ("batch.pause", "{}", "{done, message}"),
    ("batch.resume", "{}", "{done, message}"),
    ("batch.concurrency", "{n}", "{done, message}"),
    ("batch.stop", "{}", "{done, message}"),
    ("prompts.list", "{}", "{prompts: [prompt]}"),
    (
        "prompts.answer",
        "{prompt_id, answer: approve|approve_always|deny}",
        "{done, message}",
    ),
    (
        "panes.screen",
        "{task_id, styled?: bool}",
        "{rows, cols, text, lines?: [[{text, fg?, bg?, bold?, …}]]}",
    ),
    ("batch.digest", "{}", "{lines: [text]}"),
    (
        "web.start",
        "{addr?: IP:PORT}",
        "{url, login_url, started} (login_url holds the token)",
    ),
    (
        "events.subscribe",
        "{}",
        "{subscribed: true}, then \"event\" notifications",
    ),
];

/// Reads one line of a client's as it came off the socket: bytes that are not UTF-8 are a
/// parse error (the line is answered, the connection stays usable).
pub fn parse_bytes(line: &[u8]) -> Incoming {
    match std::str::from_utf8(line) {
        Ok(text) if text.trim().is_empty() => Incoming::Blank,
        Ok(text) => parse_line(text),
        Err(error) => Incoming::Invalid {
            id: Value::Null,
            error: RpcError::new(
                PARSE_ERROR,
                format!(
                    "not UTF-8: the bytes from offset {} are not valid UTF-8; \
                     a request is one line of JSON in UTF-8",
                    error.valid_up_to()
                ),
            ),
        },
    }
}

/// The error for a request line longer than `limit` bytes (its end is skipped unread).
pub fn line_too_long(limit: u64) -> RpcError {
    RpcError::new(
        INVALID_REQUEST,
        format!(
            "request line too long: herd reads at most {limit} bytes ({} MiB) per request \
             line; the line was skipped, send a shorter request",
            limit >> 20
        ),
    )
}

/// Reads one line of a client's.
pub fn parse_line(line: &str) -> Incoming {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(error) => {
            return Incoming::Invalid {
                id: Value::Null,
                error: RpcError::new(PARSE_ERROR, format!("not JSON: {error}")),
            };
        }
    };
    let Value::Object(mut request) = value else {
        return invalid(Value::Null, "a request is a JSON object");
    };
    let id = match request.remove("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        // No id: a notification (nothing is answered).
        None if request.contains_key("method") => return Incoming::Notification,
        _ => return invalid(Value::Null, "the id must be a string or a number"),
    };
    if request.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid(id, "\"jsonrpc\" must be \"2.0\"");
    }
    let Some(Value::String(method)) = request.remove("method") else {
        return invalid(id, "\"method\" must be a string");
    };
    let params = match request.remove("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params @ Value::Object(_)) => params,
        Some(_) => {
            return Incoming::Invalid {
                id,
                error: RpcError::new(INVALID_PARAMS, "params must be an object"),
            };
        }
    };
    match read_call(&method, params) {
        Ok(call) => Incoming::Call { id, call },
        Err(error) => Incoming::Invalid { id, error },
    }
}

fn invalid(id: Value, message: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::new(INVALID_REQUEST, message),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskId {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    status: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddParams {
    task: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateParams {
    task_id: String,
    patch: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenParams {
    task_id: String,
    #[serde(default)]
    styled: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct WebParams {
    #[serde(default)]
    addr: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageParams {
    task_id: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConcurrencyParams {
    n: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerParams {
    prompt_id: String,
    answer: String,
}

fn params<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params)
        .map_err(|error| RpcError::new(INVALID_PARAMS, format!("{method}: {error}")))
}

/// The call `method` with `raw` parameters names.
fn read_call(method: &str, raw: Value) -> Result<Call, RpcError> {
    let task = |raw| params::<TaskId>(method, raw).map(|p| p.task_id);
    let empty = |raw, command| params::<Empty>(method, raw).map(|_| command);
    let command = match method {
        "events.subscribe" => return params::<Empty>(method, raw).map(|_| Call::Subscribe),
        "hello" => empty(raw, Method::Hello)?,
        "tasks.list" => Method::ListTasks {
            status: read_statuses(params::<ListParams>(method, raw)?.status)?,
        },
        "tasks.get" => Method::GetTask {
            task_id: task(raw)?,
        },
        "tasks.add" => Method::AddTask {
            task: params::<AddParams>(method, raw)?.task,
        },
        "tasks.update" => {
            let p: UpdateParams = params(method, raw)?;
            if p.patch.is_empty() {
                return Err(RpcError::new(
                    INVALID_PARAMS,
                    "tasks.update: the patch is empty",
                ));
            }
            Method::UpdateTask {
                task_id: p.task_id,
                patch: p.patch,
            }
        }
        "tasks.run" => Method::Run {
            task_id: task(raw)?,
        },
        "tasks.cancel" => Method::Cancel {
            task_id: task(raw)?,
        },
        "tasks.retry" => Method::Retry {
            task_id: task(raw)?,
        },
        "tasks.message" => {
            let p: MessageParams = params(method, raw)?;
            Method::Message {
                task_id: p.task_id,
                text: p.text,
            }
        }
        "batch.pause" => empty(raw, Method::Pause)?,
        "batch.resume" => empty(raw, Method::Resume)?,
        "batch.stop" => empty(raw, Method::Stop)?,
        "batch.concurrency" => {
            let n = params::<ConcurrencyParams>(method, raw)?.n;
            if n == 0 {
                return Err(RpcError::new(
                    INVALID_PARAMS,
                    "batch.concurrency: n must be at least 1",
                ));
            }
            Method::Concurrency { n }
        }
        "prompts.list" => empty(raw, Method::ListPrompts)?,
        "prompts.answer" => {
            let p: AnswerParams = params(method, raw)?;
            let Some(answer) = ApiAnswer::parse(&p.answer) else {
                return Err(RpcError::new(
                    INVALID_PARAMS,
                    format!(
                        "prompts.answer: answer {:?} is not approve, approve_always or deny",
                        p.answer
                    ),
                ));
            };
            Method::Answer {
                prompt_id: p.prompt_id,
                answer,
            }
        }
        "panes.screen" => {
            let p: ScreenParams = params(method, raw)?;
            Method::Screen {
                task_id: p.task_id,
                styled: p.styled,
            }
        }
        "batch.digest" => empty(raw, Method::Digest)?,
        "web.start" => Method::WebStart {
            addr: params::<WebParams>(method, raw)?.addr,
        },
        other => {
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("no method {other:?} (herd ctl --help lists them)"),
            ));
        }
    };
    Ok(Call::Method(command))
}

fn read_statuses(list: Option<Vec<String>>) -> Result<Option<Vec<TaskStatus>>, RpcError> {
    list.map(|names| {
        names
            .iter()
            .map(|name| {
                TaskStatus::parse(name).ok_or_else(|| {
                    RpcError::new(INVALID_PARAMS, format!("tasks.list: no status {name:?}"))
                })
            })
            .collect()
    })
    .transpose()
}

/// A success response line (without its newline).
pub fn success(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// An error response line.
pub fn failure(id: &Value, error: &RpcError) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()}).to_string()
}

/// An event notification line.
pub fn event_line(params: &Value) -> String {
    json!({"jsonrpc": "2.0", "method": "event", "params": params}).to_string()
}

/// A request line (for clients: `herd ctl`, the tests).
pub fn request_line(id: u64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: &str) -> Result<Method, (Value, i64)> {
        match parse_line(line) {
            Incoming::Call {
                call: Call::Method(c),
                ..
            } => Ok(c),
            Incoming::Call { .. } => Err((Value::Null, 0)),
            Incoming::Invalid { id, error } => Err((id, error.code)),
            Incoming::Notification | Incoming::Blank => Err((Value::Null, 1)),
        }
    }

    fn req(method: &str, params: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}"#)
    }

    #[test]
    fn each_method_reads_its_params() {
        let cases: Vec<(&str, &str, Method)> = vec![
            ("hello", "{}", Method::Hello),
            ("tasks.list", "{}", Method::ListTasks { status: None }),
            (
                "tasks.list",
                r#"{"status":["failed","pending"]}"#,
                Method::ListTasks {
                    status: Some(vec![TaskStatus::Failed, TaskStatus::Pending]),
                },
            ),
            (
                "tasks.get",
                r#"{"task_id":"a"}"#,
                Method::GetTask {
                    task_id: "a".into(),
                },
            ),
            (
                "tasks.run",
                r#"{"task_id":"a"}"#,
                Method::Run {
                    task_id: "a".into(),
                },
            ),
            (
                "tasks.cancel",
                r#"{"task_id":"a"}"#,
                Method::Cancel {
                    task_id: "a".into(),
                },
            ),
            (
                "tasks.retry",
                r#"{"task_id":"a"}"#,
                Method::Retry {
                    task_id: "a".into(),
                },
            ),
            (
                "tasks.message",
                r#"{"task_id":"a","text":"hi"}"#,
                Method::Message {
                    task_id: "a".into(),
                    text: "hi".into(),
                },
            ),
            ("batch.pause", "{}", Method::Pause),
            ("batch.resume", "null", Method::Resume),
            ("batch.stop", "{}", Method::Stop),
            (
                "batch.concurrency",
                r#"{"n":3}"#,
                Method::Concurrency { n: 3 },
            ),
            ("prompts.list", "{}", Method::ListPrompts),
            (
                "prompts.answer",
                r#"{"prompt_id":"a/1/2","answer":"approve_always"}"#,
                Method::Answer {
                    prompt_id: "a/1/2".into(),
                    answer: ApiAnswer::ApproveAlways,
                },
            ),
            (
                "panes.screen",
                r#"{"task_id":"a"}"#,
                Method::Screen {
                    task_id: "a".into(),
                    styled: false,
                },
            ),
        ];
        for (method, params, want) in cases {
            assert_eq!(call(&req(method, params)), Ok(want), "{method} {params}");
        }
        let Ok(Method::AddTask { task }) = call(&req("tasks.add", r#"{"task":{"task_id":"n"}}"#))
        else {
            panic!("tasks.add");
        };
        assert_eq!(task.get("task_id"), Some(&json!("n")));
        let Ok(Method::UpdateTask { task_id, patch }) = call(&req(
            "tasks.update",
            r#"{"task_id":"a","patch":{"enabled":false}}"#,
        )) else {
            panic!("tasks.update");
        };
        assert_eq!(
            (task_id.as_str(), patch.get("enabled")),
            ("a", Some(&json!(false)))
        );
        assert_eq!(
            parse_line(&req("events.subscribe", "{}")),
            Incoming::Call {
                id: json!(7),
                call: Call::Subscribe
            }
        );
    }

    #[test]
    fn bad_requests_get_their_code() {
        let cases: Vec<(String, Value, i64)> = vec![
            ("{not json".into(), Value::Null, PARSE_ERROR),
            ("[1]".into(), Value::Null, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"hello"}"#.into(),
                Value::Null,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"hello"}"#.into(),
                json!(1),
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":3}"#.into(),
                json!("x"),
                INVALID_REQUEST,
            ),
            (req("tasks.explode", "{}"), json!(7), METHOD_NOT_FOUND),
            (req("hello", "[1]"), json!(7), INVALID_PARAMS),
            (req("hello", r#"{"x":1}"#), json!(7), INVALID_PARAMS),
            (req("tasks.get", "{}"), json!(7), INVALID_PARAMS),
            (
                req("tasks.list", r#"{"status":["done"]}"#),
                json!(7),
                INVALID_PARAMS,
            ),
            (
                req("tasks.update", r#"{"task_id":"a","patch":{}}"#),
                json!(7),
                INVALID_PARAMS,
            ),
            (
                req("batch.concurrency", r#"{"n":0}"#),
                json!(7),
                INVALID_PARAMS,
            ),
            (
                req("batch.concurrency", r#"{"n":-1}"#),
                json!(7),
                INVALID_PARAMS,
            ),
            (
                req("prompts.answer", r#"{"prompt_id":"a/1/1","answer":"yes"}"#),
                json!(7),
                INVALID_PARAMS,
            ),
        ];
        for (line, id, code) in cases {
            assert_eq!(call(&line), Err((id, code)), "{line}");
        }
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","method":"hello"}"#),
            Incoming::Notification
        );
    }

    #[test]
    fn responses_are_one_line_each() {
        let ok = success(&json!(1), json!({"done": true}));
        assert_eq!(ok, r#"{"jsonrpc":"2.0","id":1,"result":{"done":true}}"#);
        let error = failure(&json!("a"), &invalid_task(vec!["x: bad".into()]));
        let back: Value = serde_json::from_str(&error).expect("json");
        assert_eq!(back["error"]["code"], json!(INVALID_TASK));
        assert_eq!(back["error"]["data"]["problems"], json!(["x: bad"]));
        assert!(!event_line(&json!({"event": "a\nb"})).contains('\n'));
    }

    #[test]
    fn a_line_that_is_not_utf8_is_a_parse_error_and_a_blank_one_is_nothing() {
        let Incoming::Invalid { id, error } = parse_bytes(b"{\"id\": 1, \"x\": \"\xff\xfe\"}\n")
        else {
            panic!("not UTF-8 must be refused");
        };
        assert_eq!((id, error.code), (Value::Null, PARSE_ERROR));
        assert!(error.message.contains("not UTF-8"), "{}", error.message);
        assert!(error.message.contains("offset 16"), "{}", error.message);
        assert_eq!(parse_bytes(b"  \r\n"), Incoming::Blank);
        assert!(matches!(
            parse_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\"}\n"),
            Incoming::Call { .. }
        ));
    }

    #[test]
    fn a_line_too_long_says_the_limit() {
        let error = line_too_long(4 << 20);
        assert_eq!(error.code, INVALID_REQUEST);
        assert!(
            error.message.contains("4194304 bytes (4 MiB)"),
            "{}",
            error.message
        );
    }
}
