//! Know what you approve: permission requests as data, rules (deny > ask > allow) and the safety
//! floor that no policy passes automatically.
//!
//! `decide` is pure and deterministic: the same request, rules and context always give the same
//! decision. It never reads files; what it needs to know about the disk (symlink targets) comes
//! in through `GuardContext`. It decides whether herd may answer by itself, never what keys to
//! send: that is `attempt`'s.

pub mod capture;
pub mod credentials;
mod destructive;
mod finding;
pub mod floor;
mod glob;
mod interpreters;
pub mod paths;
mod programs;
pub mod request;
pub mod rules;
pub mod shell;

pub use finding::Finding;
pub use paths::GuardContext;
pub use request::{Request, RequestKind};
pub use rules::{Rule, RuleError, RuleSet};

use std::fmt;

/// What herd may do with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Answer it by itself; `rule` names what allowed it (an allow rule or a policy switch).
    Allow { rule: String },
    /// Leave it to the operator; `reason` says why.
    Ask { reason: String },
    /// Dangerous or denied: never answered automatically; the operator may still approve it.
    Refuse { reason: String },
}

impl Decision {
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow { .. })
    }

    /// `allow`, `ask` or `refuse`, for records.
    pub fn name(&self) -> &'static str {
        match self {
            Decision::Allow { .. } => "allow",
            Decision::Ask { .. } => "ask",
            Decision::Refuse { .. } => "refuse",
        }
    }

    /// The rule or the reason.
    pub fn why(&self) -> &str {
        match self {
            Decision::Allow { rule } => rule,
            Decision::Ask { reason } | Decision::Refuse { reason } => reason,
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Allow { rule } => write!(f, "allow (by {rule})"),
            Decision::Ask { reason } => write!(f, "ask: {reason}"),
            Decision::Refuse { reason } => write!(f, "refuse: {reason}"),
        }
    }
}

/// A policy: explicit rules, plus a switch (`auto_press_1`) that allows what the guard does not
/// refuse.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    pub rules: RuleSet,
    /// The switch that allows everything the floor and the rules do not stop, by name.
    pub allow_unless_refused: Option<String>,
}

/// Decides a request: the floor first, then deny > ask > allow, then the switch. A refusal of
/// any other reading of the screen (`Request::alternatives`) stands too.
pub fn decide(request: &Request, policy: &Policy, ctx: &GuardContext) -> Decision {
    let decision = decide_one(request, policy, ctx);
    if matches!(decision, Decision::Refuse { .. }) {
        return decision;
    }
    if let RequestKind::Shell { .. } = request.kind {
        for alternative in &request.alternatives {
            let other = Request::from_parts("shell", alternative);
            if let Decision::Refuse { reason } = decide_one(&other, policy, ctx) {
                return Decision::Refuse { reason };
            }
        }
    }
    decision
}

fn decide_one(request: &Request, policy: &Policy, ctx: &GuardContext) -> Decision {
    let findings = floor::check(request, ctx);
    if let Some(Finding::Refuse(reason)) = findings.iter().find(|f| matches!(f, Finding::Refuse(_)))
    {
        return Decision::Refuse {
            reason: reason.clone(),
        };
    }
    let rules = &policy.rules;
    let units = rule_units(request);
    let first_match = |list: &[Rule]| -> Option<String> {
        list.iter()
            .find(|rule| match &units {
                Some(commands) => commands.iter().any(|c| rule.matches_command(c)),
                None => rule.matches_other(request, ctx),
            })
            .map(|r| r.text.clone())
    };
    if let Some(rule) = first_match(&rules.deny) {
        return Decision::Refuse {
            reason: format!("the deny rule {rule} matches"),
        };
    }
    if let Some(rule) = first_match(&rules.ask) {
        return Decision::Ask {
            reason: format!("the ask rule {rule} matches"),
        };
    }
    if let Some(Finding::Doubt(reason)) = findings.first() {
        return Decision::Ask {
            reason: reason.clone(),
        };
    }
    let allowed_by = match &units {
        // Every command of a compound line must be allowed, each by some rule.
        Some(commands) if !commands.is_empty() => {
            let per_command: Option<Vec<&Rule>> = commands
                .iter()
                .map(|c| rules.allow.iter().find(|r| r.matches_command(c)))
                .collect();
            per_command.and_then(|rules| rules.first().map(|r| r.text.clone()))
        }
        Some(_) => None,
        None => rules
            .allow
            .iter()
            .find(|r| r.matches_other(request, ctx))
            .map(|r| r.text.clone()),
    };
    if let Some(rule) = allowed_by {
        return Decision::Allow { rule };
    }
    match &policy.allow_unless_refused {
        Some(switch) => Decision::Allow {
            rule: switch.clone(),
        },
        None => Decision::Ask {
            reason: "no rule allows it".into(),
        },
    }
}

/// The simple commands of a shell request, each as one line (for Bash rules); `None` for other
/// requests. A command line that does not parse yields its whole text.
fn rule_units(request: &Request) -> Option<Vec<String>> {
    let RequestKind::Shell { command } = &request.kind else {
        return None;
    };
    Some(match shell::parse(command) {
        Ok(script) => script
            .all_commands()
            .into_iter()
            .map(|c| {
                let words = programs::unwrap(c);
                words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|c| !c.is_empty())
            .collect(),
        Err(_) => vec![command.trim().to_string()],
    })
}

#[cfg(test)]
mod table_tests;
