use serde_json::json;

use super::*;

fn call(name: &str, args: Value) -> Result<ToolCall, ToolError> {
    parse(name, args.as_object())
}

fn refused(name: &str, args: Value) -> ToolError {
    call(name, args).expect_err("refused")
}

#[test]
fn every_tool_has_an_object_schema_that_names_its_required_fields() {
    let tools = all();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "list_tasks",
            "get_task",
            "update_task",
            "add_task",
            "run_agent",
            "answer_prompt",
            "wait_for",
            "explain"
        ]
    );
    let required = |name: &str| -> Vec<String> {
        let tool = tools.iter().find(|t| t.name == name).expect("tool");
        assert_eq!(tool.input_schema["type"], "object", "{name}");
        assert!(tool.description.as_deref().is_some_and(|d| d.len() > 40));
        tool.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(required("list_tasks"), Vec::<String>::new());
    assert_eq!(required("get_task"), ["task_id"]);
    assert_eq!(required("update_task"), ["task_id", "patch"]);
    assert_eq!(required("add_task"), ["task"]);
    assert_eq!(required("answer_prompt"), ["prompt_id", "answer"]);
    assert_eq!(required("wait_for"), ["task_id"]);
    let answer = tools
        .iter()
        .find(|t| t.name == "answer_prompt")
        .expect("tool");
    let text = serde_json::to_string(&answer.input_schema).expect("json");
    for word in ["approve", "approve_always", "deny"] {
        assert!(text.contains(&format!("\"{word}\"")), "{text}");
    }
}

#[test]
fn every_task_status_is_a_word_the_tools_take() {
    for status in TaskStatus::ALL {
        let word: StatusWord = serde_json::from_value(json!(status.as_str())).expect("a word");
        assert_eq!(word.status(), status);
        let state: WaitState = serde_json::from_value(json!(status.as_str())).expect("a state");
        assert_eq!(state.status(), Some(status));
    }
}

#[test]
fn good_calls_are_read_with_their_defaults() {
    match call("wait_for", json!({"task_id": "a-1"})).expect("ok") {
        ToolCall::WaitFor {
            task_id,
            states,
            timeout_sec,
        } => {
            assert_eq!(task_id, "a-1");
            assert_eq!(states, WaitState::SETTLED);
            assert_eq!(timeout_sec, DEFAULT_WAIT_SEC);
        }
        other => panic!("{other:?}"),
    }
    match call("list_tasks", json!({"status": ["failed", "needs_input"]})).expect("ok") {
        ToolCall::ListTasks { statuses } => assert_eq!(
            statuses,
            Some(vec![TaskStatus::Failed, TaskStatus::NeedsInput])
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse("list_tasks", None),
        Ok(ToolCall::ListTasks { statuses: None })
    ));
    match call(
        "answer_prompt",
        json!({"prompt_id": "a/1/2", "answer": "approve_always"}),
    )
    .expect("ok")
    {
        ToolCall::AnswerPrompt { prompt_id, answer } => {
            assert_eq!(
                (prompt_id.as_str(), answer),
                ("a/1/2", Answer::ApproveAlways)
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_arguments_say_what_why_and_how_to_fix() {
    // (tool, arguments, words the what, the why and the fix must hold)
    let cases: Vec<(&str, Value, [&str; 3])> = vec![
        (
            "get_task",
            json!({}),
            ["get_task", "\"task_id\" is required", "schema"],
        ),
        (
            "get_task",
            json!({"task_id": "a", "id": "b"}),
            [
                "get_task",
                "there is no argument \"id\": the tool takes task_id",
                "schema",
            ],
        ),
        (
            "get_task",
            json!({"task_id": 7}),
            [
                "get_task",
                "\"task_id\" must be a string, got the number 7",
                "schema",
            ],
        ),
        (
            "run_agent",
            json!({"task_id": "../x"}),
            ["\"../x\"", "letters, digits", "list_tasks"],
        ),
        (
            "run_agent",
            json!({"task_id": ""}),
            ["task_id", "non-empty", "list_tasks"],
        ),
        (
            "list_tasks",
            json!({"status": ["done"]}),
            [
                "list_tasks",
                "\"status\"[0] must be one of \"pending\"",
                "schema",
            ],
        ),
        (
            "update_task",
            json!({"task_id": "a", "patch": {}}),
            ["empty patch", "nothing would change", "enabled"],
        ),
        (
            "update_task",
            json!({"task_id": "a", "patch": {"status": "completed", "enabled": true}}),
            ["cannot set status", "herd's verdicts", "run_agent"],
        ),
        (
            "update_task",
            json!({"task_id": "a", "patch": {"task_id": "b"}}),
            ["cannot set task_id", "recordings", "add_task"],
        ),
        (
            "add_task",
            json!({"task": {"agent": "sim"}}),
            ["no task_id", "unique", "task_id"],
        ),
        (
            "add_task",
            json!({"task": {"task_id": 5}}),
            ["no task_id", "string", "task_id"],
        ),
        (
            "add_task",
            json!({"task": {"task_id": "n", "status": "completed", "attempts": 3}}),
            ["status, attempts", "starts pending", "leave them out"],
        ),
        (
            "answer_prompt",
            json!({"prompt_id": "a/1/1", "answer": "yes"}),
            [
                "answer_prompt",
                "\"answer\" must be one of \"approve\", \"approve_always\", \"deny\", got the string \"yes\"",
                "schema",
            ],
        ),
        (
            "answer_prompt",
            json!({"prompt_id": " ", "answer": "deny"}),
            ["prompt_id", "empty", "get_task"],
        ),
        (
            "wait_for",
            json!({"task_id": "a", "timeout_sec": 0}),
            ["timeout_sec 0", "more than 0", "seconds"],
        ),
        (
            "wait_for",
            json!({"task_id": "a", "timeout_sec": 7200}),
            ["timeout_sec 7200", "at most 3600", "seconds"],
        ),
        (
            "wait_for",
            json!({"task_id": "a", "states": []}),
            ["states", "nothing could end the wait", "at least one"],
        ),
        (
            "wait_for",
            json!({"task_id": "a", "states": ["finished"]}),
            [
                "wait_for",
                "\"states\"[0] must be one of \"pending\"",
                "schema",
            ],
        ),
        (
            "explain",
            json!({"task_id": "a", "attempt": 0}),
            ["attempt", "from 1", "latest"],
        ),
        (
            "explain",
            json!({"task_id": "a", "attempt": -1}),
            [
                "explain",
                "\"attempt\" must be 0 or more, got the number -1",
                "schema",
            ],
        ),
        (
            "wait_for",
            json!({"task_id": "a", "timeout_sec": "soon"}),
            [
                "wait_for",
                "\"timeout_sec\" must be a number, got the string \"soon\"",
                "schema",
            ],
        ),
        (
            "explain",
            json!({"task_id": "a", "attempt": 1.5}),
            ["explain", "\"attempt\" must be a whole number", "schema"],
        ),
        (
            "delete_task",
            json!({}),
            ["\"delete_task\"", "list_tasks", "tools/list"],
        ),
    ];
    for (tool, args, [what, why, fix]) in cases {
        let error = refused(tool, args.clone());
        let context = format!("{tool} {args}: {error:?}");
        assert!(error.what.contains(what), "what: {context}");
        assert!(error.why.contains(why), "why: {context}");
        assert!(error.fix.contains(fix), "fix: {context}");
        let structured = error.to_json();
        assert_eq!(structured["error"]["what"], error.what, "{context}");
        assert!(error.to_text().contains(" Fix: "), "{context}");
    }
}

/// Every type named anywhere in a schema (properties, items, `$defs`, branches).
fn type_arrays(schema: &Value, at: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                if key == "type" && !value.is_string() {
                    found.push(format!("{at}: \"type\": {value}"));
                }
                if key == "nullable" {
                    found.push(format!("{at}: \"nullable\""));
                }
                type_arrays(value, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                if item.get("type") == Some(&json!("null")) {
                    found.push(format!("{at}/{index}: a null branch"));
                }
                type_arrays(item, &format!("{at}/{index}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn every_input_schema_gives_each_property_one_type_so_every_client_can_read_it() {
    let mut found = Vec::new();
    for tool in all() {
        let schema = Value::Object((*tool.input_schema).clone());
        type_arrays(&schema, &tool.name, &mut found);
    }
    assert!(found.is_empty(), "unportable schema parts: {found:#?}");
    let wait_for = all()
        .into_iter()
        .find(|t| t.name == "wait_for")
        .expect("tool");
    assert_eq!(
        wait_for.input_schema["properties"]["timeout_sec"]["type"],
        "number"
    );
    assert_eq!(
        wait_for.input_schema["properties"]["states"]["type"],
        "array"
    );
}

#[test]
fn portable_takes_the_null_out_of_type_arrays_and_branches() {
    let mut schema = json!({
        "properties": {
            "a": {"type": ["integer", "null"], "minimum": 0},
            "b": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}], "description": "b"},
            "c": {"type": ["string", "number"]}
        }
    });
    portable(&mut schema);
    assert_eq!(
        schema,
        json!({
            "properties": {
                "a": {"type": "integer", "minimum": 0},
                "b": {"$ref": "#/$defs/B", "description": "b"},
                "c": {"type": ["string", "number"]}
            }
        })
    );
}

#[test]
fn a_null_optional_argument_is_still_read_as_left_out() {
    match call(
        "wait_for",
        json!({"task_id": "a", "timeout_sec": null, "states": null}),
    )
    .expect("ok")
    {
        ToolCall::WaitFor {
            timeout_sec,
            states,
            ..
        } => {
            assert_eq!(timeout_sec, DEFAULT_WAIT_SEC);
            assert_eq!(states, WaitState::SETTLED.to_vec());
        }
        other => panic!("{other:?}"),
    }
}
