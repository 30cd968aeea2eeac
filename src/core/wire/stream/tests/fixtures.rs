//! The real captures (copied from the shared fixtures into `tests/streams/`) and the claudeless
//! recordings: the exact facts and verdict of each, and the same facts for every split of the
//! bytes. Longer than ~400 lines on purpose: one expected-facts table per capture, read whole.

use proptest::prelude::*;

use super::*;

/// One recorded stream and what herd must conclude from it.
struct Case {
    path: &'static str,
    profile: &'static str,
    facts: StreamFacts,
    verdict: Option<(FailureType, &'static str)>,
}

fn error(kind: Option<&str>, status: Option<u16>, message: &str, fatal: bool) -> StreamError {
    StreamError {
        kind: kind.map(str::to_string),
        status,
        message: message.to_string(),
        fatal,
    }
}

fn tokens(input: u64, output: u64, cache_read: u64, cache_creation: Option<u64>) -> Tokens {
    Tokens {
        input: Some(input),
        output: Some(output),
        cache_read: Some(cache_read),
        cache_creation,
    }
}

fn result(success: bool, subtype: Option<&str>) -> Option<FinalResult> {
    Some(FinalResult {
        success,
        subtype: subtype.map(str::to_string),
    })
}

fn some(text: &str) -> Option<String> {
    Some(text.to_string())
}

const MOCK_REPLY: &str = "Hi! This is the mock server speaking.";
const CODEX_METADATA_WARNING: &str = "Model metadata for `gpt-5` not found. Defaulting to fallback \
                                      metadata; this can degrade performance and cause issues.";
const CODEX_401: &str = "unexpected status 401 Unauthorized: Incorrect API key provided: \
                         sk-inval**lid. You can find your API key at \
                         https://platform.openai.com/account/api-keys., url: \
                         http://127.0.0.1:8788/m/auth401/v1/responses";
const GEMINI_401: &str = r#"[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}]"#;

fn claude_cases() -> Vec<Case> {
    let not_logged_in = "Not logged in · Please run /login";
    let rejected = "API Error: Request rejected (429) · Rate limited";
    vec![
        Case {
            path: "claude/b_print_streamjson_nocreds.raw",
            profile: "claude",
            facts: StreamFacts {
                events: 3,
                session_id: some("e0533ed6-5ac1-442d-ba6e-28d295bc37e3"),
                model: some("claude-opus-4-8[1m]"),
                result: result(false, Some("success")),
                result_text: some(not_logged_in),
                cost_usd: Some(0.0),
                tokens: tokens(0, 0, 0, Some(0)),
                num_turns: Some(1),
                errors: vec![
                    error(Some("authentication_failed"), None, not_logged_in, false),
                    error(None, None, not_logged_in, true),
                ],
                ..StreamFacts::default()
            },
            verdict: Some((FailureType::Auth, not_logged_in)),
        },
        Case {
            path: "claude/p_tool_streamjson.raw",
            profile: "claude",
            facts: StreamFacts {
                events: 5,
                session_id: some("1322598a-9e2d-4ab6-9b18-9fae8993a57d"),
                model: some("claude-opus-4-8[1m]"),
                result: result(true, Some("success")),
                result_text: some(MOCK_REPLY),
                cost_usd: Some(0.000_385_000_000_000_000_03),
                tokens: tokens(20, 10, 0, Some(0)),
                num_turns: Some(2),
                tool_calls: 1,
                permission_denials: vec!["Bash(touch mock_created_by_agent.txt)".to_string()],
                tool_requests: vec![crate::core::guard::Request::from_parts(
                    "shell",
                    "touch mock_created_by_agent.txt",
                )],
                ..StreamFacts::default()
            },
            verdict: Some((
                FailureType::PermissionBlocked,
                "permission denied: Bash(touch mock_created_by_agent.txt)",
            )),
        },
        Case {
            path: "claude/p_quota429_streamjson.raw",
            profile: "claude",
            facts: StreamFacts {
                events: 3,
                session_id: some("f9bcc629-b6ea-4cc8-94b2-66d6cba75edb"),
                model: some("claude-opus-4-8[1m]"),
                result: result(false, Some("success")),
                result_text: some(rejected),
                cost_usd: Some(0.0),
                tokens: tokens(0, 0, 0, Some(0)),
                num_turns: Some(1),
                errors: vec![
                    error(Some("rate_limit"), None, rejected, false),
                    error(None, Some(429), rejected, true),
                ],
                ..StreamFacts::default()
            },
            verdict: Some((FailureType::Quota, rejected)),
        },
        Case {
            path: "claude/p_text_streamjson.raw",
            profile: "claude",
            facts: StreamFacts {
                events: 3,
                session_id: some("a69ea923-53c9-40ea-9eea-2c6770a01ee7"),
                model: some("claude-opus-4-8[1m]"),
                result: result(true, Some("success")),
                result_text: some(MOCK_REPLY),
                cost_usd: Some(0.00021),
                tokens: tokens(10, 5, 0, Some(0)),
                num_turns: Some(1),
                ..StreamFacts::default()
            },
            verdict: None,
        },
    ]
}

fn codex_cases() -> Vec<Case> {
    let quota = "Quota exceeded. Check your plan and billing details.";
    let mut auth_errors = vec![error(None, None, CODEX_METADATA_WARNING, false)];
    for attempt in 1..=5 {
        let retry = format!("Reconnecting... {attempt}/5 ({CODEX_401})");
        auth_errors.push(error(None, Some(401), &retry, false));
    }
    auth_errors.push(error(None, Some(401), CODEX_401, false));
    auth_errors.push(error(None, Some(401), CODEX_401, true));
    vec![
        Case {
            path: "codex/e_text_json.raw",
            profile: "codex",
            facts: StreamFacts {
                events: 5,
                other_lines: 1,
                session_id: some("01a1fb76-f5f2-7771-84dc-64b0466ee7f9"),
                result: result(true, None),
                result_text: some(MOCK_REPLY),
                tokens: tokens(10, 5, 0, Some(0)),
                num_turns: Some(1),
                errors: vec![error(None, None, CODEX_METADATA_WARNING, false)],
                ..StreamFacts::default()
            },
            verdict: None,
        },
        Case {
            path: "codex/e_auth401_json.raw",
            profile: "codex",
            facts: StreamFacts {
                events: 10,
                other_lines: 1,
                session_id: some("01a1fb76-fe16-7ed1-abec-86dc7274e58e"),
                result: result(false, None),
                errors: auth_errors,
                ..StreamFacts::default()
            },
            verdict: Some((FailureType::Auth, CODEX_401)),
        },
        Case {
            path: "codex/e_quota429_json.raw",
            profile: "codex",
            facts: StreamFacts {
                events: 5,
                other_lines: 1,
                session_id: some("01a1fb78-062a-7b52-8789-1887d3888651"),
                result: result(false, None),
                errors: vec![
                    error(None, None, CODEX_METADATA_WARNING, false),
                    error(None, None, quota, false),
                    error(None, None, quota, true),
                ],
                ..StreamFacts::default()
            },
            verdict: Some((FailureType::Quota, quota)),
        },
    ]
}

fn gemini_cases() -> Vec<Case> {
    vec![
        Case {
            path: "gemini/p_text_streamjson.raw",
            profile: "gemini",
            facts: StreamFacts {
                events: 4,
                other_lines: 4,
                session_id: some("b87ff55c-7097-4e0f-a725-14794b7a2044"),
                model: some("auto"),
                result: result(true, None),
                result_text: some(MOCK_REPLY),
                tokens: tokens(20, 10, 0, None),
                ..StreamFacts::default()
            },
            verdict: None,
        },
        Case {
            path: "gemini/p_auth401_streamjson.raw",
            profile: "gemini",
            facts: StreamFacts {
                events: 3,
                other_lines: 39,
                session_id: some("d43eabb6-5f0d-42a3-8934-3e4964d69e56"),
                model: some("auto"),
                result: result(false, None),
                tokens: tokens(0, 0, 0, None),
                errors: vec![error(Some("unknown"), None, GEMINI_401, true)],
                ..StreamFacts::default()
            },
            verdict: Some((FailureType::Auth, GEMINI_401)),
        },
    ]
}

/// claudeless 0.4.0, see `tests/streams/claudeless/README.md`.
fn claudeless_cases() -> Vec<Case> {
    let one_error_line = |path, kind, message, failure| Case {
        path,
        profile: "claude",
        facts: StreamFacts {
            events: 1,
            errors: vec![error(Some(kind), None, message, true)],
            ..StreamFacts::default()
        },
        verdict: Some((failure, message)),
    };
    let text_only = |path, cut_short| Case {
        path,
        profile: "claude",
        facts: StreamFacts {
            other_lines: 1,
            cut_short,
            ..StreamFacts::default()
        },
        verdict: None,
    };
    let reply = |path, session: &str, text: &str, cost, output_tokens, tool_calls| Case {
        path,
        profile: "claude",
        facts: StreamFacts {
            events: 3,
            session_id: some(session),
            model: some("claude-opus-4-5-20251101"),
            result: result(true, Some("success")),
            result_text: some(text),
            cost_usd: Some(cost),
            tokens: tokens(100, output_tokens, 0, Some(0)),
            num_turns: Some(1),
            tool_calls,
            ..StreamFacts::default()
        },
        verdict: None,
    };
    let mut bash = reply(
        "claudeless/scenario-bash.txt",
        "da7f14f4-d78c-4891-a094-4a77d7395ef9",
        "",
        0.000315,
        1,
        1,
    );
    bash.facts.tool_requests = vec![crate::core::guard::Request::from_parts(
        "shell",
        "echo TASK_COMPLETE:cl-bash",
    )];
    vec![
        bash,
        reply(
            "claudeless/success.txt",
            "0c22daaf-ddca-481a-81f0-a8989a4b9852",
            "Hello! I'm Claudeless!",
            0.000375,
            5,
            0,
        ),
        reply(
            "claudeless/scenario-reply.txt",
            "8af99122-ccc5-494a-ba80-28517c0100f4",
            "TASK_COMPLETE:cl-reply",
            0.000375,
            5,
            0,
        ),
        one_error_line(
            "claudeless/auth-error.txt",
            "authentication_error",
            "Invalid API key",
            FailureType::Auth,
        ),
        one_error_line(
            "claudeless/rate-limit.txt",
            "rate_limit_error",
            "Rate limit exceeded",
            FailureType::Quota,
        ),
        one_error_line(
            "claudeless/out-of-credits.txt",
            "billing_error",
            "Your account has no credits remaining",
            FailureType::Quota,
        ),
        text_only("claudeless/network-unreachable.txt", false),
        text_only("claudeless/connection-timeout.txt", false),
        text_only("claudeless/partial-response.txt", false),
        text_only("claudeless/malformed-json.txt", true),
    ]
}

fn all_cases() -> Vec<Case> {
    let mut cases = claude_cases();
    cases.extend(codex_cases());
    cases.extend(gemini_cases());
    cases.extend(claudeless_cases());
    cases
}

fn stream_bytes(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/streams/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|error| panic!("reading {full}: {error}"))
}

/// The facts equal, the cost within rounding: serde_json reads `0.00038500000000000003` as
/// `0.000385`.
fn assert_facts(actual: &StreamFacts, expected: &StreamFacts, path: &str) {
    match (actual.cost_usd, expected.cost_usd) {
        (Some(cost), Some(want)) => assert!((cost - want).abs() <= want * 1e-12, "{path}: {cost}"),
        (cost, want) => assert_eq!(cost, want, "{path}"),
    }
    let without_cost = |facts: &StreamFacts| StreamFacts {
        cost_usd: None,
        ..facts.clone()
    };
    assert_eq!(without_cost(actual), without_cost(expected), "{path}");
}

#[test]
fn every_recording_gives_its_facts_and_verdict() {
    for case in all_cases() {
        let facts = parse(&stream_bytes(case.path));
        assert_facts(&facts, &case.facts, case.path);
        let verdict = judge(&facts, &built_in(case.profile));
        let expected = case
            .verdict
            .map(|(failure, evidence)| (failure, evidence.to_string()));
        assert_eq!(verdict, expected, "{}", case.path);
    }
}

#[test]
fn the_recordings_cover_every_capture_and_claudeless_mode() {
    let paths: Vec<&str> = all_cases().iter().map(|case| case.path).collect();
    for mode in [
        "success",
        "network-unreachable",
        "connection-timeout",
        "auth-error",
        "rate-limit",
        "out-of-credits",
        "partial-response",
        "malformed-json",
    ] {
        let path = format!("claudeless/{mode}.txt");
        assert!(paths.contains(&path.as_str()), "{path} has no case");
    }
    assert_eq!(paths.len(), 19);
}

#[test]
fn the_marker_is_found_only_in_the_reply_that_says_it() {
    let reply = parse(&stream_bytes("claudeless/scenario-reply.txt"));
    assert!(result_has_marker(&reply, "TASK_COMPLETE:cl-reply"));
    let bash = parse(&stream_bytes("claudeless/scenario-bash.txt"));
    assert!(!result_has_marker(&bash, "TASK_COMPLETE:cl-bash"));
    let claude = parse(&stream_bytes("claude/p_text_streamjson.raw"));
    assert!(!result_has_marker(&claude, "TASK_COMPLETE"));
}

#[test]
fn every_two_way_split_gives_the_same_facts() {
    for case in all_cases() {
        let bytes = stream_bytes(case.path);
        let whole = parse(&bytes);
        for at in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(at);
            assert_eq!(
                parse_chunks(&[head, tail]),
                whole,
                "{} split at {at}",
                case.path
            );
        }
    }
}

#[test]
fn a_byte_at_a_time_gives_the_same_facts() {
    for case in all_cases() {
        let bytes = stream_bytes(case.path);
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(parse_chunks(&chunks), parse(&bytes), "{}", case.path);
    }
}

#[test]
fn lf_line_ends_give_the_same_facts_as_crlf() {
    for case in all_cases() {
        let crlf = stream_bytes(case.path);
        let lf: Vec<u8> = String::from_utf8_lossy(&crlf)
            .replace("\r\n", "\n")
            .into_bytes();
        let crlf_again: Vec<u8> = String::from_utf8_lossy(&lf)
            .replace('\n', "\r\n")
            .into_bytes();
        assert_facts(&parse(&lf), &case.facts, case.path);
        assert_facts(&parse(&crlf_again), &case.facts, case.path);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_chunking_gives_the_same_facts(
        which in 0usize..19,
        cuts in proptest::collection::vec(0usize..8000, 0..40),
    ) {
        let cases = all_cases();
        let case = &cases[which % cases.len()];
        let bytes = stream_bytes(case.path);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for cut in cuts {
            chunks.push(&bytes[from..cut]);
            from = cut;
        }
        chunks.push(&bytes[from..]);
        prop_assert_eq!(parse_chunks(&chunks), parse(&bytes));
    }
}
