//! How long a dashboard frame takes: 16 agent panes redrawing like Claude Code's spinner, drawn
//! at 200x60 into a `TestBackend`; and the queue of a 10,000-task batch built from a real engine
//! and drawn. Run with `cargo bench --bench dashboard`.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use herd::run::clock::Now;
use std::time::{Duration, Instant};

use divan::Bencher;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use herd::core::profile::ProfileSet;
use herd::core::screen::Screen;
use herd::run::engine::{Engine, EngineOptions};
use herd::run::store::TaskStore;

use herd::ui::draw::draw;
use herd::ui::layout;
use herd::ui::model::{Dashboard, PaneView, QueueView, StatusView};
use herd::ui::state::UiState;

fn main() {
    divan::main();
}

const AGENTS: usize = 16;
const SPINNER: [&str; 6] = ["·", "✢", "✳", "✶", "✻", "✽"];

/// A Claude-like session: a header, tool calls, a spinner line and the input box.
fn session(rows: u16) -> String {
    let mut out = String::from("\x1b[2J\x1b[H\x1b[38;5;174m╭─── Claude Code ───╮\x1b[0m\r\n");
    for i in 0..rows.saturating_sub(8) {
        out.push_str(&format!(
            "\x1b[1m●\x1b[0m Update(src/module_{i}.rs)\r\n  \x1b[2m⎿  {i} additions, 2 removals\x1b[0m\r\n"
        ));
    }
    out
}

/// One spinner update: rewrite the spinner row, then put the cursor back in the input box.
fn spinner(tick: usize, rows: u16) -> String {
    let row = rows.saturating_sub(4);
    let glyph = SPINNER[tick % SPINNER.len()];
    format!(
        "\x1b[{row};1H\x1b[2K\x1b[38;5;174m{glyph} Thinking… ({}s · ↑ {}k tokens · esc to interrupt)\x1b[0m\x1b[{};3H",
        tick / 10,
        tick % 97,
        rows.saturating_sub(1)
    )
}

/// Screens sized like the panes they are drawn in (as the dashboard resizes them).
fn screens(width: u16, height: u16) -> Vec<Screen> {
    let area = ratatui::layout::Rect::new(0, 0, width, height);
    let regions = layout::regions(area, false);
    let plan = layout::panes(regions.panes, AGENTS, false);
    assert_eq!(plan.hidden, 0, "every pane is drawn");
    plan.slots
        .iter()
        .map(|slot| {
            let (rows, cols) = layout::pty_size(*slot);
            let mut screen = Screen::new(rows, cols);
            screen.feed(session(rows).as_bytes(), 0);
            screen
        })
        .collect()
}

fn view(screens: &[Screen]) -> Dashboard<'_> {
    let panes = screens
        .iter()
        .enumerate()
        .map(|(i, s)| PaneView {
            task_id: format!("agent-{i:02}"),
            attempt: 1,
            max_attempts: 2,
            elapsed: Duration::from_secs(60 + i as u64),
            screen: s.vt(),
            focused: i == 0,
            selected: i == 0,
            prompt: None,
            note: None,
            scrolled: 0,
            ending: false,
            host: None,
        })
        .collect();
    Dashboard {
        queue: QueueView::default(),
        panes,
        hidden_panes: 0,
        zoomed: false,
        takeover: false,
        detail: None,
        final_screen: None,
        status: StatusView::default(),
        overlay: None,
    }
}

/// A frame while every agent's spinner moved: feed one update to each of the 16 screens, build
/// the view and draw it.
#[divan::bench]
fn frame_16_spinners_200x60(bencher: Bencher<'_, '_>) {
    let mut screens = screens(200, 60);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let mut tick = 0;
    bencher.bench_local(|| {
        tick += 1;
        for screen in &mut screens {
            let rows = screen.size().0;
            screen.feed(spinner(tick, rows).as_bytes(), 0);
        }
        let view = view(&screens);
        terminal.draw(|f| draw(f, &view)).expect("draw");
    });
}

/// `terminal.draw` alone for the same 16 panes.
#[divan::bench]
fn draw_16_panes_200x60(bencher: Bencher<'_, '_>) {
    let screens = screens(200, 60);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let view = view(&screens);
    bencher.bench_local(|| {
        terminal.draw(|f| draw(f, &view)).expect("draw");
    });
}

/// A 10,000-task batch: the engine's tasks file, statuses counted, the queue filtered and its
/// visible window built, then drawn.
#[divan::bench]
fn queue_10000_tasks_200x60(bencher: Bencher<'_, '_>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.json");
    let statuses = ["completed", "failed", "pending", "cancelled", "retryable"];
    let tasks: Vec<String> = (0..10_000)
        .map(|i| {
            let status = statuses[i % statuses.len()];
            let result = if status == "failed" {
                r#", "result": {"failure_type": "failed_auth", "failure_evidence": "Invalid API key"}"#
            } else {
                ""
            };
            format!(
                r#"{{"task_id": "task-{i:05}", "agent": "generic", "command": ["true"], "prompt_template": "p", "status": "{status}"{result}}}"#
            )
        })
        .collect();
    let text = format!(r#"{{"run_id": "bench", "tasks": [{}]}}"#, tasks.join(",\n"));
    std::fs::write(&path, text).expect("write tasks");
    let store = TaskStore::open(&path).expect("store");
    let profiles =
        ProfileSet::build(&herd::assets::built_in_profile_texts(), None).expect("profiles");
    let opts = EngineOptions {
        concurrency: 4,
        rows: 40,
        cols: 120,
        runs_dir: dir.path().join("runs"),
        only: Vec::new(),
        operator_present: true,
        hosts: Default::default(),
        record_input: false,
    };
    let (tx, _rx) = tokio::sync::mpsc::channel(16);
    let engine = Engine::new(store, profiles, opts, tx, Now::read()).expect("engine");
    let mut state = UiState::new(Instant::now());
    state.selected = 5_000;
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let area = ratatui::layout::Rect::new(0, 0, 200, 60);
    let panes = herd::ui::model::PaneSetup::default();
    bencher.bench_local(|| {
        let view = herd::ui::model::dashboard(&engine, &state, area, Instant::now(), &panes);
        terminal.draw(|f| draw(f, &view)).expect("draw");
    });
}
