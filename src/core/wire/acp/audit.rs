//! The session's answers to permission requests, carried to the engine in the client's final
//! `result` event (`herd_approvals`) and read back into the same [`Approval`]s screen prompts
//! give. Both directions, tested as a round trip. Pure.

use std::time::Duration;

use serde_json::{Value, json};

use super::permission::as_denial;
use crate::core::approval::{AnsweredBy, Approval, Channel};
use crate::core::guard::{Decision, Request};

/// An answer given to a permission request, for the audit.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub at: Duration,
    /// `auto` or `operator`.
    pub by: &'static str,
    pub request: Option<Request>,
    pub decision: Decision,
    /// The option's kind (`allow_once`…) or `cancelled`.
    pub option: String,
    /// The tool call's title, as the agent gave it.
    pub title: Option<String>,
}

/// The field of the client's `result` event that carries the answers.
pub const FIELD: &str = "herd_approvals";

/// The prompt rule name an ACP answer is recorded under (it has no screen rule).
pub const RULE: &str = "acp";

/// One answer as the event carries it.
pub fn to_value(answer: &Answer) -> Value {
    let mut value = json!({
        "at_sec": (answer.at.as_secs_f64() * 1000.0).round() / 1000.0,
        "by": answer.by,
        "decision": answer.decision.name(),
        "why": answer.decision.why(),
        "option": answer.option,
    });
    if let Some(request) = &answer.request {
        value["request"] = as_denial(request);
    }
    if let Some(title) = &answer.title {
        value["title"] = json!(title);
    }
    value
}

/// The answers of a `result` event; `None` when it carries none (not herd's ACP client).
pub fn read(event: &serde_json::Map<String, Value>) -> Option<Vec<Approval>> {
    let list = event.get(FIELD)?.as_array()?;
    Some(list.iter().filter_map(from_value).collect())
}

fn from_value(value: &Value) -> Option<Approval> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let why = text("why").unwrap_or_default();
    let decision = match text("decision")?.as_str() {
        "allow" => Decision::Allow { rule: why },
        "refuse" => Decision::Refuse { reason: why },
        _ => Decision::Ask { reason: why },
    };
    let by = match text("by").as_deref() {
        Some("operator") => AnsweredBy::Operator,
        _ => AnsweredBy::Herd,
    };
    let request = value.get("request").and_then(|r| {
        let name = r.get("tool_name")?.as_str()?;
        Some(super::permission::from_denial(name, r.get("tool_input")))
    });
    let option = text("option")?;
    let at = value
        .get("at_sec")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::ZERO, Duration::from_secs_f64);
    Some(Approval {
        at,
        by,
        channel: Channel::Acp,
        rule: RULE.to_string(),
        keys: String::new(),
        request,
        decision: Some(decision),
        option: Some(option),
        title: text("title"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::guard::RequestKind;

    fn answer(by: &'static str, kind: RequestKind, decision: Decision, option: &str) -> Answer {
        Answer {
            at: Duration::from_millis(1500),
            by,
            request: Some(Request::new(kind)),
            decision,
            option: option.into(),
            title: Some("the title".into()),
        }
    }

    #[test]
    fn answers_travel_in_the_result_event_and_come_back_as_approvals() {
        let answers = [
            answer(
                "auto",
                RequestKind::Shell {
                    command: "touch x".into(),
                },
                Decision::Allow {
                    rule: "auto_press_1".into(),
                },
                "allow_once",
            ),
            answer(
                "auto",
                RequestKind::Shell {
                    command: "rm -rf ~".into(),
                },
                Decision::Refuse {
                    reason: "it deletes your home folder".into(),
                },
                "reject_once",
            ),
            answer(
                "operator",
                RequestKind::Tool {
                    name: "mcp_search".into(),
                    input: "cats".into(),
                },
                Decision::Ask {
                    reason: "no rule allows it".into(),
                },
                "allow_always",
            ),
        ];
        let event =
            json!({"type": "result", FIELD: answers.iter().map(to_value).collect::<Vec<_>>()});
        let back = read(event.as_object().unwrap()).unwrap();
        assert_eq!(back.len(), 3);
        for (a, b) in answers.iter().zip(&back) {
            assert_eq!(b.by.as_str(), a.by);
            assert_eq!(b.request, a.request);
            assert_eq!(b.decision.as_ref(), Some(&a.decision));
            assert_eq!(b.option.as_deref(), Some(a.option.as_str()));
            assert_eq!(b.title.as_deref(), Some("the title"));
            assert_eq!(b.at, Duration::from_millis(1500));
            assert_eq!(b.rule, RULE);
            assert_eq!(b.channel, Channel::Acp);
        }
        assert_eq!(
            back[1].summary(),
            "auto via acp reject_once: Bash(rm -rf ~) — refuse: it deletes your home folder"
        );
    }

    #[test]
    fn a_result_without_the_field_or_with_junk_in_it() {
        let plain = json!({"type": "result", "subtype": "success"});
        assert_eq!(read(plain.as_object().unwrap()), None);
        let junk = json!({"type": "result", FIELD: [1, {"by": "auto"}, {"decision": "allow", "option": "allow_once"}]});
        let back = read(junk.as_object().unwrap()).unwrap();
        // Only the entry with a decision and an option is an answer; no request is `None`.
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].request, None);
    }
}
