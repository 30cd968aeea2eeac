//! SPEC's success rule, end to end through the attempt: the marker AND a normal end. A normal
//! end is exit code 0, or, for an interactive profile (one with `exit_keys`), being ended by herd
//! once its turn is over (exit keys, grace, TERM, KILL). Exiting by itself non-zero or by a
//! signal after the marker is `failed_process`; a profile without `exit_keys` is left to finish.

use super::test_support::{exit_code, secs, setup};
use super::*;
use crate::core::classify::ExitStatus;
use crate::core::task::FailureType;

const PLAIN: &str = r#"
[profiles.t]
command = ["t"]
"#;

const INTERACTIVE: &str = r#"
[profiles.t]
command = ["t"]
exit_keys = "/exit\r"
exit_grace_sec = 2
ready = '(?m)^❯\s*$'
busy = ['esc to interrupt']
"#;

const MARKER_LINE: &[u8] = b"TASK_COMPLETE:t1\r\n";
const READY: &[u8] = "\x1b[2J\x1b[H● TASK_COMPLETE:t1\r\n❯ \r\n".as_bytes();
const BUSY: &[u8] =
    "\x1b[2J\x1b[H● TASK_COMPLETE:t1\r\n✻ Tidying up (esc to interrupt)\r\n".as_bytes();

fn attempt(profile: &str) -> Attempt {
    Attempt::new(AttemptSetup {
        prompt: "Work. Then print TASK_COMPLETE:t1".into(),
        rows: 20,
        cols: 60,
        idle: secs(20),
        permission_wait: None,
        ..setup(profile)
    })
}

fn signal(name: &str) -> ExitStatus {
    ExitStatus {
        code: None,
        signal: Some(name.into()),
    }
}

/// What herd did to the agent, in order: written keys and signals.
fn actions(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write { bytes, .. } => Some(String::from_utf8_lossy(bytes).into_owned()),
            Effect::Signal(s) => Some(format!("{s:?}")),
            Effect::Note(_) | Effect::HookReply { .. } | Effect::AppServerSend { .. } => None,
        })
        .collect()
}

/// Ticks at every deadline up to `until`, collecting what herd did.
fn tick_until(a: &mut Attempt, until: Duration) -> Vec<String> {
    let mut done = Vec::new();
    while let Some(at) = a.next_deadline() {
        if at > until {
            break;
        }
        done.extend(actions(&a.handle(Event::Tick, at)));
    }
    done
}

fn verdict(a: &Attempt) -> (Option<FailureType>, String) {
    let v = a.verdict().expect("the attempt has a verdict");
    (v.failure, v.evidence.clone().unwrap_or_default())
}

#[test]
fn a_plain_agent_exiting_by_itself_after_the_marker() {
    let cases: Vec<(ExitStatus, Option<FailureType>, &str)> = vec![
        (exit_code(0), None, ""),
        (
            exit_code(3),
            Some(FailureType::Process),
            "exit code 3 after the completion marker",
        ),
        (
            signal("SIGSEGV"),
            Some(FailureType::Process),
            "killed by signal SIGSEGV after the completion marker",
        ),
    ];
    for (exit, failure, evidence) in cases {
        let mut a = attempt(PLAIN);
        let fx = a.handle(Event::Output(MARKER_LINE), secs(1));
        assert!(a.marker_seen());
        assert!(actions(&fx).is_empty(), "nothing is done to a plain agent");
        a.handle(Event::Exited(exit.clone()), secs(1));
        assert_eq!(verdict(&a), (failure, evidence.to_string()), "{exit:?}");
    }
}

#[test]
fn a_plain_agent_is_left_to_finish_after_the_marker() {
    let mut a = attempt(PLAIN);
    a.handle(Event::Output(MARKER_LINE), secs(1));
    assert_eq!(
        a.next_deadline(),
        Some(secs(100)),
        "only the timeout is pending"
    );
    assert!(tick_until(&mut a, secs(99)).is_empty());
    a.handle(Event::Output(b"still tidying up\r\n"), secs(60));
    a.handle(Event::Exited(exit_code(0)), secs(80));
    assert_eq!(verdict(&a), (None, String::new()));
}

#[test]
fn a_plain_agent_still_working_at_the_timeout_timed_out() {
    let mut a = attempt(PLAIN);
    a.handle(Event::Output(MARKER_LINE), secs(1));
    assert_eq!(tick_until(&mut a, secs(100)), ["Term"]);
    a.handle(Event::Exited(signal("SIGTERM")), secs(100));
    assert_eq!(
        verdict(&a),
        (
            Some(FailureType::Timeout),
            "timeout after 100 s".to_string()
        )
    );
}

#[test]
fn an_interactive_agent_gets_its_exit_keys_only_once_its_turn_is_over() {
    let mut a = attempt(INTERACTIVE);
    a.handle(Event::Output(BUSY), secs(1));
    assert!(a.marker_seen());
    assert!(
        tick_until(&mut a, secs(50)).is_empty(),
        "busy after the marker: its turn goes on"
    );
    a.handle(Event::Output(READY), secs(50));
    assert_eq!(tick_until(&mut a, secs(50) + TURN_SETTLE), ["/exit\r"]);
    a.handle(Event::Exited(exit_code(0)), secs(52));
    assert_eq!(verdict(&a), (None, String::new()));
}

#[test]
fn an_interactive_agent_ended_by_herd_after_the_marker_completed() {
    let mut a = attempt(INTERACTIVE);
    a.handle(Event::Output(READY), secs(1));
    assert_eq!(tick_until(&mut a, secs(10)), ["/exit\r", "Term", "Kill"]);
    a.handle(Event::Exited(signal("SIGKILL")), secs(10));
    assert_eq!(verdict(&a), (None, String::new()));
}

#[test]
fn an_interactive_agent_dying_by_itself_after_the_marker_failed() {
    let mut a = attempt(INTERACTIVE);
    a.handle(Event::Output(BUSY), secs(1));
    a.handle(Event::Exited(signal("SIGSEGV")), secs(2));
    assert_eq!(
        verdict(&a),
        (
            Some(FailureType::Process),
            "killed by signal SIGSEGV after the completion marker".to_string()
        )
    );
}

#[test]
fn an_interactive_agent_whose_ready_pattern_does_not_match_ends_after_idle_sec_quiet() {
    let mut a = attempt(INTERACTIVE);
    a.handle(Event::Output(b"TASK_COMPLETE:t1\r\n> \r\n"), secs(1));
    assert!(
        tick_until(&mut a, secs(20)).is_empty(),
        "not before idle_sec"
    );
    assert_eq!(tick_until(&mut a, secs(21)), ["/exit\r"]);
    a.handle(Event::Exited(exit_code(0)), secs(22));
    assert_eq!(verdict(&a), (None, String::new()));
}

/// The verdict an ended attempt reached.
fn verdict_of(fx: &[Effect]) -> Verdict {
    fx.iter()
        .find_map(|e| match e {
            Effect::Note(Note::Verdict(v)) => Some(v.clone()),
            _ => None,
        })
        .unwrap()
}

/// Interactive Claude retrying a rejected key: its screen says only `API error · Retrying`, its
/// debug log names the 401 at the first retry, and the attempt ends then as failed_auth.
#[test]
fn an_interactive_agent_whose_log_names_a_rejected_key_is_ended_at_once_as_failed_auth() {
    let mut a = attempt(&format!("{INTERACTIVE}agent_log = \"claude_debug\"\n"));
    a.handle(
        Event::Output("\x1b[2J\x1b[H✻ API error · Retrying in 2s · attempt 2/10\r\n".as_bytes()),
        secs(1),
    );
    let other = b"2026-11-25T03:39:04Z [DEBUG] [API:request] Creating client\n";
    assert!(a.handle(Event::AgentLog(other), secs(2)).is_empty());
    let retry = br#"2026-11-25T03:39:04Z [ERROR] API error (attempt 1/11): 401 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}
"#;
    let fx = a.handle(Event::AgentLog(retry), secs(3));
    assert!(fx.contains(&Effect::Signal(StopSignal::Term)), "{fx:?}");
    let fx = a.handle(Event::Exited(exit_code(0)), secs(3));
    let verdict = verdict_of(&fx);
    assert_eq!(verdict.failure, Some(FailureType::Auth), "{verdict:?}");
    assert_eq!(
        verdict.evidence.as_deref(),
        Some("1 retries of authentication_error (status 401), attempt 1 of 10: invalid x-api-key")
    );
}

/// A rate limit may pass: one 429 is waited out, the second in a row is a spent quota; an
/// overloaded server is always waited out.
#[test]
fn an_interactive_agents_log_ends_a_quota_at_the_second_retry_and_waits_out_overload() {
    let line = |n: u32, status: u16, kind: &str| {
        format!(
            "[ERROR] API error (attempt {n}/11): {status} {status} {{\"type\":\"error\",\"error\":{{\"type\":\"{kind}\",\"message\":\"m\"}}}}\n"
        )
    };
    let mut a = attempt(&format!("{INTERACTIVE}agent_log = \"claude_debug\"\n"));
    let first = line(1, 429, "rate_limit_error");
    assert!(
        a.handle(Event::AgentLog(first.as_bytes()), secs(1))
            .is_empty()
    );
    let second = line(2, 429, "rate_limit_error");
    let fx = a.handle(Event::AgentLog(second.as_bytes()), secs(3));
    assert!(fx.contains(&Effect::Signal(StopSignal::Term)), "{fx:?}");
    let verdict = verdict_of(&a.handle(Event::Exited(exit_code(0)), secs(3)));
    assert_eq!(verdict.failure, Some(FailureType::Quota), "{verdict:?}");

    let mut a = attempt(&format!("{INTERACTIVE}agent_log = \"claude_debug\"\n"));
    for n in 1..=5 {
        let overloaded = line(n, 529, "overloaded_error");
        assert!(
            a.handle(Event::AgentLog(overloaded.as_bytes()), secs(n.into()))
                .is_empty()
        );
    }
}

/// Interactive Codex refusing a command by itself (its rollout says so; the screen does not),
/// then printing the marker: not a success.
#[test]
fn a_tool_call_the_agent_refused_by_itself_blocks_the_attempt_despite_the_marker() {
    let mut a = attempt(&format!("{INTERACTIVE}agent_log = \"codex_rollout\"\n"));
    let rollout = concat!(
        r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"touch x\"}","call_id":"c1"}}"#,
        "\n",
        r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"approval policy is Granular(..); reject command — you cannot ask for escalated permissions"}}"#,
        "\n"
    );
    assert!(
        a.handle(Event::AgentLog(rollout.as_bytes()), secs(1))
            .is_empty()
    );
    a.handle(Event::Output(READY), secs(2));
    let fx = a.handle(Event::Tick, secs(4));
    assert!(
        fx.iter().any(|e| matches!(
            e,
            Effect::Write {
                reason: InputReason::ExitKeys,
                ..
            }
        )),
        "the turn ends as usual: {fx:?}"
    );
    let verdict = verdict_of(&a.handle(Event::Exited(exit_code(0)), secs(4)));
    assert_eq!(
        verdict.failure,
        Some(FailureType::PermissionBlocked),
        "{verdict:?}"
    );
    assert_eq!(
        verdict.evidence.as_deref(),
        Some(
            "permission denied: exec_command(touch x) — approval policy is Granular(..); reject command"
        )
    );
}
