//! Table tests of `decide`: every verdict × retry budget without accounts, the operator's stop,
//! and the account and quota situations.

use std::time::{Duration, Instant};

use super::*;
use crate::core::profile::ProfileSet;

const MIN: u64 = 60;
const JITTER: f64 = 0.5;

fn profile(accounts: usize) -> Profile {
    let mut text = String::from("[profiles.p]\ncommand = ['x']\n");
    for i in 0..accounts {
        text.push_str(&format!("[[profiles.p.accounts]]\nname = 'a{i}'\n"));
    }
    ProfileSet::build(&[&text], None)
        .expect("profiles")
        .get("p")
        .expect("profile p")
        .clone()
}

fn verdicts() -> Vec<(&'static str, Verdict)> {
    use FailureType::*;
    let mut all = vec![("success", Verdict::success())];
    for failure in [
        Timeout,
        PermissionBlocked,
        Auth,
        Quota,
        Process,
        Incomplete,
        Config,
    ] {
        all.push((failure.as_str(), Verdict::failed(failure, "why")));
    }
    let cancelled = Verdict {
        cancelled: true,
        ..Verdict::success()
    };
    all.push(("cancelled", cancelled));
    all.push(("needs_input", Verdict::needs_input(vec!["which?".into()])));
    all
}

fn rules(wait_for_quota_reset: bool) -> RetryRules<'static> {
    RetryRules {
        max_retries: 1,
        retry_on: None,
        wait_for_quota_reset,
    }
}

fn end(verdict: &Verdict, attempt: u32) -> OutcomeInput<'_> {
    OutcomeInput {
        verdict,
        attempt,
        account: None,
        stopped_by_operator: false,
        quota_reset_in: None,
        jitter: JITTER,
    }
}

#[test]
fn every_verdict_with_and_without_retries_left() {
    use TaskStatus::*;
    // (verdict, status with a retry left (attempt 1 of max_retries 1), status with none left)
    let table = [
        ("success", Completed, Completed),
        ("failed_timeout", Retryable, Failed),
        ("failed_permission_blocked", Failed, Failed),
        ("failed_auth", Failed, Failed),
        ("failed_quota", Failed, Failed),
        ("failed_process", Retryable, Failed),
        ("failed_incomplete", Failed, Failed),
        ("failed_config", Failed, Failed),
        ("cancelled", Cancelled, Cancelled),
        ("needs_input", NeedsInput, NeedsInput),
    ];
    let now = Instant::now();
    let verdicts = verdicts();
    assert_eq!(verdicts.len(), table.len(), "every verdict is in the table");
    for ((name, verdict), (row, left, spent)) in verdicts.iter().zip(table) {
        assert_eq!(*name, row);
        for (attempt, want) in [(1, left), (2, spent)] {
            for wait in [false, true] {
                let got = decide(
                    &end(verdict, attempt),
                    rules(wait),
                    None,
                    &AccountBook::default(),
                    now,
                );
                let retry_after =
                    (want == Retryable).then(|| retry::backoff_with_jitter(attempt, JITTER));
                let expected = Decision {
                    status: want,
                    evidence: None,
                    rest: None,
                    hold_profile: None,
                    retry_after,
                };
                assert_eq!(got, expected, "{name}, attempt {attempt}, wait {wait}");
            }
        }
    }
}

#[test]
fn the_operators_stop_sends_every_verdict_back_without_a_wait() {
    let now = Instant::now();
    let two = profile(2);
    for (name, verdict) in verdicts() {
        for (attempt, account, profile) in [(1, None, None), (2, Some(0), Some(&two))] {
            let e = OutcomeInput {
                account,
                stopped_by_operator: true,
                ..end(&verdict, attempt)
            };
            let got = decide(&e, rules(false), profile, &AccountBook::default(), now);
            let expected = Decision {
                status: TaskStatus::Retryable,
                evidence: Some(STOPPED_EVIDENCE),
                rest: None,
                hold_profile: None,
                retry_after: None,
            };
            assert_eq!(
                got, expected,
                "{name}, attempt {attempt}, account {account:?}"
            );
        }
    }
}

/// One account or quota situation and what it leads to.
struct Case {
    what: &'static str,
    failure: FailureType,
    attempt: u32,
    /// How many accounts the profile has (0: the attempt used none).
    accounts: usize,
    /// Accounts other than the one used that already rest, and until when (minutes from now).
    resting: &'static [(usize, u64)],
    wait_for_quota_reset: bool,
    reset_in_min: Option<u64>,
    stopped: bool,
    status: TaskStatus,
    rest_min: Option<u64>,
    hold_min: Option<u64>,
    retry_after: Option<Duration>,
}

#[test]
fn account_and_quota_situations() {
    use FailureType::*;
    use TaskStatus::*;
    let m = |n: u64| Duration::from_secs(n * MIN);
    let base = Case {
        what: "",
        failure: Quota,
        attempt: 1,
        accounts: 2,
        resting: &[],
        wait_for_quota_reset: false,
        reset_in_min: None,
        stopped: false,
        status: Retryable,
        rest_min: None,
        hold_min: None,
        retry_after: None,
    };
    let cases = [
        Case {
            what: "quota, another account free: it rests half an hour, the next runs at once",
            rest_min: Some(30),
            retry_after: Some(NEXT_ACCOUNT_AFTER),
            ..base
        },
        Case {
            what: "quota with a named reset, another account free: it rests until the reset",
            reset_in_min: Some(10),
            rest_min: Some(10),
            retry_after: Some(NEXT_ACCOUNT_AFTER),
            ..base
        },
        Case {
            what: "quota, another account free, retry budget spent: accounts still rotate",
            attempt: 5,
            rest_min: Some(30),
            retry_after: Some(NEXT_ACCOUNT_AFTER),
            ..base
        },
        Case {
            what: "login failed, another account free: it rests a day",
            failure: Auth,
            rest_min: Some(24 * 60),
            retry_after: Some(NEXT_ACCOUNT_AFTER),
            ..base
        },
        Case {
            what: "quota on the only account, waiting for resets: the task waits for it",
            accounts: 1,
            wait_for_quota_reset: true,
            reset_in_min: Some(10),
            rest_min: Some(10),
            retry_after: Some(m(10)),
            ..base
        },
        Case {
            what: "quota on every account, waiting: the task waits for the first back",
            resting: &[(1, 5)],
            wait_for_quota_reset: true,
            rest_min: Some(30),
            retry_after: Some(m(5)),
            ..base
        },
        Case {
            what: "quota on the only account, not waiting: the task fails",
            accounts: 1,
            reset_in_min: Some(10),
            status: Failed,
            rest_min: Some(10),
            ..base
        },
        Case {
            what: "login failed on the only account, even waiting for resets: the task fails",
            failure: Auth,
            accounts: 1,
            wait_for_quota_reset: true,
            status: Failed,
            rest_min: Some(24 * 60),
            ..base
        },
        Case {
            what: "another failure with accounts: no account rests, the usual retry",
            failure: Timeout,
            retry_after: Some(retry::backoff_with_jitter(1, JITTER)),
            ..base
        },
        Case {
            what: "quota with accounts, stopped by the operator: nothing rests",
            stopped: true,
            reset_in_min: Some(10),
            ..base
        },
        Case {
            what: "quota without accounts, reset named, waiting: the profile holds",
            accounts: 0,
            wait_for_quota_reset: true,
            reset_in_min: Some(10),
            hold_min: Some(10),
            retry_after: Some(m(10)),
            ..base
        },
        Case {
            what: "quota without accounts, waiting, stopped: the hold still counts",
            accounts: 0,
            wait_for_quota_reset: true,
            reset_in_min: Some(10),
            stopped: true,
            hold_min: Some(10),
            retry_after: Some(m(10)),
            ..base
        },
        Case {
            what: "quota without accounts, waiting, no reset named: the task fails",
            accounts: 0,
            wait_for_quota_reset: true,
            status: Failed,
            ..base
        },
        Case {
            what: "quota without accounts, not waiting: the task fails",
            accounts: 0,
            reset_in_min: Some(10),
            status: Failed,
            ..base
        },
    ];
    let now = Instant::now();
    for case in cases {
        let profile = profile(case.accounts);
        let mut book = AccountBook::default();
        for &(index, minutes) in case.resting {
            book.mark_exhausted(&profile, index, now + m(minutes));
        }
        let verdict = Verdict::failed(case.failure, "limit");
        let e = OutcomeInput {
            account: (case.accounts > 0).then_some(0),
            stopped_by_operator: case.stopped,
            quota_reset_in: case.reset_in_min.map(m),
            ..end(&verdict, case.attempt)
        };
        let got = decide(
            &e,
            rules(case.wait_for_quota_reset),
            Some(&profile),
            &book,
            now,
        );
        let expected = Decision {
            status: case.status,
            evidence: case.stopped.then_some(STOPPED_EVIDENCE),
            rest: case.rest_min.map(|minutes| AccountRest {
                account: 0,
                wait: m(minutes),
            }),
            hold_profile: case.hold_min.map(m),
            retry_after: case.retry_after,
        };
        assert_eq!(got, expected, "{}", case.what);
    }
}

#[test]
fn the_account_book_is_not_changed() {
    let profile = profile(1);
    let book = AccountBook::default();
    let now = Instant::now();
    let verdict = Verdict::failed(FailureType::Quota, "limit");
    let e = OutcomeInput {
        account: Some(0),
        ..end(&verdict, 1)
    };
    let decision = decide(&e, rules(true), Some(&profile), &book, now);
    assert!(decision.rest.is_some());
    assert_eq!(book.clone().peek(&profile, now), Choice::Use(0));
}
