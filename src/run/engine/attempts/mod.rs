//! The attempt table: every attempt of this run that holds a slot, by key, each at its stage
//! (mirroring `core::batch`'s: being prepared, awaiting the write that records its start,
//! live, ending) with its plan and handles. The one place an attempt's shell side lives; the
//! engine moves an attempt from stage to stage here and decides nothing else through it.

mod live;
mod planned;
mod reports;
mod starting;

use std::collections::BTreeMap;

pub use live::LiveAttempt;
pub(super) use planned::Planned;
pub(super) use reports::Effects;
pub(super) use starting::{RemoteGitBefore, Starting};

/// An attempt's stage, with what it holds at that stage.
enum Stage {
    /// Its worktree, signal file or host folder is being made (`prepare`).
    Preparing(Planned),
    /// Its task is `running` in the document; its agent launches once that is on disk.
    Awaiting(Starting),
    /// Its agent runs.
    Live(Box<LiveAttempt>),
    /// Its agent ended; its end is gathered off the loop (`gather`) until it is concluded.
    Ending(Box<LiveAttempt>),
}

impl Stage {
    /// The task the attempt is of.
    fn task(&self) -> usize {
        match self {
            Stage::Preparing(planned) => planned.index,
            Stage::Awaiting(starting) => starting.index,
            Stage::Live(live) | Stage::Ending(live) => live.task,
        }
    }
}

/// The attempts holding a slot, by key (keys rise from 1 in the order attempts are planned).
#[derive(Default)]
pub(super) struct Attempts {
    table: BTreeMap<u64, Stage>,
    /// The key given last.
    last_key: u64,
}

impl Attempts {
    /// The key of the next attempt planned.
    pub(super) fn new_key(&mut self) -> u64 {
        self.last_key += 1;
        self.last_key
    }

    /// How many attempts hold a slot: preparing, awaiting their write, live or ending.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
    /// How many have an agent: live or ending.
    pub(super) fn with_agent(&self) -> usize {
        self.live().count() + self.ending().count()
    }

    /// How many are past their preparation: awaiting their write, live or ending.
    pub(super) fn past_preparation(&self) -> usize {
        self.awaiting().count() + self.with_agent()
    }

    /// Whether task `index` has an attempt at any stage.
    pub(super) fn has_task(&self, index: usize) -> bool {
        self.table.values().any(|stage| stage.task() == index)
    }

    /// The attempts on each host: running, being prepared, awaiting their write, and those
    /// about to start (`starting`).
    pub(super) fn host_load(&self, starting: &[Starting]) -> BTreeMap<String, usize> {
        let live = self.live().filter_map(|(_, live)| live.host());
        let preparing = self.preparing().filter_map(|(_, p)| p.host.as_ref());
        let awaiting = starting.iter().chain(self.awaiting());
        let planned = preparing.chain(awaiting.filter_map(|s| s.host.as_ref()));
        let mut load: BTreeMap<String, usize> = BTreeMap::new();
        for name in live.chain(planned.map(|host| host.name.as_str())) {
            *load.entry(name.to_string()).or_default() += 1;
        }
        load
    }

    pub(super) fn prepare(&mut self, key: u64, planned: Planned) {
        self.table.insert(key, Stage::Preparing(planned));
    }

    pub(super) fn take_preparing(&mut self, key: u64) -> Option<Planned> {
        match self.table.remove(&key)? {
            Stage::Preparing(planned) => Some(planned),
            other => self.put_back(key, other),
        }
    }

    /// Every attempt being prepared leaves the table.
    pub(super) fn drop_preparing(&mut self) {
        self.table
            .retain(|_, stage| !matches!(stage, Stage::Preparing(_)));
    }

    pub(super) fn preparing(&self) -> impl Iterator<Item = (u64, &Planned)> {
        self.table.iter().filter_map(|(&key, stage)| match stage {
            Stage::Preparing(planned) => Some((key, planned)),
            _ => None,
        })
    }

    pub(super) fn preparing_mut(&mut self) -> impl Iterator<Item = &mut Planned> {
        self.table.values_mut().filter_map(|stage| match stage {
            Stage::Preparing(planned) => Some(planned),
            _ => None,
        })
    }

    pub(super) fn await_write(&mut self, starting: Starting) {
        self.table.insert(starting.key, Stage::Awaiting(starting));
    }

    pub(super) fn take_awaiting(&mut self, key: u64) -> Option<Starting> {
        match self.table.remove(&key)? {
            Stage::Awaiting(starting) => Some(starting),
            other => self.put_back(key, other),
        }
    }

    /// The starts awaiting their write that `which` picks leave the table, in key order.
    pub(super) fn take_awaiting_if(&mut self, which: impl Fn(&Starting) -> bool) -> Vec<Starting> {
        let keys: Vec<u64> = (self.awaiting())
            .filter(|starting| which(starting))
            .map(|starting| starting.key)
            .collect();
        keys.into_iter()
            .filter_map(|key| self.take_awaiting(key))
            .collect()
    }

    pub(super) fn awaiting(&self) -> impl Iterator<Item = &Starting> {
        self.table.values().filter_map(|stage| match stage {
            Stage::Awaiting(starting) => Some(starting),
            _ => None,
        })
    }

    pub(super) fn go_live(&mut self, key: u64, live: LiveAttempt) {
        self.table.insert(key, Stage::Live(Box::new(live)));
    }

    pub(super) fn live(&self) -> impl Iterator<Item = (u64, &LiveAttempt)> {
        self.table.iter().filter_map(|(&key, stage)| match stage {
            Stage::Live(live) => Some((key, &**live)),
            _ => None,
        })
    }

    pub(super) fn live_mut(&mut self) -> impl Iterator<Item = (u64, &mut LiveAttempt)> {
        self.table
            .iter_mut()
            .filter_map(|(&key, stage)| match stage {
                Stage::Live(live) => Some((key, &mut **live)),
                _ => None,
            })
    }

    pub(super) fn get_live(&self, key: u64) -> Option<&LiveAttempt> {
        match self.table.get(&key)? {
            Stage::Live(live) => Some(live),
            _ => None,
        }
    }

    pub(super) fn get_live_mut(&mut self, key: u64) -> Option<&mut LiveAttempt> {
        match self.table.get_mut(&key)? {
            Stage::Live(live) => Some(live),
            _ => None,
        }
    }

    /// The live attempt of task `index`, with its key.
    pub(super) fn live_of_task_mut(&mut self, index: usize) -> Option<(u64, &mut LiveAttempt)> {
        self.live_mut().find(|(_, live)| live.task == index)
    }

    /// The live or ending attempt of task `index`.
    pub(super) fn with_agent_of_task(&self, index: usize) -> Option<&LiveAttempt> {
        self.live_then_ending().find(|live| live.task == index)
    }

    pub(super) fn take_live(&mut self, key: u64) -> Option<LiveAttempt> {
        match self.table.remove(&key)? {
            Stage::Live(live) => Some(*live),
            other => self.put_back(key, other),
        }
    }

    /// A live attempt's agent ended: it waits for its end to be gathered.
    pub(super) fn end(&mut self, key: u64, live: LiveAttempt) {
        self.table.insert(key, Stage::Ending(Box::new(live)));
    }

    pub(super) fn ending(&self) -> impl Iterator<Item = &LiveAttempt> {
        self.table.values().filter_map(|stage| match stage {
            Stage::Ending(live) => Some(&**live),
            _ => None,
        })
    }

    pub(super) fn get_ending_mut(&mut self, key: u64) -> Option<&mut LiveAttempt> {
        match self.table.get_mut(&key)? {
            Stage::Ending(live) => Some(live),
            _ => None,
        }
    }

    pub(super) fn take_ending(&mut self, key: u64) -> Option<LiveAttempt> {
        match self.table.remove(&key)? {
            Stage::Ending(live) => Some(*live),
            other => self.put_back(key, other),
        }
    }

    /// The attempts with an agent: the live ones, then the ending ones.
    pub(super) fn live_then_ending(&self) -> impl Iterator<Item = &LiveAttempt> {
        self.live().map(|(_, live)| live).chain(self.ending())
    }

    /// An entry taken at the wrong stage goes back where it was.
    fn put_back<T>(&mut self, key: u64, stage: Stage) -> Option<T> {
        self.table.insert(key, stage);
        None
    }
}
