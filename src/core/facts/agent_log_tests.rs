//! Lines as the real CLIs wrote them (Claude Code 2.1.197 `--debug-file`, Codex CLI 0.169.0
//! rollout), fed whole, split and mixed with other lines.

use super::*;
use std::time::Duration;

const CLAUDE_401: &str = "2026-11-25T03:39:04.359Z [ERROR] API error (attempt 1/11): 401 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"},\"request_id\":\"req_x\"}\n";
const CLAUDE_OTHER: &str = "2026-11-25T03:39:04.100Z [DEBUG] [API:request] Creating client, ANTHROPIC_CUSTOM_HEADERS present: false\n";

const CODEX_CALL: &str = r#"{"timestamp":"2026-11-25T03:33:56.830Z","ordinal":9,"type":"response_item","payload":{"type":"function_call","status":"completed","id":"fc_mock_1","name":"exec_command","arguments":"{\"cmd\":\"touch conformance_tool_ran.txt\",\"sandbox_permissions\":\"require_escalated\",\"justification\":\"Create the marker file the task asks for\"}","call_id":"call_mock_1"}}
"#;
const CODEX_REJECTED: &str = r#"{"timestamp":"2026-11-25T03:33:56.860Z","ordinal":11,"type":"response_item","payload":{"type":"function_call_output","id":"fco_1","call_id":"call_mock_1","output":"approval policy is Granular(GranularApprovalConfig { sandbox_approval: false, rules: false, skill_approval: false, request_permissions: true, mcp_elicitations: true }); reject command — you cannot ask for escalated permissions if the approval policy is Granular(GranularApprovalConfig { sandbox_approval: false })"}}
"#;
const CODEX_RAN: &str = r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_mock_1","output":"Chunk ID: 1\nWall time: 0.01 seconds\nProcess exited with code 0\nOutput:\n"}}
"#;

fn parse(kind: AgentLogKind, text: &str) -> AgentLogFacts {
    let mut parser = AgentLogParser::new(kind);
    parser.feed(text.as_bytes());
    parser.facts().clone()
}

#[test]
fn claude_debug_log_gives_each_failed_request_with_status_and_error_type() {
    let facts = parse(
        AgentLogKind::ClaudeDebug,
        &format!("{CLAUDE_OTHER}{CLAUDE_401}{CLAUDE_OTHER}"),
    );
    assert_eq!(facts.lines, 3);
    assert_eq!(
        facts.retries,
        vec![Retry {
            attempt: 1,
            max_retries: Some(10),
            status: Some(401),
            error: Some("authentication_error".into()),
            message: Some("invalid x-api-key".into()),
        }]
    );
}

#[test]
fn a_request_error_without_a_body_keeps_its_text() {
    let facts = parse(
        AgentLogKind::ClaudeDebug,
        "2026-11-25T03:39:04Z [ERROR] API error (attempt 2/11): Connection error.\n",
    );
    assert_eq!(facts.retries[0].status, None);
    assert_eq!(facts.retries[0].error.as_deref(), Some("Connection error."));
}

#[test]
fn lines_split_across_reads_are_read_once_whole() {
    let mut parser = AgentLogParser::new(AgentLogKind::ClaudeDebug);
    let (a, b) = CLAUDE_401.split_at(40);
    parser.feed(a.as_bytes());
    assert!(parser.facts().retries.is_empty());
    parser.feed(b.as_bytes());
    assert_eq!(parser.facts().retries.len(), 1);
    assert_eq!(parser.facts().lines, 1);
}

#[test]
fn codex_rollout_names_a_command_codex_refused_itself() {
    let facts = parse(
        AgentLogKind::CodexRollout,
        &format!("{CODEX_CALL}{CODEX_REJECTED}"),
    );
    assert_eq!(facts.tool_calls, 1);
    assert_eq!(facts.refused_tools.len(), 1, "{facts:?}");
    let refused = &facts.refused_tools[0];
    assert!(
        refused.starts_with(
            "exec_command(touch conformance_tool_ran.txt) — approval policy is Granular("
        ),
        "{refused}"
    );
    assert!(refused.ends_with("reject command"), "{refused}");
}

#[test]
fn a_command_that_ran_or_an_operator_rejection_is_told_apart() {
    let ran = parse(
        AgentLogKind::CodexRollout,
        &format!("{CODEX_CALL}{CODEX_RAN}"),
    );
    assert!(ran.refused_tools.is_empty());
    let rejected = CODEX_RAN.replace(
        "Chunk ID: 1\\nWall time: 0.01 seconds\\nProcess exited with code 0\\nOutput:\\n",
        "exec command rejected by user",
    );
    let facts = parse(
        AgentLogKind::CodexRollout,
        &format!("{CODEX_CALL}{rejected}"),
    );
    assert_eq!(
        facts.refused_tools,
        vec!["exec_command(touch conformance_tool_ran.txt) — exec command rejected by user"]
    );
}

#[test]
fn shell_argv_calls_and_garbage_lines() {
    let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"touch x\"]}","call_id":"c2"}}
not json at all
{"type":"event_msg","payload":{"type":"task_complete"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":{"content":"approval policy is Never; reject command"}}}
"#;
    let facts = parse(AgentLogKind::CodexRollout, call);
    assert_eq!(facts.lines, 4);
    assert_eq!(
        facts.refused_tools,
        vec!["shell(touch x) — approval policy is Never; reject command"]
    );
}

#[test]
fn gemini_debug_log_gives_its_silent_retries() {
    let text = "[2026-11-25T03:40:00.000Z] [WARN] Attempt 1 failed with status 503. Retrying with backoff... ApiError: {\"error\":{\"code\":503}}\n\
                [2026-11-25T03:40:01.000Z] [DEBUG] something else\n\
                [2026-11-25T03:40:05.000Z] [WARN] Attempt 2 failed with 429 error (no Retry-After header). Retrying with backoff...\n\
                [2026-11-25T03:40:06.000Z] [WARN] Attempt 3 failed: Quota exceeded for metric. Retrying after 20512ms...\n\
                [2026-11-25T03:40:07.000Z] [WARN] Attempt 4 failed. Max attempts reached\n";
    let facts = parse(AgentLogKind::GeminiDebug, text);
    let seen: Vec<(u32, Option<u16>, Option<&str>)> = facts
        .retries
        .iter()
        .map(|r| (r.attempt, r.status, r.error.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, Some(503), None),
            (2, Some(429), None),
            (3, Some(429), Some("rate_limit")),
        ]
    );
}

fn server_error(attempt: u32) -> Retry {
    Retry {
        attempt,
        max_retries: None,
        status: Some(503),
        error: None,
        message: None,
    }
}

#[test]
fn server_errors_are_waited_out_for_a_while_then_end_the_attempt_as_a_process_failure() {
    let secs = Duration::from_secs;
    let mut watch = RetryWatch::default();
    let mut retries = Vec::new();
    // Gemini's back-off: 5, 10 s between tries; two tries are not enough, however long.
    for (n, at) in [(1, 0), (2, 15)] {
        retries.push(server_error(n));
        assert_eq!(watch.check(&retries, secs(at)), None, "at {at} s");
    }
    retries.push(server_error(3));
    let (failure, evidence) = watch.check(&retries, secs(16)).unwrap();
    assert_eq!(failure, FailureType::Process);
    assert!(
        evidence.contains("server errors for 16 s: 3 retries"),
        "{evidence}"
    );
    assert!(evidence.contains("status 503"), "{evidence}");
}

#[test]
fn a_long_pause_or_another_error_starts_the_run_of_server_errors_again() {
    let secs = Duration::from_secs;
    let mut watch = RetryWatch::default();
    let mut retries = vec![server_error(1), server_error(2)];
    assert_eq!(watch.check(&retries, secs(0)), None);
    // Answers in between: the next errors come long after.
    for (n, at) in [(1, 100), (2, 110)] {
        retries.push(server_error(n));
        assert_eq!(watch.check(&retries, secs(at)), None, "at {at} s");
    }
    // A rate limit in between breaks the run too.
    retries.push(Retry {
        attempt: 3,
        max_retries: None,
        status: Some(429),
        error: None,
        message: None,
    });
    assert_eq!(watch.check(&retries, secs(125)), None);
    retries.push(server_error(4));
    assert_eq!(watch.check(&retries, secs(140)), None);
    // Nothing new: nothing decided again.
    assert_eq!(watch.check(&retries, secs(500)), None);
}
