//! An agent never starts before the write that marks its task `running` is durable: a table
//! for the gate, and a property over any order of starts, writes and withdrawals.

use std::collections::BTreeMap;
use std::time::Instant;

use proptest::prelude::*;

use super::{Batch, Effect, Input};

fn started(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::StartAgent { key } => Some(*key),
            _ => None,
        })
        .collect()
}

#[test]
fn starts_launch_once_their_generation_is_durable_oldest_first() {
    let now = Instant::now();
    let mut batch = Batch::default();
    let mut handle = |input| started(&batch.handle(input, now));
    assert_eq!(
        handle(Input::StartRecorded {
            key: 1,
            generation: 1
        }),
        Vec::<u64>::new()
    );
    assert_eq!(
        handle(Input::StartRecorded {
            key: 2,
            generation: 1
        }),
        Vec::<u64>::new()
    );
    assert_eq!(
        handle(Input::StartRecorded {
            key: 3,
            generation: 2
        }),
        Vec::<u64>::new()
    );
    assert_eq!(handle(Input::WriteDurable { generation: 1 }), vec![1, 2]);
    assert_eq!(handle(Input::StartWithdrawn { key: 3 }), Vec::<u64>::new());
    assert_eq!(
        handle(Input::WriteDurable { generation: 2 }),
        Vec::<u64>::new(),
        "withdrawn"
    );
    assert_eq!(
        handle(Input::StartRecorded {
            key: 4,
            generation: 2
        }),
        vec![4],
        "recorded in a generation already on disk"
    );
}

#[test]
fn waits_beyond_says_whether_a_start_needs_a_newer_write() {
    let now = Instant::now();
    let mut batch = Batch::default();
    assert!(!batch.waits_beyond(0));
    batch.handle(
        Input::StartRecorded {
            key: 1,
            generation: 3,
        },
        now,
    );
    assert!(batch.waits_beyond(2));
    assert!(!batch.waits_beyond(3));
}

/// What the shell does, in any order.
#[derive(Debug, Clone)]
enum Step {
    /// A start marks its task `running` in the next generation.
    Record,
    /// The changes so far are handed to the writer.
    Hand,
    /// The writer reports generations up to `handed - back` durable.
    Durable {
        back: u64,
    },
    /// The oldest start still waiting is withdrawn.
    Withdraw,
    Tick,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => Just(Step::Record),
        2 => Just(Step::Hand),
        3 => (0u64..3).prop_map(|back| Step::Durable { back }),
        1 => Just(Step::Withdraw),
        1 => Just(Step::Tick),
    ]
}

proptest! {
    #[test]
    fn an_agent_never_starts_before_its_running_write_is_durable(
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let now = Instant::now();
        let mut batch = Batch::default();
        let (mut handed, mut durable, mut next_key) = (0u64, 0u64, 1u64);
        // key -> generation that records it, for the starts not launched nor withdrawn.
        let mut waiting: BTreeMap<u64, u64> = BTreeMap::new();
        let mut launched: Vec<u64> = Vec::new();
        for step in steps {
            let input = match step {
                Step::Record => {
                    let key = next_key;
                    next_key += 1;
                    waiting.insert(key, handed + 1);
                    Input::StartRecorded { key, generation: handed + 1 }
                }
                Step::Hand => {
                    handed += 1;
                    continue;
                }
                Step::Durable { back } => {
                    durable = durable.max(handed.saturating_sub(back));
                    Input::WriteDurable { generation: durable }
                }
                Step::Withdraw => match waiting.keys().next().copied() {
                    Some(key) => {
                        waiting.remove(&key);
                        Input::StartWithdrawn { key }
                    }
                    None => continue,
                },
                Step::Tick => Input::Tick,
            };
            for key in started(&batch.handle(input, now)) {
                let generation = waiting.remove(&key);
                prop_assert!(generation.is_some(), "start {key} launched twice or after withdrawal");
                let generation = generation.unwrap_or_default();
                prop_assert!(
                    generation <= durable,
                    "start {key} of generation {generation} launched with {durable} durable"
                );
                launched.push(key);
            }
        }
        // Every start whose write is durable has launched.
        prop_assert!(waiting.values().all(|g| *g > durable), "{waiting:?} with {durable} durable");
        prop_assert_eq!(batch.waits_beyond(durable), !waiting.is_empty());
    }
}
