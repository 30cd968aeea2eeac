//! The selected task's details: status, attempts, questions, what its agent reported, why it
//! failed, its log, worktree, policy and prompt. Reads only.

use serde_json::Value;

use super::agent;
use super::tasks::{failure_of, max_attempts, row_status};
use crate::core::operator::clock_words::LocalNow;
use crate::core::task::TaskSpec;
use crate::run::engine::{BatchView, LiveView};
use crate::ui::model::{DetailView, RowStatus};
use crate::ui::style;

pub fn detail(batch: &dyn BatchView, index: usize, local: &LocalNow) -> Option<DetailView> {
    let task = batch.task(index)?;
    let live = batch.live_attempt(index);
    let status = row_status(batch, index, task);
    let result = task.result.as_ref();
    let mut lines = standing_lines(task, status, live);
    lines.extend(result_lines(result, live, local));
    lines.extend(policy_lines(task));
    lines.extend(approval_lines(result, live));
    let prompt = task
        .prompt_template
        .clone()
        .or_else(|| task.prompt_file.as_ref().map(|f| format!("(file) {f}")));
    if let Some(prompt) = prompt {
        lines.push(("prompt".to_string(), prompt.replace('\n', " ⏎ ")));
    }
    let questions = if status == RowStatus::NeedsInput {
        agent::questions(result)
    } else {
        Vec::new()
    };
    Some(DetailView {
        task_id: task.task_id.clone(),
        questions,
        lines,
    })
}

/// Where the task stands: its status (with the failure when it has ended failed) and attempts.
fn standing_lines(
    task: &TaskSpec,
    status: RowStatus,
    live: Option<LiveView<'_>>,
) -> Vec<(String, String)> {
    let mut state = style::label(status).to_string();
    if let Some(failure) =
        failure_of(task).filter(|_| status != RowStatus::Completed && live.is_none())
    {
        state.push_str(&format!(" · {failure}"));
    }
    let attempts = live.map_or(task.attempts, |l| l.number());
    vec![
        ("status".to_string(), state),
        (
            "attempts".to_string(),
            format!(
                "{attempts} of {} · agent {}",
                max_attempts(task.last_retried_attempt(), attempts),
                task.agent
            ),
        ),
    ]
}

/// What the last attempt's result says.
fn result_lines(
    result: Option<&Value>,
    live: Option<LiveView<'_>>,
    local: &LocalNow,
) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let text = |key: &str| result.and_then(|r| r.get(key)).and_then(Value::as_str);
    if let Some(why) = crate::core::operator::deciding_event::why_of(result, local) {
        // While the task runs again, the failure belongs to the attempt before.
        let label = if live.is_some() {
            "last failure"
        } else {
            "why"
        };
        lines.push((label.to_string(), why));
    }
    if let Some(report) = agent::reported(result, live) {
        lines.extend(agent::lines(&report, live.is_some()));
    }
    if let Some(log) = text("log_file") {
        lines.push(("log".to_string(), log.to_string()));
    }
    if let Some(account) = text("account") {
        lines.push(("account".to_string(), account.to_string()));
    }
    if let Some(changes) = result
        .and_then(|r| r.pointer("/changes/summary"))
        .and_then(Value::as_str)
    {
        lines.push(("changes".to_string(), changes.to_string()));
    }
    if let Some(worktree) = result.and_then(|r| r.get("worktree")) {
        let path = worktree.get("path").and_then(Value::as_str).unwrap_or("?");
        let state = worktree.get("state").and_then(Value::as_str).unwrap_or("?");
        lines.push(("worktree".to_string(), format!("{path} ({state})")));
    }
    lines
}

/// The task's permission policy switches that are on, and its allow / ask / deny rules.
fn policy_lines(task: &TaskSpec) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let policy: Vec<&str> = task
        .permission_policy
        .iter()
        .filter(|(_, on)| **on)
        .map(|(k, _)| k.as_str())
        .collect();
    if !policy.is_empty() {
        lines.push(("policy".to_string(), policy.join(", ")));
    }
    let rules = &task.permission_rules;
    for (name, list) in [
        ("allow", &rules.allow),
        ("ask", &rules.ask),
        ("deny", &rules.deny),
    ] {
        if !list.is_empty() {
            lines.push((name.to_string(), list.join(", ")));
        }
    }
    lines
}

/// What the guard holds now, then every answer of the running (or last) attempt.
fn approval_lines(result: Option<&Value>, live: Option<LiveView<'_>>) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    if let Some(w) = live.and_then(|l| l.attempt().waiting()) {
        let note = w.guard_note();
        if !note.is_empty() {
            lines.push(("guard".to_string(), note));
        }
    }
    if let Some(l) = live {
        for a in l.attempt().approvals() {
            lines.push(("approved".to_string(), a.summary()));
        }
        return lines;
    }
    let recorded = result
        .and_then(|r| r.get("approvals"))
        .and_then(Value::as_array);
    for a in recorded.into_iter().flatten() {
        let field = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("?");
        lines.push((
            "approved".to_string(),
            format!(
                "{} {} ({})",
                field("by"),
                field("request"),
                field("decision")
            ),
        ));
    }
    lines
}
