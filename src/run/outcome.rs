//! What is written at the end of an attempt, typed: the task's `result` and the facts file, both
//! from one `AttemptOutcome`. Values only.

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::{Map, Value, json};

pub mod agent_facts;

use super::hygiene::EndedProcess;
use super::launch::LaunchPlan;
use crate::core::approval::Approval;
use crate::core::attempt::AutoInput;
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::facts::transcript::TranscriptFacts;
use crate::core::wire::stream::StreamFacts;

/// `2026-02-24T12:00:00Z`
pub fn utc_timestamp(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `path` relative to `base` when it lies below it, else as it is.
pub fn relative_to(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What an attempt produced, gathered once by the engine.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub attempt: u32,
    pub verdict: Verdict,
    pub marker_seen: bool,
    pub exit: ExitStatus,
    pub log_file: String,
    pub auto_counts: Vec<(String, u32)>,
    pub auto_inputs: Vec<AutoInput>,
    /// Every answer to a prompt, automatic or by the operator, with what it approved.
    pub approvals: Vec<Approval>,
    pub started_at: Timestamp,
    pub ended_at: Timestamp,
    pub duration: Duration,
}

/// The task's `result` (SPEC). Field order is the order written.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AttemptResult {
    pub completed_at: String,
    pub completion_marker_seen: bool,
    pub exit_code: Option<i32>,
    pub failure_type: Option<&'static str>,
    pub failure_evidence: Option<String>,
    /// The output's best line on why it failed, when the evidence is only about the process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_cause: Option<String>,
    /// When a quota failure's limit resets, as the agent named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_resets_at: Option<String>,
    pub log_file: String,
    pub auto_inputs: Vec<AutoInputCount>,
    pub approvals: Vec<ApprovalLine>,
    pub attempt: u32,
    pub duration_sec: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeState>,
    /// The folder herd trusted in the CLI's config before the start (`trust_folder`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted_folder: Option<String>,
    /// The operator stopped the attempt.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// What went wrong, for the next attempt's `{previous_failure}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_summary: Option<String>,
    /// The profile's account the attempt used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The host the attempt ran on, when not here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The agent's own report (`agent_facts`).
    #[serde(flatten)]
    pub agent: Map<String, Value>,
    /// The task's cost over all its attempts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
    /// Survivors of the task's interrupted attempt that herd ended at start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub survivors_ended: Option<Value>,
}

/// How often an automatic answer was sent.
#[derive(Debug, Clone, Serialize)]
pub struct AutoInputCount {
    pub key: String,
    pub count: u32,
}

/// What was approved, in one line.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalLine {
    pub by: &'static str,
    /// Where the request was read and answered: `hook`, `screen`, `acp`, `stream`.
    pub channel: &'static str,
    pub request: Option<String>,
    pub decision: Option<&'static str>,
    /// The allow rule or switch, or the reason for asking or refusing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The option an ACP agent was answered with (`allow_once`, `reject_once`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// The ACP agent's title for the tool call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A task's worktree after an attempt.
#[derive(Debug, Clone, Serialize)]
pub struct WorktreeState {
    pub path: String,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<Vec<String>>,
}

impl AttemptResult {
    /// The result of `o`, with nothing from the shell or the agent yet.
    pub fn new(o: &AttemptOutcome) -> AttemptResult {
        AttemptResult {
            completed_at: utc_timestamp(o.ended_at),
            completion_marker_seen: o.marker_seen,
            exit_code: o.exit.code,
            failure_type: o.verdict.failure.map(|f| f.as_str()),
            failure_evidence: o.verdict.evidence.clone(),
            log_file: o.log_file.clone(),
            auto_inputs: o
                .auto_counts
                .iter()
                .map(|(key, count)| AutoInputCount {
                    key: key.clone(),
                    count: *count,
                })
                .collect(),
            approvals: o
                .approvals
                .iter()
                .map(|a| ApprovalLine {
                    by: a.by.as_str(),
                    channel: a.channel.as_str(),
                    request: a.request.as_ref().map(ToString::to_string),
                    decision: a.decision.as_ref().map(|d| d.name()),
                    why: a.decision.as_ref().map(|d| d.why().to_string()),
                    option: a.option.clone(),
                    title: a.title.clone(),
                })
                .collect(),
            attempt: o.attempt,
            duration_sec: (o.duration.as_secs_f64() * 10.0).round() / 10.0,
            ..AttemptResult::default()
        }
    }
}

/// The attempt's facts file (`attempt_<n>.json`). Field order is the order written.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AttemptFacts<'a> {
    pub attempt: u32,
    pub agent: &'a str,
    pub argv: &'a [String],
    pub cwd: String,
    pub env_keys: Vec<&'a String>,
    pub size: Size,
    pub started_at: String,
    pub ended_at: String,
    pub duration_sec: f64,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub completion_marker: &'a str,
    pub completion_marker_seen: bool,
    pub verdict: &'static str,
    pub failure_type: Option<&'static str>,
    pub failure_evidence: Option<String>,
    pub auto_inputs: Vec<Value>,
    pub approvals: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    pub completion: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<&'a StreamFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptRef<'a>>,
    pub ended_processes: &'a [EndedProcess],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<&'a str>,
    /// The task's status this end decided and the `result` it wrote, for a run that could not
    /// write the tasks file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_result: Option<Value>,
}

/// (cols, rows) of the terminal the agent started in.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

/// A Claude transcript: where it is and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptRef<'a> {
    pub path: &'a str,
    pub facts: &'a TranscriptFacts,
}

impl<'a> AttemptFacts<'a> {
    /// The facts of `o`; the agent's report and the shell's facts are filled by the caller.
    pub fn new(o: &'a AttemptOutcome, plan: &'a LaunchPlan, size: Size, agent: &'a str) -> Self {
        AttemptFacts {
            attempt: o.attempt,
            agent,
            argv: &plan.argv,
            cwd: plan.cwd.display().to_string(),
            env_keys: plan.env.keys().collect(),
            size,
            started_at: utc_timestamp(o.started_at),
            ended_at: utc_timestamp(o.ended_at),
            duration_sec: o.duration.as_secs_f64(),
            exit_code: o.exit.code,
            exit_signal: o.exit.signal.clone(),
            completion_marker: &plan.marker,
            completion_marker_seen: o.marker_seen,
            verdict: o.verdict.label(),
            failure_type: o.verdict.failure.map(|f| f.as_str()),
            failure_evidence: o.verdict.evidence.clone(),
            auto_inputs: o
                .auto_inputs
                .iter()
                .map(|a| {
                    json!({
                        "at_sec": (a.at.as_secs_f64() * 1000.0).round() / 1000.0,
                        "rule": a.rule,
                        "keys": a.keys,
                    })
                })
                .collect(),
            approvals: o
                .approvals
                .iter()
                .map(|a| approval_full(a, o.started_at))
                .collect(),
            completion: plan.completion.completion.as_str(),
            resumed_session: plan.resumed_session.as_deref(),
            ..AttemptFacts::default()
        }
    }
}

/// Everything about one answer, for the attempt's facts file.
fn approval_full(a: &Approval, started_at: Timestamp) -> Value {
    let at = started_at + a.at;
    json!({
        "at": utc_timestamp(at),
        "at_sec": (a.at.as_secs_f64() * 1000.0).round() / 1000.0,
        "by": a.by.as_str(),
        "channel": a.channel.as_str(),
        "rule": a.rule,
        "keys": a.keys,
        "request": a.request.as_ref().map(|r| json!({
            "kind": r.kind_name(),
            "text": r.text(),
            "options": r.options,
        })),
        "decision": a.decision.as_ref().map(|d| d.name()),
        "why": a.decision.as_ref().map(|d| d.why().to_string()),
        "option": a.option,
        "title": a.title,
    })
}

/// `result` for an attempt that never ran: a config problem found before launch.
pub fn config_failure_json(evidence: &str, at: Timestamp) -> Value {
    json!({
        "completed_at": utc_timestamp(at),
        "completion_marker_seen": false,
        "exit_code": null,
        "failure_type": "failed_config",
        "failure_evidence": evidence,
        "log_file": null,
        "auto_inputs": [],
    })
}

#[cfg(test)]
mod tests;
