//! Know what you approve: permission requests as data, rules (deny > ask > allow) and the safety
//! floor no policy passes automatically. `decide` is pure and deterministic. Never approve what
//! was not read: only a [`ReadRequest`] reaches the step that allows (`decide_read`); an unread
//! request is refused when any text of it is dangerous, else the operator's. Whether herd may
//! answer by itself, never which keys: that is `attempt`'s.

pub mod dialog;
pub mod shell_words;

#[cfg(test)]
pub(crate) mod arbitrary_input;
pub mod capture;
pub mod credentials;
mod destructive;
mod finding;
pub mod floor;
mod glob;
pub mod input;
mod interpreters;
pub mod paths;
mod programs;
pub mod request;
pub mod rules;
pub mod shell;
pub mod tool_use;

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

/// A policy: explicit rules, plus a switch (`auto_press_1`) allowing what the guard does not
/// refuse.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    pub rules: RuleSet,
    /// The switch that allows everything the floor and the rules do not stop, by name.
    pub allow_unless_refused: Option<String>,
}

/// Why an unread request waits for the operator, as evidence and banners say it.
pub fn unread_reason(what: &str) -> String {
    if what.is_empty() {
        "herd could not read this request".to_string()
    } else {
        format!("herd could not read this request: {what}")
    }
}

/// A request every part of which herd read: the only kind `decide_read` takes.
#[derive(Clone, Copy)]
pub struct ReadRequest<'a>(&'a Request);

impl<'a> ReadRequest<'a> {
    /// The request, when every part of it was read.
    fn of(request: &'a Request) -> Option<ReadRequest<'a>> {
        request.is_read().then_some(ReadRequest(request))
    }
}

/// Decides a request: an unread one is the operator's (or refused when any text is dangerous); a
/// read one goes through the floor, deny > ask > allow, then the switch. Every part and every
/// other reading of the screen is judged, and any refusal stands.
pub fn decide(request: &Request, policy: &Policy, ctx: &GuardContext) -> Decision {
    let ctx = &in_workdir(request, ctx);
    let Some(read) = ReadRequest::of(request) else {
        return decide_unread(request, policy, ctx);
    };
    let decision = decide_read(read, policy, ctx);
    if matches!(decision, Decision::Refuse { .. }) {
        return decision;
    }
    if let Some(refused) = refused_alternative(request, policy, ctx) {
        return refused;
    }
    decision
}

/// A refusal of another reading of the same request, when there is one.
fn refused_alternative(request: &Request, policy: &Policy, ctx: &GuardContext) -> Option<Decision> {
    let texts: Vec<&str> = match &request.kind {
        RequestKind::Shell { .. } | RequestKind::Unread { .. } => {
            request.alternatives.iter().map(String::as_str).collect()
        }
        _ => Vec::new(),
    };
    texts.into_iter().find_map(|text| {
        let other = Request::from_parts("shell", text);
        match decide_one(ReadRequest::of(&other)?, policy, ctx) {
            refused @ Decision::Refuse { .. } => Some(refused),
            _ => None,
        }
    })
}

/// An unread request: refused when any readable part or reading is refused, else the operator's.
fn decide_unread(request: &Request, policy: &Policy, ctx: &GuardContext) -> Decision {
    // A credential named anywhere in what herd saw is refused outright.
    if let Some(Finding::Refuse(reason)) = floor::check(request, ctx).into_iter().next() {
        return Decision::Refuse { reason };
    }
    let read_parts = std::iter::once(&request.kind)
        .chain(&request.also)
        .filter(|k| !matches!(k, RequestKind::Unread { .. }));
    for kind in read_parts {
        let part = Request::new(kind.clone());
        if let Some(part) = ReadRequest::of(&part)
            && let refused @ Decision::Refuse { .. } = decide_one(part, policy, ctx)
        {
            return refused;
        }
    }
    if let Some(refused) = refused_alternative(request, policy, ctx) {
        return refused;
    }
    Decision::Ask {
        reason: unread_reason(request.unread_part().unwrap_or_default()),
    }
}

/// The guard's context with the shell's folder at the request's `workdir`, when it names one.
fn in_workdir(request: &Request, ctx: &GuardContext) -> GuardContext {
    let mut here = ctx.clone();
    if let Some(dir) = &request.workdir {
        here.shell_dir = Some(ctx.absolute(dir));
    }
    here
}

/// Decides a read request part by part: the first refusal stands, then the first doubt.
fn decide_read(read: ReadRequest<'_>, policy: &Policy, ctx: &GuardContext) -> Decision {
    let request = read.0;
    let mut decision = decide_one(read, policy, ctx);
    for kind in &request.also {
        let part = Request::new(kind.clone());
        let Some(part) = ReadRequest::of(&part).map(|p| decide_one(p, policy, ctx)) else {
            // `read` holds no unread part; kept total all the same.
            return Decision::Ask {
                reason: unread_reason(""),
            };
        };
        decision = match (&decision, part) {
            (Decision::Refuse { .. }, _) => break,
            (_, refused @ Decision::Refuse { .. }) => refused,
            (Decision::Ask { .. }, _) => decision,
            (_, asked @ Decision::Ask { .. }) => asked,
            (Decision::Allow { .. }, Decision::Allow { .. }) => decision,
        };
    }
    if let Some(dir) = &request.workdir
        && decision.is_allow()
        && matches!(ctx.place(dir), paths::Place::Outside | paths::Place::Root)
    {
        return Decision::Ask {
            reason: format!(
                "it runs in {}, outside the task's folder {}",
                ctx.absolute(dir),
                ctx.task_dir
            ),
        };
    }
    decision
}

/// The floor and the rules on one read request: the only step that allows.
fn decide_one(read: ReadRequest<'_>, policy: &Policy, ctx: &GuardContext) -> Decision {
    let request = read.0;
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
    match (&policy.allow_unless_refused, &request.kind) {
        (Some(_), RequestKind::Tool { name, .. }) if !tool_use::switch_may_allow(name) => {
            Decision::Ask {
                reason: format!(
                    "herd cannot tell what the tool {name} does: only an allow rule naming it \
                     approves it by itself"
                ),
            }
        }
        (Some(switch), _) => Decision::Allow {
            rule: switch.clone(),
        },
        (None, _) => Decision::Ask {
            reason: "no rule allows it".into(),
        },
    }
}

/// The simple commands of a shell request, one line each (the whole text when it does not parse).
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
