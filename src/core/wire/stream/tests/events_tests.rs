//! What single events add to the facts, agent by agent.

use super::*;

fn lines(events: &[&str]) -> StreamFacts {
    parse_text(&format!("{}\r\n", events.join("\r\n")))
}

// ---- Claude ----

#[test]
fn claude_tool_uses_are_counted_and_the_last_top_level_text_is_the_provisional_result() {
    let facts = lines(&[
        INIT,
        r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Let me "},{"type":"text","text":"look."},{"type":"tool_use","name":"Read","input":{}}]},"parent_tool_use_id":null}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"subagent says"},{"type":"tool_use","name":"Bash","input":{}}]},"parent_tool_use_id":"toolu_1"}"#,
    ]);
    assert_eq!(facts.tool_calls, 2);
    let requests: Vec<String> = facts
        .tool_requests
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        requests,
        [
            "a request herd could not read: Read",
            "a request herd could not read: Bash"
        ],
        "tool_use inputs read as requests (these name no path or command)"
    );
    assert_eq!(facts.result_text.as_deref(), Some("Let me look."));
    assert_eq!(facts.model.as_deref(), Some("m-1"));
    assert!(facts.cut_short);
}

#[test]
fn claude_model_comes_from_the_first_real_assistant_model_when_init_has_none() {
    let facts = lines(&[
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        r#"{"type":"assistant","message":{"model":"<synthetic>","content":[]}}"#,
        r#"{"type":"assistant","message":{"model":"claude-x","content":[]}}"#,
        r#"{"type":"assistant","message":{"model":"claude-y","content":[]}}"#,
    ]);
    assert_eq!(facts.model.as_deref(), Some("claude-x"));
}

#[test]
fn claude_error_results_keep_subtype_status_and_errors() {
    let facts = lines(&[
        r#"{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":7,"session_id":"s-r"}"#,
    ]);
    assert_eq!(
        facts.result,
        Some(FinalResult {
            success: false,
            subtype: Some("error_max_turns".to_string()),
        })
    );
    assert_eq!(facts.session_id.as_deref(), Some("s-r"));
    assert_eq!(facts.num_turns, Some(7));
    assert_eq!(
        facts.errors,
        vec![StreamError {
            kind: Some("error_max_turns".to_string()),
            status: None,
            message: "error_max_turns".to_string(),
            fatal: true,
        }]
    );
    let listed = lines(&[
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"api_error_status":529,"errors":["first","second"]}"#,
    ]);
    assert_eq!(listed.errors[0].message, "first; second");
    assert_eq!(listed.errors[0].status, Some(529));
}

#[test]
fn claude_denials_name_the_tool_and_its_command_path_or_first_text() {
    let facts = lines(&[
        r#"{"type":"result","subtype":"success","is_error":false,"permission_denials":[
            {"tool_name":"Bash","tool_input":{"description":"d","command":"rm -rf x"}},
            {"tool_name":"Write","tool_input":{"content":"hello","file_path":"/tmp/a.txt"}},
            {"tool_name":"WebFetch","tool_input":{"timeout":3,"url":"https://example.com"}},
            {"tool_name":"Task","tool_input":{"n":1}},
            {"tool_input":{}}
        ]}"#
        .replace('\n', "")
        .as_str(),
    ]);
    assert_eq!(
        facts.permission_denials,
        [
            "Bash(rm -rf x)",
            "Write(/tmp/a.txt)",
            "WebFetch(https://example.com)",
            "Task",
            "a request herd could not read: tool"
        ]
    );
}

#[test]
fn claudeless_cost_usd_is_read_when_total_cost_usd_is_missing() {
    let facts = lines(&[r#"{"type":"result","subtype":"success","cost_usd":0.5}"#]);
    assert_eq!(facts.cost_usd, Some(0.5));
    assert_eq!(facts.result.map(|result| result.success), Some(true));
}

// ---- Codex ----

#[test]
fn codex_turns_are_counted_and_their_tokens_summed() {
    let usage = r#""usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3}"#;
    let facts = lines(&[
        r#"{"type":"thread.started","thread_id":"t-1"}"#,
        &format!(r#"{{"type":"turn.completed",{usage}}}"#),
        r#"{"type":"thread.started","thread_id":"t-2"}"#,
        &format!(r#"{{"type":"turn.completed",{usage}}}"#),
    ]);
    assert_eq!(facts.session_id.as_deref(), Some("t-1"));
    assert_eq!(facts.num_turns, Some(2));
    assert_eq!(
        facts.tokens,
        Tokens {
            input: Some(20),
            output: Some(6),
            cache_read: Some(8),
            cache_creation: None,
        }
    );
}

#[test]
fn codex_tool_items_count_and_the_last_agent_message_is_the_result() {
    let facts = lines(&[
        r#"{"type":"item.started","item":{"type":"command_execution","command":"ls"}}"#,
        r#"{"type":"item.completed","item":{"type":"command_execution","command":"ls"}}"#,
        r#"{"type":"item.completed","item":{"type":"file_change","changes":[]}}"#,
        r#"{"type":"item.completed","item":{"type":"mcp_tool_call"}}"#,
        r#"{"type":"item.completed","item":{"type":"web_search","query":"q"}}"#,
        r#"{"type":"item.completed","item":{"type":"reasoning","text":"thinking"}}"#,
        r#"{"type":"item.completed","item":{"type":"agent_message","text":"first"}}"#,
        r#"{"type":"item.completed","item":{"item_type":"assistant_message","text":"second"}}"#,
        r#"{"type":"turn.completed"}"#,
    ]);
    assert_eq!(facts.tool_calls, 4);
    let requests: Vec<String> = facts
        .tool_requests
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(requests, ["Bash(ls)"], "the command item, once (completed)");
    assert_eq!(facts.result_text.as_deref(), Some("second"));
    assert_eq!(facts.tokens, Tokens::default());
}

#[test]
fn codex_retry_errors_are_not_fatal_and_carry_their_status() {
    let facts = lines(&[
        r#"{"type":"error","message":"Reconnecting... 2/5 (exceeded retry limit, last status: 503 Service Unavailable)"}"#,
        r#"{"type":"error","message":"unexpected status 4011 is not a status"}"#,
        r#"{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}"#,
    ]);
    let seen: Vec<(Option<u16>, bool)> = facts
        .errors
        .iter()
        .map(|error| (error.status, error.fatal))
        .collect();
    assert_eq!(seen, [(Some(503), false), (None, false), (None, true)]);
    assert_eq!(facts.result.map(|result| result.success), Some(false));
    assert_eq!(facts.num_turns, None);
}

// ---- Gemini ----

#[test]
fn gemini_deltas_append_and_a_user_message_starts_over() {
    let facts = lines(&[
        r#"{"type":"init","session_id":"g-1","model":"gemini-x"}"#,
        r#"{"type":"message","role":"user","content":"first"}"#,
        r#"{"type":"message","role":"assistant","content":"old answer"}"#,
        r#"{"type":"message","role":"user","content":"second"}"#,
        r#"{"type":"message","role":"assistant","content":"Done.\n","delta":true}"#,
        r#"{"type":"tool_use","tool_name":"run_shell_command","parameters":{}}"#,
        r#"{"type":"tool_result","status":"success"}"#,
        r#"{"type":"message","role":"assistant","content":"TASK_COMPLETE:g","delta":true}"#,
        r#"{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":2,"cached":3}}"#,
    ]);
    assert_eq!(facts.result_text.as_deref(), Some("Done.\nTASK_COMPLETE:g"));
    assert_eq!(facts.tool_calls, 1);
    assert_eq!(facts.model.as_deref(), Some("gemini-x"));
    assert_eq!(facts.tokens.cache_read, Some(3));
    assert!(result_has_marker(&facts, "TASK_COMPLETE:g"));
}

#[test]
fn gemini_a_user_message_without_an_answer_leaves_no_result_text() {
    let facts = lines(&[
        r#"{"type":"message","role":"assistant","content":"earlier"}"#,
        r#"{"type":"message","role":"user","content":"again"}"#,
    ]);
    assert_eq!(facts.result_text, None);
}

#[test]
fn gemini_error_results_read_the_error_object_and_warnings_are_not_fatal() {
    let facts = lines(&[
        r#"{"type":"error","severity":"warning","message":"Loop detected"}"#,
        r#"{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Too many turns","code":53}}"#,
    ]);
    assert_eq!(
        facts.errors,
        vec![
            StreamError {
                kind: None,
                status: None,
                message: "Loop detected".to_string(),
                fatal: false,
            },
            StreamError {
                kind: Some("FatalTurnLimitedError".to_string()),
                status: None,
                message: "Too many turns".to_string(),
                fatal: true,
            },
        ]
    );
}

#[test]
fn an_http_code_in_an_error_object_is_its_status() {
    let facts = lines(&[
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded","status":529}}"#,
    ]);
    assert_eq!(facts.errors[0].status, Some(529));
    assert!(facts.errors[0].fatal);
}

// ---- the marker ----

#[test]
fn the_marker_must_be_on_a_line_of_the_final_text() {
    let with = |text: &str| StreamFacts {
        result_text: Some(text.to_string()),
        ..StreamFacts::default()
    };
    assert!(result_has_marker(
        &with("done\n  TASK_COMPLETE:a  \n"),
        "TASK_COMPLETE:a"
    ));
    assert!(result_has_marker(
        &with("see TASK_COMPLETE:a."),
        " TASK_COMPLETE:a "
    ));
    assert!(!result_has_marker(
        &with("TASK_COMPLETE:\na"),
        "TASK_COMPLETE:a"
    ));
    assert!(!result_has_marker(&with("anything"), ""));
    assert!(!result_has_marker(
        &StreamFacts::default(),
        "TASK_COMPLETE:a"
    ));
}
