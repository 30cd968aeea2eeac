use std::io::Cursor;
use std::sync::Arc;

use super::*;
use crate::replay::synth;

fn cast(bytes: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    synth::agent_cast(&mut out, bytes, seed).unwrap();
    out
}

fn index(data: &[u8], options: IndexOptions) -> Arc<Index> {
    Arc::new(Index::build(Cursor::new(data), options, &mut |_| {}).unwrap())
}

fn playhead(data: &[u8], index: &Arc<Index>) -> Playhead<Cursor<Vec<u8>>> {
    Playhead::new(Cursor::new(data.to_vec()), Arc::clone(index)).unwrap()
}

/// Everything a screen shows: cells with attributes, cursor, size, title.
fn state(p: &Playhead<Cursor<Vec<u8>>>) -> (String, (u16, u16), Option<String>, u64) {
    let term = p.term();
    (
        term.screen().contents_formatted(),
        term.size(),
        term.title().map(str::to_string),
        p.applied(),
    )
}

const DENSE: IndexOptions = IndexOptions {
    every_bytes: 4 << 10,
    budget_bytes: usize::MAX,
};
const NONE: IndexOptions = IndexOptions {
    every_bytes: u64::MAX,
    budget_bytes: usize::MAX,
};

#[test]
fn seeking_anywhere_gives_the_screen_of_playing_through() {
    let data = cast(400 << 10, 7);
    let dense = index(&data, DENSE);
    assert!(
        dense.checkpoints.len() > 50,
        "{} checkpoints",
        dense.checkpoints.len()
    );
    let duration = dense.timeline.duration();
    let mut times: Vec<f64> = (0..=40).map(|i| duration * f64::from(i) / 40.0).collect();
    times.extend(dense.checkpoints.iter().step_by(7).map(|c| c.time));
    times.sort_by(f64::total_cmp);
    // Reference: one forward pass, no checkpoints.
    let plain = index(&data, NONE);
    assert!(plain.checkpoints.is_empty());
    let mut reference = playhead(&data, &plain);
    let expected: Vec<_> = times
        .iter()
        .map(|&t| {
            reference.seek(t).unwrap();
            state(&reference)
        })
        .collect();
    // Seeks in a scrambled order: back, forward, onto checkpoints, from later positions.
    let mut p = playhead(&data, &dense);
    let n = times.len();
    for k in 0..n * 2 {
        let i = (k * 17 + 5) % n;
        p.seek(times[i]).unwrap();
        assert_eq!(state(&p), expected[i], "seek #{k} to {} s", times[i]);
    }
    // The end of the index is the end of the file.
    p.seek(duration).unwrap();
    assert_eq!(p.applied(), dense.events);
}

#[test]
fn seeking_to_an_event_matches_stepping_there() {
    let data = cast(200 << 10, 3);
    let dense = index(&data, DENSE);
    let mut stepper = playhead(&data, &index(&data, NONE));
    let mut p = playhead(&data, &dense);
    let targets = [dense.events / 2, 5, dense.events, 1, dense.events / 3, 0];
    let mut sorted = targets;
    sorted.sort_unstable();
    let mut expected = std::collections::HashMap::new();
    for &n in &sorted {
        while stepper.applied() < n {
            stepper.step(1, usize::MAX).unwrap();
        }
        expected.insert(n, state(&stepper));
    }
    for n in targets {
        p.seek_event(n).unwrap();
        assert_eq!(state(&p), expected[&n], "event {n}");
    }
}

#[test]
fn checkpoints_stay_within_their_budget() {
    let data = cast(600 << 10, 11);
    let budget = 4 << 20;
    let thin = index(
        &data,
        IndexOptions {
            every_bytes: 1 << 10,
            budget_bytes: budget,
        },
    );
    assert!(
        thin.checkpoint_bytes() <= budget,
        "{}",
        thin.checkpoint_bytes()
    );
    assert!(thin.checkpoints.len() >= 4, "{}", thin.checkpoints.len());
    // Thinned checkpoints still seek right.
    let mut p = playhead(&data, &thin);
    let mut q = playhead(&data, &index(&data, NONE));
    let t = thin.timeline.duration() * 0.77;
    p.seek(t).unwrap();
    q.seek(t).unwrap();
    assert_eq!(state(&p), state(&q));
}

#[test]
fn the_index_knows_markers_gaps_and_sizes() {
    let data = cast(100 << 10, 5);
    let index = index(&data, IndexOptions::default());
    let markers = index.timeline.markers();
    assert!(markers.iter().any(|m| m.kind == MarkerKind::Prompt));
    let last = markers.last().unwrap();
    assert_eq!(last.kind, MarkerKind::Verdict { completed: true });
    assert_eq!(last.event, index.events);
    assert_eq!(index.problem_count, 0, "{:?}", index.problems);
    assert_eq!((index.header.cols, index.header.rows), (120, 40));
    assert_eq!(index.file_bytes, data.len() as u64);
}

#[test]
fn previews_show_control_characters() {
    assert_eq!(preview("\x1b[1mhi\r\n\x07", 50), "\\e[1mhi\\r\\n\\x07");
    assert_eq!(preview("abcdef", 3), "abc…");
}

/// Escape-sequence fragments that, split anywhere, exercise every parser state.
const FRAGMENTS: [&str; 24] = [
    "\x1b", "[", "]", "P", "X", "_", "^", "(", "B", "0;", "12", ";", "m", "H", "J", "r", "\x07",
    "\\", "\x18", "x", "漢", "\r\n", "?1049h", "$q",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Checkpoints taken wherever the stream looks like it is between sequences restore to the
    /// screen playing through gives, however sequences are split across events.
    #[test]
    fn checkpoints_are_exact_wherever_sequences_are_split(
        pieces in proptest::collection::vec((0..FRAGMENTS.len(), 0..4usize), 1..120)
    ) {
        let mut lines = vec!["{\"version\":2,\"width\":12,\"height\":4}".to_string()];
        let mut data = String::new();
        for (i, (fragment, cut)) in pieces.iter().enumerate() {
            data.push_str(FRAGMENTS[*fragment]);
            if *cut == 0 {
                let event = serde_json::json!([i as f64 / 100.0, "o", std::mem::take(&mut data)]);
                lines.push(event.to_string());
            }
        }
        lines.push(serde_json::json!([2.0, "o", data]).to_string());
        let cast = (lines.join("\n") + "\n").into_bytes();
        let every = index(&cast, IndexOptions { every_bytes: 1, budget_bytes: usize::MAX });
        let mut stepper = playhead(&cast, &index(&cast, NONE));
        let mut expected = vec![state(&stepper)];
        while stepper.step(1, usize::MAX).unwrap() {
            expected.push(state(&stepper));
        }
        // From every checkpoint (the latest first, so each seek goes back), play on to the end.
        let mut p = playhead(&cast, &every);
        for checkpoint in every.checkpoints.iter().rev() {
            p.seek_event(checkpoint.events).unwrap();
            let mut n = checkpoint.events as usize;
            proptest::prop_assert_eq!(&state(&p), &expected[n]);
            while p.step(1, usize::MAX).unwrap() {
                n += 1;
                proptest::prop_assert_eq!(&state(&p), &expected[n], "from checkpoint {}", checkpoint.events);
            }
        }
    }
}
