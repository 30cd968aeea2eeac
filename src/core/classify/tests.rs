use super::*;
use crate::core::profile::ProfileSet;

fn profile() -> Profile {
    let text = r#"
[profiles.t]
command = ["t"]
auth = ['Invalid API key', 'Please run /login', 'API key not valid\. Please pass a valid API key', '\bAPI_KEY_INVALID\b']
quota = ["You[’']ve hit your usage limit"]
transient = ['529 Overloaded']
config = ['not running in a trusted directory']
config_exit_codes = [55]
"#;
    ProfileSet::test_profile(text)
}

/// A screen agent's attempt that exited 0 with nothing on screen; tests change what matters.
fn screen_facts() -> EndFacts<'static> {
    EndFacts {
        cause: EndCause::Exited,
        marker_seen: false,
        exit: exit(0),
        tail: &[],
        completion: Completion::Marker,
        marker_required: true,
        stream: None,
        signal: None,
        agent_log: None,
    }
}

fn exit(code: i32) -> ExitStatus {
    ExitStatus {
        code: Some(code),
        signal: None,
    }
}

#[test]
fn verdict_table() {
    let p = profile();
    let auth = vec!["  ⎿  Not logged in · Please run /login".to_string()];
    let quota = vec!["You’ve hit your usage limit · resets 3pm".to_string()];
    let both = vec![quota[0].clone(), auth[0].clone()];
    let overloaded = vec!["● API Error: Repeated 529 Overloaded errors.".to_string()];
    let healthy = vec!["done".to_string()];
    type Case<'a> = (
        EndCause,
        bool,
        ExitStatus,
        &'a [String],
        Option<FailureType>,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (EndCause::Exited, true, exit(0), &healthy, None, ""),
        (EndCause::AfterMarker, true, exit(137), &healthy, None, ""),
        (
            EndCause::Exited,
            true,
            exit(2),
            &healthy,
            Some(FailureType::Process),
            "exit code 2 after the completion marker",
        ),
        (
            EndCause::Exited,
            false,
            exit(0),
            &healthy,
            Some(FailureType::Incomplete),
            "no completion marker; exit code 0",
        ),
        (
            EndCause::Idle,
            false,
            exit(0),
            &healthy,
            Some(FailureType::Incomplete),
            "idle at the input prompt without the completion marker",
        ),
        (
            EndCause::Timeout { after_sec: 30 },
            true,
            exit(0),
            &auth,
            Some(FailureType::Timeout),
            "timeout after 30 s",
        ),
        (
            EndCause::PermissionBlocked {
                evidence: "prompt press_1 unanswered for 60 s".into(),
            },
            false,
            exit(0),
            &auth,
            Some(FailureType::PermissionBlocked),
            "prompt press_1 unanswered for 60 s",
        ),
        (
            EndCause::Idle,
            false,
            exit(0),
            &auth,
            Some(FailureType::Auth),
            "⎿  Not logged in · Please run /login",
        ),
        (
            EndCause::Exited,
            false,
            exit(1),
            &quota,
            Some(FailureType::Quota),
            "You’ve hit your usage limit · resets 3pm",
        ),
        (
            EndCause::Exited,
            false,
            exit(1),
            &both,
            Some(FailureType::Auth),
            "⎿  Not logged in · Please run /login",
        ),
        (
            EndCause::Idle,
            false,
            exit(0),
            &overloaded,
            Some(FailureType::Process),
            "● API Error: Repeated 529 Overloaded errors.",
        ),
        (
            EndCause::Exited,
            false,
            exit(3),
            &healthy,
            Some(FailureType::Process),
            "exit code 3",
        ),
        (
            EndCause::Exited,
            false,
            ExitStatus {
                code: None,
                signal: Some("SIGKILL".into()),
            },
            &healthy,
            Some(FailureType::Process),
            "killed by signal SIGKILL",
        ),
        // Exit codes lie: an auth failure with exit 0 is still an auth failure.
        (
            EndCause::Exited,
            false,
            exit(0),
            &auth,
            Some(FailureType::Auth),
            "⎿  Not logged in · Please run /login",
        ),
    ];
    for (cause, marker_seen, exit, tail, failure, evidence) in cases {
        let facts = EndFacts {
            cause: cause.clone(),
            marker_seen,
            exit,
            tail,
            ..screen_facts()
        };
        let v = classify(&facts, &p);
        assert_eq!(v.failure, failure, "{cause:?} marker={marker_seen}");
        assert_eq!(v.evidence.as_deref().unwrap_or(""), evidence, "{cause:?}");
    }
}

#[test]
fn cancelled_is_neither_success_nor_failure() {
    let p = profile();
    let v = classify(
        &EndFacts {
            cause: EndCause::Cancelled,
            marker_seen: true,
            ..screen_facts()
        },
        &p,
    );
    assert!(v.cancelled && v.failure.is_none() && !v.is_success());
}

#[test]
fn texts_hard_wrapped_over_two_rows_still_match() {
    let p = profile();
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "│ ✕ [API Error: API key not valid. Please pass a valid API │",
                "│ key.]                                                     │",
            ],
            "✕ [API Error: API key not valid. Please pass a valid API key.]",
        ),
        (
            &["reason: API_KEY_IN", "VALID (googleapis.com)"],
            "reason: API_KEY_INVALID (googleapis.com)",
        ),
        // One row matching alone is the evidence by itself.
        (
            &["Invalid API key · Fix", "the key"],
            "Invalid API key · Fix",
        ),
    ];
    for (rows, evidence) in cases {
        let tail: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        let v = classify(
            &EndFacts {
                tail: &tail,
                ..screen_facts()
            },
            &p,
        );
        assert_eq!(v.failure, Some(FailureType::Auth), "{rows:?}");
        assert_eq!(v.evidence.as_deref(), Some(evidence));
    }
}

#[test]
fn set_up_problems_are_config_failures() {
    let p = profile();
    let untrusted = vec!["Gemini CLI is not running in a trusted directory. To".to_string()];
    let v = classify(
        &EndFacts {
            exit: exit(55),
            tail: &untrusted,
            ..screen_facts()
        },
        &p,
    );
    assert_eq!(v.failure, Some(FailureType::Config));
    assert_eq!(v.evidence.as_deref(), Some(untrusted[0].as_str()));
    // The exit code alone says so too; another code stays a process failure.
    let other = vec!["something else".to_string()];
    for (code, failure) in [(55, FailureType::Config), (54, FailureType::Process)] {
        let v = classify(
            &EndFacts {
                exit: exit(code),
                tail: &other,
                ..screen_facts()
            },
            &p,
        );
        assert_eq!(v.failure, Some(failure), "exit {code}");
    }
}

/// herd ended an agent over errors it kept retrying (its debug log named them): that decides,
/// not the structured stream's report that the agent was killed before its turn ended (an ACP
/// adapter retrying a 401 inside one `session/prompt`).
#[test]
fn a_hopeless_retry_decides_over_the_stream_report_of_the_kill() {
    let p = profile();
    let mut stream = crate::core::wire::stream::StreamFacts::default();
    stream.errors.push(crate::core::wire::stream::StreamError {
        kind: None,
        status: None,
        message: "the agent exited (killed by signal 15) before the turn ended".into(),
        fatal: true,
    });
    let facts = EndFacts {
        cause: EndCause::HopelessRetry {
            failure: FailureType::Auth,
            evidence: "API error (attempt 2/11): 401 authentication_error".into(),
        },
        exit: ExitStatus {
            code: None,
            signal: Some("SIGTERM".into()),
        },
        completion: Completion::Marker,
        stream: Some(&stream),
        ..screen_facts()
    };
    let verdict = classify(&facts, &p);
    assert_eq!(verdict.failure, Some(FailureType::Auth));
    assert!(verdict.evidence.unwrap_or_default().contains("401"));
    // Without herd's decision the same stream reads as a process failure.
    let facts = EndFacts {
        cause: EndCause::Exited,
        ..facts
    };
    assert_eq!(classify(&facts, &p).failure, Some(FailureType::Process));
}
