//! The tasks file's write generations: the one answer to which change is on disk. The engine
//! hands the writer snapshots numbered 1, 2, ...; each reaches the disk (durable) or is held
//! (someone else wrote the file under it). Generations reach the disk in order, so "G durable"
//! means every earlier change is durable too.
//!
//! A start marks its task `running` in the document, in generation G, and its agent launches
//! only once G is durable: the starts waiting for theirs are kept here, beside the count.

/// What was handed to the writer, what is on disk, what was held; the starts waiting.
#[derive(Debug, Default, Clone)]
pub struct Generations {
    /// The newest generation handed to the writer (0: none).
    handed: u64,
    /// The newest generation known to be on disk.
    durable: u64,
    /// The newest generation the writer held (not written: the file was not herd's version).
    held: u64,
    /// (attempt key, generation that records its start), in the order they were made.
    waiting: Vec<(u64, u64)>,
}

impl Generations {
    /// The generation that carries a change made now: the next one handed to the writer.
    pub fn next(&self) -> u64 {
        self.handed + 1
    }

    /// The newest generation handed to the writer.
    pub fn handed(&self) -> u64 {
        self.handed
    }

    /// The newest generation on disk.
    pub fn durable(&self) -> u64 {
        self.durable
    }

    /// The newest generation the writer held.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Whether a write is handed and neither on disk nor held yet.
    pub fn in_flight(&self) -> bool {
        self.handed > self.durable.max(self.held)
    }

    /// Whether a start waits for a generation newer than `durable`.
    pub fn waits_beyond(&self, durable: u64) -> bool {
        self.waiting.iter().any(|(_, g)| *g > durable)
    }

    /// The next generation is handed to the writer.
    pub(super) fn hand(&mut self) {
        self.handed += 1;
    }

    /// The writer held `generation`: its text is not on disk.
    pub(super) fn hold(&mut self, generation: u64) {
        self.held = self.held.max(generation);
    }

    /// Start `key` was recorded in generation `generation`; it launches once that is durable
    /// (at once when it is already).
    pub(super) fn recorded(&mut self, key: u64, generation: u64) -> Vec<u64> {
        self.waiting.push((key, generation));
        self.ready()
    }

    /// Generation `generation` is on disk: the starts it carries launch, oldest first.
    pub(super) fn made_durable(&mut self, generation: u64) -> Vec<u64> {
        self.durable = self.durable.max(generation);
        self.handed = self.handed.max(self.durable);
        self.ready()
    }

    /// Start `key` is withdrawn (herd stops before its agent launched).
    pub(super) fn withdraw(&mut self, key: u64) {
        self.waiting.retain(|(k, _)| *k != key);
    }

    fn ready(&mut self) -> Vec<u64> {
        let durable = self.durable;
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(_, g)| *g <= durable);
        self.waiting = waiting;
        ready.into_iter().map(|(key, _)| key).collect()
    }
}
