//! Snapshots of the main views at 120x40 and 80x24, drawn from hand-made view models (screens
//! fed with bytes, no process running) into a `TestBackend`.

use std::io::Cursor;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui_textarea::TextArea;

use super::draw::{self, draw};
use super::model::{
    AttemptsMenu, Choice, Dashboard, DetailView, FinalScreen, MessageTarget, Overlay, PaneView,
    PromptView, QueueView, RetryView, RowStatus, StatusView, TaskRow,
};
use crate::core::screen::Screen;
use crate::core::task::FailureType;
use crate::replay::seek::{Index, IndexOptions, Playhead};
use crate::replay::{ReplayOptions, ReplayView};

pub(super) fn screen(rows: u16, cols: u16, bytes: &str) -> Screen {
    let mut s = Screen::new(rows, cols);
    s.feed(bytes.as_bytes(), 0);
    s
}

pub(super) fn row(id: &str, status: RowStatus, attempts: u32, secs: u64) -> TaskRow {
    TaskRow {
        task_id: id.into(),
        agent: "claude".into(),
        status,
        attempts,
        max_attempts: 2,
        elapsed: (secs > 0).then(|| Duration::from_secs(secs)),
        failure: None,
        note: None,
        questions: 0,
        cost_usd: None,
        turns: None,
    }
}

pub(super) fn rows() -> Vec<TaskRow> {
    let failed = |id: &str, f: FailureType| TaskRow {
        failure: Some(f),
        ..row(id, RowStatus::Failed, 1, 42)
    };
    vec![
        row("docs-merge-001", RowStatus::Completed, 1, 95),
        TaskRow {
            note: Some("press_1".into()),
            ..row("fix-issue-142", RowStatus::Waiting, 1, 31)
        },
        row("long-session-004", RowStatus::Running, 1, 184),
        TaskRow {
            note: Some("retry 7s".into()),
            failure: Some(FailureType::Process),
            ..row("flaky-network-005", RowStatus::Retryable, 1, 12)
        },
        failed("needs-login-008", FailureType::Auth),
        failed("out-of-quota-009", FailureType::Quota),
        row("codex-approval-007", RowStatus::Pending, 0, 0),
        row("stopped-017", RowStatus::Cancelled, 1, 3),
        row("later-016", RowStatus::Skipped, 0, 0),
    ]
}

pub(super) fn status(keys: &[(&str, &str)]) -> StatusView {
    StatusView {
        counts: vec![
            (RowStatus::Running, 1),
            (RowStatus::Waiting, 1),
            (RowStatus::Pending, 1),
            (RowStatus::Retryable, 1),
            (RowStatus::Completed, 1),
            (RowStatus::Failed, 2),
        ],
        failures: vec![
            (FailureType::Auth, 1),
            (FailureType::Quota, 1),
            (FailureType::Process, 1),
        ],
        retries: vec![RetryView {
            task_id: "flaky-network-005".into(),
            remaining: Duration::from_secs(7),
        }],
        clock: Duration::from_secs(192),
        paused: false,
        concurrency: 4,
        cost_usd: None,
        finished: false,
        stopping: false,
        message: None,
        hosts_out: Vec::new(),
        keys: keys
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

const DIALOG: &str = "\x1b[1m● Bash\x1b[0m(rm -rf build)\r\n\r\n\x1b[38;5;214m Bash command\x1b[0m\r\n   rm -rf build\r\n\r\n Do you want to proceed?\r\n\x1b[36m ❯ 1. Yes\x1b[0m\r\n   2. Yes, and don't ask again for rm commands (p)\r\n   3. No\r\n\r\n Esc to cancel";

const LOGIN: &str = "\x1b[2J\x1b[H\x1b[1;38;5;174m╭─── Claude Code ───╮\x1b[0m\r\n\r\n❯ Say hi.\r\n  ⎿  \x1b[31mNot logged in · Please run /login\x1b[0m\r\n\r\n─────────\r\n❯ ";

pub(super) const SESSION: &str = "\x1b[1m● \x1b[0mReading the codebase…\r\n  ⎿  Read 212 lines\r\n\r\n● Update(src/merge.rs)\r\n  ⎿  6 additions, 2 removals\r\n\r\n\x1b[38;5;174m✳ Running tests… (12s · esc to interrupt)\x1b[0m\r\n\r\n─────────\r\n❯ ";

fn prompt() -> PromptView {
    let choice = |k: &str, l: &str| Choice {
        key: k.into(),
        label: l.into(),
    };
    PromptView {
        rule: "press_1".into(),
        rows: (6, 7),
        choices: vec![
            choice("1", "Yes"),
            choice("p", "Yes, don't ask again"),
            choice("Esc", "No"),
        ],
        guard: None,
        guard_objects: false,
    }
}

pub(super) fn pane<'a>(
    id: &str,
    screen: &'a Screen,
    focused: bool,
    prompt: Option<PromptView>,
) -> PaneView<'a> {
    PaneView {
        task_id: id.into(),
        attempt: 1,
        max_attempts: 2,
        elapsed: Duration::from_secs(31),
        screen: screen.vt(),
        focused,
        prompt,
        note: None,
        scrolled: 0,
        ending: false,
        host: None,
    }
}

fn detail() -> DetailView {
    DetailView {
        task_id: "fix-issue-142".into(),
        questions: Vec::new(),
        lines: vec![
            ("status".into(), "waiting".into()),
            ("attempts".into(), "1 of 2 · agent claude".into()),
            ("policy".into(), "auto_press_p".into()),
            ("prompt".into(), "Fix issue #142 and run the tests.".into()),
        ],
    }
}

pub(super) fn dashboard<'a>(
    panes: Vec<PaneView<'a>>,
    overlay: Option<Overlay<'a>>,
    keys: &[(&str, &str)],
) -> Dashboard<'a> {
    Dashboard {
        queue: QueueView {
            filter: "all",
            total: 9,
            matching: 9,
            offset: 0,
            selected: Some(1),
            rows: rows(),
        },
        panes,
        hidden_panes: 0,
        zoomed: false,
        takeover: false,
        detail: Some(detail()),
        final_screen: None,
        status: status(keys),
        overlay,
    }
}

pub(super) fn frame(width: u16, height: u16, view: &Dashboard<'_>) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|f| draw(f, view)).expect("draw");
    terminal
}

const PROMPT_KEYS: &[(&str, &str)] = &[
    ("1", "Yes"),
    ("p", "Yes, don't ask again"),
    ("Esc", "No"),
    ("?", "help"),
    ("q", "quit"),
];

/// A Claude-style dialog waiting in the focused pane, a busy agent tiled beside it.
fn waiting_prompt_view<'a>(waiting: &'a Screen, busy: &'a Screen) -> Dashboard<'a> {
    dashboard(
        vec![
            pane("fix-issue-142", waiting, true, Some(prompt())),
            pane("long-session-004", busy, false, None),
        ],
        None,
        PROMPT_KEYS,
    )
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
        bottom.contains("[1] Yes  [p] Yes, don't ask again  [Esc] No"),
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
        Some(Overlay::Help { offset: 0 }),
        &[],
    );
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

/// At 80x24 the help does not fit: it scrolls, wrapped lines keep their indent, and the last
/// keys and the legend are reachable.
#[test]
fn help_overlay_80x24_scrolls() {
    let busy = screen(24, 80, SESSION);
    let top = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Help { offset: 0 }),
        &[],
    );
    insta::assert_snapshot!("help_overlay_80x24_top", frame(80, 24, &top).backend());
    let end = dashboard(
        vec![pane("long-session-004", &busy, true, None)],
        Some(Overlay::Help { offset: 1000 }),
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
    view.overlay = Some(Overlay::Details);
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
