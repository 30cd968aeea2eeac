//! What a task's agent reported about itself, as the dashboard shows it: read from the task's
//! `result`, or while an attempt runs, from its events so far. Reads only.

use serde_json::{Map, Value, json};

use crate::run::engine::LiveView;
use crate::run::outcome::agent_facts;
use crate::ui::numbers::{cost_precise, thousands};

/// Rows of an agent's final text shown in the details.
const RESULT_LINES: usize = 3;

/// The task's cost over its attempts (a running attempt's cost so far included) and the turns of
/// its running attempt, else of its last one.
pub fn usage(result: Option<&Value>, live: Option<LiveView<'_>>) -> (Option<f64>, Option<u64>) {
    match live {
        Some(live) => {
            let facts = live.attempt().stream_facts();
            let cost = agent_facts::total_cost(result, facts.and_then(|f| f.cost_usd));
            (cost, facts.and_then(|f| f.num_turns).map(u64::from))
        }
        None => (
            agent_facts::total_cost(result, None),
            result
                .and_then(|r| r.get("num_turns"))
                .and_then(Value::as_u64),
        ),
    }
}

/// The agent's report for the details: the task's `result`, or a running attempt's events so
/// far (without the previous attempt's signal, transcript and questions: they no longer hold).
pub fn reported(result: Option<&Value>, live: Option<LiveView<'_>>) -> Option<Value> {
    let Some(live) = live else {
        return result.cloned();
    };
    let mut map = Map::new();
    let facts = live.attempt().stream_facts();
    if let Some(facts) = facts {
        agent_facts::stream_result_fields(facts, &mut map);
    }
    if let Some(session) = live.resumed_session() {
        map.entry("session_id").or_insert_with(|| json!(session));
        map.insert("resumed".into(), json!(true));
    }
    if let Some(total) = agent_facts::total_cost(result, facts.and_then(|f| f.cost_usd)) {
        map.insert("total_cost_usd".into(), json!(total));
    }
    Some(Value::Object(map))
}

/// The questions in a task's `result` (a task that needs input).
pub fn questions(result: Option<&Value>) -> Vec<String> {
    result
        .and_then(|r| r.get("questions"))
        .and_then(Value::as_array)
        .map(|list| list.iter().map(text_of).collect())
        .unwrap_or_default()
}

/// Detail lines for what the agent reported (`running`: the attempt is still going).
pub fn lines(report: &Value, running: bool) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let mut push = |label: &str, value: String| lines.push((label.to_string(), value));
    let field = |name: &str| report.get(name).filter(|v| !v.is_null());
    let count = |v: Option<&Value>| v.and_then(Value::as_u64);
    if let Some(text) = field("result_text").and_then(Value::as_str) {
        let shown = first_lines(text, RESULT_LINES);
        let is_error = field("is_error").and_then(Value::as_bool) == Some(true);
        push(
            "result",
            if is_error {
                format!("(error) {shown}")
            } else {
                shown
            },
        );
    }
    if let Some(id) = field("session_id").and_then(Value::as_str) {
        let resumed = field("resumed").and_then(Value::as_bool) == Some(true);
        push(
            "session",
            if resumed {
                format!("{id} · resumed")
            } else {
                id.to_string()
            },
        );
    }
    let this_attempt = field("cost_usd").and_then(Value::as_f64);
    let total = field("total_cost_usd").and_then(Value::as_f64);
    let attempt_words = if running {
        "this attempt so far"
    } else {
        "this attempt"
    };
    match (this_attempt, total) {
        (Some(cost), Some(total)) if cost == total && !running => {
            push(
                "cost",
                format!("{} this attempt = total", cost_precise(cost)),
            );
        }
        (Some(cost), Some(total)) => push(
            "cost",
            format!(
                "{} {attempt_words} · {} total",
                cost_precise(cost),
                cost_precise(total)
            ),
        ),
        (Some(cost), None) => push("cost", format!("{} {attempt_words}", cost_precise(cost))),
        (None, Some(total)) => push("cost", format!("{} total", cost_precise(total))),
        (None, None) => {}
    }
    let tokens = field("tokens").or_else(|| {
        report
            .get("transcript")
            .and_then(|t| t.get("tokens"))
            .filter(|t| !t.is_null())
    });
    if let Some(tokens) = tokens.and_then(tokens_text) {
        push("tokens", tokens);
    }
    match (count(field("num_turns")), count(field("tool_calls"))) {
        (Some(turns), Some(tools)) => push("turns", format!("{turns} · tools {tools}")),
        (Some(turns), None) => push("turns", turns.to_string()),
        (None, Some(tools)) => push("tools", tools.to_string()),
        (None, None) => {}
    }
    if let Some(denials) = field("permission_denials").and_then(Value::as_array)
        && !denials.is_empty()
    {
        let list: Vec<String> = denials.iter().map(text_of).collect();
        push("denied", list.join(", "));
    }
    if let Some(signal) = field("signal").and_then(signal_text) {
        push("signal", signal);
    }
    if let Some(transcript) = field("transcript").and_then(transcript_text) {
        push("transcript", transcript);
    }
    lines
}

/// The first `n` lines of `text`, newlines shown as ⏎; an ellipsis when there are more.
pub fn first_lines(text: &str, n: usize) -> String {
    let all: Vec<&str> = text
        .trim()
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut shown = all.iter().take(n).copied().collect::<Vec<_>>().join(" ⏎ ");
    if all.len() > n {
        shown.push_str(" ⏎ …");
    }
    shown
}

/// `in 1,200 · out 340 · cache 5,000` (cache: read and written); None without counts.
fn tokens_text(tokens: &Value) -> Option<String> {
    let get = |name: &str| tokens.get(name).and_then(Value::as_u64);
    let mut parts = Vec::new();
    if let Some(n) = get("input") {
        parts.push(format!("in {}", thousands(n)));
    }
    if let Some(n) = get("output") {
        parts.push(format!("out {}", thousands(n)));
    }
    let (read, written) = (get("cache_read"), get("cache_creation"));
    if read.is_some() || written.is_some() {
        let cache = read.unwrap_or(0) + written.unwrap_or(0);
        parts.push(format!("cache {}", thousands(cache)));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The signal file's status (`done`, `questions`, `error: why`), or why it could not be read.
fn signal_text(signal: &Value) -> Option<String> {
    match signal.get("status").and_then(Value::as_str) {
        Some("error") => Some(match signal.get("error").filter(|e| !e.is_null()) {
            Some(error) => format!("error: {}", text_of(error)),
            None => "error".to_string(),
        }),
        Some(status) => Some(status.to_string()),
        None => signal
            .get("problem")
            .map(|p| format!("problem: {}", text_of(p))),
    }
}

/// `path · turn ended · 4 tool calls · 1 bash failure`.
fn transcript_text(transcript: &Value) -> Option<String> {
    let path = transcript.get("path").and_then(Value::as_str)?;
    let mut parts = vec![path.to_string()];
    let ended = transcript.get("ended_turn").and_then(Value::as_bool);
    let stop = transcript.get("last_stop_reason").and_then(Value::as_str);
    match (ended, stop) {
        (Some(true), _) => parts.push("turn ended".into()),
        (_, Some(reason)) => parts.push(format!("stopped: {reason}")),
        (Some(false), None) => parts.push("turn not ended".into()),
        (None, None) => {}
    }
    let plural = |n: u64, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    if let Some(n) = transcript.get("tool_calls").and_then(Value::as_u64) {
        parts.push(plural(n, "tool call"));
    }
    if let Some(n) = transcript.get("bash_failures").and_then(Value::as_u64) {
        parts.push(plural(n, "bash failure"));
    }
    Some(parts.join(" · "))
}

/// A JSON value as text: strings as they are, anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(report: Value) -> Vec<(String, String)> {
        lines(&report, false)
    }

    fn pair(label: &str, value: &str) -> (String, String) {
        (label.to_string(), value.to_string())
    }

    #[test]
    fn a_structured_result_becomes_detail_lines() {
        let report = json!({
            "log_file": "runs/t/attempt_2.log",
            "result_text": "Fixed the merge.\n\nAll 12 tests pass.\nSee the diff.\nBye",
            "session_id": "s-1",
            "is_error": false,
            "resumed": true,
            "cost_usd": 0.0123,
            "total_cost_usd": 0.0456,
            "tokens": {"input": 1200, "output": 340, "cache_read": 4800, "cache_creation": 200},
            "num_turns": 3,
            "tool_calls": 5,
            "permission_denials": ["Bash(rm -rf /)", "Write(/etc/x)"],
            "signal": {"status": "done", "result": "Fixed"},
            "transcript": {"path": "/home/u/.claude/projects/x/s-1.jsonl", "assistant_messages": 4,
                "ended_turn": true, "last_stop_reason": "end_turn", "tool_calls": 4, "bash_failures": 1,
                "tokens": {"input": 1, "output": 2, "cache_read": null, "cache_creation": null}},
        });
        assert_eq!(
            lines_of(report),
            vec![
                pair(
                    "result",
                    "Fixed the merge. ⏎ All 12 tests pass. ⏎ See the diff. ⏎ …"
                ),
                pair("session", "s-1 · resumed"),
                pair("cost", "$0.0123 this attempt · $0.0456 total"),
                pair("tokens", "in 1,200 · out 340 · cache 5,000"),
                pair("turns", "3 · tools 5"),
                pair("denied", "Bash(rm -rf /), Write(/etc/x)"),
                pair("signal", "done"),
                pair(
                    "transcript",
                    "/home/u/.claude/projects/x/s-1.jsonl · turn ended · 4 tool calls · 1 bash failure"
                ),
            ]
        );
    }

    #[test]
    fn partial_reports_show_what_there_is() {
        assert!(lines_of(json!({"log_file": "x", "is_error": null})).is_empty());
        assert_eq!(
            lines_of(json!({"result_text": "no key", "is_error": true, "total_cost_usd": 0.5})),
            vec![
                pair("result", "(error) no key"),
                pair("cost", "$0.5000 total")
            ]
        );
        assert_eq!(
            lines_of(json!({"tool_calls": 2, "signal": {"status": null, "problem": "not JSON"}})),
            vec![pair("tools", "2"), pair("signal", "problem: not JSON")]
        );
        assert_eq!(
            lines_of(json!({"signal": {"status": "error", "error": "tests fail"},
                "transcript": {"path": "t.jsonl", "ended_turn": false, "last_stop_reason": "tool_use",
                    "tool_calls": 1, "bash_failures": 0,
                    "tokens": {"input": 10, "output": null}}})),
            vec![
                pair("tokens", "in 10"),
                pair("signal", "error: tests fail"),
                pair(
                    "transcript",
                    "t.jsonl · stopped: tool_use · 1 tool call · 0 bash failures"
                ),
            ]
        );
        assert_eq!(
            lines_of(json!({"cost_usd": 0.25, "total_cost_usd": 0.25})),
            vec![pair("cost", "$0.2500 this attempt = total")]
        );
        let running = lines(&json!({"cost_usd": 0.25, "total_cost_usd": 0.75}), true);
        assert_eq!(
            running,
            vec![pair("cost", "$0.2500 this attempt so far · $0.7500 total")]
        );
    }

    #[test]
    fn the_final_text_shows_its_first_lines() {
        assert_eq!(first_lines("one line", 3), "one line");
        assert_eq!(first_lines("  a\r\nb  \n", 3), "a ⏎ b");
        assert_eq!(first_lines("a\nb\nc\nd", 2), "a ⏎ b ⏎ …");
        assert_eq!(first_lines("", 3), "");
    }

    #[test]
    fn questions_come_from_the_result() {
        let result = json!({"questions": ["Which database?", "May I drop it?"]});
        assert_eq!(
            questions(Some(&result)),
            vec!["Which database?", "May I drop it?"]
        );
        assert!(questions(None).is_empty());
        assert!(questions(Some(&json!({"questions": null}))).is_empty());
    }

    #[test]
    fn a_finished_task_costs_its_total_and_its_last_turns() {
        let result = json!({"cost_usd": 0.25, "total_cost_usd": 0.75, "num_turns": 4});
        assert_eq!(usage(Some(&result), None), (Some(0.75), Some(4)));
        let older = json!({"cost_usd": 0.25});
        assert_eq!(usage(Some(&older), None), (Some(0.25), None));
        assert_eq!(usage(None, None), (None, None));
        assert_eq!(usage(Some(&json!({"log_file": "x"})), None), (None, None));
    }
}
