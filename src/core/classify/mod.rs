//! The verdict of one attempt: success, or which failure class, with the evidence. First match
//! wins, per SPEC: timeout → permission blocked → auth → quota → process → incomplete.

use super::profile::Profile;
use super::task::{Completion, FailureType};
use crate::core::facts::agent_log::AgentLogFacts;
use crate::core::facts::signal_file::{Signal, SignalFile, SignalFileError};
use crate::core::wire::stream::{self, StreamFacts};

/// How the agent's process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<String>,
}

impl ExitStatus {
    pub fn success(&self) -> bool {
        self.code == Some(0) && self.signal.is_none()
    }

    pub fn describe(&self) -> String {
        match (&self.signal, self.code) {
            (Some(signal), _) => format!("killed by signal {signal}"),
            (None, Some(code)) => format!("exit code {code}"),
            (None, None) => "exit status unknown".to_string(),
        }
    }
}

/// Why the attempt came to an end.
#[derive(Debug, Clone, PartialEq)]
pub enum EndCause {
    /// The agent exited by itself.
    Exited,
    /// herd ended it after the completion marker (exit keys, then signals).
    AfterMarker,
    /// A structured agent's final result event came and herd ended the agent (it lingered).
    AfterResult,
    /// The agent wrote its signal file and herd ended it (it stayed at its prompt).
    AfterSignal,
    /// herd ended it because it sat idle at its input prompt.
    Idle,
    Timeout {
        after_sec: u64,
    },
    PermissionBlocked {
        evidence: String,
    },
    /// herd ended the agent as it kept retrying a request in vain: `failure` is what the retried
    /// errors name.
    HopelessRetry {
        failure: FailureType,
        evidence: String,
    },
    Cancelled,
}

/// The facts a verdict is drawn from.
#[derive(Debug, Clone)]
pub struct EndFacts<'a> {
    pub cause: EndCause,
    pub marker_seen: bool,
    pub exit: ExitStatus,
    /// The last non-blank rows of the screen when the attempt ended.
    pub tail: &'a [String],
    pub completion: Completion,
    /// The marker must be seen too (always for `Completion::Marker`).
    pub marker_required: bool,
    /// A structured agent's events.
    pub stream: Option<&'a StreamFacts>,
    /// The signal file as last read: its content, or why it is not valid.
    pub signal: Option<&'a Result<SignalFile, SignalFileError>>,
    /// What an interactive agent's own log said (Claude's debug log, Codex's rollout).
    pub agent_log: Option<&'a AgentLogFacts>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub failure: Option<FailureType>,
    pub evidence: Option<String>,
    /// The operator cancelled the task: neither success nor a failure class.
    pub cancelled: bool,
    /// The agent asked these questions (signal file): the task needs the operator's input.
    pub questions: Vec<String>,
}

impl Verdict {
    pub fn success() -> Verdict {
        Verdict {
            failure: None,
            evidence: None,
            cancelled: false,
            questions: Vec::new(),
        }
    }

    pub fn failed(failure: FailureType, evidence: impl Into<String>) -> Verdict {
        Verdict {
            failure: Some(failure),
            evidence: Some(evidence.into()),
            ..Verdict::success()
        }
    }

    pub fn needs_input(questions: Vec<String>) -> Verdict {
        Verdict {
            evidence: Some(format!("the agent asked {} question(s)", questions.len())),
            questions,
            ..Verdict::success()
        }
    }

    pub fn is_success(&self) -> bool {
        self.failure.is_none() && !self.cancelled && self.questions.is_empty()
    }

    pub fn needs_operator(&self) -> bool {
        self.failure.is_none() && !self.cancelled && !self.questions.is_empty()
    }

    /// One word for logs and the cast marker.
    pub fn label(&self) -> &'static str {
        match (self.cancelled, self.failure) {
            (true, _) => "cancelled",
            (false, None) if !self.questions.is_empty() => "needs_input",
            (false, None) => "completed",
            (false, Some(f)) => f.as_str(),
        }
    }
}

pub fn classify(facts: &EndFacts<'_>, profile: &Profile) -> Verdict {
    match &facts.cause {
        EndCause::Cancelled => {
            return Verdict {
                evidence: Some("cancelled by the operator".into()),
                cancelled: true,
                ..Verdict::success()
            };
        }
        EndCause::Timeout { after_sec } => {
            return Verdict::failed(FailureType::Timeout, format!("timeout after {after_sec} s"));
        }
        EndCause::PermissionBlocked { evidence } => {
            return Verdict::failed(FailureType::PermissionBlocked, evidence.clone());
        }
        _ => {}
    }
    // A tool call the agent refused by itself is a blocked permission, whatever came next.
    if let Some(refused) = facts.agent_log.filter(|log| !log.refused_tools.is_empty()) {
        let evidence = format!("permission denied: {}", refused.refused_tools.join(", "));
        return Verdict::failed(FailureType::PermissionBlocked, evidence);
    }
    // Errors the agent kept retrying made herd end it: that is the verdict, before the agent's
    // own report of how it ended and before the screen (`API error · Retrying`).
    if let EndCause::HopelessRetry { failure, evidence } = &facts.cause {
        return Verdict::failed(*failure, evidence.clone());
    }
    let decided = match facts.completion {
        Completion::SignalFile => by_signal(facts, profile),
        Completion::Result | Completion::Marker if facts.stream.is_some() => {
            by_stream(facts, profile)
        }
        Completion::Marker | Completion::Result => by_marker(facts),
    };
    if let Some(verdict) = decided {
        return verdict;
    }
    if let Some(verdict) = by_text(facts.tail.iter().map(String::as_str), profile) {
        return verdict;
    }
    if let Some(verdict) = by_config_exit(facts, profile) {
        return verdict;
    }
    let exited_badly = facts.cause == EndCause::Exited && !facts.exit.success();
    if exited_badly {
        let mut evidence = facts.exit.describe();
        if facts.marker_seen {
            evidence.push_str(" after the completion marker");
        }
        return Verdict::failed(FailureType::Process, evidence);
    }
    Verdict::failed(FailureType::Incomplete, incomplete_evidence(facts))
}

/// Whether the agent ended normally: by itself with 0, or by herd once it was done.
fn ended_normally(facts: &EndFacts<'_>, done_cause: &EndCause) -> bool {
    facts.cause == *done_cause || (facts.cause == EndCause::Exited && facts.exit.success())
}

/// A screen agent: the marker and a normal end.
fn by_marker(facts: &EndFacts<'_>) -> Option<Verdict> {
    (facts.marker_seen && ended_normally(facts, &EndCause::AfterMarker)).then(Verdict::success)
}

/// A structured agent: its events first, then a successful result and a normal end.
fn by_stream(facts: &EndFacts<'_>, profile: &Profile) -> Option<Verdict> {
    let events = facts.stream?;
    if let Some((failure, evidence)) = stream::judge(events, profile) {
        return Some(Verdict::failed(failure, evidence));
    }
    let succeeded = events.result.as_ref().is_some_and(|r| r.success);
    if !succeeded {
        return None;
    }
    if facts.marker_required && !facts.marker_seen {
        return Some(Verdict::failed(
            FailureType::Incomplete,
            "the result's text has no completion marker",
        ));
    }
    if ended_normally(facts, &EndCause::AfterResult) {
        return Some(Verdict::success());
    }
    let evidence = format!("{} after a successful result", facts.exit.describe());
    Some(Verdict::failed(FailureType::Process, evidence))
}

/// The agent's signal file decides: done, questions, or its own error.
fn by_signal(facts: &EndFacts<'_>, profile: &Profile) -> Option<Verdict> {
    let signal = match facts.signal? {
        Ok(file) => &file.signal,
        Err(_) => return None,
    };
    Some(match signal {
        Signal::Done { .. } if ended_normally(facts, &EndCause::AfterSignal) => Verdict::success(),
        Signal::Done { .. } => Verdict::failed(
            FailureType::Process,
            format!("{} after the signal file said done", facts.exit.describe()),
        ),
        Signal::Questions { questions } => Verdict::needs_input(questions.clone()),
        Signal::Error { error } => by_text(error.lines(), profile).unwrap_or_else(|| {
            Verdict::failed(
                FailureType::Incomplete,
                format!("the agent reported an error: {}", error.trim()),
            )
        }),
    })
}

/// The agent exited by itself with an exit code its profile names as a set-up problem.
fn by_config_exit(facts: &EndFacts<'_>, profile: &Profile) -> Option<Verdict> {
    let code = facts
        .exit
        .code
        .filter(|_| facts.cause == EndCause::Exited)?;
    profile.config_exit_codes.contains(&code).then(|| {
        let mut evidence = format!("exit code {code} (a set-up problem for {})", profile.name);
        if let Some(last) = facts.tail.iter().rev().find(|r| !r.trim().is_empty()) {
            evidence.push_str(": ");
            evidence.push_str(last.trim());
        }
        Verdict::failed(FailureType::Config, evidence)
    })
}

fn incomplete_evidence(facts: &EndFacts<'_>) -> String {
    match (facts.completion, facts.signal, facts.stream) {
        (Completion::SignalFile, Some(Err(problem)), _) => {
            format!("the signal file is not valid: {problem}")
        }
        (Completion::SignalFile, _, _) => {
            format!("no signal file was written; {}", facts.exit.describe())
        }
        (_, _, Some(events)) if events.result.is_none() => {
            let how = if events.cut_short || events.events > 0 {
                "the event stream ended before its result"
            } else {
                "no JSON events were printed"
            };
            format!("{how}; {}", facts.exit.describe())
        }
        _ if facts.cause == EndCause::Idle => {
            "idle at the input prompt without the completion marker".to_string()
        }
        _ => format!("no completion marker; {}", facts.exit.describe()),
    }
}

mod text;

use text::by_text;
pub use text::{failure_text, failure_texts};

#[cfg(test)]
mod tests;
