//! What Codex's events add to the facts: tool items, usage, a failed turn.

use super::*;

/// Codex item types that are tool calls.
const CODEX_TOOL_ITEMS: [&str; 5] = [
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "collab_tool_call",
];

pub(super) fn codex_item(facts: &mut StreamFacts, event: &Object) {
    let Some(item) = object(event, "item") else {
        return;
    };
    // Codex before 0.40 named the field `item_type` and the message `assistant_message`.
    match text(item, "type").or_else(|| text(item, "item_type")) {
        Some("agent_message" | "assistant_message") => {
            if let Some(said) = text(item, "text") {
                facts.result_text = Some(said.to_string());
            }
        }
        // A warning such as missing model metadata; the turn goes on.
        Some("error") => facts.errors.push(message_error(
            text(item, "message").unwrap_or_default(),
            false,
        )),
        Some(kind) if CODEX_TOOL_ITEMS.contains(&kind) => {
            facts.tool_calls = facts.tool_calls.saturating_add(1);
            // The shell command a command item ran, as a request.
            if let Some(command) = text(item, "command") {
                facts
                    .tool_requests
                    .push(Request::from_parts("shell", command));
            }
        }
        _ => {}
    }
}

pub(super) fn codex_turn_completed(facts: &mut StreamFacts, event: &Object) {
    facts.result = Some(FinalResult {
        success: true,
        subtype: None,
    });
    facts.num_turns = Some(facts.num_turns.unwrap_or(0).saturating_add(1));
    if let Some(usage) = object(event, "usage") {
        let tokens = &mut facts.tokens;
        add(&mut tokens.input, number(usage, "input_tokens"));
        add(&mut tokens.output, number(usage, "output_tokens"));
        add(&mut tokens.cache_read, number(usage, "cached_input_tokens"));
        add(
            &mut tokens.cache_creation,
            number(usage, "cache_write_input_tokens"),
        );
    }
}

pub(super) fn codex_turn_failed(facts: &mut StreamFacts, event: &Object) {
    facts.result = Some(FinalResult {
        success: false,
        subtype: None,
    });
    let error = match object(event, "error") {
        Some(error) => error_object(error, true),
        None => message_error(text(event, "message").unwrap_or_default(), true),
    };
    facts.errors.push(error);
}
