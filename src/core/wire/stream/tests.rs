use proptest::prelude::*;

use super::*;
use crate::core::profile::{Profile, ProfileSet};
use crate::core::task::FailureType;

mod fixtures;

fn parse(bytes: &[u8]) -> StreamFacts {
    parse_chunks(&[bytes])
}

fn parse_chunks(chunks: &[&[u8]]) -> StreamFacts {
    let mut parser = StreamParser::new();
    for chunk in chunks {
        parser.feed(chunk);
    }
    parser.finish();
    parser.facts().clone()
}

fn parse_text(text: &str) -> StreamFacts {
    parse(text.as_bytes())
}

/// A built-in profile, from the real texts in `assets/profiles/`.
fn built_in(name: &str) -> Profile {
    let texts = [
        include_str!("../../../../assets/profiles/claude.toml"),
        include_str!("../../../../assets/profiles/codex.toml"),
        include_str!("../../../../assets/profiles/gemini.toml"),
    ];
    ProfileSet::build(&texts, None)
        .unwrap()
        .get(name)
        .unwrap()
        .clone()
}

/// A profile with the given failure texts.
fn profile_with(auth: &str, quota: &str, transient: &str) -> Profile {
    let text = format!(
        "[profiles.t]\ncommand = [\"t\"]\nauth = [{auth:?}]\nquota = [{quota:?}]\n\
         transient = [{transient:?}]\n"
    );
    ProfileSet::build(&[&text], None)
        .unwrap()
        .get("t")
        .unwrap()
        .clone()
}

/// A profile whose texts match nothing the tests write.
fn plain_profile() -> Profile {
    profile_with("^never-auth$", "^never-quota$", "^never-transient$")
}

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s-1","model":"m-1"}"#;
const SUCCESS: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#;

// ---- lines and bytes ----

#[test]
fn a_result_without_a_final_newline_counts_at_finish() {
    let mut parser = StreamParser::new();
    parser.feed(format!("{INIT}\r\n{SUCCESS}").as_bytes());
    assert_eq!(parser.facts().events, 1);
    parser.finish();
    assert_eq!(parser.facts().events, 2);
    assert_eq!(parser.facts().result_text.as_deref(), Some("done"));
    assert!(!parser.facts().cut_short);
}

#[test]
fn finish_twice_changes_nothing() {
    let mut parser = StreamParser::new();
    parser.feed(format!("{INIT}\n{{\"type\":\"assis").as_bytes());
    parser.finish();
    let once = parser.facts().clone();
    parser.finish();
    assert_eq!(parser.facts(), &once);
    assert!(once.cut_short);
}

#[test]
fn escape_sequences_and_whitespace_before_and_after_the_json_are_skipped() {
    let text = format!(
        "\x1b[?25l\x1b]0;title\x07\x1b(B\x0f  \t{INIT}\x1b[?25h \r\n\u{feff}{SUCCESS}\r\n\
         \x1b[?1006l\x1b[>4m\x1b[<u\x1b7\x1b[r\x1b8\x1b]0;\x07\x1b[?25h"
    );
    let facts = parse_text(&text);
    assert_eq!(facts.events, 2);
    assert_eq!(facts.other_lines, 0);
    assert_eq!(facts.session_id.as_deref(), Some("s-1"));
    assert!(!facts.cut_short);
}

#[test]
fn lines_that_are_not_events_are_counted_and_ignored() {
    let lines = [
        "WARNING: proceeding",
        "[STARTUP] Phase 'cleanup_ops' was started",
        "    at async main (file:///x.js:1:2)",
        "[1,2,3]",
        r#"{"no_type":true}"#,
        r#"{"type":42}"#,
        r#"{"type":"result"} trailing words"#,
        "{not json at all}",
        r#"Error: {"type":"error","error":{"type":"authentication_error","message":"x"}}"#,
        "\"type\"",
    ];
    let facts = parse_text(&format!("{}\r\n", lines.join("\r\n")));
    assert_eq!(
        facts,
        StreamFacts {
            other_lines: lines.len() as u32,
            ..StreamFacts::default()
        }
    );
}

#[test]
fn blank_lines_are_not_counted() {
    let facts = parse_text("\r\n\n   \r\n\x1b[0m\r\n");
    assert_eq!(facts, StreamFacts::default());
}

#[test]
fn a_json_line_cut_short_at_the_end_is_cut_short() {
    let facts = parse_text(&format!(
        "{INIT}\r\n{{\"type\":\"result\",\"subtype\":\"succ"
    ));
    assert_eq!(facts.events, 1);
    assert_eq!(facts.other_lines, 1);
    assert!(facts.cut_short);
}

#[test]
fn a_cut_json_line_followed_by_more_lines_is_only_counted() {
    let facts = parse_text(&format!(
        "{{\"type\":\"message\",\"con\nplain\n{INIT}\n{SUCCESS}\n"
    ));
    assert_eq!((facts.events, facts.other_lines), (2, 2));
    assert!(!facts.cut_short);
}

#[test]
fn events_without_a_final_event_are_cut_short_unless_an_error_ended_them() {
    assert!(parse_text(&format!("{INIT}\n")).cut_short);
    assert!(!parse_text(&format!("{INIT}\n{SUCCESS}\n")).cut_short);
    let ended_by_error =
        format!("{INIT}\n{{\"type\":\"error\",\"error\":{{\"type\":\"x\",\"message\":\"m\"}}}}\n");
    assert!(!parse_text(&ended_by_error).cut_short);
    let codex_retry =
        format!("{INIT}\n{{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}}\n");
    assert!(parse_text(&codex_retry).cut_short);
    assert!(!parse_text("just text, no events").cut_short);
}

#[test]
fn invalid_utf8_is_another_line_and_the_stream_goes_on() {
    let mut bytes = b"\xff\xfe\xc3(\n{\"type\":\"result\",\"result\":\"\xc3\x28\"}\n".to_vec();
    bytes.extend_from_slice(format!("{SUCCESS}\n").as_bytes());
    let facts = parse(&bytes);
    assert_eq!((facts.events, facts.other_lines), (1, 2));
    assert_eq!(facts.result_text.as_deref(), Some("done"));
}

#[test]
fn a_utf8_character_split_between_reads_is_kept_whole() {
    let line = "{\"type\":\"result\",\"result\":\"caf\u{e9} \u{2713}\"}\n".as_bytes();
    let at = line.iter().position(|&b| b == 0xc3).unwrap() + 1;
    let facts = parse_chunks(&[&line[..at], &line[at..]]);
    assert_eq!(facts.result_text.as_deref(), Some("caf\u{e9} \u{2713}"));
}

#[test]
fn a_line_over_the_limit_is_dropped_and_counted_without_keeping_it() {
    let long = vec![b'x'; MAX_LINE_BYTES + 1];
    let mut parser = StreamParser::new();
    parser.feed(b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"pad\":\"");
    for chunk in long.chunks(1024 * 1024) {
        parser.feed(chunk);
        assert!(parser.buffered() <= MAX_LINE_BYTES);
    }
    assert_eq!(parser.buffered(), 0);
    parser.feed(b"\"}\r\n");
    parser.feed(format!("{SUCCESS}\n").as_bytes());
    parser.finish();
    let facts = parser.facts();
    assert_eq!((facts.events, facts.other_lines), (1, 1));
    assert_eq!(facts.session_id, None);
    assert!(!facts.cut_short);
}

#[test]
fn a_line_over_the_limit_in_one_read_is_dropped_the_same_way() {
    let mut bytes = vec![b'x'; MAX_LINE_BYTES + 1];
    bytes.push(b'\n');
    bytes.extend_from_slice(format!("{SUCCESS}\n").as_bytes());
    let facts = parse(&bytes);
    assert_eq!((facts.events, facts.other_lines), (1, 1));
    let exactly = vec![b'x'; MAX_LINE_BYTES];
    assert_eq!(parse(&exactly).other_lines, 1);
}

#[test]
fn a_json_line_over_the_limit_at_the_end_is_cut_short() {
    let mut parser = StreamParser::new();
    parser.feed(b"\x1b[0m{\"type\":\"result\",\"result\":\"");
    parser.feed(&vec![b'y'; MAX_LINE_BYTES]);
    parser.finish();
    assert_eq!(parser.facts().other_lines, 1);
    assert!(parser.facts().cut_short);
}

#[test]
fn a_big_buffer_is_freed_after_its_line() {
    let mut parser = StreamParser::new();
    parser.feed(b"{\"type\":\"result\",\"result\":\"");
    parser.feed(&vec![b'z'; 1024 * 1024]);
    parser.feed(b"\"}\n");
    assert!(parser.buffered() <= KEPT_BUFFER_CAPACITY);
    assert_eq!(
        parser.facts().result_text.as_ref().map(String::len),
        Some(1024 * 1024)
    );
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16),
    ) {
        let mut parser = StreamParser::new();
        for chunk in &chunks {
            parser.feed(chunk);
        }
        parser.finish();
        let facts = parser.facts().clone();
        let whole: Vec<u8> = chunks.concat();
        prop_assert_eq!(parse(&whole), facts.clone());
        let _ = judge(&facts, &plain_profile());
    }

    #[test]
    fn arbitrary_event_like_lines_never_panic(
        lines in proptest::collection::vec(
            proptest::string::string_regex(
                concat!(
                    r#"\{"type":"(result|assistant|error|item\.completed|turn\.(completed|failed)|message|init|tool_use)""#,
                    r#"(,"(result|is_error|subtype|status|error|message|item|usage|stats|content|role|delta|num_turns|permission_denials|session_id|cost_usd|text)":"#,
                    r#"("[a-z ]{0,6}"|-?[1-9][0-9]{0,3}(\.[0-9])?|true|false|null|\{\}|\[\]|\{"type":"[a-z_]{0,6}","message":"[a-z ]{0,6}","code":[1-9][0-9]{0,2}\}|\[\{"type":"(text|tool_use)","text":"a"\}\]|\[\{"tool_name":"B","tool_input":\{"x":1\}\}\]))*\}"#,
                ),
            ).unwrap(),
            0..12,
        ),
    ) {
        let facts = parse_text(&lines.join("\r\n"));
        prop_assert_eq!(facts.events as usize, lines.len());
        let _ = judge(&facts, &plain_profile());
    }
}

mod events_tests;
mod judge_tests;

// ---- refused tool calls ----

/// `codex exec --json` under approval policy never (captured from Codex CLI 0.169.0 against the
/// conformance suite's mock API): the refusal is a tracing line, then the model's marker and a
/// completed turn.
const CODEX_REFUSED: &str = concat!(
    "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n",
    "{\"type\":\"turn.started\"}\n",
    "\x1b[2m2026-11-25T01:23:00.768626Z\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mcodex_core::tools::router\x1b[0m\x1b[2m:\x1b[0m \x1b[3merror\x1b[0m\x1b[2m=\x1b[0mapproval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never\n",
    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":\"agent_message\",\"text\":\"All done.\\nTASK_COMPLETE:x\"}}\n",
    "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":40,\"output_tokens\":24}}\n",
);

/// Gemini headless asked for a tool it left out of its registry, then printed the marker.
const GEMINI_REFUSED: &str = concat!(
    "{\"type\":\"init\",\"session_id\":\"s-1\",\"model\":\"auto\"}\n",
    "{\"type\":\"tool_use\",\"tool_name\":\"run_shell_command\",\"tool_id\":\"run_shell_command-1\",\"parameters\":{\"command\":\"touch x\"}}\n",
    "{\"type\":\"tool_result\",\"tool_id\":\"run_shell_command-1\",\"status\":\"error\",\"output\":\"Tool \\\"run_shell_command\\\" not found in registry.\",\"error\":{\"type\":\"tool_not_registered\",\"message\":\"Tool \\\"run_shell_command\\\" not found in registry.\"}}\n",
    "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"All done.\\nTASK_COMPLETE:x\",\"delta\":true}\n",
    "{\"type\":\"result\",\"status\":\"success\",\"stats\":{\"input_tokens\":40,\"output_tokens\":24}}\n",
);

#[test]
fn a_refused_tool_call_is_permission_blocked_even_with_a_successful_result() {
    for (text, profile, evidence) in [
        (
            CODEX_REFUSED,
            "codex-json",
            "permission denied: approval policy is Never; reject command",
        ),
        (
            GEMINI_REFUSED,
            "gemini-json",
            "permission denied: run_shell_command-1: Tool \"run_shell_command\" not found",
        ),
    ] {
        let facts = parse_text(text);
        assert!(
            facts.result.as_ref().is_some_and(|r| r.success),
            "{profile}"
        );
        assert_eq!(facts.refused_tools.len(), 1, "{profile}: {facts:?}");
        let (failure, said) = judge(&facts, &built_in(profile)).unwrap();
        assert_eq!(failure, FailureType::PermissionBlocked, "{profile}");
        assert!(said.starts_with(evidence), "{profile}: {said}");
    }
}

#[test]
fn other_error_lines_and_tool_errors_are_not_refusals() {
    let text = concat!(
        "ERROR codex_core::exec: command exited with status 1\n",
        "{\"type\":\"tool_result\",\"tool_id\":\"read_file-1\",\"status\":\"error\",\"error\":{\"type\":\"file_not_found\",\"message\":\"No such file\"}}\n",
        "{\"type\":\"tool_result\",\"tool_id\":\"read_file-2\",\"status\":\"success\"}\n",
    );
    assert!(parse_text(text).refused_tools.is_empty());
}

// ---- retries that cannot heal ----

fn api_retry(attempt: u32, status: u16, error: &str) -> String {
    format!(
        "{{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":{attempt},\"max_retries\":10,\
         \"retry_delay_ms\":605.5,\"error_status\":{status},\"error\":\"{error}\",\"session_id\":\"s-1\"}}\n"
    )
}

#[test]
fn a_retried_auth_error_is_hopeless_at_once_and_a_quota_error_on_its_second_retry() {
    let auth = parse_text(&format!(
        "{INIT}\n{}",
        api_retry(1, 401, "authentication_failed")
    ));
    let (class, said) = hopeless_retry(&auth).unwrap();
    assert_eq!(class, FailureType::Auth);
    assert!(
        said.contains("authentication_failed") && said.contains("status 401"),
        "{said}"
    );
    let (failure, _) = judge(&auth, &plain_profile()).unwrap();
    assert_eq!(failure, FailureType::Auth);

    let once = format!("{INIT}\n{}", api_retry(1, 429, "rate_limit"));
    assert_eq!(hopeless_retry(&parse_text(&once)), None);
    let twice = format!("{once}{}", api_retry(2, 429, "rate_limit"));
    let quota = parse_text(&twice);
    assert_eq!(hopeless_retry(&quota).unwrap().0, FailureType::Quota);
    assert_eq!(
        judge(&quota, &plain_profile()).unwrap().0,
        FailureType::Quota
    );

    // Overloaded servers do heal: those retries are waited out.
    let overloaded = (1..=5)
        .map(|n| api_retry(n, 529, "overloaded_error"))
        .collect::<String>();
    assert_eq!(hopeless_retry(&parse_text(&overloaded)), None);
    // A result ends the question.
    let done = format!("{}{SUCCESS}\n", api_retry(1, 401, "authentication_failed"));
    assert_eq!(hopeless_retry(&parse_text(&done)), None);
}
