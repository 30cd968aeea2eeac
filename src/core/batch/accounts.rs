//! Which account of a profile the next attempt uses: the least recently used one that is not
//! exhausted (quota hit or auth failed) until its reset. Pure: times are passed in.

use std::collections::HashMap;
use std::time::Instant;

use crate::core::profile::Profile;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    exhausted_until: Option<Instant>,
    last_used: Option<Instant>,
}

/// The outcome of asking for an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The profile has no accounts: the agent's own environment.
    NoAccounts,
    /// Use the profile's account at this index.
    Use(usize),
    /// Every account is exhausted; the first comes back at this time.
    AllExhausted { until: Instant },
}

/// Account states of every profile, for one run.
#[derive(Debug, Clone, Default)]
pub struct AccountBook {
    slots: HashMap<String, Vec<Slot>>,
}

impl AccountBook {
    fn slots(&mut self, profile: &Profile) -> &mut Vec<Slot> {
        let slots = self.slots.entry(profile.name.clone()).or_default();
        slots.resize(profile.accounts.len(), Slot::default());
        slots
    }

    /// Picks an account without taking it (to decide whether a task can start).
    pub fn peek(&mut self, profile: &Profile, now: Instant) -> Choice {
        if profile.accounts.is_empty() {
            return Choice::NoAccounts;
        }
        let slots = self.slots(profile);
        let free = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.exhausted_until.is_none_or(|until| until <= now))
            .min_by_key(|(i, s)| (s.last_used, *i));
        match free {
            Some((index, _)) => Choice::Use(index),
            None => Choice::AllExhausted {
                until: slots
                    .iter()
                    .filter_map(|s| s.exhausted_until)
                    .min()
                    .unwrap_or(now),
            },
        }
    }

    /// Picks an account and marks it used now.
    pub fn take(&mut self, profile: &Profile, now: Instant) -> Choice {
        let choice = self.peek(profile, now);
        if let Choice::Use(index) = choice {
            self.slots(profile)[index].last_used = Some(now);
        }
        choice
    }

    pub fn mark_exhausted(&mut self, profile: &Profile, index: usize, until: Instant) {
        if let Some(slot) = self.slots(profile).get_mut(index) {
            slot.exhausted_until = Some(until);
        }
    }

    /// When the next exhausted account comes back, if any is exhausted after `now`.
    pub fn next_release(&self, now: Instant) -> Option<Instant> {
        self.slots
            .values()
            .flatten()
            .filter_map(|s| s.exhausted_until)
            .filter(|until| *until > now)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::batch::queue_tests::profile;
    use std::time::Duration;

    #[test]
    fn least_recently_used_first_and_exhausted_ones_skipped() {
        let p = profile(3);
        let mut book = AccountBook::default();
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        assert_eq!(book.take(&p, s(0)), Choice::Use(0));
        assert_eq!(book.take(&p, s(1)), Choice::Use(1));
        assert_eq!(book.take(&p, s(2)), Choice::Use(2));
        assert_eq!(book.take(&p, s(3)), Choice::Use(0));
        book.mark_exhausted(&p, 1, s(100));
        assert_eq!(book.take(&p, s(4)), Choice::Use(2));
        assert_eq!(book.take(&p, s(5)), Choice::Use(0));
        book.mark_exhausted(&p, 0, s(50));
        book.mark_exhausted(&p, 2, s(70));
        assert_eq!(book.take(&p, s(6)), Choice::AllExhausted { until: s(50) });
        assert_eq!(book.next_release(s(6)), Some(s(50)));
        assert_eq!(book.take(&p, s(50)), Choice::Use(0), "back after its reset");
    }

    #[test]
    fn profiles_without_accounts_use_their_own_environment() {
        let mut book = AccountBook::default();
        assert_eq!(book.take(&profile(0), Instant::now()), Choice::NoAccounts);
        assert_eq!(book.next_release(Instant::now()), None);
    }
}
