//! Which task starts next: the queue's state and its decisions. A task in scope and without an
//! attempt starts when a slot is free (`concurrency`), its retry time has come, its profile is
//! not held for a quota reset, one of its profile's accounts is rested (account rotation) and
//! its host, if it names one, has room and is in rotation; nothing new starts while the queue is
//! paused or herd is stopping.
//!
//! Pure: `fill` asks `consider` about each runnable task in the file's order, then
//! `choose_host` for the ones that name a host; times are passed in.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::core::batch::accounts::{AccountBook, Choice};
use crate::core::batch::outcome::Decision;
use crate::core::profile::Profile;
use crate::core::remote::host_choice::{self, HostChoice, OutOfRotation, Rotation};
use crate::core::remote::hosts::HostSet;

/// A runnable task, as the queue needs to see it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub index: usize,
    /// Its profile's name (`agent`), which quota holds are kept by.
    pub agent: &'a str,
    /// Its profile, when it is a known one (its accounts rotate).
    pub profile: Option<&'a Profile>,
    /// Enabled, not removed, and named by `--only` when that is given.
    pub in_scope: bool,
    /// It is being prepared, waits for its write, runs or ends already.
    pub has_attempt: bool,
    /// The host or group its `host` names, if it names one.
    pub host: Option<&'a str>,
}

/// The slots of this turn: how many attempts hold one now, of how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    pub held: usize,
    pub concurrency: usize,
}

/// What the queue says about one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consider {
    /// Every slot is held: no later task starts in this turn either.
    Full,
    /// This task does not start now (out of scope, has an attempt, waits for its retry time,
    /// its quota reset or a rested account); later ones may.
    Skip,
    /// It starts, on its host if it names one (`choose_host`).
    Due,
}

/// The queue's state for one run.
#[derive(Debug, Default)]
pub struct Queue {
    /// Per task: the earliest time its next attempt may start.
    retry_at: HashMap<usize, Instant>,
    /// Profiles that hit their quota: their tasks wait until the reset.
    quota_holds: HashMap<String, Instant>,
    /// Which account of each profile is exhausted and which was used last.
    accounts: AccountBook,
    /// Hosts out of rotation after they could not be reached.
    rotation: Rotation,
    paused: bool,
    stopping: bool,
}

impl Queue {
    /// Whether anything new may start: not paused, not stopping.
    pub fn accepts_starts(&self) -> bool {
        !self.paused && !self.stopping
    }

    /// Whether `candidate` starts now, with `slots` held of the turn's concurrency.
    pub fn consider(&mut self, candidate: &Candidate<'_>, slots: Slots, now: Instant) -> Consider {
        if !self.accepts_starts() || slots.held >= slots.concurrency {
            return Consider::Full;
        }
        if !candidate.in_scope || candidate.has_attempt {
            return Consider::Skip;
        }
        let retry_due = self
            .retry_at
            .get(&candidate.index)
            .is_none_or(|at| *at <= now);
        let not_held = self
            .quota_holds
            .get(candidate.agent)
            .is_none_or(|at| *at <= now);
        let rested = candidate.profile.is_none_or(|profile| {
            !matches!(
                self.accounts.peek(profile, now),
                Choice::AllExhausted { .. }
            )
        });
        if retry_due && not_held && rested {
            Consider::Due
        } else {
            Consider::Skip
        }
    }

    /// The host for a due task whose `host` is `name`; `load` counts the attempts on each host,
    /// those about to start included.
    pub fn choose_host(
        &self,
        hosts: &HostSet,
        name: &str,
        load: &BTreeMap<String, usize>,
        now: Instant,
    ) -> HostChoice {
        host_choice::choose(hosts, name, load, &self.rotation, now)
    }

    /// The account a starting attempt of `profile` uses (least recently used of the rested
    /// ones), marked used now; `None` for a profile without accounts.
    pub fn take_account(&mut self, profile: &Profile, now: Instant) -> Option<usize> {
        match self.accounts.take(profile, now) {
            Choice::Use(index) => Some(index),
            Choice::NoAccounts | Choice::AllExhausted { .. } => None,
        }
    }

    /// The account book, for the end of an attempt's decision (`core::outcome::decide`).
    pub fn accounts(&self) -> &AccountBook {
        &self.accounts
    }

    /// Account `index` of `profile` rests until `until` (its quota is spent).
    pub fn rest_account(&mut self, profile: &Profile, index: usize, until: Instant) {
        self.accounts.mark_exhausted(profile, index, until);
    }

    /// Every task of profile `agent` waits until `until` (its quota reset).
    pub fn hold_profile(&mut self, agent: &str, until: Instant) {
        self.quota_holds.insert(agent.to_string(), until);
    }

    /// What an attempt's end (`core::outcome::decide`) means for the queue: its account rests,
    /// its profile is held until its quota reset, its task waits for its retry time.
    pub fn follow(
        &mut self,
        index: usize,
        agent: &str,
        profile: Option<&Profile>,
        decision: &Decision,
        now: Instant,
    ) {
        if let (Some(rest), Some(profile)) = (decision.rest, profile) {
            self.rest_account(profile, rest.account, now + rest.wait);
        }
        if let Some(wait) = decision.hold_profile {
            self.hold_profile(agent, now + wait);
        }
        if let Some(after) = decision.retry_after {
            self.set_retry_at(index, now + after);
        }
    }

    /// Task `index`'s next attempt starts at `at` at the earliest.
    pub fn set_retry_at(&mut self, index: usize, at: Instant) {
        self.retry_at.insert(index, at);
    }

    /// Task `index` may start as soon as there is room.
    pub fn clear_retry(&mut self, index: usize) {
        self.retry_at.remove(&index);
    }

    pub fn retry_at(&self, index: usize) -> Option<Instant> {
        self.retry_at.get(&index).copied()
    }

    /// Takes `host` out of rotation for `for_how_long`.
    pub fn take_host_out(
        &mut self,
        host: &str,
        reason: String,
        now: Instant,
        for_how_long: Duration,
    ) {
        self.rotation.take_out(host, reason, now, for_how_long);
    }

    pub fn host_in_rotation(&self, host: &str, now: Instant) -> bool {
        self.rotation.is_in(host, now)
    }

    /// The hosts out of rotation at `now`, for the status bar.
    pub fn hosts_out(&self, now: Instant) -> Vec<(&str, &OutOfRotation)> {
        self.rotation.out_at(now)
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// herd stops: nothing new starts from now on.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping
    }

    /// When a waiting task may become due: a retry time, a quota reset, an account's rest or a
    /// host's return; never while nothing may start.
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        if !self.accepts_starts() {
            return None;
        }
        let holds = self.quota_holds.values().filter(|at| **at > now);
        self.retry_at
            .values()
            .chain(holds)
            .copied()
            .chain(self.accounts.next_release(now))
            .chain(self.rotation.next_return(now))
            .min()
    }
}
