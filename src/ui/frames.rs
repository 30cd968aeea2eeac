//! Snapshots of the main views at 120x40 and 80x24, drawn from hand-made view models (screens
//! fed with bytes, no process running) into a `TestBackend`; the view models are built by
//! `frames_fixtures`.

use std::io::Cursor;
use std::sync::Arc;
use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui_textarea::TextArea;

use super::draw::{self, draw};
use super::frames_fixtures::*;
use super::model::{AttemptsMenu, Dashboard, FinalScreen, MessageTarget, Overlay, PaneView};
use crate::core::screen::Screen;
use crate::replay::seek::{Index, IndexOptions, Playhead};
use crate::replay::{ReplayOptions, ReplayView};

/// `view` drawn into a `TestBackend` of `width` x `height`.
pub(super) fn frame(width: u16, height: u16, view: &Dashboard<'_>) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|f| draw(f, view)).expect("draw");
    terminal
}

#[test]
fn queue_and_panes_with_a_prompt_waiting_120x40() {
    let (waiting, busy) = (screen(24, 80, DIALOG), screen(24, 80, SESSION));
    let view = waiting_prompt_view(&waiting, &busy);
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

/// The same dashboard at the sizes operators use: the bars keep `? help` and `q quit`, ids are
/// whole where there is room, nothing is cut mid-word.
#[test]
fn a_prompt_waiting_at_160x45_100x30_and_80x24() {
    let (waiting, busy) = (screen(24, 80, DIALOG), screen(24, 80, SESSION));
    let view = waiting_prompt_view(&waiting, &busy);
    for (w, h) in [(160, 45), (100, 30), (80, 24)] {
        let drawn = frame(w, h, &view);
        let text = format!("{:?}", drawn.backend());
        assert!(
            text.contains("? help") && text.contains("q quit"),
            "{w}x{h}: help and quit stay:\n{text}"
        );
        insta::assert_snapshot!(format!("a_prompt_waiting_{w}x{h}"), drawn.backend());
    }
}

#[test]
fn prompt_rows_are_highlighted_and_the_banner_names_the_keys() {
    let waiting = screen(24, 80, DIALOG);
    let view = dashboard(
        vec![pane("fix-issue-142", &waiting, true, Some(prompt()))],
        None,
        PROMPT_KEYS,
    );
    let terminal = frame(120, 40, &view);
    let buffer = terminal.backend().buffer();
    // The pane starts at column 42; its screen at (43, 1). Row 6 of the screen holds `❯ 1. Yes`.
    let highlighted = buffer[(60, 1 + 6)].bg;
    assert_eq!(
        highlighted,
        super::style::PROMPT_ROWS.bg.expect("a background")
    );
    assert_ne!(buffer[(60, 1 + 5)].bg, highlighted);
    let bottom: String = (42..120)
        .map(|x| buffer[(x, 37)].symbol().to_string())
        .collect();
    assert!(
        bottom.contains("⚠ fix-issue-142: [1/Enter] Yes  [2/p] Yes, don't ask again  [3/n] No"),
        "{bottom}"
    );
}

#[test]
fn several_agents_tiled_with_notes_and_scrollback_120x40() {
    let screens: Vec<Screen> = (0..4).map(|_| screen(24, 80, SESSION)).collect();
    let mut panes: Vec<PaneView<'_>> = screens
        .iter()
        .enumerate()
        .map(|(i, s)| pane(&format!("agent-{i:02}"), s, i == 0, None))
        .collect();
    panes[1].note = Some("auto press_1".into());
    panes[0].note = Some("answered press_1".into());
    panes[2].prompt = Some(prompt());
    panes[0].scrolled = 12;
    let view = dashboard(panes, None, &[("?", "help")]);
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

#[test]
fn help_overlay_120x40() {
    let busy = screen(24, 80, SESSION);
    let view = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Help {
            offset: 0,
            background: false,
            web: None,
        }),
        &[],
    );
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

/// The help of a background run: `q` asks detach or stop, and the detach key is listed.
#[test]
fn help_overlay_of_a_background_run_120x40() {
    let view = dashboard(
        Vec::new(),
        Some(Overlay::Help {
            offset: 1000,
            background: true,
            web: None,
        }),
        &[],
    );
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

/// With the web view running, the help's end says where it listens and how to sign in again.
#[test]
fn the_help_says_where_the_web_view_listens() {
    let view = dashboard(
        Vec::new(),
        Some(Overlay::Help {
            offset: 1000,
            background: false,
            web: Some("http://127.0.0.1:8917"),
        }),
        &[],
    );
    let text = format!("{:?}", frame(120, 40, &view).backend());
    assert!(text.contains("Web view: http://127.0.0.1:8917"), "{text}");
    assert!(text.contains("herd web --tasks FILE"), "{text}");
}

/// At 80x24 the help does not fit: it scrolls, wrapped lines keep their indent, and the last
/// keys and the legend are reachable.
#[test]
fn help_overlay_80x24_scrolls() {
    let busy = screen(24, 80, SESSION);
    let top = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Help {
            offset: 0,
            background: false,
            web: None,
        }),
        &[],
    );
    insta::assert_snapshot!("help_overlay_80x24_top", frame(80, 24, &top).backend());
    let end = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Help {
            offset: 1000,
            background: false,
            web: None,
        }),
        &[],
    );
    let text = format!("{:?}", frame(80, 24, &end).backend());
    for needle in ["q  Ctrl-C", "this help", "skipped (disabled"] {
        assert!(
            text.contains(needle),
            "{needle} at the end of the help:\n{text}"
        );
    }
    insta::assert_snapshot!("help_overlay_80x24_end", frame(80, 24, &end).backend());
}

#[test]
fn narrow_terminal_80x24() {
    let waiting = screen(24, 80, DIALOG);
    let mut view = dashboard(
        vec![pane("fix-issue-142", &waiting, true, Some(prompt()))],
        None,
        PROMPT_KEYS,
    );
    view.hidden_panes = 1;
    insta::assert_snapshot!(frame(80, 24, &view).backend());
}

#[test]
fn zoomed_take_over_80x24() {
    let busy = screen(24, 80, SESSION);
    let mut view = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        None,
        &[("Ctrl-]", "leave take-over")],
    );
    view.zoomed = true;
    view.takeover = true;
    insta::assert_snapshot!(frame(80, 24, &view).backend());
}

#[test]
fn finished_batch_views_80x24() {
    let mut view = dashboard(Vec::new(), None, &[("q", "leave")]);
    view.status.finished = true;
    insta::assert_snapshot!("finished_details_80x24", frame(80, 24, &view).backend());
    let last = screen(24, 80, LOGIN);
    view.final_screen = Some(FinalScreen {
        task_id: "needs-login-008".into(),
        attempt: 1,
        screen: last.vt(),
    });
    insta::assert_snapshot!("finished_last_screen_80x24", frame(80, 24, &view).backend());
    view.overlay = Some(Overlay::ConfirmQuit { running: 3 });
    insta::assert_snapshot!("confirm_quit_80x24", frame(80, 24, &view).backend());
}

/// `q` in a background run: detach this terminal or stop the batch; the status line's keys say
/// how to detach.
#[test]
fn background_leave_question_80x24() {
    let mut view = dashboard(
        Vec::new(),
        None,
        &[("?", "help"), ("Ctrl-\\", "detach"), ("q", "detach/stop")],
    );
    view.overlay = Some(Overlay::ConfirmLeave { running: 2 });
    insta::assert_snapshot!(frame(80, 24, &view).backend());
}

/// `A`: a task's answered prompts, attempt by attempt.
#[test]
fn answers_window_80x24() {
    let lines: Vec<String> = [
        "attempt 1 · failed_permission_blocked · 61.0 s",
        "  +   1.2s  auto press_1 \"1\": shell npm test — allow (auto_press_1)",
        "  +  61.0s  operator Esc \"\\u{1b}\": shell rm -rf ~ — refuse (a forced recursive delete of ~, which holds the home folder)",
        "attempt 2 · running",
        "  +   0.8s  auto trust \"\\r\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let view = dashboard(
        Vec::new(),
        Some(Overlay::Answers {
            task_id: "fix-issue-142".into(),
            lines: &lines,
            offset: 0,
        }),
        &[],
    );
    let text = format!("{:?}", frame(80, 24, &view).backend());
    assert!(
        text.contains("holds the home folder"),
        "wrapped, not cut:\n{text}"
    );
    insta::assert_snapshot!(frame(80, 24, &view).backend());
}

/// A screen too short for the details box: `d` shows them in a window.
#[test]
fn details_window_on_a_short_screen_120x15() {
    let busy = screen(24, 80, SESSION);
    let mut view = dashboard(vec![pane("long-session-004", &busy, true, None)], None, &[]);
    let under = format!("{:?}", frame(120, 15, &view).backend());
    let detail = view.detail.as_ref().expect("the fixture selects a task");
    let why = detail
        .lines
        .iter()
        .find(|(k, _)| k == "attempts")
        .map(|(_, v)| v.clone())
        .expect("an attempts line");
    assert!(
        !under.contains(&why),
        "no room for the box at 120x15:\n{under}"
    );
    view.overlay = Some(Overlay::Details { offset: 0 });
    let shown = format!("{:?}", frame(120, 15, &view).backend());
    assert!(
        shown.contains(&why),
        "the window shows the details:\n{shown}"
    );
    insta::assert_snapshot!("details_window_120x15", frame(120, 15, &view).backend());
}

#[test]
fn message_editor_120x40() {
    let busy = screen(24, 80, SESSION);
    let mut editor = TextArea::new(vec![
        "Please also update the changelog.".into(),
        "Then print the marker.".into(),
    ]);
    editor.set_placeholder_text("Type a message for the agent…");
    let view = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Message {
            task_id: "long-session-004".into(),
            target: MessageTarget::Running,
            editor: &editor,
        }),
        &[("Esc", "close")],
    );
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

#[test]
fn recorded_attempts_list_120x40() {
    let busy = screen(24, 80, SESSION);
    let menu = AttemptsMenu {
        task_id: "flaky-network-005".into(),
        rows: vec![
            (2, "no verdict yet (running, or interrupted)".into()),
            (1, "failed_process · 12.0 s".into()),
        ],
        selected: 1,
    };
    let view = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Attempts(menu)),
        &[("↑↓", "choose"), ("Enter", "replay"), ("Esc", "close")],
    );
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

/// A recorded attempt of `fix-issue-142`: its dialog answered, then the marker.
fn recording() -> ReplayView<Cursor<Vec<u8>>> {
    let mut lines = vec![r#"{"version":2,"width":76,"height":24}"#.to_string()];
    let events = [
        (0.1, "o", DIALOG),
        (0.8, "m", "prompt press_1: ❯ 1. Yes"),
        (0.8, "i", "1"),
        (
            0.9,
            "o",
            "\x1b[2J\x1b[H● Done.\r\n● TASK_COMPLETE:fix-issue-142\r\n",
        ),
        (1.2, "m", "verdict: completed"),
    ];
    for (t, kind, data) in events {
        lines.push(serde_json::json!([t, kind, data]).to_string());
    }
    let bytes = (lines.join("\n") + "\n").into_bytes();
    let index =
        Index::build(Cursor::new(&bytes), IndexOptions::default(), &mut |_| {}).expect("index");
    let playhead = Playhead::new(Cursor::new(bytes), Arc::new(index)).expect("playhead");
    let options = ReplayOptions {
        start_at: Some(0.5),
        ..ReplayOptions::default()
    };
    ReplayView::new(
        playhead,
        "fix-issue-142 · attempt 1".into(),
        options,
        Instant::now(),
    )
}

#[test]
fn replay_over_the_panes_120x40() {
    let busy = screen(24, 80, SESSION);
    let mut view = dashboard(vec![pane("long-session-004", &busy, true, None)], None, &[]);
    view.status.keys = super::render::replay_keys();
    let replay = recording();
    let now = Instant::now();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    terminal
        .draw(|f| {
            draw(f, &view);
            draw::replay(f, view.zoomed, &replay, now);
        })
        .expect("draw");
    let text = format!("{}", terminal.backend());
    assert!(!text.contains("Running tests"), "the live pane is covered");
    assert!(text.contains("docs-merge-001"), "the queue stays in view");
    insta::assert_snapshot!(terminal.backend());
}

/// A task waiting hours for its quota to reset: the queue's note and the status bar say the
/// clock time it starts again (`core::clock_words::retry_note`, `countdown`), not 7740 seconds.
#[test]
fn a_quota_wait_reads_as_a_clock_time_120x40_and_80x24() {
    use crate::core::operator::clock_words;
    use std::time::Duration;
    let local = clock_words::LocalNow {
        now: "2026-11-29T11:51:00Z".parse().unwrap(),
        zone: jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    };
    let wait = Duration::from_secs(7740);
    let busy = screen(20, 60, "\u{2722} Thinking\u{2026}");
    let mut view = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        None,
        PROMPT_KEYS,
    );
    for row in &mut view.queue.rows {
        if row.task_id == "flaky-network-005" {
            row.task_id = "out-of-quota-010".into();
            row.failure = Some(crate::core::task::FailureType::Quota);
            row.note = Some(clock_words::retry_note(wait, local.now, &local.zone));
        }
    }
    // Few counts, so the status bar has room for the retry list.
    view.status.failures = Vec::new();
    view.status.counts = vec![
        (super::model::RowStatus::Running, 1),
        (super::model::RowStatus::Retryable, 1),
        (super::model::RowStatus::Completed, 1),
    ];
    view.status.retries = vec![super::model::RetryView {
        task_id: "out-of-quota-010".into(),
        remaining: wait,
        when: clock_words::countdown(wait, local.now, &local.zone),
    }];
    for (w, h) in [(120, 40), (80, 24)] {
        let drawn = frame(w, h, &view);
        let text = format!("{:?}", drawn.backend());
        // The queue's note at both sizes; the status bar's retry list where it has room.
        assert!(text.contains("at 15:00"), "{text}");
        assert!(
            w < 120 || text.contains("↻ out-of-quota-010 15:00"),
            "{text}"
        );
        assert!(!text.contains("7740"), "{text}");
        insta::assert_snapshot!(format!("a_quota_wait_{w}x{h}"), drawn.backend());
    }
}
