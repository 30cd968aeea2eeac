//! The dashboard against a real engine (agents are plain shell commands): the fixture the other
//! engine tests share, and the keys. Panes and their sizes are in `engine_pane_tests`.

use crate::run::clock::Now;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use tokio::sync::mpsc;

use std::collections::HashSet;

use color_eyre::eyre::Result;
use ratatui::Terminal;
use ratatui::backend::Backend;

use super::actions::on_key;
use super::asks::{self, Ask};
use super::state::{Filter, Leaving, Mode, UiState};
use crate::core::profile::ProfileSet;
use crate::core::task::TaskStatus;
use crate::run::engine::inbox::EngineInbox;
use crate::run::engine::{BatchView, Engine, EngineOptions};
use crate::run::store::TaskStore;

pub(super) struct Fixture {
    _dir: tempfile::TempDir,
    pub(super) engine: Engine,
    reports: mpsc::Receiver<EngineInbox>,
    pub(super) state: UiState,
}

pub(super) fn fixture(tasks: &[(&str, &str)]) -> Fixture {
    let list: Vec<String> = tasks
        .iter()
        .map(|(id, status)| {
            format!(
                r#"{{"task_id": "{id}", "agent": "generic", "command": ["sleep", "20"], "prompt_template": "p", "status": "{status}"}}"#
            )
        })
        .collect();
    let text = format!(r#"{{"run_id": "r", "tasks": [{}]}}"#, list.join(", "));
    fixture_from(&text, None)
}

/// An engine on the tasks file `text`, with the built-in profiles and `profiles` (a user's
/// profiles file) if given.
pub(super) fn fixture_from(text: &str, profiles: Option<&str>) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.json");
    std::fs::write(&path, text).expect("write tasks");
    let store = TaskStore::open(&path).expect("store");
    let profiles =
        ProfileSet::build(&crate::assets::built_in_profile_texts(), profiles).expect("profiles");
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
    let (tx, reports) = mpsc::channel(64);
    let engine = Engine::new(store, profiles, opts, tx, Now::read()).expect("engine");
    Fixture {
        _dir: dir,
        engine,
        reports,
        state: UiState::new(Instant::now()),
    }
}

/// What the dashboard asked of the batch, carried out as the driver's loop does it.
pub(super) fn carry_out(engine: &mut Engine, state: &mut UiState, asked: Vec<Ask>, now: Now) {
    for ask in asked {
        let outcome = engine.apply(ask.command, now).expect("command");
        asks::tell(state, ask.note, &outcome, now.at);
    }
}

/// Lays out and draws a frame as the driver's loop does (the layout's commands carried out
/// before drawing); returns the tasks whose panes are visible.
pub(super) fn frame<B: Backend>(
    terminal: &mut Terminal<B>,
    engine: &mut Engine,
    state: &mut UiState,
    now: Now,
) -> Result<HashSet<usize>>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let layout = super::frame::lay_out(terminal, engine.view(), state, now.at)?;
    for command in layout.commands() {
        engine.apply(command, now)?;
    }
    super::frame::draw(terminal, engine.view(), state, &layout, now.at)
}

/// Starts the first agents at their panes' sizes, as the dashboard does.
pub(super) fn start_at_pane_sizes(engine: &mut Engine, area: Rect, now: Now) -> Result<()> {
    for command in super::dashboard::start_at_pane_sizes(engine.view(), area, now.at) {
        engine.apply(command, now)?;
    }
    Ok(())
}

impl Fixture {
    pub(super) fn key(&mut self, code: KeyCode) {
        let key = KeyEvent::new(code, KeyModifiers::NONE);
        self.press(&key);
    }

    /// Presses `key` in a 120x40 terminal; what it asks of the batch is carried out, what it asks
    /// to read is read.
    pub(super) fn press(&mut self, key: &KeyEvent) {
        let area = Rect::new(0, 0, 120, 40);
        let now = Now::read();
        let asked = on_key(self.engine.view(), &mut self.state, key, area, now.at);
        carry_out(&mut self.engine, &mut self.state, asked, now);
        // The files a key asked for, read here as the dashboard's worker reads them.
        if let Some(read) = self.state.to_read.take() {
            super::act::opened(&mut self.state, read(), now.at);
        }
    }

    /// Types `text` into whatever has the keyboard, one key at a time.
    pub(super) fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    pub(super) fn ctrl(&mut self, c: char) {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        self.press(&key);
    }

    /// Feeds the agents' output to the engine (without its timers: nothing is ended by time)
    /// until `done` holds.
    pub(super) fn feed_until(&mut self, what: &str, done: impl Fn(&Engine) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done(&self.engine) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            match self.reports.try_recv() {
                Ok(report) => self.engine.on_report(report, Now::read()).expect("report"),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    pub(super) fn selected_id(&self) -> &str {
        &self.engine.store().file().tasks()[self.state.selected].task_id
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.engine.kill_all();
    }
}

#[test]
fn keys_move_the_selection_through_the_filtered_queue() {
    let mut f = fixture(&[
        ("a", "completed"),
        ("b", "failed"),
        ("c", "completed"),
        ("d", "failed"),
    ]);
    f.key(KeyCode::Down);
    f.key(KeyCode::Char('j'));
    assert_eq!(f.selected_id(), "c");
    f.key(KeyCode::End);
    assert_eq!(f.selected_id(), "d");
    f.key(KeyCode::Up);
    assert_eq!(f.selected_id(), "c");
    // `f` goes only through the statuses some task has: `failed` comes right after `all`.
    f.key(KeyCode::Char('f'));
    assert_eq!(f.state.filter, Filter::Failed);
    assert_eq!(
        f.selected_id(),
        "b",
        "the selection moves into the filtered list"
    );
    f.key(KeyCode::Char('j'));
    assert_eq!(f.selected_id(), "d");
    f.key(KeyCode::Char('j'));
    assert_eq!(f.selected_id(), "d", "stays on the last row");
    f.key(KeyCode::Char('f'));
    assert_eq!(f.state.filter, Filter::Completed);
    f.key(KeyCode::Char('f'));
    assert_eq!(
        f.state.filter,
        Filter::All,
        "back to all: no other status has a task"
    );
    // `/` narrows the queue as typed; Enter keeps it; `/` then Esc clears it.
    f.key(KeyCode::Char('/'));
    f.key(KeyCode::Char('B'));
    assert_eq!(f.selected_id(), "b", "the selection moves onto the match");
    f.key(KeyCode::Enter);
    assert_eq!(f.state.search, "B");
    f.key(KeyCode::Char('j'));
    assert_eq!(f.selected_id(), "b", "the only task listed");
    f.key(KeyCode::Char('/'));
    f.key(KeyCode::Esc);
    assert_eq!(f.state.search, "");
    f.key(KeyCode::Char('j'));
    assert_eq!(f.selected_id(), "c");
}

#[test]
fn actions_reach_the_engine_and_the_tasks_file() {
    let mut f = fixture(&[("a", "failed"), ("b", "pending")]);
    f.key(KeyCode::Char(' '));
    assert!(f.engine.is_paused());
    f.key(KeyCode::Char('+'));
    assert_eq!(f.engine.concurrency(), 5);
    f.key(KeyCode::Char('r'));
    assert_eq!(
        f.engine.store().file().tasks()[0].status,
        TaskStatus::Pending
    );
    assert!(
        f.state
            .message_now(Instant::now())
            .is_some_and(|m| m.contains("paused"))
    );
    f.key(KeyCode::Char('j'));
    f.key(KeyCode::Char('c'));
    assert_eq!(
        f.engine.store().file().tasks()[1].status,
        TaskStatus::Cancelled
    );
    f.key(KeyCode::Char('e'));
    assert!(matches!(f.state.mode, Mode::EditPrompt { task: 1, .. }));
    f.key(KeyCode::Char('!'));
    let save = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
    f.press(&save);
    let prompt = f.engine.store().file().tasks()[1].prompt_template.clone();
    assert_eq!(prompt.as_deref(), Some("!p"));
}

#[test]
fn the_auto_answer_window_switches_a_rule_by_its_own_key() {
    let text = r#"{"run_id": "r", "tasks": [{"task_id": "s", "agent": "sim", "prompt_template": "p", "status": "failed"}]}"#;
    let mut f = fixture_from(text, None);
    f.key(KeyCode::Char('a'));
    assert!(matches!(f.state.mode, Mode::Auto { task: 0 }));
    // `p` is press_p's key (it used to be "[1]", the first rule by position).
    f.key(KeyCode::Char('p'));
    let task = &f.engine.store().file().tasks()[0];
    assert_eq!(task.policy_for("press_p"), Some(true));
    assert_eq!(task.policy_for("press_1"), None);
    f.key(KeyCode::Char('1'));
    let task = &f.engine.store().file().tasks()[0];
    assert_eq!(task.policy_for("press_1"), Some(true));
    // A key no rule has changes nothing.
    f.key(KeyCode::Char('7'));
    let task = &f.engine.store().file().tasks()[0];
    assert_eq!(task.policy_for("press_p"), Some(true));
    assert_eq!(task.policy_for("press_1"), Some(true));
}

#[test]
fn esc_in_the_editor_asks_before_it_throws_typed_text_away() {
    let mut f = fixture(&[("a", "failed")]);
    f.key(KeyCode::Char('e'));
    f.key(KeyCode::Esc);
    assert!(
        matches!(f.state.mode, Mode::Normal),
        "nothing typed: Esc closes"
    );
    f.key(KeyCode::Char('e'));
    f.key(KeyCode::Char('!'));
    f.key(KeyCode::Esc);
    assert!(
        matches!(f.state.mode, Mode::EditPrompt { .. }),
        "typed text: Esc asks"
    );
    assert!(
        f.state
            .message_now(Instant::now())
            .is_some_and(|m| m.contains("Esc again discards"))
    );
    // Another key keeps editing and disarms.
    f.key(KeyCode::Char('?'));
    f.key(KeyCode::Esc);
    assert!(matches!(f.state.mode, Mode::EditPrompt { .. }));
    f.key(KeyCode::Esc);
    assert!(matches!(f.state.mode, Mode::Normal));
    let prompt = f.engine.store().file().tasks()[0].prompt_template.clone();
    assert_eq!(prompt.as_deref(), Some("p"), "discarded, not saved");
}

#[test]
fn shift_a_opens_the_answers_of_the_selected_task() {
    let mut f = fixture(&[("a", "failed")]);
    f.key(KeyCode::Char('A'));
    match &f.state.mode {
        Mode::Answers { task, lines, .. } => {
            assert_eq!(*task, 0);
            assert_eq!(lines, &["No attempt yet: the task has not run."]);
        }
        _ => panic!("the answers window is open"),
    }
    f.key(KeyCode::Char('x'));
    assert!(matches!(f.state.mode, Mode::Normal));
}

#[test]
fn help_scrolls_with_the_arrows_and_closes_on_any_other_key() {
    let mut f = fixture(&[("a", "pending")]);
    f.key(KeyCode::Char('?'));
    assert!(matches!(f.state.mode, Mode::Help { offset: 0 }));
    f.key(KeyCode::Down);
    f.key(KeyCode::Char('j'));
    f.key(KeyCode::Up);
    assert!(matches!(f.state.mode, Mode::Help { offset: 1 }));
    f.key(KeyCode::Char('x'));
    assert!(matches!(f.state.mode, Mode::Normal));
}

#[test]
fn scrolling_without_history_says_so() {
    let mut f = fixture(&[("a", "pending")]);
    f.key(KeyCode::Char('['));
    assert!(
        f.state
            .message_now(Instant::now())
            .is_some_and(|m| m.contains("nothing runs")),
        "{:?}",
        f.state.message_now(Instant::now())
    );
}

#[test]
fn q_leaves_at_once_when_the_batch_is_done_and_asks_while_agents_run() {
    let mut f = fixture(&[("a", "completed")]);
    f.key(KeyCode::Char('q'));
    assert_eq!(f.state.leaving, Leaving::Now);

    let mut f = fixture(&[("a", "pending")]);
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    f.key(KeyCode::Char('q'));
    assert!(matches!(f.state.mode, Mode::ConfirmQuit));
    f.key(KeyCode::Char('n'));
    assert!(matches!(f.state.mode, Mode::Normal));
    assert_eq!(f.state.leaving, Leaving::No);
    f.key(KeyCode::Char('q'));
    f.key(KeyCode::Char('y'));
    assert_eq!(f.state.leaving, Leaving::Stopping);
    assert!(f.engine.is_stopping());
}

#[test]
fn q_in_a_background_run_asks_detach_or_stop_even_when_done() {
    let mut f = fixture(&[("a", "completed")]);
    f.state.background = true;
    f.key(KeyCode::Char('q'));
    assert!(matches!(f.state.mode, Mode::ConfirmLeave));
    f.key(KeyCode::Esc);
    assert!(matches!(f.state.mode, Mode::Normal));
    assert_eq!(f.state.leaving, Leaving::No);
    f.key(KeyCode::Char('q'));
    f.key(KeyCode::Char('s'));
    assert_eq!(
        f.state.leaving,
        Leaving::Now,
        "nothing runs: s leaves at once"
    );

    let mut f = fixture(&[("a", "pending")]);
    f.state.background = true;
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    f.key(KeyCode::Char('q'));
    assert!(matches!(f.state.mode, Mode::ConfirmLeave));
    // `y` is no answer to this question: it stays open.
    f.key(KeyCode::Char('y'));
    assert!(matches!(f.state.mode, Mode::ConfirmLeave));
    f.key(KeyCode::Char('s'));
    assert_eq!(f.state.leaving, Leaving::Stopping, "no second question");
    assert!(f.engine.is_stopping());
}

#[test]
fn the_concurrency_message_says_agent_for_one() {
    let mut f = fixture(&[("a", "failed")]);
    for _ in 0..10 {
        f.key(KeyCode::Char('-'));
    }
    assert_eq!(f.engine.concurrency(), 1);
    let said = f.state.message.as_ref().map(|(text, _)| text.as_str());
    assert_eq!(said, Some("1 agent at once"));
    f.key(KeyCode::Char('+'));
    let said = f.state.message.as_ref().map(|(text, _)| text.as_str());
    assert_eq!(said, Some("2 agents at once"));
}

/// A task the operator removes from the tasks file during the run leaves the queue, its count
/// and the status line's counts (the engine holds it in memory only).
#[test]
fn a_task_removed_from_the_file_is_not_listed() {
    use super::model::{dashboard, matching};
    let mut f = fixture(&[("a", "completed"), ("gone", "failed"), ("c", "completed")]);
    let path = f.engine.store().path().to_path_buf();
    let theirs = r#"{"run_id": "r", "tasks": [
  {"task_id": "a", "agent": "generic", "command": ["sleep", "20"], "prompt_template": "p", "status": "completed"},
  {"task_id": "c", "agent": "generic", "command": ["sleep", "20"], "prompt_template": "p", "status": "completed"}
]}"#;
    assert_eq!(matching(&f.engine, &f.state), vec![0, 1, 2]);
    let edited = path.with_file_name("edited");
    std::fs::write(&edited, theirs).expect("edit");
    std::fs::rename(&edited, &path).expect("rename");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f.engine.store().file().is_removed(1) {
        assert!(Instant::now() < deadline, "the edit was not taken in");
        f.engine.on_tick(Now::read()).expect("tick");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(matching(&f.engine, &f.state), vec![0, 2]);
    let panes = super::model::PaneSetup::default();
    let area = Rect::new(0, 0, 120, 40);
    let view = dashboard(&f.engine, &f.state, area, Instant::now(), &panes);
    assert_eq!((view.queue.total, view.queue.matching), (2, 2));
    let listed: Vec<&str> = view.queue.rows.iter().map(|r| r.task_id.as_str()).collect();
    assert_eq!(listed, ["a", "c"]);
    let failed = view
        .status
        .counts
        .iter()
        .find(|(s, _)| *s == super::model::RowStatus::Failed)
        .map(|(_, n)| *n);
    assert_eq!(failed, Some(0), "{:?}", view.status.counts);
}
