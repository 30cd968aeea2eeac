//! The dashboard's panes against a real engine (agents are plain shell commands): the mouse on
//! the queue and the panes, frames drawn into a `TestBackend`, and PTY sizes following the
//! panes (agents start at their pane's size and follow it when the terminal changes size).

use crate::run::clock::Now;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::engine_tests::fixture;
use super::{layout, settle};
use crate::run::engine::Engine;

#[test]
fn a_click_selects_a_task_or_focuses_a_pane_and_the_wheel_scrolls() {
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let mut f = fixture(&[("a", "pending"), ("b", "pending"), ("c", "failed")]);
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let area = Rect::new(0, 0, 160, 48);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let now = Instant::now();
    super::engine_tests::frame(&mut terminal, &mut f.engine, &mut f.state, Now::read())
        .expect("frame");
    let mouse = |kind, column, row| MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    };
    let click = MouseEventKind::Down(MouseButton::Left);
    // The queue's third row (inside its border) is task c.
    let queue = layout::regions(area, false).queue.expect("a queue");
    let on_c = mouse(click, queue.x + 3, queue.y + 3);
    super::mouse::on_mouse(&f.engine, &mut f.state, &on_c, area, now);
    assert_eq!(f.selected_id(), "c");
    // The wheel over the queue moves the selection.
    let up = mouse(MouseEventKind::ScrollUp, queue.x + 3, queue.y + 3);
    super::mouse::on_mouse(&f.engine, &mut f.state, &up, area, now);
    assert_eq!(f.selected_id(), "b");
    // A click on the second pane (a tile) focuses its task.
    let regions = layout::regions(area, false);
    let plan = layout::panes(regions.panes, 2, false);
    let tile = plan.slots[1];
    let on_tile = mouse(click, tile.x + 2, tile.y + 2);
    let before = f.state.focus;
    super::mouse::on_mouse(&f.engine, &mut f.state, &on_tile, area, now);
    assert_ne!(f.state.focus, before);
    let focused = f.state.focus.expect("a focused pane");
    assert_eq!(f.state.selected, focused);
    // The wheel over a pane scrolls its history.
    let focus_slot = plan.slots[0];
    let wheel = mouse(MouseEventKind::ScrollUp, focus_slot.x + 2, focus_slot.y + 2);
    super::engine_tests::frame(&mut terminal, &mut f.engine, &mut f.state, Now::read())
        .expect("frame");
    super::mouse::on_mouse(&f.engine, &mut f.state, &wheel, area, now);
    assert_eq!(f.state.scroll.get(&focused), Some(&3));
}

fn size_of(engine: &Engine, task: usize) -> Option<(u16, u16)> {
    engine
        .live_for_task(task)
        .map(|l| l.attempt.screen().size())
}

#[test]
fn each_visible_pane_gets_a_pty_of_the_size_it_is_drawn_at() {
    let mut f = fixture(&[("a", "pending"), ("b", "pending"), ("c", "pending")]);
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let now = Instant::now();
    let visible =
        super::engine_tests::frame(&mut terminal, &mut f.engine, &mut f.state, Now::read())
            .expect("frame");
    assert_eq!(visible.len(), 3);
    let regions = layout::regions(Rect::new(0, 0, 160, 48), false);
    let plan = layout::panes(regions.panes, 3, false);

    assert_eq!(
        size_of(&f.engine, 0),
        Some(layout::pty_size(plan.slots[0])),
        "the focused pane"
    );
    assert_eq!(
        size_of(&f.engine, 1),
        Some(layout::pty_size(plan.slots[1])),
        "a tile"
    );
    let text = format!("{}", terminal.backend());
    assert!(text.contains("▶ a · 1/2"), "{text}");

    // Zoomed, the focused pane grows to the whole screen but for the status bar.
    f.state.zoomed = true;
    super::engine_tests::frame(
        &mut terminal,
        &mut f.engine,
        &mut f.state,
        Now {
            at: now + Duration::from_millis(20),
            wall: jiff::Timestamp::now(),
        },
    )
    .expect("frame");
    assert_eq!(size_of(&f.engine, 0), Some((44, 158)));

    // Back from zoom, and the focus moved on: the agents keep their width (no box drawn at the
    // wider width gets cut), only their height follows the pane.
    f.state.zoomed = false;
    f.key(KeyCode::Tab);
    super::engine_tests::frame(
        &mut terminal,
        &mut f.engine,
        &mut f.state,
        Now {
            at: now + Duration::from_millis(40),
            wall: jiff::Timestamp::now(),
        },
    )
    .expect("frame");
    let focused = f.state.focus.expect("a focused pane");
    assert_ne!(focused, 0, "Tab moved the focus");
    let plan = layout::panes(regions.panes, 3, false);
    let was_zoomed = size_of(&f.engine, 0).expect("a's size");
    assert_eq!(was_zoomed.1, 158, "a stays as wide as it was");
    assert_eq!(
        size_of(&f.engine, focused).map(|s| s.1),
        Some(
            layout::pty_size(plan.slots[0])
                .1
                .max(layout::pty_size(plan.slots[1]).1)
        ),
        "the newly focused agent grows to its pane"
    );

    // The operator's terminal changed size: now every agent follows its pane, narrower too.
    let mut smaller = Terminal::new(TestBackend::new(140, 48)).expect("terminal");
    super::engine_tests::frame(
        &mut smaller,
        &mut f.engine,
        &mut f.state,
        Now {
            at: now + Duration::from_millis(60),
            wall: jiff::Timestamp::now(),
        },
    )
    .expect("frame");
    let regions = layout::regions(Rect::new(0, 0, 140, 48), false);
    let plan = layout::panes(regions.panes, 3, false);
    let tile = layout::pty_size(plan.slots[1]);
    assert_eq!(
        size_of(&f.engine, 0).map(|s| s.1),
        Some(tile.1),
        "a is a tile again"
    );
}

#[test]
fn the_first_agents_start_together_at_the_sizes_of_their_panes() {
    let mut f = fixture(&[("a", "pending"), ("b", "pending"), ("c", "pending")]);
    let area = Rect::new(0, 0, 160, 48);
    super::engine_tests::start_at_pane_sizes(&mut f.engine, area, Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let plan = layout::panes(layout::regions(area, false).panes, 3, false);
    for task in 0..3 {
        assert_eq!(
            size_of(&f.engine, task),
            Some(layout::pty_size(plan.slots[task])),
            "task {task} starts at the size of its slot"
        );
    }
    // Drawn where they started: the first frame resizes nobody.
    let layout = settle::settle(&f.engine, &mut f.state, area, Instant::now());
    assert_eq!(layout.visible, vec![0, 1, 2]);
    assert_eq!(layout.resizes, Vec::new());
    assert!(
        layout.launch_sizes.is_some(),
        "the next agents' sizes follow"
    );
}

#[test]
fn a_later_agent_starts_at_the_size_of_the_tile_it_joins() {
    let mut f = fixture(&[("a", "pending"), ("b", "pending"), ("c", "failed")]);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let area = Rect::new(0, 0, 160, 48);
    super::engine_tests::start_at_pane_sizes(&mut f.engine, area, Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    super::engine_tests::frame(&mut terminal, &mut f.engine, &mut f.state, Now::read())
        .expect("frame");
    // The launch sizes are sent once for a terminal size and zoom.
    let again = settle::settle(&f.engine, &mut f.state, area, Instant::now());
    assert_eq!(again.launch_sizes, None);
    // c runs again, third: the last tile of three panes.
    f.key(KeyCode::Down);
    f.key(KeyCode::Down);
    f.key(KeyCode::Char('r'));
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let plan = layout::panes(layout::regions(area, false).panes, 3, false);
    assert_eq!(size_of(&f.engine, 2), Some(layout::pty_size(plan.slots[2])));
    // Drawn with the focus on a, c is that tile.
    f.key(KeyCode::Home);
    let layout = settle::settle(&f.engine, &mut f.state, area, Instant::now());
    assert_eq!(layout.panes.order.len(), 3);
    assert!(
        layout.resizes.iter().all(|r| r.task != 2),
        "{:?}",
        layout.resizes
    );
}
