//! Lines as the real CLIs wrote them (Claude Code 2.1.197 `--debug-file`, Codex CLI 0.169.0
//! rollout), fed whole, split and mixed with other lines.

use super::*;

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
