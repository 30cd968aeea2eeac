//! The PTY size each next agent starts at, as the frontend gives it. The dashboard lays out its
//! panes, then hands the engine one size per next slot (entry `k`: the size of an agent that
//! starts while `k` others run or start), so an agent draws its first screen at the width of
//! the pane it will be drawn in. Headless gives none: every agent starts at `--pty-size`.
//! Nothing here resizes a running agent: that is an `Event::Resize` the frontend sends.

/// The sizes (rows, cols) the next agents start at.
pub(super) struct Sizes {
    /// By how many run when each starts; empty: `default`.
    launch: Vec<(u16, u16)>,
    /// `--pty-size`.
    default: (u16, u16),
}

impl Sizes {
    /// Every agent at `(rows, cols)` until the frontend says otherwise.
    pub(super) fn new(rows: u16, cols: u16) -> Sizes {
        Sizes {
            launch: Vec::new(),
            default: (rows, cols),
        }
    }

    /// The sizes (rows, cols) the next agents start at, by how many run when each starts.
    /// Running agents are not touched.
    pub(super) fn set(&mut self, sizes: Vec<(u16, u16)>) {
        let sizes: Vec<(u16, u16)> = sizes
            .into_iter()
            .map(|(rows, cols)| (rows.max(1), cols.max(1)))
            .collect();
        if sizes != self.launch {
            tracing::debug!(first = ?sizes.first(), slots = sizes.len(), "launch sizes");
            self.launch = sizes;
        }
    }

    /// The size (rows, cols) an agent starts at while `running` others run or start: its
    /// slot's size, the last slot's beyond those given, `--pty-size` when none was given.
    pub(super) fn at(&self, running: usize) -> (u16, u16) {
        self.launch
            .get(running)
            .or(self.launch.last())
            .copied()
            .unwrap_or(self.default)
    }
}
