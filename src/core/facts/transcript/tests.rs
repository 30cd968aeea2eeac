//! Transcripts read from the captures: the facts of each. Longer than ~400 lines on purpose:
//! one case per capture, a table that reads best whole.

use super::*;
use serde_json::json;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/transcripts")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn jsonl(records: &[Value]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect::<String>()
}

fn tools(list: &[(&str, u32)]) -> BTreeMap<String, u32> {
    list.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

fn assistant(id: &str, content: Value, stop: Value, usage: Value) -> Value {
    json!({"type": "assistant", "sessionId": "s", "message": {
        "id": id, "model": "claude-sonnet-4-5", "content": [content],
        "stop_reason": stop, "usage": usage}})
}

fn bash_use(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

fn tool_result(id: &str, content: Value) -> Value {
    json!({"type": "user", "sessionId": "s", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": id, "content": content, "is_error": true}]}})
}

// ---------------------------------------------------------------------------------------------
// Recorded and hand-made transcripts
// ---------------------------------------------------------------------------------------------

#[test]
fn hand_made_claude_transcript_with_a_bash_failure() {
    let facts = parse(&fixture("claude_bash_failure.jsonl"));
    assert_eq!(
        facts,
        TranscriptFacts {
            session_id: Some("7c2f9a4e-3b1d-4e8a-9f60-2d5c8b1a0e47".into()),
            // summary + prompt + 3 records of one message + result + 2 + result + 1 + result + 1
            records: 12,
            bad_lines: 1,
            assistant_messages: 4,
            end_turns: 1,
            last_stop_reason: Some("end_turn".into()),
            tool_calls: tools(&[("Bash", 2), ("Edit", 1)]),
            bash_failures: vec![BashFailure {
                command: Some("cargo test".into()),
                exit_code: 101
            }],
            tokens: TranscriptTokens {
                input: 4 + 6 + 6 + 6,
                output: 212 + 389 + 97 + 64,
                cache_read: 14873 + 16804 + 17506 + 17927,
                cache_creation: 1931 + 702 + 421 + 318,
            },
        }
    );
    assert!(facts.ended_turn());
}

#[test]
fn claudeless_reply_transcript() {
    let facts = parse(&fixture("claudeless_reply.jsonl"));
    assert_eq!(
        facts,
        TranscriptFacts {
            session_id: Some("47d9da07-52f5-48cb-9771-37d3e0179011".into()),
            records: 4,
            bad_lines: 0,
            assistant_messages: 1,
            end_turns: 0,
            // claudeless leaves `stop_reason` null on a plain reply.
            last_stop_reason: None,
            tool_calls: BTreeMap::new(),
            bash_failures: vec![],
            tokens: TranscriptTokens {
                input: 2,
                output: 1,
                cache_read: 0,
                cache_creation: 0
            },
        }
    );
    assert!(!facts.ended_turn());
}

#[test]
fn claudeless_bash_transcript() {
    let facts = parse(&fixture("claudeless_bash.jsonl"));
    assert_eq!(
        facts.session_id.as_deref(),
        Some("d0903710-0f01-433b-af5c-6bd683b143d6")
    );
    assert_eq!(facts.records, 4);
    assert_eq!(facts.bad_lines, 0);
    assert_eq!(facts.assistant_messages, 1);
    assert_eq!(facts.last_stop_reason.as_deref(), Some("tool_use"));
    assert!(!facts.ended_turn());
    assert_eq!(facts.tool_calls, tools(&[("Bash", 1)]));
    assert_eq!(facts.bash_failures, vec![]);
}

// ---------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------

#[test]
fn usage_and_messages_count_once_per_message_id() {
    let usage = json!({"input_tokens": 10, "output_tokens": 20,
        "cache_read_input_tokens": 30, "cache_creation_input_tokens": 40});
    let text = jsonl(&[
        assistant(
            "m1",
            json!({"type": "thinking", "thinking": "t"}),
            Value::Null,
            usage.clone(),
        ),
        assistant(
            "m1",
            json!({"type": "text", "text": "x"}),
            Value::Null,
            usage.clone(),
        ),
        assistant("m1", bash_use("t1", "ls"), json!("tool_use"), usage.clone()),
        assistant(
            "m2",
            json!({"type": "text", "text": "y"}),
            json!("end_turn"),
            usage,
        ),
    ]);
    let facts = parse(&text);
    assert_eq!(facts.assistant_messages, 2);
    assert_eq!(
        facts.tokens,
        TranscriptTokens {
            input: 20,
            output: 40,
            cache_read: 60,
            cache_creation: 80
        }
    );
}

#[test]
fn a_message_whose_usage_grows_counts_its_largest_usage() {
    let text = jsonl(&[
        assistant(
            "m1",
            json!({"type": "text", "text": "a"}),
            Value::Null,
            json!({"input_tokens": 5, "output_tokens": 1}),
        ),
        assistant(
            "m1",
            json!({"type": "text", "text": "b"}),
            json!("end_turn"),
            json!({"input_tokens": 5, "output_tokens": 9}),
        ),
    ]);
    let facts = parse(&text);
    assert_eq!(facts.tokens.input, 5);
    assert_eq!(facts.tokens.output, 9);
    assert_eq!(facts.end_turns, 1);
}

#[test]
fn assistant_records_without_an_id_are_each_a_message() {
    let record =
        json!({"type": "assistant", "message": {"content": [], "usage": {"output_tokens": 3}}});
    let facts = parse(&jsonl(&[record.clone(), record]));
    assert_eq!(facts.assistant_messages, 2);
    assert_eq!(facts.tokens.output, 6);
}

#[test]
fn end_turns_and_the_last_stop_reason() {
    let usage = json!({});
    let text = jsonl(&[
        assistant(
            "m1",
            json!({"type": "text", "text": "a"}),
            json!("end_turn"),
            usage.clone(),
        ),
        // A repeated record of the same message does not count twice.
        assistant(
            "m1",
            json!({"type": "text", "text": "a"}),
            json!("end_turn"),
            usage.clone(),
        ),
        assistant("m2", bash_use("t1", "ls"), json!("tool_use"), usage.clone()),
        // Null does not overwrite the last known reason.
        assistant(
            "m3",
            json!({"type": "text", "text": "b"}),
            Value::Null,
            usage,
        ),
    ]);
    let facts = parse(&text);
    assert_eq!(facts.end_turns, 1);
    assert_eq!(facts.last_stop_reason.as_deref(), Some("tool_use"));
    assert!(!facts.ended_turn());

    let cases: &[(Option<&str>, bool)] = &[
        (Some("end_turn"), true),
        (Some("max_tokens"), false),
        (Some("tool_use"), false),
        (None, false),
    ];
    for (reason, want) in cases {
        let facts = TranscriptFacts {
            last_stop_reason: reason.map(str::to_string),
            ..TranscriptFacts::default()
        };
        assert_eq!(facts.ended_turn(), *want, "for {reason:?}");
    }
}

#[test]
fn tool_calls_count_each_tool_use_block_once() {
    let usage = json!({});
    let read = json!({"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": "a"}});
    let text = jsonl(&[
        assistant("m1", bash_use("t1", "ls"), json!("tool_use"), usage.clone()),
        assistant("m1", bash_use("t1", "ls"), json!("tool_use"), usage.clone()),
        assistant(
            "m2",
            bash_use("t2", "pwd"),
            json!("tool_use"),
            usage.clone(),
        ),
        assistant("m3", read, json!("tool_use"), usage.clone()),
        assistant(
            "m4",
            json!({"type": "tool_use", "name": "Grep"}),
            Value::Null,
            usage.clone(),
        ),
        assistant(
            "m5",
            json!({"type": "tool_use", "name": "Grep"}),
            Value::Null,
            usage,
        ),
    ]);
    assert_eq!(
        parse(&text).tool_calls,
        tools(&[("Bash", 2), ("Grep", 2), ("Read", 1)])
    );
}

#[test]
fn bash_failures_are_linked_to_their_command() {
    let usage = json!({});
    let text = jsonl(&[
        assistant(
            "m1",
            bash_use("t1", "cargo test"),
            json!("tool_use"),
            usage.clone(),
        ),
        tool_result("t1", json!("Exit code 101\nerror: test failed")),
        assistant(
            "m2",
            bash_use("t2", "make"),
            json!("tool_use"),
            usage.clone(),
        ),
        tool_result(
            "t2",
            json!([{"type": "text", "text": "Exit code: 2\nmake: *** [all] Error 2"}]),
        ),
        assistant(
            "m3",
            bash_use("t3", "true"),
            json!("tool_use"),
            usage.clone(),
        ),
        tool_result("t3", json!("ok")),
        assistant(
            "m4",
            bash_use("t4", "exit 0"),
            json!("tool_use"),
            usage.clone(),
        ),
        tool_result("t4", json!("Exit code 0")),
        assistant("m5", bash_use("t5", "kill -9 $$"), json!("tool_use"), usage),
        tool_result("t5", json!("Error: Exit code -9")),
        // A result whose call is not in the file (a resumed session): no command.
        tool_result("t-unknown", json!("  Exit code 1")),
        json!({"type": "result", "subtype": "success", "result": "Exit code: 3\nboom"}),
        json!({"type": "result", "subtype": "success", "result": "done, no Exit code 3 here"}),
    ]);
    let failure = |command: Option<&str>, exit_code| BashFailure {
        command: command.map(str::to_string),
        exit_code,
    };
    assert_eq!(
        parse(&text).bash_failures,
        vec![
            failure(Some("cargo test"), 101),
            failure(Some("make"), 2),
            failure(Some("kill -9 $$"), -9),
            failure(None, 1),
            failure(None, 3),
        ]
    );
}

#[test]
fn another_tools_output_that_looks_like_an_exit_code_is_not_a_bash_failure() {
    let read =
        json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "log"}});
    let text = jsonl(&[
        assistant("m1", read, json!("tool_use"), json!({})),
        tool_result("t1", json!("Exit code 1 was logged")),
    ]);
    assert_eq!(parse(&text).bash_failures, vec![]);
}

#[test]
fn exit_code_forms() {
    let cases: &[(&str, Option<i32>)] = &[
        ("Exit code 1", Some(1)),
        ("Exit code 101\nmore", Some(101)),
        ("Exit code: 2", Some(2)),
        ("Exit code:2", Some(2)),
        ("Error: Exit code 127", Some(127)),
        ("\n  Exit code 4", Some(4)),
        ("Exit code -1", Some(-1)),
        ("Exit code 0", None),
        ("Exit code", None),
        ("Exit code: ", None),
        ("Exit codes 3", None),
        ("exit code 1", None),
        ("The Exit code 1", None),
        ("Exit code 99999999999", None),
    ];
    for (text, want) in cases {
        assert_eq!(exit_code(text), *want, "for {text:?}");
    }
}

#[test]
fn bad_lines_are_counted_never_fatal() {
    let text = "not json\n{\"type\":\"user\",\"sessionId\":\"s1\"}\n\n   \n[1,2]\n\"str\"\n{\"type\":\"assist";
    let facts = parse(text);
    assert_eq!(facts.records, 1);
    assert_eq!(facts.bad_lines, 4);
    assert_eq!(facts.session_id.as_deref(), Some("s1"));
    assert_eq!(parse(""), TranscriptFacts::default());
}

#[test]
fn the_first_session_id_wins() {
    let text = jsonl(&[
        json!({"type": "summary", "summary": "x"}),
        json!({"type": "system", "sessionId": ""}),
        json!({"type": "user", "sessionId": "first"}),
        json!({"type": "user", "sessionId": "second"}),
    ]);
    assert_eq!(parse(&text).session_id.as_deref(), Some("first"));
    let stream = jsonl(&[json!({"type": "system", "session_id": "snake"})]);
    assert_eq!(parse(&stream).session_id.as_deref(), Some("snake"));
}

#[test]
fn odd_shapes_are_skipped_quietly() {
    let text = jsonl(&[
        json!({"type": "assistant"}),
        json!({"type": "assistant", "message": "text"}),
        json!({"type": "assistant", "message": {"id": "m", "content": "plain", "usage": {"input_tokens": "x"}}}),
        json!({"type": "user", "message": {"content": "a prompt"}}),
        json!({"type": "user", "message": {"content": [{"type": "tool_result", "content": 5}]}}),
        json!({"type": 7}),
        json!({"no": "type"}),
    ]);
    let facts = parse(&text);
    assert_eq!(facts.records, 7);
    assert_eq!(facts.assistant_messages, 1);
    assert_eq!(facts.tokens, TranscriptTokens::default());
    assert_eq!(facts.bash_failures, vec![]);
}

#[test]
fn project_dir_names() {
    let cases: &[(&str, &str)] = &[
        (
            "/home/dev/projects/demo/claude-b_print_streamjson_nocreds",
            "-home-dev-projects-demo-claude-b-print-streamjson-nocreds",
        ),
        ("/tmp/cl", "-tmp-cl"),
        ("/tmp/tmp.QfBPSgKAs1", "-tmp-tmp-QfBPSgKAs1"),
        ("/a b/ü", "-a-b--"),
        ("", ""),
    ];
    for (cwd, want) in cases {
        assert_eq!(project_dir_name(cwd), *want, "for {cwd:?}");
    }
}

#[test]
fn facts_serialise_for_the_attempt_log() {
    let facts = parse(&fixture("claude_bash_failure.jsonl"));
    let value = serde_json::to_value(&facts).unwrap();
    assert_eq!(value["tool_calls"], json!({"Bash": 2, "Edit": 1}));
    assert_eq!(
        value["bash_failures"],
        json!([{"command": "cargo test", "exit_code": 101}])
    );
    assert_eq!(value["tokens"]["output"], json!(762));
}
