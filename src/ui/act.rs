//! What the dashboard's actions do in its normal mode (`keys::Action`): moves in its own
//! state (selection, focus, zoom, scroll, filter) and operator actions carried out through the
//! engine (answers, cancel, retry, pause, concurrency, leaving). Nothing here draws.

use std::time::Instant;

use color_eyre::eyre::Result;
use ratatui::layout::Rect;

use super::keys::{Action, AnswerKey, Reply, key_name};
use super::model::RowStatus;
use super::model::{live_tasks, matching, task_name, waiting_tasks};
use super::mouse::select_step;
use super::state::{AnswerHold, Filter, Leaving, Mode, UiState};
use super::{attempts, editors, layout, queue};
use crate::run::clock::Now;
use crate::run::engine::command::{Command, DialogReply};
use crate::run::engine::{BatchView, Engine};

/// Carries out `action`; `area` is the terminal's size (for page sizes).
pub fn act(
    engine: &mut Engine,
    state: &mut UiState,
    action: Action,
    area: Rect,
    clock: Now,
) -> Result<()> {
    let now = clock.at;
    let focus = state
        .focus
        .filter(|f| engine.view().live_attempt(*f).is_some());
    match action {
        Action::Up => select_step(engine, state, -1),
        Action::Down => select_step(engine, state, 1),
        Action::PageUp => select_step(engine, state, -page(state, area)),
        Action::PageDown => select_step(engine, state, page(state, area)),
        Action::Top => select_step(engine, state, isize::MIN),
        Action::Bottom => select_step(engine, state, isize::MAX),
        Action::NextPane => cycle_focus(engine, state, focus, true),
        Action::PrevPane => cycle_focus(engine, state, focus, false),
        Action::NextWaiting => select_next_waiting(engine, state, now),
        Action::Zoom => state.zoomed = !state.zoomed,
        Action::Unzoom => state.zoomed = false,
        Action::TakeOver => take_over(state, focus, now),
        Action::ScrollBack => scroll_pane(engine, state, focus, true, area, now),
        Action::ScrollForward => scroll_pane(engine, state, focus, false, area, now),
        Action::Filter { forward } => step_filter(engine, state, forward),
        Action::Search => super::search::open(state),
        Action::Pause => toggle_pause(engine, state, clock)?,
        Action::Cancel => cancel_selected(engine, state, clock)?,
        Action::Retry => retry_selected(engine, state, clock)?,
        Action::AutoMenu => {
            state.mode = Mode::Auto {
                task: state.selected,
            }
        }
        Action::EditPrompt => editors::edit_prompt(engine, state, now),
        Action::Message => editors::open_message(engine, state, focus, now),
        Action::Concurrency { delta } => change_concurrency(engine, state, delta, clock)?,
        Action::Help => state.mode = Mode::Help { offset: 0 },
        Action::Details => state.mode = Mode::Details { offset: 0 },
        Action::Answers => open_answers(engine, state),
        Action::Replay => open_attempts(engine, state),
        Action::Quit => quit(engine, state, clock)?,
        Action::Answer(answer) => {
            if let Some(task) = focus {
                answer_dialog(engine, state, task, answer, clock)?;
            }
        }
        Action::NotOffered { key } => {
            if let Some(task) = focus {
                let text = not_offered(engine, task, &key);
                state.say(text, now);
            }
        }
    }
    Ok(())
}

/// Tab / Shift-Tab: the focus to the next (or previous) running agent's pane.
fn cycle_focus(engine: &Engine, state: &mut UiState, focus: Option<usize>, forward: bool) {
    let live = live_tasks(engine);
    if live.is_empty() {
        return;
    }
    let at = focus.and_then(|f| live.iter().position(|&t| t == f));
    let next = match (at, forward) {
        (Some(at), true) => (at + 1) % live.len(),
        (Some(at), false) => (at + live.len() - 1) % live.len(),
        (None, _) => 0,
    };
    focus_task(state, live[next]);
}

/// `w`: the next task waiting for the operator, its pane focused when it runs.
fn select_next_waiting(engine: &Engine, state: &mut UiState, now: Instant) {
    let waiting = waiting_tasks(engine);
    let next = waiting
        .iter()
        .find(|&&t| t > state.selected)
        .or(waiting.first());
    match next {
        Some(&task) if engine.view().live_attempt(task).is_some() => focus_task(state, task),
        Some(&task) => select_task(state, task, RowStatus::NeedsInput),
        None => state.say("no task is waiting for you", now),
    }
}

/// `i`: the focused agent's pane takes every key (zoomed) until the leave chord.
fn take_over(state: &mut UiState, focus: Option<usize>, now: Instant) {
    match focus {
        Some(task) => {
            state.mode = Mode::TakeOver {
                task,
                was_zoomed: state.zoomed,
            };
            state.zoomed = true;
        }
        None => state.say("no running agent to take over", now),
    }
}

/// `[` / `]`: scrolls the focused pane half a screen back into its agent's history (`back`) or forward.
fn scroll_pane(
    engine: &Engine,
    state: &mut UiState,
    focus: Option<usize>,
    back: bool,
    area: Rect,
    now: Instant,
) {
    let Some(task) = focus else {
        state.say("no agent pane to scroll: nothing runs", now);
        return;
    };
    // Rows that went off the top of the agent's screen: its history.
    let history = engine
        .view()
        .live_attempt(task)
        .map_or(0, |l| l.attempt().screen().history_len());
    let step = usize::from(area.height / 2).max(1);
    let offset = state.scroll.entry(task).or_insert(0);
    let before = *offset;
    *offset = if back {
        offset.saturating_add(step)
    } else {
        offset.saturating_sub(step)
    };
    if history == 0 {
        *offset = 0;
        state.say(
            format!("{}: no history yet to scroll", task_name(engine, task)),
            now,
        );
    } else if !back && before == 0 {
        state.say("already at the live screen", now);
    }
}

/// `f` / `F`: the next (or previous) filter that lists a task.
fn step_filter(engine: &Engine, state: &mut UiState, forward: bool) {
    let counts = super::model::filter_counts(engine);
    state.filter = state
        .filter
        .step_among(forward, |f| counts.iter().any(|(g, n)| *g == f && *n > 0));
    select_a_match(engine, state);
}

/// Space: pauses the queue, or resumes it.
fn toggle_pause(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    let command = if engine.view().is_paused() {
        Command::Resume
    } else {
        Command::Pause
    };
    let outcome = engine.apply(command, clock)?;
    state.say(outcome.message(), clock.at);
    Ok(())
}

/// `c`: cancels the selected task; a running one is asked about first.
fn cancel_selected(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    let task = state.selected;
    if engine.view().live_attempt(task).is_some() {
        state.mode = Mode::ConfirmCancel { task };
    } else {
        let outcome = engine.apply(Command::Cancel { task }, clock)?;
        state.report(outcome.message(), outcome.is_done(), clock.at);
    }
    Ok(())
}

/// `r`: runs the selected task again as soon as there is room.
fn retry_selected(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    let task = state.selected;
    let outcome = engine.apply(Command::RetryNow { task }, clock)?;
    state.report(outcome.message(), outcome.is_done(), clock.at);
    if outcome.is_done() {
        state.message_about = Some(task);
    }
    Ok(())
}

/// `+` / `-`: one agent more or fewer at once (never fewer than one).
fn change_concurrency(
    engine: &mut Engine,
    state: &mut UiState,
    delta: i8,
    clock: Now,
) -> Result<()> {
    let n = engine
        .concurrency()
        .saturating_add_signed(isize::from(delta))
        .max(1);
    let outcome = engine.apply(Command::SetConcurrency(n), clock)?;
    state.say(outcome.message(), clock.at);
    Ok(())
}

/// `A`: the selected task's answers to its prompts, this run's and those recorded.
fn open_answers(engine: &Engine, state: &mut UiState) {
    let task = state.selected;
    if let Some(spec) = engine.view().file().tasks().get(task) {
        let live = engine
            .view()
            .live_attempt(task)
            .map(|l| (l.number(), l.attempt().approvals()));
        let lines = super::answers::lines(&engine.view().runs_dir().join(&spec.task_id), live);
        state.mode = Mode::Answers {
            task,
            lines,
            offset: 0,
        };
    }
}

/// `v`: the selected task's recorded attempts, to replay one.
fn open_attempts(engine: &Engine, state: &mut UiState) {
    let task = state.selected;
    if let Some(spec) = engine.view().file().tasks().get(task) {
        let list = attempts::list(&engine.view().runs_dir().join(&spec.task_id));
        state.mode = Mode::Attempts {
            task,
            list,
            selected: 0,
        };
    }
}

/// An answer key: its reply goes to the dialog waiting in `task`'s pane (where
/// `answer_target` found it), and the next key is held a moment.
fn answer_dialog(
    engine: &mut Engine,
    state: &mut UiState,
    task: usize,
    answer: AnswerKey,
    clock: Now,
) -> Result<()> {
    let now = clock.at;
    let reply = match answer.reply {
        Reply::Rule(rule) => DialogReply::Rule(rule),
        Reply::Keys { name, bytes } => DialogReply::Keys { name, bytes },
    };
    engine.apply(Command::Answer { task, reply }, clock)?;
    state.hold_answers(AnswerHold::JustAnswered, now);
    let sent = format!("sent {} ({})", key_name(answer.code), answer.label);
    state.say_about(task, format!("{sent} → {}", task_name(engine, task)), now);
    Ok(())
}

/// `q`: leave at once when nothing runs, else ask first; while stopping, kill the agents.
pub fn quit(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    let now = clock.at;
    match state.leaving {
        Leaving::Stopping => {
            let outcome = engine.apply(Command::KillAll, clock)?;
            state.say(outcome.message(), now);
        }
        _ if state.background => state.mode = Mode::ConfirmLeave,
        _ if !engine.view().live_attempts().is_empty() => state.mode = Mode::ConfirmQuit,
        _ if engine.view().is_done() => state.leaving = Leaving::Now,
        _ => stop(engine, state, clock)?,
    }
    Ok(())
}

/// `s` after `q` in a background run: leave at once when nothing runs, else stop the batch (the
/// question already confirmed it).
pub fn stop_batch(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    if engine.view().live_attempts().is_empty() && engine.view().is_done() {
        state.leaving = Leaving::Now;
        Ok(())
    } else {
        stop(engine, state, clock)
    }
}

pub fn stop(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    let now = clock.at;
    engine.apply(Command::Stop, clock)?;
    state.leaving = Leaving::Stopping;
    state.say(
        "stopping: ending the running agents (q again kills them now)",
        now,
    );
    Ok(())
}

/// After the filter or the search changed: the queue from its top, and the selection on a task
/// it lists.
pub fn select_a_match(engine: &Engine, state: &mut UiState) {
    state.queue_offset = 0;
    let list = matching(engine, state);
    if !list.contains(&state.selected)
        && let Some(&first) = list.first()
    {
        state.selected = first;
    }
}

fn page(state: &UiState, area: Rect) -> isize {
    let regions = layout::regions(area, state.zoomed);
    regions.queue.map_or(10, queue::visible_rows).max(1) as isize
}

/// Why a key the dialog does not take was not sent (the banner lists the keys it takes).
fn not_offered(engine: &Engine, task: usize, key: &str) -> String {
    let name = task_name(engine, task);
    match key {
        "Enter" => format!("Enter not sent: {name}'s dialog highlights no option"),
        _ => format!("{key} not sent: {name}'s dialog has no option {key}"),
    }
}

/// Focuses a running task's pane and selects it in the queue (showing every task if the
/// filter hides it).
fn focus_task(state: &mut UiState, task: usize) {
    state.selected = task;
    state.focus = Some(task);
    if !matches!(state.filter, Filter::All | Filter::Active) {
        state.filter = Filter::All;
    }
}

/// Selects a task that is not running (showing every task if the filter hides it).
fn select_task(state: &mut UiState, task: usize, status: RowStatus) {
    state.selected = task;
    if !state.filter.matches(status) {
        state.filter = Filter::All;
    }
}
