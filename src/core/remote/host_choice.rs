//! Which host a task's next attempt runs on: the least loaded in rotation and under its
//! `max_agents`. An unreachable host is out of rotation until a time. Pure.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::hosts::{HostSet, Target};

/// A host taken out of rotation, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfRotation {
    pub until: Instant,
    pub reason: String,
}

/// The rotation state of every host, for one run.
#[derive(Debug, Clone, Default)]
pub struct Rotation {
    out: BTreeMap<String, OutOfRotation>,
}

impl Rotation {
    /// Takes `host` out until `now + for_how_long`.
    pub fn take_out(&mut self, host: &str, reason: String, now: Instant, for_how_long: Duration) {
        self.out.insert(
            host.to_string(),
            OutOfRotation {
                until: now + for_how_long,
                reason,
            },
        );
    }

    /// Whether `host` may take attempts at `now`.
    pub fn is_in(&self, host: &str, now: Instant) -> bool {
        self.out.get(host).is_none_or(|o| o.until <= now)
    }

    /// The hosts out of rotation at `now`, by name, for the status bar.
    pub fn out_at(&self, now: Instant) -> Vec<(&str, &OutOfRotation)> {
        self.out
            .iter()
            .filter(|(_, o)| o.until > now)
            .map(|(name, o)| (name.as_str(), o))
            .collect()
    }

    /// When the first host out of rotation comes back (a wake-up for the scheduler).
    pub fn next_return(&self, now: Instant) -> Option<Instant> {
        self.out
            .values()
            .map(|o| o.until)
            .filter(|u| *u > now)
            .min()
    }
}

/// The outcome of asking for a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostChoice {
    Use(String),
    /// Every candidate is full or out of rotation: the task waits (no failure).
    Wait {
        why: String,
    },
    /// The name is neither a host nor a group (validate reports it first).
    Unknown,
}

/// Picks the host for a task whose `host` is `name`; `load` counts each host's agents.
pub fn choose(
    hosts: &HostSet,
    name: &str,
    load: &BTreeMap<String, usize>,
    rotation: &Rotation,
    now: Instant,
) -> HostChoice {
    let members = match hosts.target(name) {
        None => return HostChoice::Unknown,
        Some(Target::Host(host)) => vec![host],
        Some(Target::Group(members)) => members,
    };
    let running = |host: &str| load.get(host).copied().unwrap_or(0);
    let mut out = Vec::new();
    let mut full = Vec::new();
    let mut best: Option<(usize, &str)> = None;
    for host in members {
        let n = running(&host.name);
        if !rotation.is_in(&host.name, now) {
            out.push(host.name.as_str());
        } else if host.max_agents.is_some_and(|max| n >= max) {
            full.push(host.name.as_str());
        } else if best.is_none_or(|(least, _)| n < least) {
            best = Some((n, host.name.as_str()));
        }
    }
    if let Some((_, host)) = best {
        return HostChoice::Use(host.to_string());
    }
    let mut why = Vec::new();
    if !full.is_empty() {
        why.push(format!("{} at max_agents", full.join(", ")));
    }
    if !out.is_empty() {
        why.push(format!("{} out of rotation", out.join(", ")));
    }
    HostChoice::Wait {
        why: why.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> HostSet {
        HostSet::parse(
            r#"
[hosts.a]
ssh = "u@a"
groups = ["fleet"]
max_agents = 2
[hosts.b]
ssh = "u@b"
groups = ["fleet"]
[hosts.c]
exec = ["docker", "exec", "-i", "{tty}", "c"]
"#,
        )
        .unwrap()
    }

    fn load(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(h, n)| (h.to_string(), *n)).collect()
    }

    #[test]
    fn picks_the_least_loaded_member_in_rotation_and_under_its_cap() {
        let h = hosts();
        let now = Instant::now();
        let mut rotation = Rotation::default();
        let use_ = |s: &str| HostChoice::Use(s.into());
        type Case<'a> = (&'a [(&'a str, usize)], &'a str, HostChoice);
        let cases: &[Case<'_>] = &[
            (&[], "fleet", use_("a")),
            (&[("a", 1)], "fleet", use_("b")),
            (&[("a", 1), ("b", 1)], "fleet", use_("a")),
            (&[("a", 2), ("b", 5)], "fleet", use_("b")),
            (&[("c", 9)], "c", use_("c")),
            (
                &[("a", 2)],
                "a",
                HostChoice::Wait {
                    why: "a at max_agents".into(),
                },
            ),
            (&[], "nowhere", HostChoice::Unknown),
        ];
        for (loads, name, want) in cases {
            assert_eq!(
                &choose(&h, name, &load(loads), &rotation, now),
                want,
                "{name} {loads:?}"
            );
        }
        rotation.take_out("b", "refused".into(), now, Duration::from_secs(30));
        assert_eq!(
            choose(&h, "fleet", &load(&[("a", 1)]), &rotation, now),
            use_("a")
        );
        assert_eq!(
            choose(&h, "fleet", &load(&[("a", 2)]), &rotation, now),
            HostChoice::Wait {
                why: "a at max_agents; b out of rotation".into()
            }
        );
        let later = now + Duration::from_secs(31);
        assert_eq!(
            choose(&h, "fleet", &load(&[("a", 2)]), &rotation, later),
            use_("b")
        );
        assert_eq!(rotation.out_at(now).len(), 1);
        assert!(rotation.out_at(later).is_empty());
        assert_eq!(
            rotation.next_return(now),
            Some(now + Duration::from_secs(30))
        );
    }
}
