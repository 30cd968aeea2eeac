//! Which task starts next, as tables: concurrency, pause and stop, scope, retry times, quota
//! holds, account rotation and host capacity.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::queue::{Candidate, Consider, Queue, Slots};
use crate::core::profile::{Profile, ProfileSet};
use crate::core::remote::host_choice::HostChoice;
use crate::core::remote::hosts::HostSet;

/// Profile `p` with `accounts` accounts (`a0`, `a1`, ...).
pub(super) fn profile(accounts: usize) -> Profile {
    let mut text = String::from("[profiles.p]\ncommand = ['x']\n");
    for i in 0..accounts {
        text.push_str(&format!("[[profiles.p.accounts]]\nname = 'a{i}'\n"));
    }
    ProfileSet::build(&[&text], None)
        .unwrap()
        .get("p")
        .unwrap()
        .clone()
}

fn candidate(profile: Option<&Profile>) -> Candidate<'_> {
    Candidate {
        index: 0,
        agent: "p",
        profile,
        in_scope: true,
        has_attempt: false,
        host: None,
    }
}

const ROOM: Slots = Slots {
    held: 0,
    concurrency: 2,
};

fn secs(t0: Instant, n: u64) -> Instant {
    t0 + Duration::from_secs(n)
}

#[test]
fn concurrency_pause_stop_and_scope() {
    type Setup = fn(&mut Queue);
    let nothing: Setup = |_| {};
    let cases: [(&str, Setup, Slots, bool, bool, Consider); 7] = [
        ("room, in scope", nothing, ROOM, true, false, Consider::Due),
        (
            "every slot held",
            nothing,
            Slots {
                held: 2,
                concurrency: 2,
            },
            true,
            false,
            Consider::Full,
        ),
        (
            "one slot of two held",
            nothing,
            Slots {
                held: 1,
                concurrency: 2,
            },
            true,
            false,
            Consider::Due,
        ),
        (
            "paused",
            |q| q.set_paused(true),
            ROOM,
            true,
            false,
            Consider::Full,
        ),
        ("stopping", |q| q.stop(), ROOM, true, false, Consider::Full),
        ("out of scope", nothing, ROOM, false, false, Consider::Skip),
        ("has an attempt", nothing, ROOM, true, true, Consider::Skip),
    ];
    let now = Instant::now();
    for (name, setup, slots, in_scope, has_attempt, expected) in cases {
        let mut queue = Queue::default();
        setup(&mut queue);
        let c = Candidate {
            in_scope,
            has_attempt,
            ..candidate(None)
        };
        assert_eq!(queue.consider(&c, slots, now), expected, "{name}");
    }
}

#[test]
fn resuming_the_queue_lets_tasks_start_again() {
    let mut queue = Queue::default();
    let now = Instant::now();
    queue.set_paused(true);
    assert_eq!(queue.consider(&candidate(None), ROOM, now), Consider::Full);
    queue.set_paused(false);
    assert_eq!(queue.consider(&candidate(None), ROOM, now), Consider::Due);
}

#[test]
fn retry_times_and_quota_holds() {
    let t0 = Instant::now();
    // (case, retry at, profile held until, asked at, expected)
    let cases = [
        ("no wait", None, None, 0, Consider::Due),
        ("retry not yet", Some(10), None, 9, Consider::Skip),
        ("retry due exactly", Some(10), None, 10, Consider::Due),
        ("retry past", Some(10), None, 30, Consider::Due),
        ("quota held", None, Some(60), 59, Consider::Skip),
        ("quota reset", None, Some(60), 60, Consider::Due),
        (
            "retry due, still held",
            Some(10),
            Some(60),
            20,
            Consider::Skip,
        ),
    ];
    for (name, retry, hold, at, expected) in cases {
        let mut queue = Queue::default();
        if let Some(r) = retry {
            queue.set_retry_at(0, secs(t0, r));
        }
        if let Some(h) = hold {
            queue.hold_profile("p", secs(t0, h));
        }
        let got = queue.consider(&candidate(None), ROOM, secs(t0, at));
        assert_eq!(got, expected, "{name}");
    }
    let mut queue = Queue::default();
    queue.set_retry_at(0, secs(t0, 10));
    queue.clear_retry(0);
    assert_eq!(
        queue.consider(&candidate(None), ROOM, t0),
        Consider::Due,
        "retry now clears the wait"
    );
    let mut other = Queue::default();
    other.hold_profile("q", secs(t0, 60));
    assert_eq!(
        other.consider(&candidate(None), ROOM, t0),
        Consider::Due,
        "another profile's hold does not hold this one"
    );
}

#[test]
fn accounts_rotate_and_a_profile_with_every_account_resting_waits() {
    let p = profile(2);
    let t0 = Instant::now();
    let mut queue = Queue::default();
    assert_eq!(queue.take_account(&p, secs(t0, 0)), Some(0));
    assert_eq!(queue.take_account(&p, secs(t0, 1)), Some(1));
    assert_eq!(
        queue.take_account(&p, secs(t0, 2)),
        Some(0),
        "least recently used"
    );
    queue.rest_account(&p, 0, secs(t0, 100));
    assert_eq!(queue.take_account(&p, secs(t0, 3)), Some(1), "0 rests");
    assert_eq!(
        queue.consider(&candidate(Some(&p)), ROOM, secs(t0, 3)),
        Consider::Due
    );
    queue.rest_account(&p, 1, secs(t0, 50));
    assert_eq!(
        queue.consider(&candidate(Some(&p)), ROOM, secs(t0, 4)),
        Consider::Skip,
        "every account rests"
    );
    assert_eq!(queue.next_due(secs(t0, 4)), Some(secs(t0, 50)));
    assert_eq!(
        queue.consider(&candidate(Some(&p)), ROOM, secs(t0, 50)),
        Consider::Due,
        "back after its rest"
    );
    assert_eq!(queue.take_account(&profile(0), t0), None, "no accounts");
}

/// Hosts `a` and `b`, one agent each, in group `fleet`.
pub(super) fn hosts() -> HostSet {
    HostSet::parse(
        r#"
[hosts.a]
ssh = "u@a"
groups = ["fleet"]
max_agents = 1
[hosts.b]
ssh = "u@b"
groups = ["fleet"]
max_agents = 1
"#,
    )
    .unwrap()
}

#[test]
fn host_capacity_and_rotation() {
    let t0 = Instant::now();
    let load = |pairs: &[(&str, usize)]| -> BTreeMap<String, usize> {
        pairs.iter().map(|(h, n)| (h.to_string(), *n)).collect()
    };
    let use_ = |h: &str| HostChoice::Use(h.to_string());
    // (case, target, load, host out of rotation, expected)
    let cases = [
        ("empty group", "fleet", load(&[]), None, Some(use_("a"))),
        ("a full", "fleet", load(&[("a", 1)]), None, Some(use_("b"))),
        ("a out", "fleet", load(&[]), Some("a"), Some(use_("b"))),
        (
            "both full",
            "fleet",
            load(&[("a", 1), ("b", 1)]),
            None,
            None,
        ),
        ("one host full", "a", load(&[("a", 1)]), None, None),
        ("one host out", "b", load(&[]), Some("b"), None),
    ];
    for (name, target, load, out, expected) in cases {
        let mut queue = Queue::default();
        if let Some(host) = out {
            queue.take_host_out(host, "no route".into(), t0, Duration::from_secs(60));
        }
        let got = queue.choose_host(&hosts(), target, &load, t0);
        match expected {
            Some(choice) => assert_eq!(got, choice, "{name}"),
            None => assert!(matches!(got, HostChoice::Wait { .. }), "{name}: {got:?}"),
        }
    }
    assert_eq!(
        Queue::default().choose_host(&hosts(), "nowhere", &BTreeMap::new(), t0),
        HostChoice::Unknown
    );
    let mut queue = Queue::default();
    queue.take_host_out("a", "no route".into(), t0, Duration::from_secs(60));
    assert!(!queue.host_in_rotation("a", t0));
    assert_eq!(
        queue.next_due(t0),
        Some(secs(t0, 60)),
        "wakes when a is back"
    );
    assert!(queue.host_in_rotation("a", secs(t0, 60)));
}

#[test]
fn nothing_is_due_while_paused_or_stopping() {
    let t0 = Instant::now();
    let mut queue = Queue::default();
    queue.set_retry_at(3, secs(t0, 5));
    queue.hold_profile("p", secs(t0, 9));
    assert_eq!(queue.next_due(t0), Some(secs(t0, 5)));
    queue.set_paused(true);
    assert_eq!(queue.next_due(t0), None);
    queue.set_paused(false);
    queue.stop();
    assert_eq!(queue.next_due(t0), None);
}

#[test]
fn an_attempts_end_rests_its_account_holds_its_profile_and_sets_its_retry_time() {
    use crate::core::batch::outcome::{AccountRest, Decision};
    use crate::core::task::TaskStatus;
    let p = profile(2);
    let t0 = Instant::now();
    let decision = |rest: Option<usize>, hold: Option<u64>, retry: Option<u64>| Decision {
        status: TaskStatus::Retryable,
        evidence: None,
        rest: rest.map(|account| AccountRest {
            account,
            wait: Duration::from_secs(100),
        }),
        hold_profile: hold.map(Duration::from_secs),
        retry_after: retry.map(Duration::from_secs),
    };
    // (case, decision, asked at, expected)
    let cases = [
        (
            "nothing follows",
            decision(None, None, None),
            0,
            Consider::Due,
        ),
        (
            "retry in 30 s",
            decision(None, None, Some(30)),
            29,
            Consider::Skip,
        ),
        (
            "retry due",
            decision(None, None, Some(30)),
            30,
            Consider::Due,
        ),
        (
            "profile held 60 s",
            decision(None, Some(60), None),
            59,
            Consider::Skip,
        ),
        (
            "hold over",
            decision(None, Some(60), None),
            60,
            Consider::Due,
        ),
        (
            "one account of two rests",
            decision(Some(0), None, None),
            1,
            Consider::Due,
        ),
    ];
    for (name, decision, at, expected) in cases {
        let mut queue = Queue::default();
        queue.follow(0, "p", Some(&p), &decision, t0);
        let got = queue.consider(&candidate(Some(&p)), ROOM, secs(t0, at));
        assert_eq!(got, expected, "{name}");
    }
    let mut queue = Queue::default();
    queue.follow(0, "p", Some(&p), &decision(Some(0), None, None), t0);
    assert_eq!(
        queue.take_account(&p, secs(t0, 1)),
        Some(1),
        "the rested account is skipped"
    );
    queue.follow(0, "p", Some(&p), &decision(Some(1), None, None), t0);
    assert_eq!(
        queue.consider(&candidate(Some(&p)), ROOM, secs(t0, 2)),
        Consider::Skip,
        "both rest: the task waits"
    );
}

#[test]
fn the_engine_tells_the_queue_retry_times_and_hosts_out_through_inputs() {
    use super::{Batch, Input};
    let now = Instant::now();
    let mut batch = Batch::default();
    let at = now + Duration::from_secs(30);
    assert!(batch.handle(Input::RetryAt { task: 3, at }, now).is_empty());
    assert_eq!(batch.queue().retry_at(3), Some(at));
    assert!(
        batch
            .handle(Input::RetryCleared { task: 3 }, now)
            .is_empty()
    );
    assert_eq!(batch.queue().retry_at(3), None);
    let out = Input::HostOut {
        host: "gpu1".into(),
        reason: "no route".into(),
        out_for: Duration::from_secs(60),
    };
    assert!(batch.handle(out, now).is_empty());
    assert!(!batch.queue().host_in_rotation("gpu1", now));
    assert!(
        batch
            .queue()
            .host_in_rotation("gpu1", now + Duration::from_secs(61))
    );
}
