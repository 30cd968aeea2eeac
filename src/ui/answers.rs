//! The answers window (`A`): every answered permission prompt of a task, attempt by attempt:
//! when, by whom, with which keys, what was asked and what the guard decided. Past attempts
//! come from their facts files, the running one from its attempt. Read on a worker (`reads`).

use std::path::Path;

use serde_json::Value;

use crate::core::approval::Approval;

/// The window's text for a task: one header line per attempt, one line per answer under it.
pub fn lines(task_dir: &Path, live: Option<(u32, &[Approval])>) -> Vec<String> {
    let mut out = Vec::new();
    let live_number = live.map(|(n, _)| n);
    for entry in super::attempts::list(task_dir).into_iter().rev() {
        if Some(entry.number) == live_number {
            continue;
        }
        let path = task_dir.join(format!("attempt_{}.json", entry.number));
        out.push(format!("attempt {} · {}", entry.number, entry.summary()));
        out.extend(recorded(&path));
    }
    if let Some((number, approvals)) = live {
        out.push(format!("attempt {number} · running"));
        if approvals.is_empty() {
            out.push("  no prompt answered yet".into());
        }
        out.extend(
            approvals
                .iter()
                .map(|a| format!("  +{:>6.1}s  {}", a.at.as_secs_f64(), a.summary())),
        );
    }
    if out.is_empty() {
        out.push("No attempt yet: the task has not run.".into());
    }
    out
}

/// The answers in one facts file, a line each.
fn recorded(facts: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(facts) else {
        return vec!["  no facts file (the attempt was interrupted)".into()];
    };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        return vec!["  its facts file cannot be read".into()];
    };
    let list = doc
        .get("approvals")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if list.is_empty() {
        return vec!["  no prompt answered".into()];
    }
    list.iter().map(line_of).collect()
}

/// `  +  3.2s  auto via screen press_1 "1": shell npm test — allow (auto_press_1)`.
fn line_of(a: &Value) -> String {
    let text = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("");
    let at = a.get("at_sec").and_then(Value::as_f64).unwrap_or(0.0);
    let mut line = format!(
        "  +{at:>6.1}s  {} via {} {}",
        text("by"),
        crate::replay::explain::channel_of(a),
        crate::replay::explain::answer_given(a)
    );
    if let Some(request) = a.get("request").filter(|r| !r.is_null()) {
        let field = |k: &str| request.get(k).and_then(Value::as_str).unwrap_or("?");
        line.push_str(&format!(": {} {}", field("kind"), field("text")));
    }
    if !text("decision").is_empty() {
        line.push_str(&format!(" — {}", text("decision")));
        if !text("why").is_empty() {
            line.push_str(&format!(" ({})", text("why")));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_attempts_list_their_answers_from_the_facts_files() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("attempt_1.cast"), "").expect("cast");
        std::fs::write(
            dir.path().join("attempt_1.json"),
            r#"{"verdict": "failed", "failure_type": "failed_permission_blocked",
                "approvals": [{"at_sec": 3.25, "by": "operator", "rule": "Esc", "keys": "\u001b",
                  "request": {"kind": "shell", "text": "rm -rf ~", "options": []},
                  "decision": "refuse", "why": "a forced recursive delete of ~"}]}"#,
        )
        .expect("facts");
        std::fs::write(dir.path().join("attempt_2.cast"), "").expect("cast");
        std::fs::write(dir.path().join("attempt_2.json"), r#"{"approvals": []}"#).expect("facts");
        let text = lines(dir.path(), None);
        assert_eq!(text[0], "attempt 1 · failed_permission_blocked");
        assert_eq!(
            text[1],
            "  +   3.2s  operator via screen Esc \"\\u{1b}\": shell rm -rf ~ — refuse (a forced recursive \
             delete of ~)"
        );
        assert_eq!(text[2], "attempt 2 · no verdict");
        assert_eq!(text[3], "  no prompt answered");
    }

    #[test]
    fn each_answer_names_its_channel() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("attempt_1.cast"), "").expect("cast");
        std::fs::write(
            dir.path().join("attempt_1.json"),
            r#"{"approvals": [
                {"at_sec": 1.0, "by": "auto", "channel": "hook", "rule": "hook", "keys": "",
                 "title": "PreToolUse", "option": "deny",
                 "request": {"kind": "shell", "text": "curl x | sh", "options": []},
                 "decision": "refuse", "why": "it runs a download"},
                {"at_sec": 2.0, "by": "auto", "rule": "acp", "keys": "", "option": "allow_once",
                 "request": {"kind": "shell", "text": "touch x", "options": []},
                 "decision": "allow", "why": "auto_press_1"}]}"#,
        )
        .expect("facts");
        let text = lines(dir.path(), None);
        assert_eq!(
            text[1],
            "  +   1.0s  auto via hook PreToolUse deny: shell curl x | sh — refuse (it runs a \
             download)"
        );
        // Facts written before channels were recorded: an ACP answer is known by its option.
        assert_eq!(
            text[2],
            "  +   2.0s  auto via acp allow_once: shell touch x — allow (auto_press_1)"
        );
    }

    #[test]
    fn a_task_that_never_ran_says_so() {
        let dir = tempfile::tempdir().expect("dir");
        assert_eq!(
            lines(&dir.path().join("missing"), None),
            ["No attempt yet: the task has not run."]
        );
    }
}
