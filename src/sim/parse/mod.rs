//! Reads a scenario's TOML text into a [`Scenario`], checking every step; errors name the file,
//! the line and the step. A step table holds exactly one action key (see
//! `assets/scenarios/success.toml`); a plain value is the action's main field.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use thiserror::Error;

use super::scenario::{Action, AttemptRange, Repeat, Scenario, Step};
use super::step_error::{ActionError, StepError};

/// A scenario file that cannot be played.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{origin}{}: {message}", line.map(|line| format!(":{line}")).unwrap_or_default())]
pub(super) struct ScenarioError {
    /// The file's path, or `built-in scenario NAME`.
    pub origin: String,
    pub line: Option<usize>,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    #[serde(default)]
    description: String,
    #[serde(default)]
    step: Vec<toml::Spanned<toml::Table>>,
}

/// The action keys, each with the field a plain value stands for.
const ACTIONS: &[(&str, Option<&str>)] = &[
    ("title", None),
    ("claude_header", None),
    ("codex_header", Some("version")),
    ("echo", Some("style")),
    ("line", Some("text")),
    ("say", Some("text")),
    ("tool", Some("input")),
    ("marker", Some("style")),
    ("spinner", Some("text")),
    ("retry", None),
    ("query", None),
    ("dialog", None),
    ("press", None),
    ("idle", Some("style")),
    ("sleep", None),
    ("hang", None),
    ("exit", None),
    ("ignore_signals", None),
    ("spawn", Some("scenario")),
    ("flood", Some("megabytes")),
    ("json_init", Some("model")),
    ("json_say", Some("text")),
    ("json_tool", Some("command")),
    ("json_result", Some("text")),
    ("json_error", Some("message")),
    ("raw", None),
    ("signal", Some("status")),
];

const CONDITION_KEYS: &[&str] = &[
    "when_attempt_below",
    "when_attempt_at_least",
    "when_resumed",
];

/// Parses and checks a scenario. `origin` names it in errors.
pub(super) fn parse_scenario(origin: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let error_at = |line: Option<usize>, message: String| ScenarioError {
        origin: origin.to_string(),
        line,
        message,
    };
    let file: ScenarioFile = toml::from_str(text).map_err(|error| {
        let line = error.span().map(|span| line_of(text, span.start));
        error_at(line, error.message().trim().to_string())
    })?;
    if file.step.is_empty() {
        return Err(error_at(
            None,
            "no steps; add at least one [[step]] table".to_string(),
        ));
    }
    let mut steps = Vec::with_capacity(file.step.len());
    for (index, spanned) in file.step.into_iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let step = parse_step(spanned.into_inner())
            .map_err(|problem| error_at(Some(line), format!("step {}: {problem}", index + 1)))?;
        steps.push(step);
    }
    Ok(Scenario {
        description: file.description,
        steps,
    })
}

fn parse_step(mut table: toml::Table) -> Result<Step, StepError> {
    let attempts = AttemptRange {
        below: take_attempt(&mut table, "when_attempt_below")?,
        at_least: take_attempt(&mut table, "when_attempt_at_least")?,
    };
    let resumed = take_resumed(&mut table)?;
    let mut keys = table.keys();
    let (key, value) = match (keys.next(), keys.next()) {
        (Some(_), None) => table.into_iter().next().ok_or(StepError::Empty)?,
        (None, _) => {
            return Err(StepError::NoAction {
                actions: action_names(),
            });
        }
        (Some(first), Some(second)) => {
            return Err(StepError::TwoActions {
                first: first.clone(),
                second: second.clone(),
            });
        }
    };
    let Some(&(_, shorthand)) = ACTIONS.iter().find(|(name, _)| *name == key) else {
        return Err(StepError::UnknownAction {
            key,
            actions: action_names(),
            conditions: CONDITION_KEYS.join(", "),
        });
    };
    let value = match (shorthand, value) {
        (Some(field), value) if !value.is_table() => {
            toml::Value::Table(toml::Table::from_iter([(field.to_string(), value)]))
        }
        (_, value) => value,
    };
    let action = action_from(&key, value)
        .and_then(|action| check(&action).map(|()| action))
        .map_err(|problem| StepError::Action { key, problem })?;
    Ok(Step {
        action,
        attempts,
        resumed,
    })
}

fn action_from(key: &str, value: toml::Value) -> Result<Action, ActionError> {
    Ok(match key {
        "title" => Action::Title(typed(value)?),
        "claude_header" => Action::ClaudeHeader(typed(value)?),
        "codex_header" => Action::CodexHeader(typed(value)?),
        "echo" => Action::Echo(typed(value)?),
        "line" => Action::Line(typed(value)?),
        "say" => Action::Say(typed(value)?),
        "tool" => Action::Tool(typed(value)?),
        "marker" => Action::Marker(typed(value)?),
        "spinner" => Action::Spinner(typed(value)?),
        "retry" => Action::Retry(typed(value)?),
        "query" => Action::Query(typed(value)?),
        "dialog" => Action::Dialog(typed(value)?),
        "press" => Action::Press(typed(value)?),
        "idle" => Action::Idle(typed(value)?),
        "sleep" => Action::Sleep(number(value)?),
        "hang" => switch(value, Action::Hang)?,
        "exit" => Action::Exit(typed(value)?),
        "ignore_signals" => switch(value, Action::IgnoreSignals)?,
        "spawn" => Action::Spawn(typed(value)?),
        "flood" => Action::Flood(typed(value)?),
        "json_init" => Action::JsonInit(typed(value)?),
        "json_say" => Action::JsonSay(typed(value)?),
        "json_tool" => Action::JsonTool(typed(value)?),
        "json_result" => Action::JsonResult(typed(value)?),
        "json_error" => Action::JsonError(typed(value)?),
        "raw" => Action::Raw(typed(value)?),
        "signal" => Action::Signal(typed(value)?),
        other => return Err(ActionError::Unknown(other.to_string())),
    })
}

/// Range and sanity checks serde cannot express.
fn check(action: &Action) -> Result<(), ActionError> {
    let positive = |seconds: f64, field: &'static str| {
        if seconds.is_finite() && seconds >= 0.0 {
            Ok(())
        } else {
            Err(ActionError::NegativeSeconds { field })
        }
    };
    match action {
        Action::Sleep(seconds) => positive(*seconds, "sleep"),
        Action::Spinner(spinner) => spinner
            .seconds
            .map_or(Ok(()), |seconds| positive(seconds, "seconds")),
        Action::Retry(retry) if retry.delays.is_empty() => Err(ActionError::NoDelays),
        Action::Query(query) if !query.cursor_position && !query.device_attributes => {
            Err(ActionError::EmptyQuery)
        }
        Action::Query(query) => positive(query.timeout, "timeout"),
        Action::Dialog(dialog) if dialog.command.trim().is_empty() => {
            Err(ActionError::EmptyCommand)
        }
        Action::Dialog(dialog) if dialog.repeat == Some(Repeat::Times(0)) => {
            Err(ActionError::ZeroRepeat)
        }
        Action::Dialog(dialog) => positive(dialog.gap, "gap"),
        Action::Exit(code) if !(0..=255).contains(code) => Err(ActionError::ExitCode(*code)),
        Action::Spawn(spawn) if !(1..=16).contains(&spawn.count) => {
            Err(ActionError::SpawnCount(spawn.count))
        }
        Action::Flood(flood) if !(flood.megabytes > 0.0 && flood.megabytes <= 100.0) => {
            Err(ActionError::FloodSize(flood.megabytes))
        }
        Action::JsonTool(tool) => Ok(tool.check()?),
        Action::JsonResult(result) => Ok(result.check()?),
        Action::JsonError(error) => Ok(error.check()?),
        Action::Signal(signal) => Ok(signal.check()?),
        _ => Ok(()),
    }
}

fn typed<T: DeserializeOwned>(value: toml::Value) -> Result<T, ActionError> {
    value
        .try_into()
        .map_err(|error: toml::de::Error| ActionError::Shape(error.message().trim().to_string()))
}

fn number(value: toml::Value) -> Result<f64, ActionError> {
    match value {
        toml::Value::Integer(whole) => Ok(whole as f64),
        toml::Value::Float(seconds) => Ok(seconds),
        other => Err(ActionError::NotSeconds {
            found: other.type_str(),
        }),
    }
}

/// Actions that are only switched on: `hang = true`.
fn switch(value: toml::Value, action: Action) -> Result<Action, ActionError> {
    match value {
        toml::Value::Boolean(true) => Ok(action),
        _ => Err(ActionError::NotTrue),
    }
}

fn take_attempt(table: &mut toml::Table, key: &str) -> Result<Option<u32>, StepError> {
    match table.remove(key) {
        None => Ok(None),
        Some(toml::Value::Integer(attempt)) if attempt >= 1 => u32::try_from(attempt)
            .map(Some)
            .map_err(|_| StepError::AttemptTooLarge {
                key: key.to_string(),
            }),
        Some(other) => Err(StepError::NotAnAttempt {
            key: key.to_string(),
            found: other.to_string(),
        }),
    }
}

fn take_resumed(table: &mut toml::Table) -> Result<Option<bool>, StepError> {
    match table.remove("when_resumed") {
        None => Ok(None),
        Some(toml::Value::Boolean(resumed)) => Ok(Some(resumed)),
        Some(other) => Err(StepError::NotAResumeSwitch {
            found: other.to_string(),
        }),
    }
}

fn action_names() -> String {
    ACTIONS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn line_of(text: &str, byte_offset: usize) -> usize {
    let end = byte_offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests;
