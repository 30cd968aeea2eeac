//! Which tasks start in a turn, as tables: slots, scope, hosts and their load, unknown hosts,
//! account rotation, retry times; no process, no file.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::queue::{Candidate, Slots};
use super::queue_tests::{hosts, profile};
use super::{Batch, Fill, Input, QueueCommand, Room, Start};

/// A runnable task in scope, without an attempt, here.
fn task(index: usize) -> Candidate<'static> {
    Candidate {
        index,
        agent: "p",
        profile: None,
        in_scope: true,
        has_attempt: false,
        host: None,
    }
}

fn on(index: usize, host: &'static str) -> Candidate<'static> {
    Candidate {
        host: Some(host),
        ..task(index)
    }
}

fn here(task: usize) -> Start {
    Start {
        task,
        host: None,
        account: None,
    }
}

fn at_host(task: usize, host: &str) -> Start {
    Start {
        host: Some(host.to_string()),
        ..here(task)
    }
}

/// The fill of `runnable` with `held` of `concurrency` slots held and `load` on the hosts.
fn fill(
    batch: &mut Batch,
    runnable: Vec<Candidate<'_>>,
    (held, concurrency): (usize, usize),
    load: &[(&str, usize)],
    now: Instant,
) -> Fill {
    let hosts = hosts();
    let room = Room {
        slots: Slots { held, concurrency },
        hosts: &hosts,
        load: load.iter().map(|(h, n)| (h.to_string(), *n)).collect(),
    };
    batch.plan_starts(runnable, room, now)
}

/// (case, runnable, slots held of concurrency, load, expected starts, unknown hosts)
type Case<'a> = (
    &'a str,
    Vec<Candidate<'a>>,
    (usize, usize),
    &'a [(&'a str, usize)],
    Vec<Start>,
    Vec<usize>,
);

#[test]
fn starts_fill_the_free_slots_in_the_files_order_on_hosts_with_room() {
    let out_of_scope = Candidate {
        in_scope: false,
        ..task(1)
    };
    let has_attempt = Candidate {
        has_attempt: true,
        ..task(0)
    };
    let cases: [Case<'_>; 7] = [
        (
            "up to the concurrency",
            vec![task(0), task(1), task(2)],
            (0, 2),
            &[],
            vec![here(0), here(1)],
            vec![],
        ),
        (
            "held slots count",
            vec![task(0), task(1)],
            (1, 2),
            &[],
            vec![here(0)],
            vec![],
        ),
        (
            "every slot held",
            vec![task(0)],
            (2, 2),
            &[],
            vec![],
            vec![],
        ),
        (
            "out of scope or with an attempt: skipped",
            vec![has_attempt, out_of_scope, task(2)],
            (0, 1),
            &[],
            vec![here(2)],
            vec![],
        ),
        (
            "a group spreads its starts; a full group waits, a later task starts",
            vec![on(0, "fleet"), on(1, "fleet"), on(2, "fleet"), task(3)],
            (0, 4),
            &[],
            vec![at_host(0, "a"), at_host(1, "b"), here(3)],
            vec![],
        ),
        (
            "the load already on a host counts",
            vec![on(0, "fleet"), on(1, "a")],
            (0, 4),
            &[("a", 1)],
            vec![at_host(0, "b")],
            vec![],
        ),
        (
            "an unknown host holds no slot",
            vec![on(0, "nowhere"), task(1)],
            (0, 1),
            &[],
            vec![here(1)],
            vec![0],
        ),
    ];
    let now = Instant::now();
    for (name, runnable, slots, load, starts, unknown_host) in cases {
        let got = fill(&mut Batch::default(), runnable, slots, load, now);
        let expected = Fill {
            starts,
            unknown_host,
        };
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn starts_rotate_their_profiles_accounts_and_drop_their_retry_times() {
    let p = profile(2);
    let with = |index| Candidate {
        profile: Some(&p),
        ..task(index)
    };
    let now = Instant::now();
    let mut batch = Batch::default();
    let later = now + Duration::from_secs(60);
    batch.handle(Input::RetryAt { task: 3, at: later }, now);
    batch.handle(Input::RetryAt { task: 1, at: now }, now);
    let got = fill(
        &mut batch,
        vec![with(0), with(1), with(2), with(3)],
        (0, 4),
        &[],
        now,
    );
    let accounts: Vec<(usize, Option<usize>)> =
        got.starts.iter().map(|s| (s.task, s.account)).collect();
    assert_eq!(
        accounts,
        vec![(0, Some(0)), (1, Some(1)), (2, Some(0))],
        "least recently used first; task 3 waits for its retry time"
    );
    assert_eq!(
        batch.queue().retry_at(1),
        None,
        "a start drops its retry time"
    );
    assert_eq!(
        batch.queue().retry_at(3),
        Some(later),
        "a waiting task keeps it"
    );
}

#[test]
fn nothing_starts_while_paused_and_a_full_turn_reads_no_further() {
    let now = Instant::now();
    let mut batch = Batch::default();
    batch.handle(Input::Operator(QueueCommand::Pause), now);
    assert_eq!(
        fill(&mut batch, vec![task(0)], (0, 2), &[], now),
        Fill::default()
    );
    batch.handle(Input::Operator(QueueCommand::Resume), now);
    let read = Cell::new(0);
    let runnable = (0..1000).map(|index| {
        read.set(read.get() + 1);
        task(index)
    });
    let hosts = hosts();
    let room = Room {
        slots: Slots {
            held: 0,
            concurrency: 2,
        },
        hosts: &hosts,
        load: BTreeMap::new(),
    };
    let got = batch.plan_starts(runnable, room, now);
    assert_eq!(got.starts, vec![here(0), here(1)]);
    assert_eq!(read.get(), 3, "stops at the first task with no slot left");
}
