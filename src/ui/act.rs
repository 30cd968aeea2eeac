//! What the dashboard's normal-mode actions do: moves in its own state, and operator actions
//! asked of the batch as `Command`s for the event loop. Reads the batch only; draws nothing.

use std::time::Instant;

use ratatui::layout::Rect;

use super::asks::{Ask, Told, ask, silently};
use super::keys::{Action, AnswerKey, Reply, key_name};
use super::model::RowStatus;
use super::model::{live_tasks, matching, task_name, waiting_tasks};
use super::mouse::select_step;
use super::reads::FileReadDone;
use super::state::{AnswerHold, Filter, Leaving, Mode, UiState};
use super::{editors, layout, queue};
use crate::run::engine::BatchView;
use crate::run::engine::command::{Command, DialogReply};

/// Carries out `action`; `area` is the terminal's size. Returns what it asks of the batch.
pub fn act(
    batch: &dyn BatchView,
    state: &mut UiState,
    action: Action,
    area: Rect,
    now: Instant,
) -> Vec<Ask> {
    let focus = state.focus.filter(|f| batch.live_attempt(*f).is_some());
    match action {
        Action::Up => select_step(batch, state, -1),
        Action::Down => select_step(batch, state, 1),
        Action::PageUp => select_step(batch, state, -page(state, area)),
        Action::PageDown => select_step(batch, state, page(state, area)),
        Action::Top => select_step(batch, state, isize::MIN),
        Action::Bottom => select_step(batch, state, isize::MAX),
        Action::NextPane => cycle_focus(batch, state, focus, true),
        Action::PrevPane => cycle_focus(batch, state, focus, false),
        Action::NextWaiting => select_next_waiting(batch, state, now),
        Action::Zoom => state.zoomed = !state.zoomed,
        Action::Unzoom => state.zoomed = false,
        Action::TakeOver => take_over(state, focus, now),
        Action::ScrollBack => scroll_pane(batch, state, focus, true, area, now),
        Action::ScrollForward => scroll_pane(batch, state, focus, false, area, now),
        Action::Filter { forward } => step_filter(batch, state, forward),
        Action::Search => super::search::open(state),
        Action::Pause => return toggle_pause(batch),
        Action::Cancel => return cancel_selected(batch, state),
        Action::Retry => return retry_selected(state),
        Action::AutoMenu => {
            state.mode = Mode::Auto {
                task: state.selected,
            }
        }
        Action::EditPrompt => editors::edit_prompt(batch, state, now),
        Action::Message => editors::open_message(batch, state, focus, now),
        Action::Concurrency { delta } => return change_concurrency(batch, delta),
        Action::Help => state.mode = Mode::Help { offset: 0 },
        Action::Details => state.mode = Mode::Details { offset: 0 },
        Action::Answers => open_answers(batch, state),
        Action::Replay => open_attempts(batch, state),
        Action::Diff => open_diff(batch, state),
        Action::Quit => return quit(batch, state, now),
        Action::Answer(answer) => {
            if let Some(task) = focus {
                return answer_dialog(batch, state, task, answer, now);
            }
        }
        Action::NotOffered { key } => {
            if let Some(task) = focus {
                let text = not_offered(batch, task, &key);
                state.say(text, now);
            }
        }
    }
    Vec::new()
}

/// Tab / Shift-Tab: the focus to the next (or previous) running agent's pane.
fn cycle_focus(batch: &dyn BatchView, state: &mut UiState, focus: Option<usize>, forward: bool) {
    let live = live_tasks(batch);
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
fn select_next_waiting(batch: &dyn BatchView, state: &mut UiState, now: Instant) {
    let waiting = waiting_tasks(batch);
    let next = waiting
        .iter()
        .find(|&&t| t > state.selected)
        .or(waiting.first());
    match next {
        Some(&task) if batch.live_attempt(task).is_some() => focus_task(state, task),
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
    batch: &dyn BatchView,
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
    let history = batch
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
            format!("{}: no history yet to scroll", task_name(batch, task)),
            now,
        );
    } else if !back && before == 0 {
        state.say("already at the live screen", now);
    }
}

/// `f` / `F`: the next (or previous) filter that lists a task.
fn step_filter(batch: &dyn BatchView, state: &mut UiState, forward: bool) {
    let counts = super::model::filter_counts(batch);
    state.filter = state
        .filter
        .step_among(forward, |f| counts.iter().any(|(g, n)| *g == f && *n > 0));
    select_a_match(batch, state);
}

/// Space: pauses the queue, or resumes it.
fn toggle_pause(batch: &dyn BatchView) -> Vec<Ask> {
    let command = if batch.is_paused() {
        Command::Resume
    } else {
        Command::Pause
    };
    vec![ask(command, Told::Said)]
}

/// `c`: cancels the selected task; a running one is asked about first.
fn cancel_selected(batch: &dyn BatchView, state: &mut UiState) -> Vec<Ask> {
    let task = state.selected;
    if batch.live_attempt(task).is_some() {
        state.mode = Mode::ConfirmCancel { task };
        Vec::new()
    } else {
        vec![ask(Command::Cancel { task }, Told::Reported)]
    }
}

/// `r`: runs the selected task again as soon as there is room.
fn retry_selected(state: &UiState) -> Vec<Ask> {
    let task = state.selected;
    vec![ask(
        Command::RetryNow { task },
        Told::ReportedAbout { task },
    )]
}

/// `+` / `-`: one agent more or fewer at once (never fewer than one).
fn change_concurrency(batch: &dyn BatchView, delta: i8) -> Vec<Ask> {
    let n = batch
        .concurrency()
        .saturating_add_signed(isize::from(delta))
        .max(1);
    vec![ask(Command::SetConcurrency(n), Told::Said)]
}

/// `A`: the selected task's answers to its prompts, this run's and recorded ones (`reads`).
fn open_answers(batch: &dyn BatchView, state: &mut UiState) {
    let task = state.selected;
    if let Some(spec) = batch.file().tasks().get(task) {
        let task_dir = batch.runs_dir().join(&spec.task_id);
        let live = batch
            .live_attempt(task)
            .map(|l| (l.number(), l.attempt().approvals().to_vec()));
        state.to_read = Some(Box::new(move || {
            let live = live.as_ref().map(|(n, a)| (*n, a.as_slice()));
            let lines = super::answers::lines(&task_dir, live);
            FileReadDone::Answers { task, lines }
        }));
    }
}

/// `v`: the selected task's recorded attempts, to replay one (read on a worker: `reads`).
fn open_attempts(batch: &dyn BatchView, state: &mut UiState) {
    let task = state.selected;
    if let Some(spec) = batch.file().tasks().get(task) {
        let task_dir = batch.runs_dir().join(&spec.task_id);
        state.to_read = Some(Box::new(move || {
            let list = super::attempts::list(&task_dir);
            FileReadDone::Attempts { task, list }
        }));
    }
}

/// `D`: the selected task's changes since its latest attempt started (`reads`).
fn open_diff(batch: &dyn BatchView, state: &mut UiState) {
    let task = state.selected;
    let Some(spec) = batch.file().tasks().get(task) else {
        return;
    };
    let tasks_path = batch.tasks_path();
    let spec = spec.clone();
    let runs_dir = batch.runs_dir().to_path_buf();
    let tasks_path = tasks_path.to_path_buf();
    state.to_read = Some(Box::new(move || {
        let view = super::diff_view::read(&spec, &tasks_path, &runs_dir);
        FileReadDone::Diff {
            task,
            view: Box::new(view),
        }
    }));
}

/// Opens what was read, unless the operator went elsewhere meanwhile.
pub fn opened(state: &mut UiState, done: FileReadDone, now: Instant) {
    let idle = matches!(state.mode, Mode::Normal) && state.replay.is_none();
    match done {
        FileReadDone::Answers { task, lines } if idle => {
            state.mode = Mode::Answers {
                task,
                lines,
                offset: 0,
            };
        }
        FileReadDone::Attempts { task, list } if idle => {
            state.mode = Mode::Attempts {
                task,
                list,
                selected: 0,
            };
        }
        FileReadDone::Diff { task, view } if idle => state.mode = Mode::Diff { task, view },
        FileReadDone::Replay(replaying) => {
            let chosen = |task| matches!(state.mode, Mode::Attempts { task: t, .. } if t == task);
            match replaying {
                Ok(replaying) if chosen(replaying.task) && state.replay.is_none() => {
                    state.mode = Mode::Normal;
                    state.replay = Some(replaying);
                }
                Ok(_) => {}
                Err(error) => state.say(error.to_string(), now),
            }
        }
        FileReadDone::Answers { .. }
        | FileReadDone::Attempts { .. }
        | FileReadDone::Diff { .. } => {}
    }
}

/// An answer key: its reply goes to the dialog waiting in `task`'s pane; the next key is held a
/// moment.
fn answer_dialog(
    batch: &dyn BatchView,
    state: &mut UiState,
    task: usize,
    answer: AnswerKey,
    now: Instant,
) -> Vec<Ask> {
    let reply = match answer.reply {
        Reply::Rule(rule) => DialogReply::Rule(rule),
        Reply::Keys { name, bytes } => DialogReply::Keys { name, bytes },
    };
    state.hold_answers(AnswerHold::JustAnswered, now);
    let sent = format!("sent {} ({})", key_name(answer.code), answer.label);
    state.say_about(task, format!("{sent} → {}", task_name(batch, task)), now);
    vec![silently(Command::Answer { task, reply })]
}

/// `q`: leave at once when nothing runs, else ask first; while stopping, kill the agents.
pub fn quit(batch: &dyn BatchView, state: &mut UiState, now: Instant) -> Vec<Ask> {
    match state.leaving {
        Leaving::Stopping => return vec![ask(Command::KillAll, Told::Said)],
        _ if state.background => state.mode = Mode::ConfirmLeave,
        _ if !batch.live_attempts().is_empty() => state.mode = Mode::ConfirmQuit,
        _ if batch.is_done() => state.leaving = Leaving::Now,
        _ => return stop(state, now),
    }
    Vec::new()
}

/// `s` after `q` in a background run: leave at once when nothing runs, else stop the batch.
pub fn stop_batch(batch: &dyn BatchView, state: &mut UiState, now: Instant) -> Vec<Ask> {
    if batch.live_attempts().is_empty() && batch.is_done() {
        state.leaving = Leaving::Now;
        Vec::new()
    } else {
        stop(state, now)
    }
}

/// Stops the batch and leaves once it stopped.
pub fn stop(state: &mut UiState, now: Instant) -> Vec<Ask> {
    state.leaving = Leaving::Stopping;
    state.say(
        "stopping: ending the running agents (q again kills them now)",
        now,
    );
    vec![silently(Command::Stop)]
}

/// After the filter or the search changed: the queue from its top, the selection on a listed task.
pub fn select_a_match(batch: &dyn BatchView, state: &mut UiState) {
    state.queue_offset = 0;
    let list = matching(batch, state);
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
fn not_offered(batch: &dyn BatchView, task: usize, key: &str) -> String {
    let name = task_name(batch, task);
    match key {
        "Enter" => format!("Enter not sent: {name}'s dialog highlights no option"),
        _ => format!("{key} not sent: {name}'s dialog has no option {key}"),
    }
}

/// Focuses a running task's pane and selects it (showing every task if the filter hides it).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_read_opens_only_where_the_operator_still_is() {
        let now = Instant::now();
        let mut state = UiState::new(now);
        let list = FileReadDone::Attempts {
            task: 2,
            list: Vec::new(),
        };
        opened(&mut state, list, now);
        assert!(matches!(state.mode, Mode::Attempts { task: 2, .. }));
        // The operator turned to the help meanwhile: the answers read later do not cover it.
        state.mode = Mode::Help { offset: 0 };
        let answers = FileReadDone::Answers {
            task: 2,
            lines: vec!["attempt 1".into()],
        };
        opened(&mut state, answers, now);
        assert!(matches!(state.mode, Mode::Help { offset: 0 }));
    }
}
