//! The JSON written at the end of an attempt: the task's `result` (SPEC) and the attempt's facts
//! file (`attempt_<n>.json`). Building values only; writing is the store's and recorder's.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::macros::format_description;

pub mod agent_facts;

use super::launch::LaunchPlan;
use crate::core::approval::Approval;
use crate::core::attempt::AutoInput;
use crate::core::classify::{ExitStatus, Verdict};

/// `2026-02-24T12:00:00Z`
pub fn utc_timestamp(at: OffsetDateTime) -> String {
    let format = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    at.to_offset(time::UtcOffset::UTC)
        .format(&format)
        .unwrap_or_else(|_| at.unix_timestamp().to_string())
}

/// `path` relative to `base` when it lies below it, else as it is.
pub fn relative_to(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What an attempt produced, gathered by the engine.
#[derive(Debug, Clone)]
pub struct AttemptOutcome<'a> {
    pub attempt: u32,
    pub verdict: &'a Verdict,
    pub marker_seen: bool,
    pub exit: &'a ExitStatus,
    pub log_file: String,
    pub auto_counts: Vec<(String, u32)>,
    pub auto_inputs: &'a [AutoInput],
    /// Every answer to a prompt, automatic or by the operator, with what it approved.
    pub approvals: &'a [Approval],
    pub started_at: OffsetDateTime,
    pub ended_at: OffsetDateTime,
    pub duration: Duration,
}

/// The task's `result` object.
pub fn result_json(o: &AttemptOutcome<'_>) -> Value {
    json!({
        "completed_at": utc_timestamp(o.ended_at),
        "completion_marker_seen": o.marker_seen,
        "exit_code": o.exit.code,
        "failure_type": o.verdict.failure.map(|f| f.as_str()),
        "failure_evidence": o.verdict.evidence,
        "log_file": o.log_file,
        "auto_inputs": o.auto_counts.iter().map(|(key, count)| json!({"key": key, "count": count})).collect::<Vec<_>>(),
        "approvals": o.approvals.iter().map(approval_compact).collect::<Vec<_>>(),
        "attempt": o.attempt,
        "duration_sec": (o.duration.as_secs_f64() * 10.0).round() / 10.0,
    })
}

/// The attempt's facts file.
pub fn facts_json(
    o: &AttemptOutcome<'_>,
    plan: &LaunchPlan,
    cols: u16,
    rows: u16,
    agent: &str,
) -> Value {
    json!({
        "attempt": o.attempt,
        "agent": agent,
        "argv": plan.argv,
        "cwd": plan.cwd.display().to_string(),
        "env_keys": plan.env.keys().collect::<Vec<_>>(),
        "size": {"cols": cols, "rows": rows},
        "started_at": utc_timestamp(o.started_at),
        "ended_at": utc_timestamp(o.ended_at),
        "duration_sec": o.duration.as_secs_f64(),
        "exit_code": o.exit.code,
        "exit_signal": o.exit.signal,
        "completion_marker": plan.marker,
        "completion_marker_seen": o.marker_seen,
        "verdict": o.verdict.label(),
        "failure_type": o.verdict.failure.map(|f| f.as_str()),
        "failure_evidence": o.verdict.evidence,
        "auto_inputs": o.auto_inputs.iter().map(|a| json!({
            "at_sec": (a.at.as_secs_f64() * 1000.0).round() / 1000.0,
            "rule": a.rule,
            "keys": a.keys,
        })).collect::<Vec<_>>(),
        "approvals": o.approvals.iter().map(|a| approval_full(a, o.started_at)).collect::<Vec<_>>(),
    })
}

/// `{"by", "request", "decision"}` for the task's `result`: what was approved, in one line each.
fn approval_compact(a: &Approval) -> Value {
    json!({
        "by": a.by.as_str(),
        "request": a.request.as_ref().map(ToString::to_string),
        "decision": a.decision.as_ref().map(|d| d.name()),
    })
}

/// Everything about one answer, for the attempt's facts file.
fn approval_full(a: &Approval, started_at: OffsetDateTime) -> Value {
    let at = started_at + a.at;
    json!({
        "at": utc_timestamp(at),
        "at_sec": (a.at.as_secs_f64() * 1000.0).round() / 1000.0,
        "by": a.by.as_str(),
        "rule": a.rule,
        "keys": a.keys,
        "request": a.request.as_ref().map(|r| json!({
            "kind": r.kind_name(),
            "text": r.text(),
            "options": r.options,
        })),
        "decision": a.decision.as_ref().map(|d| d.name()),
        "why": a.decision.as_ref().map(|d| d.why().to_string()),
    })
}

/// `result` for an attempt that never ran: a config problem found before launch.
pub fn config_failure_json(evidence: &str, at: OffsetDateTime) -> Value {
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
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_seconds() {
        let at = OffsetDateTime::from_unix_timestamp(1_771_934_400).unwrap();
        assert_eq!(utc_timestamp(at), "2026-02-24T12:00:00Z");
    }

    #[test]
    fn paths_below_the_base_are_relative() {
        assert_eq!(
            relative_to(Path::new("/a/runs/t/attempt_1.log"), Path::new("/a")),
            "runs/t/attempt_1.log"
        );
        assert_eq!(
            relative_to(Path::new("/b/x.log"), Path::new("/a")),
            "/b/x.log"
        );
    }
}
