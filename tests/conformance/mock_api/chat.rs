//! The OpenAI Chat Completions API as Aider calls it through litellm: `POST
//! {base_url}/chat/completions` with `stream: true`, answered as SSE `chat.completion.chunk`s and
//! `data: [DONE]`. Aider has no tool calls: it runs the shell commands it finds in the model's
//! reply (a fenced `bash` block), after asking, once the reply is done. Errors are the OpenAI API's, as for Codex.

use serde_json::{Value, json};

use super::http::{Response, sse};
use super::{Call, Outcome, Scenario, TOOL_COMMAND, openai};

pub fn answer(call: &Call<'_>) -> Outcome {
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
