//! Hand-made view models for the frame snapshots (`frames`, `frames_guard`,
//! `frames_structured`) and the widgets' tests: screens fed with bytes, queue rows, a status
//! bar, panes, details. No process runs; `frames::frame` draws them.

use std::time::Duration;

use super::model::{
    Choice, Dashboard, DetailView, Overlay, PaneView, PromptView, QueueView, RetryView, RowStatus,
    StatusView, TaskRow,
};
use crate::core::screen::Screen;
use crate::core::task::FailureType;

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
            note: Some("Bash: rm -rf build".into()),
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
            when: "7s".into(),
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

pub(super) const DIALOG: &str = "\x1b[1m● Bash\x1b[0m(rm -rf build)\r\n\r\n\x1b[38;5;214m Bash command\x1b[0m\r\n   rm -rf build\r\n\r\n Do you want to proceed?\r\n\x1b[36m ❯ 1. Yes\x1b[0m\r\n   2. Yes, and don't ask again for rm commands (p)\r\n   3. No\r\n\r\n Esc to cancel";

pub(super) const LOGIN: &str = "\x1b[2J\x1b[H\x1b[1;38;5;174m╭─── Claude Code ───╮\x1b[0m\r\n\r\n❯ Say hi.\r\n  ⎿  \x1b[31mNot logged in · Please run /login\x1b[0m\r\n\r\n─────────\r\n❯ ";

pub(super) const SESSION: &str = "\x1b[1m● \x1b[0mReading the codebase…\r\n  ⎿  Read 212 lines\r\n\r\n● Update(src/merge.rs)\r\n  ⎿  6 additions, 2 removals\r\n\r\n\x1b[38;5;174m✳ Running tests… (12s · esc to interrupt)\x1b[0m\r\n\r\n─────────\r\n❯ ";

pub(super) fn prompt() -> PromptView {
    let choice = |k: &str, l: &str| Choice {
        key: k.into(),
        label: l.into(),
    };
    PromptView {
        rule: "press_1".into(),
        rows: (6, 7),
        choices: vec![
            choice("1/Enter", "Yes"),
            choice("2/p", "Yes, don't ask again"),
            choice("3/n", "No"),
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
        selected: focused,
        prompt,
        note: None,
        scrolled: 0,
        ending: false,
        host: None,
    }
}

pub(super) fn detail() -> DetailView {
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
            search: None,
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

pub(super) const PROMPT_KEYS: &[(&str, &str)] = &[
    ("1/Enter", "Yes"),
    ("2/p", "Yes, don't ask again"),
    ("3/n", "No"),
    ("?", "help"),
    ("q", "quit"),
];

/// A Claude-style dialog waiting in the focused pane, a busy agent tiled beside it.
pub(super) fn waiting_prompt_view<'a>(waiting: &'a Screen, busy: &'a Screen) -> Dashboard<'a> {
    dashboard(
        vec![
            pane("fix-issue-142", waiting, true, Some(prompt())),
            pane("long-session-004", busy, false, None),
        ],
        None,
        PROMPT_KEYS,
    )
}
