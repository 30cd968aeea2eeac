//! The time a turn of the event loop runs at: the frontends (headless loop, dashboard) read it
//! once per turn with `Now::read` and hand it to the engine, which never reads a clock itself.
//! One value carries both clocks: the monotonic instant for deadlines and the wall-clock time for
//! what is written (tasks file, recordings), so both describe the same moment.

use std::time::Instant;

use jiff::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// For deadlines and durations.
    pub at: Instant,
    /// For timestamps written down.
    pub wall: Timestamp,
}

impl Now {
    /// Reads both clocks. Only frontends and tests call this.
    pub fn read() -> Now {
        Now {
            at: Instant::now(),
            wall: Timestamp::now(),
        }
    }
}

/// The wall clock and the system's zone, for views that say times as clock times
/// (`core::clock_words`). Only frontends call this.
pub fn local_now() -> crate::core::operator::clock_words::LocalNow {
    crate::core::operator::clock_words::LocalNow {
        now: Timestamp::now(),
        zone: jiff::tz::TimeZone::system(),
    }
}
