//! What Gemini's events add to the facts: refused tool results and its messages.

use super::*;

/// Gemini error types of a tool call that was refused rather than run.
const GEMINI_REFUSALS: [&str; 3] = ["tool_not_registered", "permission_denied", "tool_denied"];

/// Gemini `tool_result` with status `error`: headless Gemini leaves tools that need approval out
/// of its registry, so `tool_not_registered` is a refusal.
pub(super) fn gemini_tool_result(facts: &mut StreamFacts, event: &Object) {
    if text(event, "status") != Some("error") {
        return;
    }
    let error = object(event, "error");
    let kind = error.and_then(|e| text(e, "type")).unwrap_or_default();
    let message = error.and_then(|e| text(e, "message")).unwrap_or_default();
    let lower = message.to_ascii_lowercase();
    let refused = GEMINI_REFUSALS.contains(&kind)
        || ["not allowed", "denied", "rejected", "requires approval"]
            .iter()
            .any(|t| lower.contains(t));
    if refused {
        let tool = text(event, "tool_id").unwrap_or("tool");
        facts
            .refused_tools
            .push(format!("{tool}: {message} ({kind})"));
    }
}

/// Gemini `message`: a user message starts a new answer; assistant contents make it up.
pub(super) fn gemini_message(facts: &mut StreamFacts, event: &Object) {
    match text(event, "role") {
        Some("user") => facts.result_text = None,
        Some("assistant") => {
            let content = text(event, "content").unwrap_or_default();
            let delta = event.get("delta").and_then(Value::as_bool) == Some(true);
            match &mut facts.result_text {
                Some(said) if delta => said.push_str(content),
                _ => facts.result_text = Some(content.to_string()),
            }
        }
        _ => {}
    }
}
