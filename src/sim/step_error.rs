//! What is wrong with a scenario step, typed. Messages only.

use thiserror::Error;

/// A step that cannot be played.
#[derive(Debug, Error, PartialEq)]
pub(super) enum StepError {
    #[error("empty step")]
    Empty,
    #[error("no action; use one of {actions}")]
    NoAction { actions: String },
    #[error(
        "one action per step, found `{first}` and `{second}`; put them in separate [[step]] tables"
    )]
    TwoActions { first: String, second: String },
    #[error("unknown action `{key}`; use one of {actions} (conditions: {conditions})")]
    UnknownAction {
        key: String,
        actions: String,
        conditions: String,
    },
    #[error("`{key}`: {problem}")]
    Action { key: String, problem: ActionError },
    #[error("`{key}` is too large")]
    AttemptTooLarge { key: String },
    #[error("`{key}` must be an attempt number >= 1, found {found}")]
    NotAnAttempt { key: String, found: String },
    #[error("`when_resumed` must be true or false, found {found}")]
    NotAResumeSwitch { found: String },
}

/// An action's value that cannot be played.
#[derive(Debug, Error, PartialEq)]
pub(super) enum ActionError {
    /// The TOML value does not fit the action's table (toml's own words).
    #[error("{0}")]
    Shape(String),
    #[error("expected a number of seconds, found {found}")]
    NotSeconds { found: &'static str },
    #[error("write `= true` (or leave the step out)")]
    NotTrue,
    #[error("unknown action `{0}`")]
    Unknown(String),
    #[error("{field} must be a number of seconds >= 0")]
    NegativeSeconds { field: &'static str },
    #[error("delays needs at least one entry, e.g. delays = [3, 1]")]
    NoDelays,
    #[error("ask for something: cursor_position = true and/or device_attributes = true")]
    EmptyQuery,
    #[error("command must not be empty")]
    EmptyCommand,
    #[error("repeat must be at least 1 (or \"forever\")")]
    ZeroRepeat,
    #[error("exit code {0} is outside 0..=255")]
    ExitCode(i32),
    #[error("count {0} is outside 1..=16")]
    SpawnCount(u32),
    #[error("megabytes {0} is outside (0, 100]")]
    FloodSize(f64),
    #[error("{0}")]
    Structured(#[from] StructuredError),
}

/// A structured step (`json_*`, `signal`) whose fields do not fit together.
#[derive(Debug, Error, PartialEq)]
pub(super) enum StructuredError {
    #[error("subtype {subtype:?} is not one of {known}")]
    UnknownSubtype { subtype: String, known: String },
    #[error("cost_usd {0} must be >= 0")]
    NegativeCost(f64),
    #[error("api_error_status {0} is not an HTTP status (100..=599)")]
    NotAnHttpStatus(u16),
    #[error("assistant_error must not be empty (or leave it out)")]
    EmptyAssistantError,
    #[error("the {tool} denial has an empty command")]
    EmptyDenial { tool: String },
    #[error("name must not be empty")]
    EmptyToolName,
    #[error("type must not be empty, e.g. \"overloaded_error\"")]
    EmptyErrorType,
    #[error("text is the file's whole content; leave out `{field}`")]
    TextWithField { field: &'static str },
    #[error("give a status (\"done\", \"questions\" or \"error\") or the file's text")]
    NoStatus,
    #[error("`{field}` does not belong to status {status}")]
    Misplaced {
        field: &'static str,
        status: &'static str,
    },
    #[error("status \"questions\" needs questions = [\"...\"]")]
    NoQuestions,
    #[error("status \"error\" needs error = \"what went wrong\"")]
    NoError,
}
