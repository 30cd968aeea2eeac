//! The stream-json events as values: shapes, escaping, ids that link a denial to its call.

use super::super::structured::Denial;
use super::*;

fn session() -> StreamSession {
    StreamSession::new("sim-t1-1", "/home/dev/projects/demo")
}

fn parse(line: &str) -> Value {
    assert!(!line.contains('\n'), "one line: {line}");
    serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}"))
}

fn result(text: &str) -> JsonResult {
    JsonResult {
        text: text.to_string(),
        is_error: false,
        subtype: "success".to_string(),
        cost_usd: 0.0,
        turns: 1,
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        api_error_status: None,
        denials: Vec::new(),
        assistant_error: None,
    }
}

fn bash(command: &str, result: &str, is_error: bool) -> JsonTool {
    JsonTool {
        name: "Bash".to_string(),
        command: command.to_string(),
        description: None,
        result: result.to_string(),
        is_error,
    }
}

#[test]
fn init_names_the_session_cwd_and_model() {
    let mut stream = session();
    let init = parse(&stream.init(&JsonInit {
        model: "claude-sonnet-4-5[1m]".to_string(),
    }));
    assert_eq!(init["type"], "system");
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["session_id"], "sim-t1-1");
    assert_eq!(init["cwd"], "/home/dev/projects/demo");
    assert_eq!(init["model"], "claude-sonnet-4-5[1m]");
    assert!(
        init["tools"]
            .as_array()
            .expect("tools")
            .contains(&json!("Bash"))
    );
    let say = parse(&stream.say("hi"));
    assert_eq!(
        say["message"]["model"], "claude-sonnet-4-5",
        "messages drop the context suffix"
    );
}

#[test]
fn say_escapes_any_text_and_ids_are_fresh_and_reproducible() {
    let text = "quote \" backslash \\ newline \n tab \t ünï 日本 {x}";
    let mut stream = session();
    let first = parse(&stream.say(text));
    let second = parse(&stream.say(text));
    assert_eq!(first["type"], "assistant");
    assert_eq!(first["message"]["content"][0]["type"], "text");
    assert_eq!(first["message"]["content"][0]["text"], text);
    assert_eq!(first["session_id"], "sim-t1-1");
    assert_ne!(first["uuid"], second["uuid"]);
    assert_ne!(first["message"]["id"], second["message"]["id"]);
    let uuid = first["uuid"].as_str().expect("uuid");
    let uuid_shape =
        regex::Regex::new(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
            .expect("valid regex");
    assert!(uuid_shape.is_match(uuid), "{uuid}");
    let again = parse(&session().say(text));
    assert_eq!(again["uuid"], first["uuid"], "same session, same ids");
    let other = parse(&StreamSession::new("other", "/").say(text));
    assert_ne!(other["uuid"], first["uuid"]);
}

#[test]
fn tool_gives_a_call_and_its_result() {
    let mut stream = session();
    let mut tool = bash("cargo test", "ok", false);
    tool.description = Some("Run the tests".to_string());
    let [call, answer] = stream.tool(&tool, "2026-01-02T03:04:05.678Z");
    let call = parse(&call);
    let answer = parse(&answer);
    let used = &call["message"]["content"][0];
    assert_eq!(used["type"], "tool_use");
    assert_eq!(used["name"], "Bash");
    assert_eq!(
        used["input"],
        json!({"command": "cargo test", "description": "Run the tests"})
    );
    assert_eq!(answer["type"], "user");
    let returned = &answer["message"]["content"][0];
    assert_eq!(returned["type"], "tool_result");
    assert_eq!(returned["tool_use_id"], used["id"]);
    assert_eq!(returned["content"], "ok");
    assert_eq!(returned["is_error"], false);
    assert_eq!(answer["timestamp"], "2026-01-02T03:04:05.678Z");
    assert_eq!(answer["tool_use_result"]["stdout"], "ok");

    let [_, refused] = stream.tool(&bash("touch x", "blocked", true), "t");
    let refused = parse(&refused);
    assert_eq!(refused["message"]["content"][0]["is_error"], true);
    assert_eq!(refused["tool_use_result"], "Error: blocked");
}

#[test]
fn result_carries_cost_usage_turns_and_denials_of_earlier_calls() {
    let mut stream = session();
    let [call, _] = stream.tool(&bash("touch x", "blocked", true), "t");
    let call_id = parse(&call)["message"]["content"][0]["id"].clone();
    let done = JsonResult {
        cost_usd: 0.0123,
        turns: 2,
        input_tokens: 1200,
        output_tokens: 340,
        cache_read_tokens: 7,
        denials: vec![
            Denial {
                tool: "Bash".to_string(),
                command: "touch x".to_string(),
            },
            Denial {
                tool: "Write".to_string(),
                command: "never called".to_string(),
            },
        ],
        ..result("Done.\nM")
    };
    let lines = stream.result(&done, 1500);
    assert_eq!(lines.len(), 1);
    let event = parse(&lines[0]);
    assert_eq!(event["type"], "result");
    assert_eq!(event["subtype"], "success");
    assert_eq!(event["is_error"], false);
    assert_eq!(event["api_error_status"], Value::Null);
    assert_eq!(event["result"], "Done.\nM");
    assert_eq!(event["total_cost_usd"], 0.0123);
    assert_eq!(event["num_turns"], 2);
    assert_eq!(event["duration_ms"], 1500);
    assert_eq!(event["session_id"], "sim-t1-1");
    assert_eq!(event["stop_reason"], "end_turn");
    assert_eq!(event["usage"]["input_tokens"], 1200);
    assert_eq!(event["usage"]["output_tokens"], 340);
    assert_eq!(event["usage"]["cache_read_input_tokens"], 7);
    assert_eq!(
        event["modelUsage"]["claude-opus-4-8[1m]"]["costUSD"],
        0.0123
    );
    let denials = event["permission_denials"].as_array().expect("denials");
    assert_eq!(denials.len(), 2);
    assert_eq!(denials[0]["tool_name"], "Bash");
    assert_eq!(denials[0]["tool_use_id"], call_id, "the call's own id");
    assert_eq!(denials[0]["tool_input"]["command"], "touch x");
    assert_ne!(denials[1]["tool_use_id"], call_id);
    assert_eq!(denials[1]["tool_name"], "Write");
}

#[test]
fn an_assistant_error_comes_first_like_claudes_synthetic_record() {
    let mut stream = session();
    let refused = JsonResult {
        is_error: true,
        api_error_status: Some(429),
        assistant_error: Some("rate_limit".to_string()),
        ..result("API Error: Request rejected (429) · Rate limited")
    };
    let lines = stream.result(&refused, 10);
    assert_eq!(lines.len(), 2);
    let record = parse(&lines[0]);
    assert_eq!(record["type"], "assistant");
    assert_eq!(record["error"], "rate_limit");
    assert_eq!(record["message"]["model"], "<synthetic>");
    assert_eq!(
        record["message"]["content"][0]["text"],
        "API Error: Request rejected (429) · Rate limited"
    );
    let event = parse(&lines[1]);
    assert_eq!(event["is_error"], true);
    assert_eq!(event["api_error_status"], 429);
    assert_eq!(event["total_cost_usd"], 0);
    assert_eq!(event["modelUsage"], json!({}));
    assert_eq!(event["stop_reason"], "stop_sequence");
    assert!(event.get("ttft_ms").is_none(), "no answer, no first token");

    let auth = stream.result(
        &JsonResult {
            assistant_error: Some("authentication_failed".to_string()),
            ..result("Not logged in")
        },
        10,
    );
    assert!(parse(&auth[0]).get("request_id").is_none());
}

#[test]
fn error_lines_are_claudeless_shaped() {
    let line = StreamSession::error(&JsonError {
        kind: "overloaded_error".to_string(),
        message: "Over \"loaded\"".to_string(),
    });
    assert_eq!(
        line,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Over \"loaded\""}}"#
    );
}
