//! The PTY size each next agent starts at, as the frontend gives it, and how long each task's
//! last attempt of this run took. The dashboard lays out its panes, then hands the engine one
//! size per next slot (entry `k`: the size of an agent that starts while `k` others run or
//! start), so an agent draws its first screen at the width of the pane it will be drawn in.
//! Headless gives none: every agent starts at `--pty-size`. Nothing here resizes a running
//! agent: that is an `Event::Resize` the frontend sends.

use std::time::Duration;

impl super::Engine {
    /// The most agents that run at once (`set_concurrency` keeps to it).
    pub const MAX_CONCURRENCY: usize = 256;

    /// The sizes (rows, cols) the next agents start at, by how many run when each starts.
    /// Running agents are not touched.
    pub fn set_launch_sizes(&mut self, sizes: Vec<(u16, u16)>) {
        let sizes: Vec<(u16, u16)> = sizes
            .into_iter()
            .map(|(rows, cols)| (rows.max(1), cols.max(1)))
            .collect();
        if sizes != self.launch_sizes {
            tracing::debug!(first = ?sizes.first(), slots = sizes.len(), "launch sizes");
            self.launch_sizes = sizes;
        }
    }

    /// The size (rows, cols) an agent starts at while `running` others run or start: its
    /// slot's size, the last slot's beyond those given, `--pty-size` when none was given.
    pub(super) fn launch_size_at(&self, running: usize) -> (u16, u16) {
        self.launch_sizes
            .get(running)
            .or(self.launch_sizes.last())
            .copied()
            .unwrap_or((self.opts.rows, self.opts.cols))
    }

    /// How long task `index`'s last attempt of this run took, once it ended.
    pub(super) fn last_attempt_duration(&self, index: usize) -> Option<Duration> {
        self.last_durations.get(&index).copied()
    }
}
