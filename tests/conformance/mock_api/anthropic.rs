//! The Anthropic Messages API as Claude Code calls it: `POST /v1/messages` (streamed as SSE
//! `message_start` … `message_stop`, or whole when `stream` is false) and
//! `/v1/messages/count_tokens`. Error bodies are the API's `{"type":"error","error":{...}}`.

use serde_json::{Value, json};

use super::http::{Response, sse};
use super::{Call, Outcome, Scenario};

pub(crate) fn answer(call: &Call<'_>) -> Outcome {
    if call.path.starts_with("/v1/messages/count_tokens") {
        return Outcome::Answer(Response::json(200, &json!({"input_tokens": 12})));
    }
    let error = |status: u16, kind: &str, message: &str| {
        let body = json!({"type": "error", "error": {"type": kind, "message": message},
                          "request_id": "req_mock_conformance"});
        Response::json(status, &body).with_header("request-id", "req_mock_conformance")
    };
    let response = match call.scenario {
        Scenario::Hang => return Outcome::Hang,
        Scenario::Auth => error(401, "authentication_error", "invalid x-api-key")
            .with_header("x-should-retry", "false"),
        Scenario::AuthRetryLoop => error(401, "authentication_error", "invalid x-api-key"),
        Scenario::Quota => rate_limited().with_header("x-should-retry", "false"),
        Scenario::QuotaRetryLoop => rate_limited(),
        Scenario::Credit => error(
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & \
             Billing to upgrade or purchase credits.",
        ),
        Scenario::Overloaded => {
            error(529, "overloaded_error", "Overloaded").with_header("x-should-retry", "false")
        }
        Scenario::OverloadedRetryLoop => error(529, "overloaded_error", "Overloaded"),
        _ if call.asks_for_tool() && offers_bash(call.body) && !answers_tool(call.body) => {
            message(call.body, &[tool_use(call.tool_command())], "tool_use")
        }
        Scenario::Text
        | Scenario::Tool
        | Scenario::Dangerous
        | Scenario::Edit
        | Scenario::NoMarker => message(call.body, &[text_block(&call.final_text())], "end_turn"),
    };
    Outcome::Answer(response)
}

/// The API's 429 for an organization's rate limit, with its `retry-after`.
fn rate_limited() -> Response {
    let body = json!({"type": "error", "error": {"type": "rate_limit_error",
                      "message": "This request would exceed the rate limit for your organization \
                                  of 50,000 input tokens per minute."},
                      "request_id": "req_mock_conformance"});
    Response::json(429, &body)
        .with_header("request-id", "req_mock_conformance")
        .with_header("retry-after", "30")
}

fn offers_bash(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Bash"))
}

/// The last message is the user's, carrying a tool result.
fn answers_tool(body: &Value) -> bool {
    let Some(last) = body["messages"].as_array().and_then(|m| m.last()) else {
        return false;
    };
    last["content"]
        .as_array()
        .is_some_and(|c| c.iter().any(|block| block["type"] == "tool_result"))
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn tool_use(command: &str) -> Value {
    json!({"type": "tool_use", "id": "toolu_mock_1", "name": "Bash",
           "input": {"command": command, "description": "Create the marker file"}})
}

fn message(request: &Value, blocks: &[Value], stop_reason: &str) -> Response {
    let model = request["model"].as_str().unwrap_or("claude-sonnet-4-5");
    let usage = json!({"input_tokens": 20, "output_tokens": 12,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    if request["stream"] != true {
        let body = json!({"id": "msg_mock", "type": "message", "role": "assistant",
            "model": model, "content": blocks, "stop_reason": stop_reason,
            "stop_sequence": null, "usage": usage});
        return Response::json(200, &body);
    }
    let mut events = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            let mut start = block.clone();
            start["input"] = json!({});
            let partial = block["input"].to_string();
            (
                start,
                json!({"type": "input_json_delta", "partial_json": partial}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        events.push(sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push(sse(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(sse(
        Some("message_delta"),
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": 12}}),
    ));
    events.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    Response::events(events)
}
