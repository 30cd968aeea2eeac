//! The replay player as an embeddable view, used by `herd replay` and inside the dashboard. Owns
//! the playhead and the timeline; the pure `Player` decides, this applies its outcomes. Reading
//! errors become a message, never a panic.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyEvent;

use super::cast::CastError;
use super::player::{Outcome, Player, PlayerAction};
use super::seek::{Index, IndexOptions, Playhead};
use super::timeline::Timeline;

/// The idle cap `i` switches on when neither `--idle-limit` nor the recording names one.
pub const DEFAULT_IDLE_LIMIT: f64 = 2.0;
/// Output bytes applied per frame in "as fast as possible" play.
const FASTEST_BYTES_PER_FRAME: usize = 64 << 10;
/// Seeks land this much after the time asked for, so an event at exactly that time is shown.
const SEEK_SLACK: f64 = 1e-7;

/// How the player starts.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayOptions {
    pub speed: Option<f64>,
    /// Cap idle gaps at this many seconds from the start.
    pub idle_limit: Option<f64>,
    /// Open at this recorded time (paused) instead of the start.
    pub start_at: Option<f64>,
    /// Start playing at once.
    pub autoplay: bool,
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// Used (the view may need drawing).
    Yes,
    /// Not a player key: the embedding view may use it.
    Ignored,
    /// The operator leaves the player.
    Exit,
}

/// A recording being replayed.
pub struct ReplayView<R = BufReader<File>> {
    pub(super) name: String,
    pub(super) playhead: Playhead<R>,
    pub(super) timeline: Timeline,
    pub(super) player: Player,
    /// Shown times of the markers.
    marks: Vec<f64>,
    pub(super) idle_limit: f64,
    /// A reading error or a note, shown instead of the key help.
    pub(super) message: Option<String>,
    /// Something changed since the last draw.
    dirty: bool,
    /// Tenths of a second shown at the last draw (the clock moves the readout).
    drawn_tenths: i64,
}

impl ReplayView<BufReader<File>> {
    /// Indexes the file and opens the player on it.
    pub fn open(
        path: &Path,
        name: String,
        options: ReplayOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ReplayView, CastError> {
        let index = Arc::new(Index::build_file(path, IndexOptions::default(), progress)?);
        let playhead = Playhead::open(path, index)?;
        Ok(ReplayView::new(playhead, name, options, Instant::now()))
    }
}

impl<R: BufRead + Seek> ReplayView<R> {
    pub fn new(playhead: Playhead<R>, name: String, options: ReplayOptions, now: Instant) -> Self {
        let index = Arc::clone(playhead.index());
        // Capped from the start when asked or when the recording says so (as asciinema does).
        let asked = options.idle_limit.or(index.header.idle_time_limit);
        let idle_limit = asked.unwrap_or(DEFAULT_IDLE_LIMIT);
        let mut timeline = index.timeline.clone();
        timeline.set_idle_limit(asked);
        let player = Player::new(timeline.shown_duration(), now);
        let mut view = ReplayView {
            name,
            playhead,
            marks: Vec::new(),
            timeline,
            player,
            idle_limit,
            message: None,
            dirty: true,
            drawn_tenths: -1,
        };
        view.marks = view.shown_marks();
        if let Some(speed) = options.speed {
            view.player.set_speed(speed, now);
        }
        if let Some(at) = options.start_at {
            let shown = view.timeline.to_shown(at);
            view.player.set_position(shown, now);
            view.seek_recorded(at);
        }
        if options.autoplay {
            let outcome = view.player.handle(PlayerAction::TogglePlay, now, &[]);
            view.apply(outcome, now);
        }
        view
    }

    fn shown_marks(&self) -> Vec<f64> {
        let markers = self.timeline.markers();
        markers
            .iter()
            .map(|m| self.timeline.to_shown(m.time))
            .collect()
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Handled {
        self.handle_key_at(key, Instant::now())
    }

    pub fn handle_key_at(&mut self, key: KeyEvent, now: Instant) -> Handled {
        let Some(command) = PlayerAction::from_key(key) else {
            return Handled::Ignored;
        };
        let outcome = self.player.handle(command, now, &self.marks);
        if outcome == Outcome::Exit {
            return Handled::Exit;
        }
        self.apply(outcome, now);
        Handled::Yes
    }

    fn apply(&mut self, outcome: Outcome, now: Instant) {
        match outcome {
            Outcome::Nothing | Outcome::Exit => {}
            Outcome::Redraw => self.dirty = true,
            Outcome::Seek(shown) => self.seek_recorded(self.timeline.to_recorded(shown)),
            Outcome::SeekMarker(i) => {
                if let Some(marker) = self.timeline.markers().get(i) {
                    let result = self.playhead.seek_event(marker.event);
                    self.after_read(result);
                }
            }
            Outcome::StepEvent => {
                let result = self.playhead.step(1, usize::MAX);
                self.after_read(result.map(|_| ()));
                let shown = self.timeline.to_shown(self.playhead.time());
                self.player.set_position(shown, now);
                self.note_marker_under_cursor();
            }
            Outcome::ToggleIdleCap => {
                let capped = self.timeline.idle_limit().is_none();
                self.timeline
                    .set_idle_limit(capped.then_some(self.idle_limit));
                self.marks = self.shown_marks();
                let shown = self.timeline.to_shown(self.playhead.time());
                self.player
                    .rebase(shown, self.timeline.shown_duration(), now);
                self.dirty = true;
            }
        }
    }

    fn seek_recorded(&mut self, recorded: f64) {
        let result = self.playhead.seek(recorded + SEEK_SLACK);
        self.after_read(result);
        if !self.player.playing() {
            self.note_marker_under_cursor();
        }
    }

    /// When the last event applied is a marker, marker steps start from it.
    fn note_marker_under_cursor(&mut self) {
        let Some(last) = self.playhead.last_event() else {
            return;
        };
        let markers = self.timeline.markers();
        let i = markers.partition_point(|m| m.event < last.number);
        if markers.get(i).is_some_and(|m| m.event == last.number) {
            self.player.stand_on_marker(i, &self.marks);
        }
    }

    fn after_read(&mut self, result: std::io::Result<()>) {
        if let Err(error) = result {
            self.message = Some(format!("cannot read the recording: {error}"));
        }
        self.dirty = true;
    }

    /// Moves the screen along while playing; returns whether it needs drawing.
    pub fn tick(&mut self, now: Instant) -> bool {
        if self.player.playing() {
            if self.player.fastest() {
                let result = self.playhead.step(usize::MAX, FASTEST_BYTES_PER_FRAME);
                let more = *result.as_ref().unwrap_or(&false);
                self.after_read(result.map(|_| ()));
                let shown = self.timeline.to_shown(self.playhead.time());
                self.player.set_position(shown, now);
                if !more {
                    self.player.stop_at_end(now);
                    self.note_marker_under_cursor();
                }
            } else {
                let ended = self.player.tick(now);
                let before = self.playhead.applied();
                let target = self.timeline.to_recorded(self.player.position(now));
                let result = self.playhead.advance(target + SEEK_SLACK);
                if result.is_err() || ended || self.playhead.applied() != before {
                    self.after_read(result);
                }
                if ended {
                    self.note_marker_under_cursor();
                }
            }
        }
        self.dirty || self.tenths(now) != self.drawn_tenths
    }

    fn tenths(&self, now: Instant) -> i64 {
        (self.player.position(now) * 10.0).floor() as i64
    }

    /// When `tick` wants to run next (`None`: only on a key).
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        self.player.next_wakeup(now)
    }

    /// Notes that the view was drawn at `now` (see `draw`), so nothing redraws until it changes.
    pub fn mark_drawn(&mut self, now: Instant) {
        self.dirty = false;
        self.drawn_tenths = self.tenths(now);
    }
}

impl<R> ReplayView<R> {
    /// Shown time now.
    pub fn position(&self, now: Instant) -> f64 {
        self.player.position(now)
    }

    /// The window title the recorded program set, as it stands.
    pub fn window_title(&self) -> Option<&str> {
        self.playhead.term().title()
    }

    /// The screen as it stands.
    pub fn screen(&self) -> &vt100::Screen {
        self.playhead.term().screen()
    }

    pub fn marks(&self) -> &[f64] {
        &self.marks
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
