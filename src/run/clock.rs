//! The time a turn of the event loop runs at, read once per turn by the frontends: the monotonic
//! instant for deadlines and the wall-clock time for what is written, the same moment.

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

/// The wall clock and the system's zone, for clock times in views. Only frontends call this.
pub fn local_now() -> crate::core::operator::clock_words::LocalNow {
    crate::core::operator::clock_words::LocalNow {
        now: Timestamp::now(),
        zone: jiff::tz::TimeZone::system(),
    }
}
