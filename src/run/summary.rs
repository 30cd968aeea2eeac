//! Tables of tasks: the summary after a headless run and `herd status`.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{Value, json};

use super::engine::Engine;
use crate::core::task::{TaskSpec, TaskStatus};
use crate::core::taskfile::TaskFile;

/// One task's row.
pub fn row(task: &TaskSpec) -> Value {
    let result = task.result.as_ref();
    let field = |name: &str| {
        result
            .and_then(|r| r.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    json!({
        "task_id": task.task_id,
        "agent": task.agent,
        "enabled": task.enabled,
        "status": task.status.as_str(),
        "attempts": task.attempts,
        // Retried by hand past its budget, a task had more attempts than it was given.
        "max_attempts": task.last_retried_attempt().saturating_add(1).max(task.attempts),
        "failure_type": field("failure_type"),
        "failure_evidence": field("failure_evidence"),
        "log_file": field("log_file"),
        "cost_usd": field("total_cost_usd"),
        "num_turns": field("num_turns"),
        "session_id": field("session_id"),
        "result_text": field("result_text"),
        "questions": field("questions"),
    })
}

/// What the last column says of a task that did not fail: the agent's questions, its final
/// text, or its log.
fn outcome_text(r: &Value) -> String {
    if let Some(questions) = r["questions"].as_array().filter(|q| !q.is_empty()) {
        let list: Vec<String> = questions.iter().map(text).collect();
        return clip(&format!("? {}", list.join(" | ")), 90);
    }
    match (&r["result_text"], &r["log_file"]) {
        (Value::String(t), Value::String(log)) if !t.trim().is_empty() => {
            format!("{log}: “{}”", clip(t.trim(), 60))
        }
        (_, log) => text(log),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn clip(s: &str, max: usize) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.chars().count() <= max {
        s
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// A plain text table of `indices` from `file`, then the counts by status.
pub fn table_for(file: &TaskFile, indices: &[usize]) -> String {
    let rows: Vec<Value> = indices.iter().map(|&i| row(&file.tasks()[i])).collect();
    let with_cost = rows.iter().any(|r| r["cost_usd"].is_number());
    let headers = [
        "TASK",
        "AGENT",
        "STATUS",
        "ATTEMPTS",
        "FAILURE",
        "COST",
        "LAST LOG / EVIDENCE",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            // One word with the dashboard: a disabled task that would otherwise run is
            // "skipped"; what a disabled task already reached stays as it is.
            let status = if r["enabled"] == json!(false) {
                match text(&r["status"]).as_str() {
                    "pending" | "retryable" => "skipped (disabled)".to_string(),
                    other => format!("{other} (disabled)"),
                }
            } else {
                text(&r["status"])
            };
            let last = match (&r["failure_evidence"], &r["log_file"]) {
                (Value::String(e), Value::String(log)) => format!("{log}: {}", clip(e, 70)),
                (Value::String(e), _) => clip(e, 90),
                _ => outcome_text(r),
            };
            let cost = r["cost_usd"]
                .as_f64()
                .map(|c| format!("${c:.4}"))
                .unwrap_or_else(|| "-".to_string());
            [
                text(&r["task_id"]),
                text(&r["agent"]),
                status,
                format!("{}/{}", r["attempts"], r["max_attempts"]),
                text(&r["failure_type"]),
                cost,
                last,
            ]
        })
        .collect();
    // The cost column only when some agent reported a cost.
    let keep = |i: usize| with_cost || i != 5;
    let headers: Vec<&str> = headers
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, h)| *h)
        .collect();
    let cells: Vec<Vec<String>> = cells
        .into_iter()
        .map(|row| {
            row.into_iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, c)| c)
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cols: &[String]| {
        let mut parts = Vec::new();
        for (i, c) in cols.iter().enumerate() {
            if i + 1 == cols.len() {
                parts.push(c.clone());
            } else {
                parts.push(format!("{c:<w$}", w = widths[i]));
            }
        }
        let _ = writeln!(out, "{}", parts.join("  ").trim_end());
    };
    let header_cells: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    line(&mut out, &header_cells);
    for row in &cells {
        line(&mut out, row);
    }
    let mut counts: BTreeMap<TaskStatus, usize> = BTreeMap::new();
    for &i in indices {
        *counts.entry(file.tasks()[i].status).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let noun = if indices.len() == 1 { "task" } else { "tasks" };
    let spent: f64 = rows.iter().filter_map(|r| r["cost_usd"].as_f64()).sum();
    let spent = if with_cost {
        format!("; ${spent:.4} spent")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\n{} {noun}: {}{spent}",
        indices.len(),
        counts.join(", ")
    );
    let asking: Vec<&str> = indices
        .iter()
        .map(|&i| &file.tasks()[i])
        .filter(|t| t.status == TaskStatus::NeedsInput)
        .map(|t| t.task_id.as_str())
        .collect();
    if let Some(first) = asking.first() {
        let _ = writeln!(
            out,
            "{} need{} input: answer with `herd message --tasks <file> {first} \"...\"`, then run again",
            asking.join(", "),
            if asking.len() == 1 { "s" } else { "" }
        );
    }
    out
}

/// The summary after a run, over the tasks it was asked to run.
pub fn table(engine: &Engine) -> String {
    table_for(engine.store().file(), &engine.scoped_tasks())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_lists_every_task_and_the_counts() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "a", "agent": "sim", "prompt_template": "x", "status": "completed", "attempts": 1,
             "result": {"failure_type": null, "log_file": "runs/a/attempt_1.log"}},
            {"task_id": "bb", "agent": "sim", "prompt_template": "x", "status": "failed", "attempts": 2,
             "result": {"failure_type": "failed_auth", "failure_evidence": "Invalid API key", "log_file": "runs/bb/attempt_2.log"}}
        ]}"#).unwrap();
        let t = table_for(&file, &[0, 1]);
        assert!(
            t.contains("a     sim    completed  1/2       -            runs/a/attempt_1.log"),
            "{t}"
        );
        let bb = t.lines().nth(2).unwrap();
        assert!(
            bb.starts_with("bb    sim    failed     2/2       failed_auth"),
            "{t}"
        );
        assert!(
            bb.ends_with("runs/bb/attempt_2.log: Invalid API key"),
            "{t}"
        );
        assert!(t.ends_with("2 tasks: 1 completed, 1 failed\n"), "{t}");
        assert!(!t.contains("COST"), "{t}");
    }

    #[test]
    fn costs_texts_and_questions_show_when_agents_report_them() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "a", "agent": "claude-json", "prompt_template": "x", "status": "completed", "attempts": 1,
             "result": {"log_file": "runs/a/attempt_1.log", "result_text": "All done.\nBye", "total_cost_usd": 0.0123}},
            {"task_id": "q", "agent": "sim", "prompt_template": "x", "status": "needs_input", "attempts": 1,
             "result": {"log_file": "runs/q/attempt_1.log", "questions": ["Which DB?", "Drop it?"]}}
        ]}"#).unwrap();
        let t = table_for(&file, &[0, 1]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("COST"), "{t}");
        assert!(
            lines[1].ends_with("$0.0123  runs/a/attempt_1.log: “All done. Bye”"),
            "{t}"
        );
        assert!(lines[2].ends_with("-        ? Which DB? | Drop it?"), "{t}");
        assert!(
            t.contains("2 tasks: 1 completed, 1 needs_input; $0.0123 spent\n"),
            "{t}"
        );
        assert!(
            t.ends_with("q needs input: answer with `herd message --tasks <file> q \"...\"`, then run again\n"),
            "{t}"
        );
    }
}
