//! The player's controls as a pure state machine: play/pause, speed, seeking, marker steps, in
//! shown time (`timeline`). The clock is passed in.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The speeds `+` and `-` step through.
pub const SPEEDS: [f64; 7] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];
const NORMAL_SPEED: usize = 2;
/// How often the screen is redrawn while playing.
pub const FRAME: Duration = Duration::from_millis(33);

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlayerAction {
    TogglePlay,
    /// Seconds of shown time, forward or back.
    SeekBy(f64),
    SeekStart,
    SeekEnd,
    NextMarker,
    PrevMarker,
    /// One event forward (pauses).
    StepEvent,
    Faster,
    Slower,
    NormalSpeed,
    /// Toggles "as fast as possible".
    Fastest,
    ToggleIdleCap,
    Quit,
}

impl PlayerAction {
    pub fn from_key(key: KeyEvent) -> Option<PlayerAction> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        Some(match key.code {
            KeyCode::Char('c') if ctrl => PlayerAction::Quit,
            KeyCode::Char(' ') => PlayerAction::TogglePlay,
            KeyCode::Left if shift => PlayerAction::SeekBy(-60.0),
            KeyCode::Right if shift => PlayerAction::SeekBy(60.0),
            KeyCode::Left | KeyCode::Char('h') => PlayerAction::SeekBy(-5.0),
            KeyCode::Right | KeyCode::Char('l') => PlayerAction::SeekBy(5.0),
            KeyCode::Down | KeyCode::PageDown => PlayerAction::SeekBy(60.0),
            KeyCode::Up | KeyCode::PageUp => PlayerAction::SeekBy(-60.0),
            KeyCode::Home | KeyCode::Char('g') | KeyCode::Char('0') => PlayerAction::SeekStart,
            KeyCode::End | KeyCode::Char('G') | KeyCode::Char('$') => PlayerAction::SeekEnd,
            KeyCode::Char('n') | KeyCode::Char(']') | KeyCode::Tab => PlayerAction::NextMarker,
            KeyCode::Char('p') | KeyCode::Char('[') | KeyCode::BackTab => PlayerAction::PrevMarker,
            KeyCode::Char('.') => PlayerAction::StepEvent,
            KeyCode::Char('+') | KeyCode::Char('=') | KeyCode::Char('>') => PlayerAction::Faster,
            KeyCode::Char('-') | KeyCode::Char('_') | KeyCode::Char('<') => PlayerAction::Slower,
            KeyCode::Char('1') => PlayerAction::NormalSpeed,
            KeyCode::Char('f') => PlayerAction::Fastest,
            KeyCode::Char('i') => PlayerAction::ToggleIdleCap,
            KeyCode::Char('q') | KeyCode::Esc => PlayerAction::Quit,
            _ => return None,
        })
    }
}

/// What the caller must do after a command.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Nothing visible changed.
    Nothing,
    /// Only the readout changed (speed, play state).
    Redraw,
    /// Move the screen to this shown time.
    Seek(f64),
    /// Move the screen to just after marker `i` (markers can share a time).
    SeekMarker(usize),
    /// Apply one more event, then report its time with [`Player::set_position`].
    StepEvent,
    /// Switch idle capping, then rebase with [`Player::rebase`].
    ToggleIdleCap,
    Exit,
}

/// Play state and position.
#[derive(Debug, Clone)]
pub struct Player {
    /// Shown time at `since` (or now, when paused).
    pos: f64,
    since: Instant,
    playing: bool,
    speed: usize,
    fastest: bool,
    /// Shown length of the recording.
    duration: f64,
    /// The marker last jumped to, while the position is still there.
    at_marker: Option<usize>,
}

impl Player {
    pub fn new(duration: f64, now: Instant) -> Player {
        Player {
            pos: 0.0,
            since: now,
            playing: false,
            speed: NORMAL_SPEED,
            fastest: false,
            duration: duration.max(0.0),
            at_marker: None,
        }
    }

    /// Shown time now.
    pub fn position(&self, now: Instant) -> f64 {
        if !self.playing || self.fastest {
            return self.pos;
        }
        let elapsed = now.saturating_duration_since(self.since).as_secs_f64();
        (self.pos + elapsed * SPEEDS[self.speed]).min(self.duration)
    }

    pub fn playing(&self) -> bool {
        self.playing
    }

    pub fn fastest(&self) -> bool {
        self.fastest
    }

    pub fn speed(&self) -> f64 {
        SPEEDS[self.speed]
    }

    pub fn duration(&self) -> f64 {
        self.duration
    }

    pub fn at_end(&self, now: Instant) -> bool {
        self.position(now) >= self.duration
    }

    /// Starts playing (from the start when at the end).
    pub fn play(&mut self, now: Instant) -> Outcome {
        let restart = self.at_end(now);
        self.anchor(if restart { 0.0 } else { self.position(now) }, now);
        self.playing = true;
        if restart {
            Outcome::Seek(0.0)
        } else {
            Outcome::Redraw
        }
    }

    pub fn pause(&mut self, now: Instant) {
        self.anchor(self.position(now), now);
        self.playing = false;
    }

    fn anchor(&mut self, pos: f64, now: Instant) {
        self.pos = pos.clamp(0.0, self.duration);
        self.since = now;
        self.at_marker = None;
    }

    /// The screen stands just after marker `i`: marker steps go on from it, not from its time.
    pub fn stand_on_marker(&mut self, i: usize, markers: &[f64]) {
        if markers.get(i) == Some(&self.pos) {
            self.at_marker = Some(i);
        }
    }

    /// The marker jumped to last, if the position has not moved since.
    fn current_marker(&self, here: f64, markers: &[f64]) -> Option<usize> {
        self.at_marker.filter(|&i| markers.get(i) == Some(&here))
    }

    fn jump_to_marker(&mut self, i: usize, markers: &[f64], now: Instant) -> Outcome {
        self.anchor(markers[i], now);
        self.at_marker = Some(i);
        Outcome::SeekMarker(i)
    }

    /// `markers`: shown times of the markers, in order.
    pub fn handle(&mut self, command: PlayerAction, now: Instant, markers: &[f64]) -> Outcome {
        let here = self.position(now);
        let seek = |player: &mut Player, to: f64| {
            player.anchor(to, now);
            Outcome::Seek(player.pos)
        };
        match command {
            PlayerAction::TogglePlay if self.playing => {
                self.pause(now);
                Outcome::Redraw
            }
            PlayerAction::TogglePlay => self.play(now),
            PlayerAction::SeekBy(delta) => seek(self, here + delta),
            PlayerAction::SeekStart => seek(self, 0.0),
            PlayerAction::SeekEnd => seek(self, self.duration),
            PlayerAction::NextMarker => {
                let next = match self.current_marker(here, markers) {
                    Some(i) => Some(i + 1),
                    None => markers.iter().position(|&m| m > here + 1e-6),
                };
                match next.filter(|&i| i < markers.len()) {
                    Some(i) => self.jump_to_marker(i, markers, now),
                    None => Outcome::Nothing,
                }
            }
            PlayerAction::PrevMarker => {
                let prev = match self.current_marker(here, markers) {
                    Some(i) => i.checked_sub(1),
                    None => markers.iter().rposition(|&m| m < here - 1e-6),
                };
                match prev {
                    Some(i) => self.jump_to_marker(i, markers, now),
                    None => seek(self, 0.0),
                }
            }
            PlayerAction::StepEvent => {
                self.pause(now);
                Outcome::StepEvent
            }
            PlayerAction::Faster | PlayerAction::Slower | PlayerAction::NormalSpeed => {
                self.anchor(here, now);
                self.fastest = false;
                self.speed = match command {
                    PlayerAction::Faster => (self.speed + 1).min(SPEEDS.len() - 1),
                    PlayerAction::Slower => self.speed.saturating_sub(1),
                    _ => NORMAL_SPEED,
                };
                Outcome::Redraw
            }
            PlayerAction::Fastest => {
                self.anchor(here, now);
                self.fastest = !self.fastest;
                Outcome::Redraw
            }
            PlayerAction::ToggleIdleCap => Outcome::ToggleIdleCap,
            PlayerAction::Quit => Outcome::Exit,
        }
    }

    /// Sets the speed directly (the `--speed` option); the nearest step is taken.
    pub fn set_speed(&mut self, speed: f64, now: Instant) {
        let here = self.position(now);
        self.anchor(here, now);
        self.speed = SPEEDS
            .iter()
            .enumerate()
            .min_by(|a, b| (a.1 - speed).abs().total_cmp(&(b.1 - speed).abs()))
            .map_or(NORMAL_SPEED, |(i, _)| i);
    }

    /// Where the screen got to on its own (fastest play, a step).
    pub fn set_position(&mut self, pos: f64, now: Instant) {
        self.anchor(pos, now);
    }

    /// The shown timeline changed (idle capping switched): same moment, new numbers.
    pub fn rebase(&mut self, pos: f64, duration: f64, now: Instant) {
        self.duration = duration.max(0.0);
        self.anchor(pos, now);
    }

    /// Stops at the end; returns true when that happened now.
    pub fn tick(&mut self, now: Instant) -> bool {
        if self.playing && !self.fastest && self.at_end(now) {
            self.anchor(self.duration, now);
            self.playing = false;
            return true;
        }
        false
    }

    /// Marks the end reached in fastest play.
    pub fn stop_at_end(&mut self, now: Instant) {
        self.anchor(self.duration, now);
        self.playing = false;
    }

    /// When to wake up next: a frame from now while playing.
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        if !self.playing {
            return None;
        }
        if self.fastest {
            return Some(now);
        }
        let left = (self.duration - self.position(now)) / SPEEDS[self.speed];
        let left = Duration::try_from_secs_f64(left.max(0.0)).unwrap_or(FRAME);
        Some(now + FRAME.min(left))
    }
}

#[cfg(test)]
#[path = "player_tests.rs"]
mod tests;
