//! The order of `judge`'s rules, and how an error is classified.

use super::*;

fn failed(errors: Vec<StreamError>) -> StreamFacts {
    StreamFacts {
        result: Some(FinalResult {
            success: false,
            subtype: None,
        }),
        errors,
        ..StreamFacts::default()
    }
}

fn fatal(kind: Option<&str>, status: Option<u16>, message: &str) -> StreamError {
    StreamError {
        kind: kind.map(str::to_string),
        status,
        message: message.to_string(),
        fatal: true,
    }
}

fn notice(message: &str) -> StreamError {
    StreamError {
        fatal: false,
        ..fatal(None, None, message)
    }
}

fn failure_of(facts: &StreamFacts, profile: &Profile) -> Option<FailureType> {
    judge(facts, profile).map(|(failure, _)| failure)
}

#[test]
fn denials_come_first_even_after_a_successful_result() {
    let facts = StreamFacts {
        result: Some(FinalResult {
            success: true,
            subtype: Some("success".to_string()),
        }),
        permission_denials: vec!["Bash(touch a)".to_string(), "Write(/b)".to_string()],
        errors: vec![fatal(Some("authentication_error"), None, "x")],
        ..StreamFacts::default()
    };
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((
            FailureType::PermissionBlocked,
            "permission denied: Bash(touch a), Write(/b)".to_string()
        ))
    );
}

#[test]
fn a_successful_result_decides_no_failure_whatever_errors_came_before() {
    let facts = StreamFacts {
        result: Some(FinalResult {
            success: true,
            subtype: None,
        }),
        errors: vec![notice(
            "Reconnecting... 1/5 (unexpected status 401 Unauthorized)",
        )],
        ..StreamFacts::default()
    };
    assert_eq!(judge(&facts, &plain_profile()), None);
}

#[test]
fn nothing_known_decides_nothing() {
    assert_eq!(judge(&StreamFacts::default(), &plain_profile()), None);
    let warnings_only = StreamFacts {
        errors: vec![notice("Model metadata for `gpt-5` not found")],
        ..StreamFacts::default()
    };
    assert_eq!(judge(&warnings_only, &plain_profile()), None);
}

#[test]
fn kinds_name_their_failure() {
    let table = [
        ("authentication_error", FailureType::Auth),
        ("authentication_failed", FailureType::Auth),
        ("invalid_api_key", FailureType::Auth),
        ("rate_limit_error", FailureType::Quota),
        ("rate_limit", FailureType::Quota),
        ("billing_error", FailureType::Quota),
        ("insufficient_quota", FailureType::Quota),
        ("usage_limit_reached", FailureType::Quota),
        ("RESOURCE_EXHAUSTED", FailureType::Quota),
        ("overloaded_error", FailureType::Process),
    ];
    for (kind, failure) in table {
        let facts = failed(vec![fatal(Some(kind), None, "something")]);
        assert_eq!(
            failure_of(&facts, &plain_profile()),
            Some(failure),
            "{kind}"
        );
    }
}

#[test]
fn statuses_name_their_failure() {
    let table = [
        (401, FailureType::Auth),
        (403, FailureType::Auth),
        (429, FailureType::Quota),
        (500, FailureType::Process),
        (529, FailureType::Process),
    ];
    for (status, failure) in table {
        let facts = failed(vec![fatal(None, Some(status), "something")]);
        assert_eq!(
            failure_of(&facts, &plain_profile()),
            Some(failure),
            "{status}"
        );
    }
}

#[test]
fn the_kind_outranks_the_status_and_the_status_outranks_the_text() {
    let facts = failed(vec![fatal(
        Some("rate_limit_error"),
        Some(401),
        "Invalid API key",
    )]);
    assert_eq!(
        failure_of(&facts, &plain_profile()),
        Some(FailureType::Quota)
    );
    let facts = failed(vec![fatal(Some("unknown"), Some(401), "rate limit")]);
    assert_eq!(
        failure_of(&facts, &plain_profile()),
        Some(FailureType::Auth)
    );
}

#[test]
fn profile_texts_are_tried_auth_then_quota_then_transient() {
    let profile = profile_with("zeta-auth", "zeta", "zeta");
    let facts = failed(vec![fatal(None, None, "a zeta-auth failure")]);
    assert_eq!(failure_of(&facts, &profile), Some(FailureType::Auth));
    let facts = failed(vec![fatal(None, None, "a zeta failure")]);
    assert_eq!(failure_of(&facts, &profile), Some(FailureType::Quota));
    let profile = profile_with("^x$", "^y$", "flaky net");
    let facts = failed(vec![fatal(Some("unknown"), Some(400), "flaky net here")]);
    assert_eq!(
        judge(&facts, &profile),
        Some((FailureType::Process, "flaky net here".to_string()))
    );
}

#[test]
fn the_profile_outranks_the_built_in_texts() {
    let profile = profile_with("^x$", "rate limit", "^z$");
    let facts = failed(vec![fatal(None, None, "Invalid API key and rate limit")]);
    assert_eq!(failure_of(&facts, &profile), Some(FailureType::Quota));
    let facts = failed(vec![fatal(None, None, "Invalid API key and rate limit")]);
    assert_eq!(
        failure_of(&facts, &plain_profile()),
        Some(FailureType::Auth)
    );
}

#[test]
fn built_in_texts_catch_what_the_profile_does_not() {
    let table = [
        ("HTTP 401 from upstream", Some(FailureType::Auth)),
        ("Unauthorized", Some(FailureType::Auth)),
        ("invalid API key", Some(FailureType::Auth)),
        (
            "API key not valid. Please pass a valid API key.",
            Some(FailureType::Auth),
        ),
        ("Not logged in · Please run /login", Some(FailureType::Auth)),
        ("error (429)", Some(FailureType::Quota)),
        ("Rate limited", Some(FailureType::Quota)),
        ("You exceeded your current quota", Some(FailureType::Quota)),
        ("Quota exceeded for quota metric", Some(FailureType::Quota)),
        ("You've hit your usage limit", Some(FailureType::Quota)),
        ("Credit balance is too low", Some(FailureType::Quota)),
        ("RESOURCE_EXHAUSTED", Some(FailureType::Quota)),
        ("port 14012 closed", None),
        ("error code 4290", None),
    ];
    for (message, expected) in table {
        let facts = StreamFacts {
            errors: vec![notice(message)],
            ..StreamFacts::default()
        };
        assert_eq!(failure_of(&facts, &plain_profile()), expected, "{message}");
    }
}

#[test]
fn fatal_errors_are_read_before_the_others_and_latest_first() {
    let facts = failed(vec![
        notice("Unauthorized"),
        fatal(None, None, "rate limit hit"),
        fatal(None, None, "Unauthorized later"),
        notice("rate limit notice"),
    ]);
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((FailureType::Auth, "Unauthorized later".to_string()))
    );
    let facts = failed(vec![
        notice("rate limit earlier"),
        notice("Unauthorized latest"),
        fatal(None, None, "boom"),
    ]);
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((FailureType::Auth, "Unauthorized latest".to_string()))
    );
}

#[test]
fn an_unnamed_failure_is_a_process_failure_with_the_agents_words() {
    let facts = failed(vec![
        fatal(None, None, "first"),
        fatal(None, None, "boom\n  at x"),
    ]);
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((
            FailureType::Process,
            "the agent reported an error: boom at x".to_string()
        ))
    );
    let max_turns = StreamFacts {
        result: Some(FinalResult {
            success: false,
            subtype: Some("error_max_turns".to_string()),
        }),
        ..StreamFacts::default()
    };
    assert_eq!(
        judge(&max_turns, &plain_profile()),
        Some((
            FailureType::Process,
            "the agent reported an error: error_max_turns".to_string()
        ))
    );
    let parsed = parse_text(r#"{"type":"result","subtype":"error_max_turns","is_error":true}"#);
    assert_eq!(
        judge(&parsed, &plain_profile()),
        Some((
            FailureType::Process,
            "the agent reported an error: error_max_turns".to_string()
        ))
    );
}

#[test]
fn a_fatal_error_without_a_final_event_is_a_process_failure() {
    let facts = StreamFacts {
        errors: vec![fatal(Some("weird_error"), None, "")],
        ..StreamFacts::default()
    };
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((
            FailureType::Process,
            "the agent reported an error: weird_error".to_string()
        ))
    );
}

#[test]
fn evidence_is_one_trimmed_line_of_at_most_300_characters() {
    let long = format!("  Unauthorized:\r\n {}  ", "é".repeat(400));
    let facts = failed(vec![fatal(None, None, &long)]);
    let (failure, evidence) = judge(&facts, &plain_profile()).unwrap();
    assert_eq!(failure, FailureType::Auth);
    assert!(evidence.starts_with("Unauthorized: éé"));
    assert!(!evidence.contains('\n'));
    assert_eq!(evidence.chars().count(), 301);
    assert!(evidence.ends_with('…'));
}

#[test]
fn codex_metadata_warning_item_does_not_fail_a_completed_run() {
    let facts = parse_text(concat!(
        r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5` not found."}}"#,
        "\r\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#,
        "\r\n",
    ));
    assert_eq!(facts.errors.len(), 1);
    assert!(!facts.errors[0].fatal);
    assert_eq!(judge(&facts, &built_in("codex")), None);
}

/// herd's ACP client's result for a session it stopped: a tool call ran without asking.
#[test]
fn a_tool_call_that_ran_without_asking_blocks_the_attempt_with_the_call_as_evidence() {
    let ran = "the agent ran Bash(touch x) without asking: its permission mode is not herd's";
    let facts = StreamFacts {
        unasked_tools: vec![ran.to_string()],
        permission_denials: vec!["Bash(rm -rf ~)".to_string()],
        ..failed(vec![fatal(Some("tool_ran_without_asking"), None, ran)])
    };
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((FailureType::PermissionBlocked, ran.to_string()))
    );
}

#[test]
fn a_session_mode_herd_could_not_set_is_a_set_up_problem() {
    let message = "session/set_mode default failed: Invalid params (-32602)";
    let facts = failed(vec![fatal(Some("permission_mode_not_set"), None, message)]);
    assert_eq!(
        judge(&facts, &plain_profile()),
        Some((FailureType::Config, message.to_string()))
    );
}
