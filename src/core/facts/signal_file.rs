//! The agent's own verdict file (`"completion": "signal_file"`): `{"status": "done"|"questions"|
//! "error", ...}` at `HERD_SIGNAL_FILE`, read leniently where agents vary, with a one-line
//! message for the operator where it cannot be used. Pure: the shell reads the file.

use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

/// What the agent says about its task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Signal {
    /// Finished. `result` is any JSON the agent gives (a string, an object...).
    Done { result: Option<Value> },
    /// Stopped to ask the operator; at least one question, each trimmed and non-empty.
    Questions { questions: Vec<String> },
    /// Gave up, saying why.
    Error { error: String },
}

/// A parsed signal file: the verdict plus the agent's session id, when it gives one.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalFile {
    pub signal: Signal,
    pub session_id: Option<String>,
}

const EXPECTED: &str = r#"expected a JSON object like {"status": "done"}, {"status": "questions", "questions": ["..."]} or {"status": "error", "error": "..."}"#;
const STATUSES: &str = r#""done", "questions" or "error""#;

/// Why a signal file cannot be used, in one line for the operator.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SignalFileError {
    #[error("the signal file is empty (is the agent still writing it?); {EXPECTED}")]
    Empty,
    #[error("the signal file is not valid JSON ({detail}); {EXPECTED}")]
    NotJson { detail: String },
    #[error("the signal file holds {kind}, not a JSON object; {EXPECTED}")]
    NotAnObject { kind: &'static str },
    #[error("the signal file has no \"status\"; expected {STATUSES}")]
    NoStatus,
    #[error("\"status\" is {kind}, not a string; expected {STATUSES}")]
    StatusNotAString { kind: &'static str },
    #[error("unknown \"status\" {}; expected {STATUSES}", Value::String(.status.clone()))]
    UnknownStatus { status: String },
    #[error("\"questions\" is {kind}; expected a string or an array of strings")]
    QuestionsNotAList { kind: &'static str },
    #[error(
        "questions[{index}] is an object without a \"question\" string; expected a string or an \
         object with a \"question\" string"
    )]
    QuestionWithoutText { index: usize },
    #[error(
        "questions[{index}] is {kind}; expected a string or an object with a \"question\" string"
    )]
    QuestionNotText { index: usize, kind: &'static str },
    #[error(
        "status \"questions\" needs at least one question in \"questions\" (a string or an array \
         of strings)"
    )]
    NoQuestions,
    #[error("status \"error\" needs an \"error\" message (a non-empty string)")]
    NoErrorMessage,
    /// The shell did not read it: too large to be a signal.
    #[error("it is {bytes} bytes; a signal file is a small JSON object")]
    TooLarge { bytes: u64 },
}

/// Parses the file's text. Accepted beyond the plain shape: a leading BOM and whitespace;
/// `status` in any case; `questions` as one string, or an array of strings or of objects with a
/// `question` (or `text`); for `error`, the message under `result` or `message`.
pub fn parse(text: &str) -> Result<SignalFile, SignalFileError> {
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return Err(SignalFileError::Empty);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| SignalFileError::NotJson {
        detail: one_line(&e.to_string()),
    })?;
    let Value::Object(object) = value else {
        return Err(SignalFileError::NotAnObject { kind: kind(&value) });
    };
    let signal = match status(&object)?.as_str() {
        "done" => Signal::Done {
            result: object.get("result").filter(|v| !v.is_null()).cloned(),
        },
        "questions" => Signal::Questions {
            questions: questions(object.get("questions"))?,
        },
        "error" => Signal::Error {
            error: error_message(&object)?,
        },
        other => {
            return Err(SignalFileError::UnknownStatus {
                status: other.to_string(),
            });
        }
    };
    let session_id = object
        .get("session_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Ok(SignalFile { signal, session_id })
}

fn status(object: &Map<String, Value>) -> Result<String, SignalFileError> {
    match object.get("status") {
        Some(Value::String(s)) => Ok(s.trim().to_ascii_lowercase()),
        None => Err(SignalFileError::NoStatus),
        Some(other) => Err(SignalFileError::StatusNotAString { kind: kind(other) }),
    }
}

fn questions(value: Option<&Value>) -> Result<Vec<String>, SignalFileError> {
    let items: Vec<&Value> = match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one @ Value::String(_)) => vec![one],
        Some(other) => {
            return Err(SignalFileError::QuestionsNotAList { kind: kind(other) });
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let text = match item {
            Value::String(s) => s.as_str(),
            Value::Object(o) => ["question", "text"]
                .iter()
                .find_map(|key| o.get(*key).and_then(Value::as_str))
                .ok_or(SignalFileError::QuestionWithoutText { index: i })?,
            other => {
                return Err(SignalFileError::QuestionNotText {
                    index: i,
                    kind: kind(other),
                });
            }
        };
        let text = text.trim();
        if !text.is_empty() {
            out.push(text.to_string());
        }
    }
    if out.is_empty() {
        return Err(SignalFileError::NoQuestions);
    }
    Ok(out)
}

fn error_message(object: &Map<String, Value>) -> Result<String, SignalFileError> {
    ["error", "result", "message"]
        .iter()
        .find_map(|key| {
            object
                .get(*key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        })
        .map(str::to_string)
        .ok_or(SignalFileError::NoErrorMessage)
}

/// How a JSON value is named in a message.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
