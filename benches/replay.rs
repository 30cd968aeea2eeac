//! Replay benchmarks on a ~100 MB synthetic agent recording (`HERD_BENCH_MB` changes the size):
//! building the seek index, seeking to random positions, and what the checkpoints hold.
//!
//! Run: `cargo bench --bench replay`. Before the timings it prints the file size, the index build
//! time, the checkpoints' count and bytes, and the slowest of 10 random seeks.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use divan::Bencher;
use herd::replay::seek::{Index, IndexOptions, Playhead};
use herd::replay::synth;
use herd::replay::term::Term;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    report();
    divan::main();
}

fn target_bytes() -> usize {
    let mb: usize = std::env::var("HERD_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    mb << 20
}

/// The synthetic recording, written once and kept between runs.
fn cast() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let bytes = target_bytes();
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("replay-bench-{}mb.cast", bytes >> 20));
        if !path.exists() {
            let file = std::fs::File::create(&path).unwrap();
            let mut out = std::io::BufWriter::new(file);
            synth::agent_cast(&mut out, bytes, 42).unwrap();
        }
        path
    })
}

fn index() -> &'static Arc<Index> {
    static INDEX: OnceLock<Arc<Index>> = OnceLock::new();
    INDEX.get_or_init(|| {
        Arc::new(Index::build_file(cast(), IndexOptions::default(), &mut |_| {}).unwrap())
    })
}

/// Ten recorded times spread pseudo-randomly over the recording.
fn random_times(duration: f64) -> Vec<f64> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..10)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            duration * (x % 10_000) as f64 / 10_000.0
        })
        .collect()
}

fn report() {
    let path = cast();
    let size = std::fs::metadata(path).unwrap().len();
    let started = Instant::now();
    let index = index();
    let build = started.elapsed();
    let mut playhead = Playhead::open(path, Arc::clone(index)).unwrap();
    let mut slowest = std::time::Duration::ZERO;
    for t in random_times(index.timeline.duration()) {
        let started = Instant::now();
        playhead.seek(t).unwrap();
        slowest = slowest.max(started.elapsed());
    }
    // What a checkpoint would cost as formatted text instead (vt100's `contents_formatted`,
    // re-fed into a fresh parser): smaller, but it loses the scroll region, saved cursor,
    // modes and scrollback, so seeking would not match playing through.
    playhead.seek(index.timeline.duration() / 2.0).unwrap();
    let formatted = playhead.term().screen().contents_formatted().len();
    let snapshot = playhead.term().snapshot().bytes();
    println!(
        "replay bench: one checkpoint mid-way: Screen clone {snapshot} bytes, contents_formatted {formatted} bytes"
    );
    println!(
        "replay bench: {:.1} MB, {} events, {:.0} s recorded; index built in {:.2} s; {} checkpoints holding {:.1} MB ({} bytes); slowest of 10 random seeks {:.1} ms",
        size as f64 / 1e6,
        index.events,
        index.timeline.duration(),
        build.as_secs_f64(),
        index.checkpoints.len(),
        index.checkpoint_bytes() as f64 / 1e6,
        index.checkpoint_bytes(),
        slowest.as_secs_f64() * 1e3,
    );
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn index_build(bencher: Bencher<'_, '_>) {
    let path = cast();
    bencher.bench(|| Index::build_file(path, IndexOptions::default(), &mut |_| {}).unwrap());
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn seek_10_random_positions(bencher: Bencher<'_, '_>) {
    let index = index();
    let times = random_times(index.timeline.duration());
    bencher
        .with_inputs(|| Playhead::open(cast(), Arc::clone(index)).unwrap())
        .bench_local_values(|mut playhead| {
            for &t in &times {
                playhead.seek(t).unwrap();
            }
            playhead
        });
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn seek_back_to_the_middle_from_the_end(bencher: Bencher<'_, '_>) {
    let index = index();
    let duration = index.timeline.duration();
    bencher
        .with_inputs(|| {
            let mut playhead = Playhead::open(cast(), Arc::clone(index)).unwrap();
            playhead.seek(duration).unwrap();
            playhead
        })
        .bench_local_values(|mut playhead| {
            playhead.seek(duration / 2.0).unwrap();
            playhead
        });
}

/// The terminal half-way through the recording.
fn middle() -> Playhead {
    let index = index();
    let mut playhead = Playhead::open(cast(), Arc::clone(index)).unwrap();
    playhead.seek(index.timeline.duration() / 2.0).unwrap();
    playhead
}

#[divan::bench]
fn checkpoint_by_screen_clone(bencher: Bencher<'_, '_>) {
    let playhead = middle();
    let mut term = Term::new(40, 120, 80);
    bencher.bench_local(|| {
        let snapshot = playhead.term().snapshot();
        term.restore(&snapshot);
    });
}

#[divan::bench]
fn checkpoint_by_formatted_text(bencher: Bencher<'_, '_>) {
    let playhead = middle();
    let (rows, cols) = playhead.term().size();
    bencher.bench_local(|| {
        let text = playhead.term().screen().contents_formatted();
        let size = |n| NonZeroU16::new(n).unwrap();
        let mut parser = vt100::Parser::new(size(rows), size(cols), 80);
        parser.process(text.as_bytes());
        parser
    });
}
