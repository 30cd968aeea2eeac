//! What the dashboard itself remembers between frames: selection, filter, focus, zoom, scroll,
//! notes, the open overlay. No run state: tasks, agents and their times live in the engine.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratatui_textarea::TextArea;

use super::attempts::{AttemptEntry, Replaying};
use super::model::RowStatus;
use super::reads::FileRead;

/// Final screens kept for tasks that ended (the oldest go first).
pub const FINAL_SCREENS_KEPT: usize = 64;

/// How long notes (automatic answers, action results) stay on screen.
pub const NOTE_TIME: Duration = Duration::from_secs(4);

/// After an answer, or after the selection moved by itself, keys that answer a dialog wait
/// this long: a double tap, or a key meant for the pane that just went, answers nothing.
pub const ANSWER_GRACE: Duration = Duration::from_secs(1);

/// Why answer keys wait for a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerHold {
    /// The operator just answered a dialog.
    JustAnswered,
    /// The selection moved by itself: a task ended, or left the filtered queue.
    CameByItself,
}

/// Which tasks the queue lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Active,
    Waiting,
    Pending,
    Retryable,
    Failed,
    Completed,
    Cancelled,
    /// Not part of this run: disabled, or left out by `--only`.
    Skipped,
}

impl Filter {
    pub const ORDER: [Filter; 9] = [
        Filter::All,
        Filter::Active,
        Filter::Waiting,
        Filter::Pending,
        Filter::Retryable,
        Filter::Failed,
        Filter::Completed,
        Filter::Cancelled,
        Filter::Skipped,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            // Agents that run, waiting ones included.
            Filter::Active => "active",
            Filter::Waiting => "waiting",
            Filter::Pending => "pending",
            Filter::Retryable => "retryable",
            Filter::Failed => "failed",
            Filter::Completed => "completed",
            Filter::Cancelled => "cancelled",
            Filter::Skipped => "skipped",
        }
    }

    pub fn matches(self, status: RowStatus) -> bool {
        match self {
            Filter::All => true,
            Filter::Active => matches!(status, RowStatus::Running | RowStatus::Waiting),
            Filter::Waiting => matches!(status, RowStatus::Waiting | RowStatus::NeedsInput),
            Filter::Pending => status == RowStatus::Pending,
            Filter::Retryable => status == RowStatus::Retryable,
            Filter::Failed => status == RowStatus::Failed,
            Filter::Completed => status == RowStatus::Completed,
            Filter::Cancelled => status == RowStatus::Cancelled,
            Filter::Skipped => status == RowStatus::Skipped,
        }
    }

    /// The next filter (`forward`) or the previous one, wrapping around.
    pub fn step(self, forward: bool) -> Filter {
        self.step_among(forward, |_| true)
    }

    /// As `step`, skipping the filters that would list no task.
    pub fn step_among(self, forward: bool, lists_some: impl Fn(Filter) -> bool) -> Filter {
        let n = Self::ORDER.len();
        let mut at = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        for _ in 0..n {
            at = if forward {
                (at + 1) % n
            } else {
                (at + n - 1) % n
            };
            let next = Self::ORDER[at];
            if next == Filter::All || lists_some(next) {
                return next;
            }
        }
        Filter::All
    }
}

/// What the keyboard is talking to.
#[derive(Default)]
pub enum Mode {
    #[default]
    Normal,
    /// The keys' help, scrolled down by `offset` lines where it does not fit.
    Help {
        offset: usize,
    },
    ConfirmQuit,
    /// `q` in a background run: detach this client, or stop the batch.
    ConfirmLeave,
    /// The selected task's details in a window, scrolled down by `offset` rows.
    Details {
        offset: usize,
    },
    /// Every answered prompt of a task, read when the window opened; scrolled by `offset`.
    Answers {
        task: usize,
        lines: Vec<String>,
        offset: usize,
    },
    ConfirmCancel {
        task: usize,
    },
    Auto {
        task: usize,
    },
    EditPrompt {
        task: usize,
        editor: Box<TextArea<'static>>,
    },
    Message {
        task: usize,
        editor: Box<TextArea<'static>>,
    },
    /// The recorded attempts of a task, to pick one to replay.
    Attempts {
        task: usize,
        list: Vec<AttemptEntry>,
        selected: usize,
    },
    /// `D`: what a task's agent changed (`diff_view`).
    Diff {
        task: usize,
        view: Box<super::diff_view::DiffView>,
    },
    /// `/`: the queue's search is typed (`search`).
    Search,
    /// Every key goes to the focused agent until the leave chord; the pane is zoomed meanwhile.
    TakeOver {
        task: usize,
        was_zoomed: bool,
    },
}

/// Where leaving stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Leaving {
    #[default]
    No,
    /// The engine is ending the agents; the dashboard leaves when it is done.
    Stopping,
    /// Leave now.
    Now,
}

/// The dashboard's own state.
#[derive(Default)]
pub struct UiState {
    /// The selected task (index into the tasks file).
    pub selected: usize,
    pub filter: Filter,
    /// The queue's search (`/`): only tasks whose id or agent contain it are listed.
    pub search: String,
    /// Position of the queue's first visible row among the matching tasks.
    pub queue_offset: usize,
    /// The task whose pane is large.
    pub focus: Option<usize>,
    pub zoomed: bool,
    pub mode: Mode,
    /// Per task: rows scrolled back into its pane's history.
    pub scroll: HashMap<usize, usize>,
    /// Per task: a brief note and when it goes away.
    pub notes: HashMap<usize, (String, Instant)>,
    /// The last action's result and when it goes away.
    pub message: Option<(String, Instant)>,
    /// The task the message is about while its outcome is still to come ("cancelling …"): the
    /// outcome replaces the message.
    pub message_about: Option<usize>,
    /// Esc was pressed once in an editor holding typed text: the next Esc discards it.
    pub discard_armed: bool,
    /// The terminal's size at the last layout: agents get narrower only when it changes.
    pub laid_out_area: Option<ratatui::layout::Rect>,
    /// The terminal's size and zoom the engine's launch sizes were last laid out for.
    pub launch_sized_for: Option<(ratatui::layout::Rect, bool)>,
    /// Per task: the screen its last attempt ended with (this run), and that attempt's number.
    pub final_screens: HashMap<usize, (u32, vt100::Screen)>,
    pub leaving: Leaving,
    /// A recorded attempt replayed over the panes; it takes the keys until the operator leaves it.
    pub replay: Option<Box<Replaying>>,
    /// The selection as the operator's last key or click left it: if it differs at the next
    /// frame, it moved by itself.
    pub chosen: Option<usize>,
    /// Answer keys wait until then, and why.
    pub answers_held: Option<(Instant, AnswerHold)>,
    /// `NO_COLOR` is set: frames are drawn without colours (attributes only).
    pub no_color: bool,
    /// When the run started and, once the batch is done, when it finished.
    pub started: Option<Instant>,
    pub finished: Option<Instant>,
    /// The dashboard runs in the background (`herd run --detach`), seen through `herd attach`.
    pub background: bool,
    /// The run's web view, when it serves one (`herd run --web`): said in the help.
    pub web: Option<String>,
    /// What a key asked to read from disk, for the dashboard to hand to a worker (`reads`).
    pub to_read: Option<FileRead>,
}

impl UiState {
    pub fn new(now: Instant) -> UiState {
        UiState {
            started: Some(now),
            ..UiState::default()
        }
    }

    pub fn say(&mut self, text: impl Into<String>, now: Instant) {
        self.message_about = None;
        self.message = Some((text.into(), now + NOTE_TIME));
    }

    /// A message about `task` whose outcome is still to come: `settle` replaces it then.
    pub fn say_about(&mut self, task: usize, text: impl Into<String>, now: Instant) {
        self.say(text, now);
        self.message_about = Some(task);
    }

    /// `task`'s attempt ended: a message waiting for that outcome is replaced by it.
    pub fn settle(&mut self, task: usize, outcome: impl Into<String>, now: Instant) {
        if self.message_about == Some(task) && self.message_now(now).is_some() {
            self.say(outcome, now);
        }
    }

    /// Like `settle`, and the new message still waits for the outcome, so a task that fails again
    /// at once never leaves `… started` on the status line.
    pub fn progress(&mut self, task: usize, text: impl Into<String>, now: Instant) {
        if self.message_about == Some(task) && self.message_now(now).is_some() {
            self.say_about(task, text, now);
        }
    }

    /// Shows an operator action's result, and logs it.
    pub fn report(&mut self, message: &str, done: bool, now: Instant) {
        tracing::info!(message, done, "operator action");
        self.say(message, now);
    }

    pub fn note(&mut self, task: usize, text: impl Into<String>, now: Instant) {
        self.notes.insert(task, (text.into(), now + NOTE_TIME));
    }

    pub fn note_for(&self, task: usize, now: Instant) -> Option<&str> {
        self.notes
            .get(&task)
            .filter(|(_, until)| *until > now)
            .map(|(text, _)| text.as_str())
    }

    pub fn message_now(&self, now: Instant) -> Option<&str> {
        self.message
            .as_ref()
            .filter(|(_, until)| *until > now)
            .map(|(text, _)| text.as_str())
    }

    /// Drops expired notes; returns the next time something on screen expires.
    pub fn expire(&mut self, now: Instant) -> Option<Instant> {
        self.notes.retain(|_, (_, until)| *until > now);
        if self
            .message
            .as_ref()
            .is_some_and(|(_, until)| *until <= now)
        {
            self.message = None;
        }
        let notes = self.notes.values().map(|(_, until)| *until);
        notes
            .chain(self.message.as_ref().map(|(_, until)| *until))
            .min()
    }

    /// The run clock: from the start to now, or to the end of the batch.
    pub fn clock(&self, now: Instant) -> Duration {
        let start = self.started.unwrap_or(now);
        self.finished
            .unwrap_or(now)
            .saturating_duration_since(start)
    }

    /// The next whole second of the run clock after `now`.
    pub fn next_second(&self, now: Instant) -> Instant {
        let start = self.started.unwrap_or(now);
        let elapsed = now.saturating_duration_since(start);
        start + Duration::from_secs(elapsed.as_secs() + 1)
    }

    /// Focuses the selected task if it runs, else the previous focus if it still runs, else the
    /// first running task.
    pub fn resolve_focus(&mut self, live: &[usize]) {
        self.focus = if live.contains(&self.selected) {
            Some(self.selected)
        } else if let Some(f) = self.focus.filter(|f| live.contains(f)) {
            Some(f)
        } else {
            live.first().copied()
        };
    }

    /// Keeps a copy of the screen an attempt ends with (without its history).
    pub fn keep_final_screen(&mut self, task: usize, attempt: u32, screen: &vt100::Screen) {
        let mut copy = screen.clone();
        copy.clear_scrollback();
        if self.final_screens.len() >= FINAL_SCREENS_KEPT && !self.final_screens.contains_key(&task)
        {
            // Any one will do: this is a convenience, not a record (runs/ has the recordings).
            if let Some(&old) = self.final_screens.keys().next() {
                self.final_screens.remove(&old);
            }
        }
        self.final_screens.insert(task, (attempt, copy));
    }

    /// The operator's key or click was handled: a selection they moved themselves is deliberate,
    /// so its dialog takes keys at once.
    pub fn operator_chose(&mut self) {
        if self.chosen.is_some_and(|chosen| chosen != self.selected) {
            self.answers_held = None;
        }
        self.chosen = Some(self.selected);
    }

    /// A selection that moved by itself since the operator's last key holds the answer keys for
    /// `ANSWER_GRACE`.
    pub fn notice_selection(&mut self, now: Instant) {
        if self.chosen != Some(self.selected) {
            if self.chosen.is_some() {
                self.hold_answers(AnswerHold::CameByItself, now);
            }
            self.chosen = Some(self.selected);
        }
    }

    pub fn hold_answers(&mut self, why: AnswerHold, now: Instant) {
        self.answers_held = Some((now + ANSWER_GRACE, why));
    }

    /// Why answer keys wait now, if they do.
    pub fn answers_held_now(&self, now: Instant) -> Option<AnswerHold> {
        self.answers_held
            .filter(|(until, _)| *until > now)
            .map(|(_, why)| why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_cycle_both_ways() {
        let mut f = Filter::All;
        for _ in 0..Filter::ORDER.len() {
            f = f.step(true);
        }
        assert_eq!(f, Filter::All);
        assert_eq!(Filter::All.step(false), Filter::Skipped);
        assert!(Filter::Active.matches(RowStatus::Waiting));
        assert!(!Filter::Waiting.matches(RowStatus::Running));
        // A skipped task is not pending: the bar would say 0 pending while the filter lists it.
        assert!(!Filter::Pending.matches(RowStatus::Skipped));
        // Only the statuses there are, and all.
        let there = |f: Filter| matches!(f, Filter::Failed | Filter::Completed);
        assert_eq!(Filter::All.step_among(true, there), Filter::Failed);
        assert_eq!(Filter::Failed.step_among(true, there), Filter::Completed);
        assert_eq!(Filter::Completed.step_among(true, there), Filter::All);
        assert_eq!(Filter::All.step_among(false, there), Filter::Completed);
        assert_eq!(Filter::Failed.step_among(true, |_| false), Filter::All);
        assert!(Filter::Skipped.matches(RowStatus::Skipped));
    }

    #[test]
    fn focus_follows_the_selection_when_it_runs() {
        let mut s = UiState::new(Instant::now());
        s.selected = 5;
        s.resolve_focus(&[2, 5]);
        assert_eq!(s.focus, Some(5));
        s.selected = 1;
        s.resolve_focus(&[2, 5]);
        assert_eq!(s.focus, Some(5), "kept while it runs");
        s.resolve_focus(&[2]);
        assert_eq!(s.focus, Some(2));
        s.resolve_focus(&[]);
        assert_eq!(s.focus, None);
    }

    #[test]
    fn a_selection_that_moved_by_itself_holds_the_answer_keys_a_moment() {
        let t0 = Instant::now();
        let mut s = UiState::new(t0);
        s.notice_selection(t0);
        assert_eq!(s.answers_held_now(t0), None, "the first frame is no move");
        s.selected = 2;
        s.operator_chose();
        s.notice_selection(t0);
        assert_eq!(s.answers_held_now(t0), None, "the operator moved it");
        s.selected = 3;
        let t1 = t0 + Duration::from_secs(5);
        s.notice_selection(t1);
        assert_eq!(s.answers_held_now(t1), Some(AnswerHold::CameByItself));
        assert_eq!(s.answers_held_now(t1 + ANSWER_GRACE), None);
        s.hold_answers(AnswerHold::JustAnswered, t1);
        assert_eq!(s.answers_held_now(t1), Some(AnswerHold::JustAnswered));
        // A key that leaves the selection where it was keeps the hold (a double tap) ...
        s.operator_chose();
        assert_eq!(s.answers_held_now(t1), Some(AnswerHold::JustAnswered));
        // ... one that moves it (`w`, Tab, a click) is a choice: the keys work at once.
        s.selected = 4;
        s.operator_chose();
        assert_eq!(s.answers_held_now(t1), None);
    }

    #[test]
    fn notes_expire() {
        let now = Instant::now();
        let mut s = UiState::new(now);
        s.note(1, "auto: press_1", now);
        s.say("done", now);
        assert_eq!(s.note_for(1, now), Some("auto: press_1"));
        assert_eq!(s.expire(now), Some(now + NOTE_TIME));
        let later = now + NOTE_TIME;
        assert_eq!(s.expire(later), None);
        assert_eq!(s.note_for(1, later), None);
        assert_eq!(s.message_now(later), None);
    }

    #[test]
    fn a_pending_outcome_replaces_its_message_and_nothing_else() {
        let t0 = Instant::now();
        let mut s = UiState::new(t0);
        s.say_about(3, "cancelling fix-3: ending its agent", t0);
        // Another task's outcome leaves it alone.
        s.settle(4, "fix-4: failed", t0 + Duration::from_secs(1));
        assert_eq!(
            s.message_now(t0 + Duration::from_secs(1)),
            Some("cancelling fix-3: ending its agent")
        );
        let t1 = t0 + Duration::from_secs(2);
        s.settle(3, "fix-3: cancelled", t1);
        assert_eq!(s.message_now(t1), Some("fix-3: cancelled"));
        // Shown the usual time from when it came, and settled once.
        assert_eq!(
            s.message_now(t1 + NOTE_TIME - Duration::from_millis(1)),
            Some("fix-3: cancelled")
        );
        s.settle(3, "fix-3 started", t1);
        assert_eq!(s.message_now(t1), Some("fix-3: cancelled"));
        // A plain message is never replaced.
        s.say("queue resumed", t1);
        s.settle(3, "fix-3: failed", t1);
        assert_eq!(s.message_now(t1), Some("queue resumed"));
    }

    #[test]
    fn a_retried_task_that_fails_at_once_does_not_stay_started() {
        let t0 = Instant::now();
        let mut s = UiState::new(t0);
        s.say_about(13, "crashes-013: retrying now", t0);
        s.progress(13, "crashes-013 started", t0 + Duration::from_millis(100));
        assert_eq!(
            s.message_now(t0 + Duration::from_millis(100)),
            Some("crashes-013 started")
        );
        let t1 = t0 + Duration::from_millis(600);
        s.settle(13, "crashes-013: retryable (failed_process)", t1);
        assert_eq!(
            s.message_now(t1),
            Some("crashes-013: retryable (failed_process)")
        );
    }
}
