//! What an agent itself reported, as fields of the `result` and the facts file.

use serde_json::{Map, Value, json};

use crate::core::attempt::signal_status;
use crate::core::facts::signal_file::{Signal, SignalFile, SignalFileError};
use crate::core::facts::transcript::TranscriptFacts;
use crate::core::wire::stream::StreamFacts;

/// A result text longer than this is cut in the tasks file (the recordings keep it).
const RESULT_TEXT_MAX_CHARS: usize = 20_000;

/// `text`, cut to `max` characters with a note of how much was left out.
fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… [{} more characters in the recording]", total - max)
}

/// Fields of `result` from a structured agent's events.
pub fn stream_result_fields(facts: &StreamFacts, into: &mut Map<String, Value>) {
    if let Some(text) = &facts.result_text {
        into.insert(
            "result_text".into(),
            json!(bounded(text, RESULT_TEXT_MAX_CHARS)),
        );
    }
    if let Some(id) = &facts.session_id {
        into.insert("session_id".into(), json!(id));
    }
    let is_error = facts.result.as_ref().map(|r| !r.success);
    into.insert("is_error".into(), json!(is_error));
    if let Some(cost) = facts.cost_usd {
        into.insert("cost_usd".into(), json!(cost));
    }
    let t = &facts.tokens;
    if t.input.is_some() || t.output.is_some() {
        into.insert(
            "tokens".into(),
            json!({
                "input": t.input,
                "output": t.output,
                "cache_read": t.cache_read,
                "cache_creation": t.cache_creation,
            }),
        );
    }
    if let Some(turns) = facts.num_turns {
        into.insert("num_turns".into(), json!(turns));
    }
    if facts.tool_calls > 0 {
        into.insert("tool_calls".into(), json!(facts.tool_calls));
    }
    if !facts.permission_denials.is_empty() {
        into.insert("permission_denials".into(), json!(facts.permission_denials));
    }
}

/// Fields of `result` from the signal file.
pub fn signal_result_fields(
    read: &Result<SignalFile, SignalFileError>,
    into: &mut Map<String, Value>,
) {
    let file = match read {
        Ok(file) => file,
        Err(problem) => {
            into.insert(
                "signal".into(),
                json!({"status": null, "problem": problem.to_string()}),
            );
            return;
        }
    };
    let mut signal = json!({"status": signal_status(&file.signal)});
    match &file.signal {
        Signal::Done { result } => {
            if let Some(result) = result {
                signal["result"] = result.clone();
                if let Some(text) = result.as_str() {
                    into.insert(
                        "result_text".into(),
                        json!(bounded(text, RESULT_TEXT_MAX_CHARS)),
                    );
                }
            }
        }
        Signal::Questions { questions } => {
            signal["questions"] = json!(questions);
            into.insert("questions".into(), json!(questions));
        }
        Signal::Error { error } => signal["error"] = json!(error),
    }
    into.insert("signal".into(), signal);
    if let Some(id) = &file.session_id {
        into.entry("session_id").or_insert_with(|| json!(id));
    }
}

/// The short form of a transcript's facts for `result` (the facts file has them whole).
pub fn transcript_summary(path: &str, facts: &TranscriptFacts) -> Value {
    let tool_calls: u32 = facts.tool_calls.values().sum();
    json!({
        "path": path,
        "assistant_messages": facts.assistant_messages,
        "ended_turn": facts.ended_turn(),
        "last_stop_reason": facts.last_stop_reason,
        "tool_calls": tool_calls,
        "bash_failures": facts.bash_failures.len(),
        "tokens": {
            "input": facts.tokens.input,
            "output": facts.tokens.output,
            "cache_read": facts.tokens.cache_read,
            "cache_creation": facts.tokens.cache_creation,
        },
    })
}

/// The task's total cost over its attempts: the previous total (or cost) plus this attempt's.
pub fn total_cost(previous: Option<&Value>, this_attempt: Option<f64>) -> Option<f64> {
    let before = previous.and_then(|r| {
        r.get("total_cost_usd")
            .or_else(|| r.get("cost_usd"))
            .and_then(Value::as_f64)
    });
    match (before, this_attempt) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::wire::stream::{FinalResult, Tokens};

    #[test]
    fn a_structured_result_becomes_result_fields() {
        let facts = StreamFacts {
            session_id: Some("s1".into()),
            result: Some(FinalResult {
                success: true,
                subtype: Some("success".into()),
            }),
            result_text: Some("Done.".into()),
            cost_usd: Some(0.25),
            tokens: Tokens {
                input: Some(10),
                output: Some(5),
                cache_read: None,
                cache_creation: None,
            },
            num_turns: Some(2),
            tool_calls: 1,
            ..StreamFacts::default()
        };
        let mut map = Map::new();
        stream_result_fields(&facts, &mut map);
        assert_eq!(
            Value::Object(map),
            json!({
                "result_text": "Done.", "session_id": "s1", "is_error": false, "cost_usd": 0.25,
                "tokens": {"input": 10, "output": 5, "cache_read": null, "cache_creation": null},
                "num_turns": 2, "tool_calls": 1,
            })
        );
    }

    #[test]
    fn long_texts_are_cut_with_a_note() {
        let text = "x".repeat(RESULT_TEXT_MAX_CHARS + 7);
        let cut = bounded(&text, RESULT_TEXT_MAX_CHARS);
        assert!(cut.ends_with("… [7 more characters in the recording]"));
    }

    #[test]
    fn questions_and_problems_of_the_signal_file_are_kept() {
        let mut map = Map::new();
        let read = Ok(SignalFile {
            signal: Signal::Questions {
                questions: vec!["Which DB?".into()],
            },
            session_id: Some("s2".into()),
        });
        signal_result_fields(&read, &mut map);
        assert_eq!(map["questions"], json!(["Which DB?"]));
        assert_eq!(map["signal"]["status"], json!("questions"));
        assert_eq!(map["session_id"], json!("s2"));
        let mut map = Map::new();
        signal_result_fields(&Err(SignalFileError::NoStatus), &mut map);
        assert_eq!(
            map["signal"]["problem"],
            json!(r#"the signal file has no "status"; expected "done", "questions" or "error""#)
        );
    }

    #[test]
    fn costs_add_up_over_attempts() {
        assert_eq!(total_cost(None, None), None);
        assert_eq!(total_cost(None, Some(0.5)), Some(0.5));
        let previous = json!({"cost_usd": 0.25, "total_cost_usd": 0.75});
        assert_eq!(total_cost(Some(&previous), Some(0.5)), Some(1.25));
        let previous = json!({"cost_usd": 0.25});
        assert_eq!(total_cost(Some(&previous), None), Some(0.25));
    }
}
