//! Which prompt answers an attempt may give by itself, and the record of every answer given.
//!
//! Joins the profile's prompt rules, the task's switches (`auto_press_1`) and rules, and the
//! guard: a guarded prompt is answered automatically only when the guard allows its request;
//! `press_p` ("don't ask again") only through its own switch, never for a request the guard
//! refuses. Pure, like `attempt` which calls it.

use std::time::Duration;

use super::guard::{self, Decision, GuardContext, Policy, Request, RuleSet};
use super::profile::Profile;

/// The prompt rule an explicit allow rule may answer with: the plain "yes, once" option.
pub const ONCE_RULE: &str = "press_1";

/// What the guard needs for an attempt: the task's rules (then its profile's) and where the task
/// runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardSetup {
    pub rules: RuleSet,
    pub context: GuardContext,
}

/// Who gave an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    Herd,
    Operator,
    /// The operator's answer given through the control socket or MCP (by prompt id).
    Api,
    /// The operator's answer given through the web view or one of its one-time links.
    Web,
}

impl AnsweredBy {
    pub fn as_str(self) -> &'static str {
        match self {
            AnsweredBy::Herd => "auto",
            AnsweredBy::Operator => "operator",
            AnsweredBy::Api => "api",
            AnsweredBy::Web => "web",
        }
    }
}

/// The channel a decision came through: the CLI's own structured channel (its hooks, ACP, a
/// JSON event stream) or keys typed on its screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Channel {
    /// Keys typed into a dialog on the agent's screen.
    #[default]
    Screen,
    /// The CLI asked herd through a hook (Claude Code's `PreToolUse` / `PermissionRequest`).
    Hook,
    /// An ACP agent's `session/request_permission`.
    Acp,
    /// A structured agent's event stream.
    Stream,
    /// Codex's app server, to which herd is a second client (`core::app_server`).
    AppServer,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Screen => "screen",
            Channel::Hook => "hook",
            Channel::Acp => "acp",
            Channel::Stream => "stream",
            Channel::AppServer => "app_server",
        }
    }

    pub fn from_name(name: &str) -> Option<Channel> {
        [
            Channel::Screen,
            Channel::Hook,
            Channel::Acp,
            Channel::Stream,
            Channel::AppServer,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)
    }
}

/// One answer to a prompt, for the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// Since the attempt started.
    pub at: Duration,
    pub by: AnsweredBy,
    /// Where the request was read and answered.
    pub channel: Channel,
    /// The prompt rule answered.
    pub rule: String,
    pub keys: String,
    /// What the prompt asked, when herd could read it.
    pub request: Option<Request>,
    /// The guard's decision on it (`None` for prompts that approve nothing, such as trust
    /// dialogs).
    pub decision: Option<Decision>,
    /// The option an ACP agent's request was answered with (`allow_once`, `reject_once`,
    /// `cancelled`…); `None` for keys typed on a screen.
    pub option: Option<String>,
    /// The title the ACP agent gave its tool call, when it gave one.
    pub title: Option<String>,
}

impl Approval {
    /// The operator said No to the agent: Esc on its dialog, a `No`/`n` answer, or an ACP
    /// rejection.
    pub fn is_operator_refusal(&self) -> bool {
        let no_words = ["esc", "no", "n", "deny", "reject"];
        matches!(
            self.by,
            AnsweredBy::Operator | AnsweredBy::Api | AnsweredBy::Web
        ) && (self.keys == "\u{1b}"
            || no_words.contains(&self.rule.to_ascii_lowercase().as_str())
            || self
                .option
                .as_deref()
                .is_some_and(|o| o.starts_with("reject")))
    }

    /// `the operator refused Bash(npm test) (Esc)`: why an attempt the operator said No in
    /// ended, before the verdict's own evidence.
    pub fn refusal_text(&self) -> String {
        let what = self
            .request
            .as_ref()
            .map_or_else(|| "the agent's prompt".to_string(), ToString::to_string);
        let how = self.option.as_deref().unwrap_or(&self.rule);
        format!("the operator refused {what} ({how})")
    }

    /// Who answered, through which channel, with what: the head of `summary` without the keys,
    /// for a note in the queue (`auto via screen press_1`, `auto via hook PreToolUse deny`,
    /// `operator via acp allow_once`).
    pub fn answered(&self) -> String {
        let by = format!("{} via {}", self.by.as_str(), self.channel.as_str());
        match (&self.option, &self.title) {
            (Some(option), Some(hook)) if self.channel == Channel::Hook => {
                format!("{by} {hook} {option}")
            }
            (Some(option), _) => format!("{by} {option}"),
            (None, _) => format!("{by} {}", self.rule),
        }
    }

    /// One line naming who answered and through which channel:
    /// `auto via screen press_1 "1": Bash(npm test) — allow (by auto_press_1)`,
    /// `auto via hook PreToolUse allow: Bash(npm test) — …`, `operator via acp allow_once: …`.
    pub fn summary(&self) -> String {
        let mut line = self.answered();
        if self.option.is_none() {
            line.push_str(&format!(" {:?}", self.keys));
        }
        if let Some(request) = &self.request {
            line.push_str(&format!(": {request}"));
        }
        if let Some(decision) = &self.decision {
            line.push_str(&format!(" — {decision}"));
        }
        line
    }
}

/// Why a guarded prompt whose request could not be read is not answered automatically.
pub const UNREAD: &str = "herd could not read what this prompt asks (give the profile a \
                          [[requests]] pattern for it, or mark the prompt guard = false if it \
                          approves nothing)";

/// The guard's view of one prompt rule for a request: whether herd may answer it by itself, and
/// the decision (for guarded rules).
pub fn judge_rule(
    profile: &Profile,
    rule: usize,
    switch_on: bool,
    request: Option<&Request>,
    setup: &GuardSetup,
) -> (bool, Option<Decision>) {
    let Some(prompt) = profile.prompts.get(rule) else {
        return (false, None);
    };
    if !prompt.guarded {
        return (switch_on, None);
    }
    // Never approve what has not been read: a guarded prompt whose request the profile's
    // patterns cannot read waits for the operator, whatever the switches say.
    let Some(request) = request else {
        return (
            false,
            Some(Decision::Ask {
                reason: UNREAD.into(),
            }),
        );
    };
    let switch = format!("auto_{}", prompt.name);
    let policy = Policy {
        rules: setup.rules.clone(),
        allow_unless_refused: switch_on.then(|| switch.clone()),
    };
    let decision = guard::decide(request, &policy, &setup.context);
    let auto = match &decision {
        Decision::Allow { rule: by } => *by == switch || switch_on || prompt.name == ONCE_RULE,
        _ => false,
    };
    (auto, Some(decision))
}

/// The request a prompt showing on `rows[first..=last]` asks about: the profile's patterns on
/// that part of the screen and the rows above it.
pub fn read_request(
    profile: &Profile,
    rows: &[String],
    cols: usize,
    prompt_rows: (usize, usize),
) -> Option<Request> {
    const ROWS_ABOVE: usize = 24;
    guard::capture::extract(
        &profile.requests,
        rows,
        cols,
        prompt_rows.0.saturating_sub(ROWS_ABOVE),
        prompt_rows.1,
    )
}

/// `auto_<name>` switches of a task's policy that name no prompt rule of its profile (a typo
/// such as `auto_pres_1` would otherwise silently leave prompts unanswered): (key, message).
pub fn unknown_switches(
    policy: &std::collections::BTreeMap<String, bool>,
    profile: &Profile,
) -> Vec<(String, String)> {
    let names: Vec<&str> = profile.prompts.iter().map(|r| r.name.as_str()).collect();
    policy
        .keys()
        .filter_map(|key| {
            let name = key.strip_prefix("auto_")?;
            if names.contains(&name) {
                return None;
            }
            let known: Vec<String> = names.iter().map(|n| format!("auto_{n}")).collect();
            Some((
                key.clone(),
                format!(
                    "\"permission_policy\" switch \"{key}\" names no prompt rule of profile \"{}\"; \
                     its switches are: {}",
                    profile.name,
                    known.join(", ")
                ),
            ))
        })
        .collect()
}

/// `Bash(rm -rf ~) — refuse: …` for banners and evidence.
pub fn describe(request: Option<&Request>, decision: Option<&Decision>) -> String {
    match (request, decision) {
        (Some(r), Some(d)) => format!("{r} — {d}"),
        (Some(r), None) => r.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(
        by: AnsweredBy,
        channel: Channel,
        option: Option<&str>,
        title: Option<&str>,
    ) -> Approval {
        Approval {
            at: Duration::ZERO,
            by,
            channel,
            rule: "press_1".into(),
            keys: "1".into(),
            request: None,
            decision: None,
            option: option.map(str::to_string),
            title: title.map(str::to_string),
        }
    }

    #[test]
    fn the_answer_names_who_answered_and_through_which_channel() {
        let cases = [
            (
                answer(AnsweredBy::Herd, Channel::Screen, None, None),
                "auto via screen press_1",
            ),
            (
                answer(AnsweredBy::Operator, Channel::Screen, None, None),
                "operator via screen press_1",
            ),
            (
                answer(
                    AnsweredBy::Herd,
                    Channel::Hook,
                    Some("deny"),
                    Some("PreToolUse"),
                ),
                "auto via hook PreToolUse deny",
            ),
            (
                answer(AnsweredBy::Operator, Channel::Acp, Some("allow_once"), None),
                "operator via acp allow_once",
            ),
        ];
        for (approval, said) in cases {
            assert_eq!(approval.answered(), said);
            assert!(
                approval.summary().starts_with(said),
                "{}",
                approval.summary()
            );
        }
    }
}
