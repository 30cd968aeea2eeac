//! Snapshots of what structured agents report, at 120x40 and 80x24: a task that needs input,
//! selected, with its questions; a finished structured task's details (final text, session,
//! cost, tokens, turns, denials, signal, transcript); the editor that answers the questions.
//! Detail lines come from the same functions the dashboard builds them with.

use ratatui_textarea::TextArea;
use serde_json::{Value, json};

use super::frames::frame;
use super::frames_fixtures::{SESSION, dashboard, pane, row, rows, screen, status};
use super::model::agent;
use super::model::{
    Dashboard, DetailView, FinalScreen, MessageTarget, Overlay, PaneView, RowStatus, TaskRow,
};

const ASKED: &str = "\x1b[2J\x1b[H\x1b[1;38;5;174m╭─── Claude Code ───╮\x1b[0m\r\n\r\n● Before I start I need two answers.\r\n\r\n─────────\r\n❯ ";

const QUESTIONS: [&str; 2] = ["Which database should I use?", "May I drop the old table?"];

/// The queue with costs and turns, and a task that needs input third (selected).
fn queue_rows() -> Vec<TaskRow> {
    let mut rows = rows();
    rows[0].cost_usd = Some(0.4213);
    rows[0].turns = Some(3);
    rows[2].cost_usd = Some(1.5);
    rows[2].turns = Some(12);
    rows.insert(
        2,
        TaskRow {
            agent: "sim-json".into(),
            questions: QUESTIONS.len(),
            cost_usd: Some(0.0312),
            turns: Some(2),
            ..row("ask-db-010", RowStatus::NeedsInput, 1, 14)
        },
    );
    rows
}

fn detail(task_id: &str, status: &str, report: &Value, prompt: &str) -> DetailView {
    let mut lines = vec![
        ("status".to_string(), status.to_string()),
        (
            "attempts".to_string(),
            "1 of 2 · agent sim-json".to_string(),
        ),
    ];
    lines.extend(agent::lines(report, false));
    let log = format!("runs/{task_id}/attempt_1.log");
    lines.push(("log".to_string(), log));
    lines.push(("prompt".to_string(), prompt.to_string()));
    let questions = if status == "needs input" {
        agent::questions(Some(report))
    } else {
        Vec::new()
    };
    DetailView {
        task_id: task_id.to_string(),
        questions,
        lines,
    }
}

fn asking_detail() -> DetailView {
    let report = json!({
        "session_id": "sim-ask-db-010-1",
        "questions": QUESTIONS,
        "signal": {"status": "questions", "questions": QUESTIONS},
        "cost_usd": 0.0312,
        "total_cost_usd": 0.0312,
        "num_turns": 2,
    });
    detail(
        "ask-db-010",
        "needs input",
        &report,
        "Migrate the users table to the new schema.",
    )
}

fn structured_detail() -> DetailView {
    let report = json!({
        "result_text": "Merged the docs into one page.\n\nAll 12 doc tests pass.\nThe old pages redirect.\nNothing else changed.",
        "session_id": "3f6c1a52-9d1e-4c07-b1a4-7d2f0c9e8a11",
        "is_error": false,
        "resumed": true,
        "cost_usd": 0.0123,
        "total_cost_usd": 0.4213,
        "tokens": {"input": 1200, "output": 340, "cache_read": 4800, "cache_creation": 200},
        "num_turns": 3,
        "tool_calls": 5,
        "permission_denials": ["Bash(rm -rf docs/old)"],
        "signal": {"status": "done", "result": "Merged"},
        "transcript": {"path": "~/.claude/projects/docs/3f6c1a52.jsonl", "assistant_messages": 4,
            "ended_turn": true, "last_stop_reason": "end_turn", "tool_calls": 5, "bash_failures": 1},
    });
    detail(
        "docs-merge-001",
        "completed",
        &report,
        "Merge the docs pages about merging.",
    )
}

fn view<'a>(
    panes: Vec<PaneView<'a>>,
    selected: usize,
    detail: DetailView,
    keys: &[(&str, &str)],
) -> Dashboard<'a> {
    let mut view = dashboard(panes, None, keys);
    view.queue.rows = queue_rows();
    view.queue.total = view.queue.rows.len();
    view.queue.matching = view.queue.total;
    view.queue.selected = Some(selected);
    view.detail = Some(detail);
    view.status = status(keys);
    view.status.counts.insert(2, (RowStatus::NeedsInput, 1));
    view.status.cost_usd = Some(1.9525);
    view
}

const ASKING_KEYS: &[(&str, &str)] = &[
    ("w", "next waiting (1)"),
    ("m", "answer"),
    ("?", "help"),
    ("q", "quit"),
];

#[test]
fn a_task_with_questions_selected_120x40() {
    let busy = screen(24, 80, SESSION);
    let view = view(
        vec![pane("long-session-004", &busy, true, None)],
        2,
        asking_detail(),
        ASKING_KEYS,
    );
    let terminal = frame(120, 40, &view);
    let text = format!("{}", terminal.backend());
    assert!(text.contains("? Which database should I use?"), "{text}");
    assert!(
        text.contains("? ask-db-010        1/2   14s ? 2 "),
        "a narrow queue says only how many questions: {text}"
    );
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn a_task_with_questions_selected_80x24() {
    let last = screen(24, 80, ASKED);
    let mut view = view(Vec::new(), 2, asking_detail(), ASKING_KEYS);
    view.status.finished = true;
    // Its questions come before its last screen on a narrow terminal.
    view.final_screen = Some(FinalScreen {
        task_id: "ask-db-010".into(),
        attempt: 1,
        screen: last.vt(),
    });
    let terminal = frame(80, 24, &view);
    let text = format!("{}", terminal.backend());
    assert!(text.contains("? May I drop the old table?"), "{text}");
    assert!(!text.contains("Before I start"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn a_structured_task_details_120x40() {
    let busy = screen(24, 80, SESSION);
    let view = view(
        vec![pane("long-session-004", &busy, true, None)],
        0,
        structured_detail(),
        &[("m", "follow up"), ("?", "help")],
    );
    insta::assert_snapshot!(frame(120, 40, &view).backend());
}

#[test]
fn a_structured_task_details_80x24() {
    let mut view = view(
        Vec::new(),
        0,
        structured_detail(),
        &[("m", "follow up"), ("q", "leave")],
    );
    view.status.finished = true;
    insta::assert_snapshot!(frame(80, 24, &view).backend());
}

#[test]
fn the_answers_editor_shows_the_questions_120x40() {
    let busy = screen(24, 80, SESSION);
    let mut editor = TextArea::new(vec!["Postgres, and yes: drop it.".into()]);
    editor.set_placeholder_text("Type your answers…");
    let mut view = view(
        vec![pane("long-session-004", &busy, true, None)],
        2,
        asking_detail(),
        &[("Esc", "close")],
    );
    let questions = QUESTIONS.iter().map(|q| q.to_string()).collect();
    view.overlay = Some(Overlay::Message {
        task_id: "ask-db-010".into(),
        target: MessageTarget::Answers { questions },
        editor: &editor,
    });
    let terminal = frame(120, 40, &view);
    let text = format!("{}", terminal.backend());
    assert!(text.contains("Answer ask-db-010's questions"), "{text}");
    assert!(text.contains("1. Which database should I use?"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn the_message_title_says_where_it_goes() {
    use super::overlay::message_title;
    let title = |target| message_title("t-1", &target);
    assert_eq!(title(MessageTarget::Running), " Message to t-1 ");
    assert_eq!(
        title(MessageTarget::Answers { questions: vec![] }),
        " Answer t-1's questions "
    );
    assert_eq!(
        title(MessageTarget::Session { id: "s-9".into() }),
        " Message to t-1's session s-9 "
    );
    assert_eq!(
        title(MessageTarget::FreshAttempt),
        " Message to t-1 (no session: starts a fresh attempt) "
    );
}
