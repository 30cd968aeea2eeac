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
        "max_attempts": task.max_retries + 1,
        "failure_type": field("failure_type"),
        "failure_evidence": field("failure_evidence"),
        "log_file": field("log_file"),
    })
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
    let headers = [
        "TASK",
        "AGENT",
        "STATUS",
        "ATTEMPTS",
        "FAILURE",
        "LAST LOG / EVIDENCE",
    ];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let status = if r["enabled"] == json!(false) {
                format!("{} (disabled)", text(&r["status"]))
            } else {
                text(&r["status"])
            };
            let last = match (&r["failure_evidence"], &r["log_file"]) {
                (Value::String(e), Value::String(log)) => format!("{log}: {}", clip(e, 70)),
                (Value::String(e), _) => clip(e, 90),
                (_, log) => text(log),
            };
            [
                text(&r["task_id"]),
                text(&r["agent"]),
                status,
                format!("{}/{}", r["attempts"], r["max_attempts"]),
                text(&r["failure_type"]),
                last,
            ]
        })
        .collect();
    let mut widths = headers.map(|h| h.chars().count());
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
    line(&mut out, &headers.map(str::to_string));
    for row in &cells {
        line(&mut out, row);
    }
    let mut counts: BTreeMap<TaskStatus, usize> = BTreeMap::new();
    for &i in indices {
        *counts.entry(file.tasks()[i].status).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let noun = if indices.len() == 1 { "task" } else { "tasks" };
    let _ = writeln!(out, "\n{} {noun}: {}", indices.len(), counts.join(", "));
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
    }
}
