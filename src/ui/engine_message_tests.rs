//! The dashboard against a real engine, for what structured agents bring: tasks that need input
//! (their rows, details, the status bar, `w`), and `m` on a task that is not running, which
//! answers its questions or continues its session through `Engine::resume_with_message`.

use crate::run::clock::Now;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::engine_tests::{Fixture, fixture_from};
use super::model;
use super::model::{MessageTarget, Overlay, PaneSetup, RowStatus};
use super::state::{Filter, Mode};
use crate::core::task::TaskStatus;

/// A profile whose sessions can be continued; its agents only wait. And a structured agent
/// that reports its result, cost and turns, then lingers. (Braces are doubled: commands are
/// templates.)
const RESUMABLE: &str = r#"
[profiles.resumable]
command = ["sleep", "20"]
resume = ["sh", "-c", "sleep 20", "sh", "{session_id}", "{rendered_prompt}"]
[profiles.lingering]
command = ["sh", "-c", "printf '%s\n' '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-2\"}}' '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Done.\",\"total_cost_usd\":0.25,\"num_turns\":3}}'; sleep 20"]
output = "stream-json"
"#;

const QUESTIONS: &str = r#"["Which database should I use?", "May I drop the old table?"]"#;

/// Tasks: `done` (completed, generic, no session), `ask` (needs input, resumable, session
/// `s-1`, two questions), `later` (pending).
fn tasks() -> Fixture {
    let text = format!(
        r#"{{"run_id": "r", "tasks": [
  {{"task_id": "done", "agent": "generic", "command": ["sleep", "20"], "prompt_template": "p", "status": "completed", "attempts": 1,
    "result": {{"result_text": "Done.", "session_id": "g-1", "cost_usd": 0.25, "total_cost_usd": 0.75, "num_turns": 4}}}},
  {{"task_id": "ask", "agent": "resumable", "prompt_template": "Migrate the table.", "status": "needs_input", "attempts": 1,
    "result": {{"questions": {QUESTIONS}, "session_id": "s-1", "cost_usd": 0.5, "total_cost_usd": 0.5, "num_turns": 2,
      "signal": {{"status": "questions", "questions": {QUESTIONS}}}}}}},
  {{"task_id": "later", "agent": "generic", "command": ["sleep", "20"], "prompt_template": "p"}}
]}}"#
    );
    fixture_from(&text, Some(RESUMABLE))
}

fn screen_text(f: &mut Fixture) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    super::engine_tests::frame(&mut terminal, &mut f.engine, &mut f.state, Now::read())
        .expect("frame");
    format!("{}", terminal.backend())
}

#[test]
fn a_task_with_questions_shows_them_in_its_row_details_and_the_status_bar() {
    let mut f = tasks();
    f.state.selected = 1;
    let area = Rect::new(0, 0, 120, 40);
    let panes = PaneSetup::default();
    let view = model::dashboard(&f.engine, &f.state, area, Instant::now(), &panes);
    let ask = &view.queue.rows[1];
    assert_eq!(ask.status, RowStatus::NeedsInput);
    assert_eq!(ask.questions, 2);
    assert_eq!((ask.cost_usd, ask.turns), (Some(0.5), Some(2)));
    let done = &view.queue.rows[0];
    assert_eq!((done.cost_usd, done.turns), (Some(0.75), Some(4)));
    assert_eq!(view.queue.rows[2].cost_usd, None);
    let detail = view.detail.as_ref().expect("details");
    assert_eq!(
        detail.questions,
        ["Which database should I use?", "May I drop the old table?"]
    );
    let line = |label: &str| {
        detail
            .lines
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(line("status").as_deref(), Some("needs input"));
    assert_eq!(line("session").as_deref(), Some("s-1"));
    assert_eq!(line("signal").as_deref(), Some("questions"));
    assert!(view.status.counts.contains(&(RowStatus::NeedsInput, 1)));
    assert_eq!(view.status.cost_usd, Some(1.25), "every task's total");
    let key = |k: &str| view.status.keys.iter().find(|(key, _)| key == k).cloned();
    assert_eq!(key("m"), Some(("m".into(), "answer".into())));
    assert_eq!(key("w"), Some(("w".into(), "next waiting (1)".into())));
    drop(view);
    let text = screen_text(&mut f);
    assert!(text.contains("? Which database should I use?"), "{text}");
    assert!(text.contains("$1.25"), "{text}");
}

#[test]
fn w_selects_a_task_with_questions_whatever_the_filter() {
    let mut f = tasks();
    f.state.filter = Filter::Active;
    f.key(KeyCode::Char('w'));
    assert_eq!(f.selected_id(), "ask");
    assert_eq!(f.state.filter, Filter::All, "the filter shows it");
    assert_eq!(f.state.focus, None, "it has no pane to focus");
    f.state.selected = 2;
    f.key(KeyCode::Char('w'));
    assert_eq!(f.selected_id(), "ask", "round again");
}

#[test]
fn m_on_a_task_with_questions_answers_them_in_its_session() {
    let mut f = tasks();
    f.state.selected = 1;
    f.key(KeyCode::Char('m'));
    assert!(matches!(f.state.mode, Mode::Message { task: 1, .. }));
    let panes = PaneSetup::default();
    let area = Rect::new(0, 0, 120, 40);
    let overlay = model::dashboard(&f.engine, &f.state, area, Instant::now(), &panes).overlay;
    match overlay {
        Some(Overlay::Message { target, .. }) => assert_eq!(
            target,
            MessageTarget::Answers {
                questions: vec![
                    "Which database should I use?".into(),
                    "May I drop the old table?".into()
                ]
            }
        ),
        _ => panic!("the message editor is open"),
    }
    let text = screen_text(&mut f);
    assert!(text.contains("Answer ask's questions"), "{text}");
    assert!(text.contains("1. Which database should I use?"), "{text}");

    f.type_text("Postgres; yes");
    f.ctrl('s');
    assert!(matches!(f.state.mode, Mode::Normal));
    let said = f.state.message_now(Instant::now()).unwrap_or_default();
    assert!(said.contains("resuming session s-1"), "{said}");
    // Its agent launches once the write that records the start is on disk.
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let live = f
        .engine
        .live_for_task(1)
        .expect("the answer started an attempt");
    assert_eq!(live.plan().resumed_session.as_deref(), Some("s-1"));
    assert_eq!(live.plan().prompt, "Postgres; yes");
    assert_eq!(
        f.engine.store().file().tasks()[1].status,
        TaskStatus::Running
    );
}

#[test]
fn m_on_a_finished_task_without_a_session_to_continue_starts_afresh() {
    let mut f = tasks();
    f.state.selected = 0;
    f.key(KeyCode::Char('m'));
    let text = screen_text(&mut f);
    assert!(
        text.contains("Message to done (no session: starts a fresh attempt)"),
        "{text}"
    );
    f.type_text("add a test");
    // Esc asks, Esc again leaves without sending.
    f.key(KeyCode::Esc);
    f.key(KeyCode::Esc);
    assert!(f.engine.live_for_task(0).is_none());
    f.key(KeyCode::Char('m'));
    f.type_text("add a test");
    f.ctrl('s');
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let live = f.engine.live_for_task(0).expect("a fresh attempt");
    assert_eq!(live.plan().resumed_session, None);
    // The message, then the completion instruction herd adds last.
    assert!(
        live.plan().prompt.ends_with(
            "A message from the operator:\nadd a test\n\nWhen complete, print exactly: TASK_COMPLETE:done"
        ),
        "{}",
        live.plan().prompt
    );
}

#[test]
fn m_on_a_running_task_types_into_its_agent() {
    let mut f = tasks();
    f.state.selected = 2;
    f.key(KeyCode::Char('m'));
    assert!(
        matches!(f.state.mode, Mode::Normal),
        "nothing to message yet"
    );
    let said = f.state.message_now(Instant::now()).unwrap_or_default();
    assert!(said.contains("later has not run yet"), "{said}");
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    assert!(f.engine.live_for_task(2).is_some());
    f.key(KeyCode::Char('m'));
    let text = screen_text(&mut f);
    assert!(text.contains(" Message to later "), "{text}");
    f.type_text("hello");
    f.ctrl('s');
    let said = f.state.message_now(Instant::now()).unwrap_or_default();
    assert_eq!(said, "message sent to later");
}

#[test]
fn a_running_structured_attempt_adds_its_cost_so_far() {
    let text = r#"{"run_id": "r", "tasks": [
  {"task_id": "live", "agent": "lingering", "prompt_template": "p", "status": "retryable", "attempts": 1,
    "result": {"cost_usd": 0.5, "total_cost_usd": 0.5, "num_turns": 9}},
  {"task_id": "off", "agent": "generic", "command": ["true"], "prompt_template": "p", "enabled": false}
]}"#;
    let mut f = fixture_from(text, Some(RESUMABLE));
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    f.feed_until("the agent's result", |engine| {
        engine
            .live_for_task(0)
            .and_then(|l| l.attempt.stream_facts())
            .is_some_and(|facts| facts.cost_usd.is_some())
    });
    let area = Rect::new(0, 0, 120, 40);
    let panes = PaneSetup {
        order: vec![0],
        ..PaneSetup::default()
    };
    let view = model::dashboard(&f.engine, &f.state, area, Instant::now(), &panes);
    let row = &view.queue.rows[0];
    assert_eq!(row.status, RowStatus::Running);
    assert_eq!(
        (row.cost_usd, row.turns),
        (Some(0.75), Some(3)),
        "the earlier attempts' total plus this one's; this attempt's turns"
    );
    assert_eq!(view.status.cost_usd, Some(0.75));
    assert!(
        view.status.counts.contains(&(RowStatus::Skipped, 1)),
        "{:?}",
        view.status.counts
    );
    let detail = view.detail.as_ref().expect("details");
    let line = |label: &str| {
        detail
            .lines
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(line("session"), Some("s-2"));
    assert_eq!(line("result"), Some("Done."));
    assert_eq!(
        line("cost"),
        Some("$0.2500 this attempt so far · $0.7500 total")
    );
    assert_eq!(line("turns"), Some("3"));
}
