//! The data of the steps that produce structured output instead of a screen (`json_*` events,
//! the `signal` file), with the checks serde cannot express.

use serde::Deserialize;

use super::step_error::StructuredError;

/// Result subtypes Claude Code's print mode uses.
pub(super) const RESULT_SUBTYPES: &[&str] = &[
    "success",
    "error_max_turns",
    "error_during_execution",
    "error_max_budget_usd",
];

/// `json_init = { model? }`: the `system`/`init` event that opens a stream.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JsonInit {
    #[serde(default = "default_model")]
    pub model: String,
}

/// `json_say = "text"`: an `assistant` event with one text block.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JsonSay {
    pub text: String,
}

/// `json_tool = { name?, command, description?, result?, is_error? }`: `tool_use`, then its
/// `tool_result`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JsonTool {
    #[serde(default = "default_tool_name")]
    pub name: String,
    pub command: String,
    pub description: Option<String>,
    #[serde(default)]
    pub result: String,
    #[serde(default)]
    pub is_error: bool,
}

/// `json_result = { text, ... }`: the final `result` event (after the synthetic error record
/// with `assistant_error`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JsonResult {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default = "default_subtype")]
    pub subtype: String,
    #[serde(default)]
    pub cost_usd: f64,
    #[serde(default = "default_turns")]
    pub turns: u32,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// The HTTP status of the API error behind the result (`429`).
    pub api_error_status: Option<u16>,
    /// Tool calls the permission mode refused, reported in `permission_denials`.
    #[serde(default)]
    pub denials: Vec<Denial>,
    /// `authentication_failed`, `rate_limit`, ...: print Claude's synthetic record with this
    /// `error` first.
    pub assistant_error: Option<String>,
}

/// One entry of `permission_denials`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Denial {
    #[serde(default = "default_tool_name")]
    pub tool: String,
    pub command: String,
}

/// `json_error = { type?, message }`: a bare error line, as API stand-ins print.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JsonError {
    #[serde(rename = "type", default = "default_error_type")]
    pub kind: String,
    pub message: String,
}

/// What a signal file reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum SignalStatus {
    Done,
    Questions,
    Error,
}

/// `signal = { status, result?, questions?, error?, session_id? }` or `signal = { text }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Signal {
    pub status: Option<SignalStatus>,
    pub result: Option<String>,
    pub questions: Option<Vec<String>>,
    pub error: Option<String>,
    /// The session id reported; without it the run's own, `""` leaves the field out.
    pub session_id: Option<String>,
    /// The file's whole content, as written (for broken files); excludes the other fields.
    pub text: Option<String>,
}

impl JsonResult {
    /// Range and consistency checks.
    pub(super) fn check(&self) -> Result<(), StructuredError> {
        if !RESULT_SUBTYPES.contains(&self.subtype.as_str()) {
            return Err(StructuredError::UnknownSubtype {
                subtype: self.subtype.clone(),
                known: RESULT_SUBTYPES.join(", "),
            });
        }
        if !(self.cost_usd.is_finite() && self.cost_usd >= 0.0) {
            return Err(StructuredError::NegativeCost(self.cost_usd));
        }
        if let Some(status) = self.api_error_status
            && !(100..=599).contains(&status)
        {
            return Err(StructuredError::NotAnHttpStatus(status));
        }
        if self.assistant_error.as_deref() == Some("") {
            return Err(StructuredError::EmptyAssistantError);
        }
        if let Some(denial) = self.denials.iter().find(|denial| denial.command.is_empty()) {
            return Err(StructuredError::EmptyDenial {
                tool: denial.tool.clone(),
            });
        }
        Ok(())
    }
}

impl JsonTool {
    pub(super) fn check(&self) -> Result<(), StructuredError> {
        if self.name.trim().is_empty() {
            return Err(StructuredError::EmptyToolName);
        }
        Ok(())
    }
}

impl JsonError {
    pub(super) fn check(&self) -> Result<(), StructuredError> {
        if self.kind.trim().is_empty() {
            return Err(StructuredError::EmptyErrorType);
        }
        Ok(())
    }
}

impl Signal {
    /// A signal says what its status needs, and only that; `text` stands alone.
    pub(super) fn check(&self) -> Result<(), StructuredError> {
        if self.text.is_some() {
            let others = [
                ("status", self.status.is_some()),
                ("result", self.result.is_some()),
                ("questions", self.questions.is_some()),
                ("error", self.error.is_some()),
                ("session_id", self.session_id.is_some()),
            ];
            return match others.iter().find(|(_, given)| *given) {
                Some((name, _)) => Err(StructuredError::TextWithField { field: name }),
                None => Ok(()),
            };
        }
        let Some(status) = self.status else {
            return Err(StructuredError::NoStatus);
        };
        let misplaced = |field: &'static str| {
            Err(StructuredError::Misplaced {
                field,
                status: status_name(status),
            })
        };
        match status {
            SignalStatus::Done if self.questions.is_some() => misplaced("questions"),
            SignalStatus::Done if self.error.is_some() => misplaced("error"),
            SignalStatus::Questions if self.questions.as_ref().is_none_or(Vec::is_empty) => {
                Err(StructuredError::NoQuestions)
            }
            SignalStatus::Questions if self.error.is_some() => misplaced("error"),
            SignalStatus::Error if self.error.is_none() => Err(StructuredError::NoError),
            SignalStatus::Error if self.questions.is_some() => misplaced("questions"),
            _ => Ok(()),
        }
    }
}

/// The status as written in the file.
pub(super) fn status_name(status: SignalStatus) -> &'static str {
    match status {
        SignalStatus::Done => "done",
        SignalStatus::Questions => "questions",
        SignalStatus::Error => "error",
    }
}

fn default_model() -> String {
    "claude-opus-4-8[1m]".to_string()
}
fn default_tool_name() -> String {
    "Bash".to_string()
}
fn default_subtype() -> String {
    "success".to_string()
}
fn default_turns() -> u32 {
    1
}
fn default_error_type() -> String {
    "api_error".to_string()
}
