//! The starts that wait for their write: a start marks its task `running` in the document, in
//! write generation G, and its agent launches only once G is on disk. Generations reach the
//! disk in order, so "G durable" means every earlier change is durable too.

/// Starts waiting for their generation, in the order they were made.
#[derive(Debug, Default, Clone)]
pub struct LaunchGate {
    /// (attempt key, generation that records its start).
    waiting: Vec<(u64, u64)>,
    /// The newest generation known to be on disk.
    durable: u64,
}

impl LaunchGate {
    /// Start `key` was recorded in generation `generation`; it launches once that is durable
    /// (at once when it is already).
    pub fn recorded(&mut self, key: u64, generation: u64) -> Vec<u64> {
        self.waiting.push((key, generation));
        self.ready()
    }

    /// Generation `generation` is on disk: the starts it carries launch, oldest first.
    pub fn durable(&mut self, generation: u64) -> Vec<u64> {
        self.durable = self.durable.max(generation);
        self.ready()
    }

    /// Start `key` is withdrawn (herd stops before its agent launched).
    pub fn withdraw(&mut self, key: u64) {
        self.waiting.retain(|(k, _)| *k != key);
    }

    /// Whether a start waits for a generation newer than `durable`.
    pub fn waits_beyond(&self, durable: u64) -> bool {
        self.waiting.iter().any(|(_, g)| *g > durable)
    }

    /// Whether start `key` waits for its write.
    pub fn is_waiting(&self, key: u64) -> bool {
        self.waiting.iter().any(|(k, _)| *k == key)
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
