//! Which queued tasks start in this turn, on which host and with which account: the batch's
//! answer to `Effect::FillSlots`. The queue says whether each runnable task is due (`consider`),
//! its host is chosen beside the starts before it, its retry time is dropped and its profile's
//! account taken; the shell only plans, prepares and launches the starts.
//!
//! Pure: the shell hands the runnable tasks in lazily, in the file's order (most of a large file
//! is done, and this runs every turn), with the slots held and each host's load.

use std::collections::BTreeMap;
use std::time::Instant;

use super::queue::{Candidate, Consider, Queue, Slots};
use crate::core::remote::host_choice::HostChoice;
use crate::core::remote::hosts::HostSet;

/// The room this turn's starts share.
#[derive(Debug, Clone)]
pub struct Room<'a> {
    pub slots: Slots,
    /// The hosts a task's `host` may name.
    pub hosts: &'a HostSet,
    /// The attempts on each host: running, being prepared or awaiting their write.
    pub load: BTreeMap<String, usize>,
}

/// A task that starts now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub task: usize,
    /// The host its attempt runs on, when not here.
    pub host: Option<String>,
    /// Its profile's account, by index (`None`: the agent's own environment).
    pub account: Option<usize>,
}

/// What the batch decided for this turn.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fill {
    /// In the file's order; each holds a slot.
    pub starts: Vec<Start>,
    /// Tasks whose `host` names neither a host nor a group: their configuration fails.
    pub unknown_host: Vec<usize>,
}

/// The starts of this turn among `runnable`, each taking a slot of `room` (and a place on its
/// host), its retry time dropped and its account marked used at `now`.
pub(super) fn plan<'a>(
    queue: &mut Queue,
    runnable: impl IntoIterator<Item = Candidate<'a>>,
    mut room: Room<'_>,
    now: Instant,
) -> Fill {
    let mut fill = Fill::default();
    for candidate in runnable {
        match queue.consider(&candidate, room.slots, now) {
            Consider::Full => break,
            Consider::Skip => continue,
            Consider::Due => {}
        }
        let host = match candidate.host {
            None => None,
            Some(name) => match queue.choose_host(room.hosts, name, &room.load, now) {
                HostChoice::Use(chosen) => Some(chosen),
                // Full or out of rotation: the task waits, it has not failed.
                HostChoice::Wait { .. } => continue,
                HostChoice::Unknown => {
                    fill.unknown_host.push(candidate.index);
                    continue;
                }
            },
        };
        queue.clear_retry(candidate.index);
        let account = candidate.profile.and_then(|p| queue.take_account(p, now));
        if let Some(host) = &host {
            *room.load.entry(host.clone()).or_default() += 1;
        }
        room.slots.held += 1;
        fill.starts.push(Start {
            task: candidate.index,
            host,
            account,
        });
    }
    fill
}
