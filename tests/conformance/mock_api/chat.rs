//! The OpenAI Chat Completions API as Aider calls it through litellm: `POST
//! {base_url}/chat/completions` with `stream: true`, answered as SSE `chat.completion.chunk`s and
//! `data: [DONE]`. Aider has no tool calls: it runs the shell commands it finds in the model's
//! reply (a fenced `bash` block), after asking, once the reply is done. Errors are the OpenAI API's, as for Codex.
//! A client that offers tools (Qwen Code) gets the scenario's shell command as a `tool_calls`
//! delta to its shell tool, and the final text once a message of role `tool` comes back.

use serde_json::{Value, json};

use super::http::{Response, sse};
use super::{Call, Outcome, Scenario, TOOL_COMMAND, openai};

pub fn answer(call: &Call<'_>) -> Outcome {
    // A client that offers tools (Qwen Code, over ACP) gets the tool call as a tool call, the
    // final text once the request carries its result; Aider offers none.
    if let Some(tool) = shell_tool(call.body) {
        return with_tools(call, &tool);
    }
    // Aider shows the reply as Markdown, where one newline joins two lines: a model asked to
    // print the marker exactly gives it a paragraph of its own.
    let text = match call.scenario {
        Scenario::Text => format!("All done.\n\n{}", call.marker()),
        Scenario::NoMarker => call.final_text(),
        // Aider's one message: the command in a fenced block (aider asks, then runs it) and the
        // marker after it, in the same reply.
        Scenario::Tool => format!(
            "I will create the file.\n\n```bash\n{TOOL_COMMAND}\n```\n\n{}",
            call.marker()
        ),
        // Errors and hangs are the OpenAI API's, as Codex gets them.
        _ => return openai::answer(call),
    };
    if call.body["stream"] == json!(false) {
        return Outcome::Answer(Response::json(200, &whole(&text)));
    }
    Outcome::Answer(stream(&text))
}

fn whole(text: &str) -> Value {
    json!({"id": "chatcmpl-mock", "object": "chat.completion", "created": 1_764_000_000,
           "model": "gpt-4o", "choices": [{"index": 0, "finish_reason": "stop",
           "message": {"role": "assistant", "content": text}}],
           "usage": {"prompt_tokens": 20, "completion_tokens": 12, "total_tokens": 32}})
}

fn stream(text: &str) -> Response {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk",
               "created": 1_764_000_000, "model": "gpt-4o",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let events = vec![
        sse(
            None,
            &chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        ),
        sse(None, &chunk(json!({"content": text}), Value::Null)),
        sse(None, &chunk(json!({}), json!("stop"))),
        "data: [DONE]\n\n".to_string(),
    ];
    Response::events(events)
}

/// The name of the shell tool a client offers (`run_shell_command`, or any tool whose name
/// says shell), when it offers tools.
fn shell_tool(body: &Value) -> Option<String> {
    let tools = body["tools"].as_array()?;
    let names = tools.iter().filter_map(|t| t["function"]["name"].as_str());
    let mut names = names.collect::<Vec<_>>();
    names.sort_by_key(|n| !n.contains("shell"));
    names
        .into_iter()
        .find(|n| n.contains("shell") || n.contains("bash"))
        .map(str::to_string)
}

fn with_tools(call: &Call<'_>, tool: &str) -> Outcome {
    let answered = call.body["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let events = match call.scenario {
        _ if call.asks_for_tool() && !answered => tool_call_events(tool, call.tool_command()),
        Scenario::Text | Scenario::Tool | Scenario::Dangerous | Scenario::Edit => {
            return Outcome::Answer(stream(&call.final_text()));
        }
        Scenario::NoMarker => return Outcome::Answer(stream(&call.final_text())),
        _ => return openai::answer(call),
    };
    Outcome::Answer(Response::events(events))
}

fn tool_call_events(tool: &str, command: &str) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk",
               "created": 1_764_000_000, "model": "gpt-4o",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let arguments = json!({"command": command, "description": "Create the marker file"});
    vec![
        sse(
            None,
            &chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        ),
        sse(
            None,
            &chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_mock_1", "type": "function",
                    "function": {"name": tool, "arguments": arguments.to_string()}}]}),
                Value::Null,
            ),
        ),
        sse(None, &chunk(json!({}), json!("tool_calls"))),
        "data: [DONE]\n\n".to_string(),
    ]
}
