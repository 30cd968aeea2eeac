//! The OpenAI Responses API as Codex CLI calls it: `POST {base_url}/responses` with `stream:
//! true`, answered as SSE `response.created` … `response.completed`. A tool call is a
//! `function_call` item for whichever shell tool the request offers (`exec_command` or `shell`).
//! The `Edit` scenario's patch goes through the same shell tool. Error bodies are the API's
//! `{"error":{"message","type","param","code"}}`.

use serde_json::{Value, json};

use super::http::{Response, sse};
use super::{Call, Outcome, Scenario};

pub(crate) fn answer(call: &Call<'_>) -> Outcome {
    let error = |status: u16, kind: &str, code: &str, message: &str| {
        let body =
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
        Response::json(status, &body).with_header("x-request-id", "req_mock_conformance")
    };
    let response = match call.scenario {
        Scenario::Hang => return Outcome::Hang,
        Scenario::Auth | Scenario::AuthRetryLoop => error(
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key provided: sk-mock**********conf. You can find your API key at \
             https://platform.openai.com/account/api-keys.",
        ),
        Scenario::Quota | Scenario::QuotaRetryLoop | Scenario::Credit => error(
            429,
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details. For \
             more information on this error, read the docs: \
             https://platform.openai.com/docs/guides/error-codes/api-errors.",
        ),
        Scenario::Overloaded | Scenario::OverloadedRetryLoop => error(
            503,
            "server_error",
            "server_is_overloaded",
            "The server is overloaded or not ready yet.",
        ),
        Scenario::Edit if !answers_tool(call.body) && offers(call.body, "exec_command") => {
            stream(&[edit_call()])
        }
        _ if call.asks_for_tool() && !answers_tool(call.body) => match shell_call(call) {
            Some(item) => stream(&[item]),
            None => stream(&[text_item(&call.final_text())]),
        },
        Scenario::Text
        | Scenario::Tool
        | Scenario::Dangerous
        | Scenario::Edit
        | Scenario::NoMarker => stream(&[text_item(&call.final_text())]),
    };
    Outcome::Answer(response)
}

/// The last input item is a tool's output.
fn answers_tool(body: &Value) -> bool {
    body["input"]
        .as_array()
        .and_then(|items| items.last())
        .is_some_and(|item| item["type"] == "function_call_output")
}

fn offers(body: &Value, name: &str) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
}

/// A call of the request's shell tool that asks to run outside the sandbox, so Codex asks for
/// approval (interactive) or refuses it (`exec`, approval policy never).
fn shell_call(call: &Call<'_>) -> Option<Value> {
    let (body, command) = (call.body, call.tool_command());
    let arguments = if offers(body, "exec_command") {
        json!({"cmd": command, "sandbox_permissions": "require_escalated",
               "justification": "Create the marker file the task asks for"})
    } else if offers(body, "shell") {
        json!({"command": ["bash", "-lc", command], "with_escalated_permissions": true,
               "justification": "Create the marker file the task asks for"})
    } else {
        return None;
    };
    let name = if offers(body, "exec_command") {
        "exec_command"
    } else {
        "shell"
    };
    Some(
        json!({"type": "function_call", "id": "fc_mock_1", "call_id": "call_mock_1",
                "name": name, "arguments": arguments.to_string(), "status": "completed"}),
    )
}

/// `apply_patch` through the shell tool (Codex 0.171 offers no `apply_patch` tool to a custom
/// provider's `gpt-5`; it intercepts the command and handles it as a patch, with its edit
/// approval when the sandbox does not allow the write).
fn edit_call() -> Value {
    let arguments = json!({"cmd": format!("apply_patch <<'EOF'\n{}EOF\n", super::EDIT_PATCH)});
    json!({"type": "function_call", "id": "fc_mock_edit", "call_id": "call_mock_edit",
           "name": "exec_command", "arguments": arguments.to_string(), "status": "completed"})
}

fn text_item(text: &str) -> Value {
    json!({"type": "message", "id": "msg_mock_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn stream(items: &[Value]) -> Response {
    let response = |status: &str, output: &[Value]| {
        json!({"id": "resp_mock", "object": "response", "created_at": 1_764_000_000,
               "status": status, "model": "gpt-5", "output": output,
               "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 32}})
    };
    let mut events = vec![sse(
        Some("response.created"),
        &json!({"type": "response.created", "sequence_number": 0,
                "response": response("in_progress", &[])}),
    )];
    for (index, item) in items.iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        if item["type"] == "message" {
            added["content"] = json!([]);
        }
        events.push(sse(
            Some("response.output_item.added"),
            &json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        ));
        if item["type"] == "message" {
            events.push(sse(
                Some("response.output_text.delta"),
                &json!({"type": "response.output_text.delta", "item_id": item["id"],
                        "output_index": index, "content_index": 0,
                        "delta": item["content"][0]["text"]}),
            ));
        }
        events.push(sse(
            Some("response.output_item.done"),
            &json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
    }
    events.push(sse(
        Some("response.completed"),
        &json!({"type": "response.completed", "response": response("completed", items)}),
    ));
    Response::events(events)
}
