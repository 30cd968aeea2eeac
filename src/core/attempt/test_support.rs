//! Shared fixtures of the attempt's tests: a setup built from a profile's TOML (named `t`),
//! the guard's rules in a project, times, and what an attempt's effects wrote or sent.

use std::time::Duration;

use super::{AttemptSetup, Effect};
use crate::core::approval::GuardSetup;
use crate::core::classify::ExitStatus;
use crate::core::guard::{GuardContext, RuleSet};
use crate::core::profile::ProfileSet;
use crate::core::task::Completion;

pub(super) const MARKER: &str = "TASK_COMPLETE:t1";

/// An attempt of profile `t` in `profile` (TOML): a 24x80 screen, 100 s to run, 50 s idle,
/// headless (10 s for an answer), herd answering nothing by itself, the marker required, no
/// guard rules. Tests change what they are about with `AttemptSetup { field, ..setup(…) }`.
pub(super) fn setup(profile: &str) -> AttemptSetup {
    AttemptSetup {
        profile: ProfileSet::test_profile(profile),
        marker: MARKER.into(),
        prompt: "do it".into(),
        rows: 24,
        cols: 80,
        timeout: secs(100),
        idle: secs(50),
        permission_wait: Some(secs(10)),
        auto_rules: Vec::new(),
        answer_cap: 5,
        completion: Completion::Marker,
        marker_required: true,
        guard: GuardSetup::default(),
    }
}

/// The guard with these allow, ask and deny rules, in a task at `/home/dev/proj`.
pub(super) fn guard(allow: &[&str], ask: &[&str], deny: &[&str]) -> GuardSetup {
    let owned = |rules: &[&str]| rules.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    GuardSetup {
        rules: RuleSet::parse(&owned(allow), &owned(ask), &owned(deny)).expect("rules"),
        context: GuardContext {
            task_dir: "/home/dev/proj".into(),
            home: "/home/dev".into(),
            ..GuardContext::default()
        },
    }
}

pub(super) fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

pub(super) fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

pub(super) fn exit_code(code: i32) -> ExitStatus {
    ExitStatus {
        code: Some(code),
        signal: None,
    }
}

/// The keys herd wrote to the agent, in order.
pub(super) fn writes(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write { bytes, .. } => Some(String::from_utf8_lossy(bytes).into_owned()),
            _ => None,
        })
        .collect()
}
