//! The approval channels of one attempt: the ways an agent asks herd (or the operator) to allow
//! what it is about to do, and the way herd answers. The screen (dialogs read, keys typed), a
//! structured agent's stream, herd's ACP client, the CLI's hooks and Codex's app server each own
//! their state and their handling; the attempt (`core::attempt`) holds the ones its profile
//! uses, routes events to them and carries out what they ask (record an answer, end).
//!
//! A new channel is one module here and one worker in the shell, not a new `impl Attempt`.
//! Pure, like the attempt: no I/O, time comes in as the attempt's elapsed `Duration`.

pub mod acp;
pub mod app_server;
pub mod effects;
pub mod hook;
pub mod screen;
pub mod stream;

use crate::core::approval::{self, Approval, GuardSetup};
use crate::core::classify::EndCause;
use crate::core::guard::Policy;
use crate::core::profile::{OutputKind, Profile, Protocol};
use effects::{Effect, Note};

/// What a channel asks the attempt to do about its end.
#[derive(Debug, Clone, PartialEq)]
pub enum EndRequest {
    /// Begin ending now, for this cause.
    Now(EndCause),
    /// Begin ending once the CLI has had time to take herd's refusal (`HOOK_SETTLE`).
    AfterAnswer(EndCause),
}

/// The task's rules as the channels judge requests with them.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    pub profile: &'a Profile,
    /// Per prompt rule: herd may answer it by itself.
    pub auto_rules: &'a [bool],
    pub guard: &'a GuardSetup,
    /// Headless: a refusal ends the attempt, as nobody will answer instead.
    pub headless: bool,
}

impl Judge<'_> {
    /// Whether herd may answer rule `rule` by itself.
    pub fn is_auto(&self, rule: usize) -> bool {
        self.auto_rules.get(rule).copied().unwrap_or(false)
    }

    /// The task's rules, and the switch of its plain "yes" rule (or its "don't ask again"
    /// rule) when herd may answer that by itself: what the guard allows through a structured
    /// channel is what it would let herd answer on screen.
    pub fn policy(&self) -> Policy {
        let prompts = &self.profile.prompts;
        let switch_on = |name: &str| {
            prompts
                .iter()
                .position(|p| p.guarded && p.name == name)
                .is_some_and(|i| self.is_auto(i))
                .then(|| format!("auto_{name}"))
        };
        Policy {
            rules: self.guard.rules.clone(),
            allow_unless_refused: switch_on(approval::ONCE_RULE).or_else(|| switch_on("press_p")),
        }
    }
}

/// The channels of one attempt: the screen always; the stream for a structured agent; herd's
/// ACP client for an ACP agent; the hooks and the app server always, idle until the CLI calls
/// a hook or herd connects to the server.
#[derive(Debug)]
pub struct Channels {
    pub screen: screen::ScreenChannel,
    pub stream: Option<stream::StreamChannel>,
    pub acp: Option<acp::AcpChannel>,
    pub hook: hook::HookChannel,
    pub app_server: app_server::AppServerChannel,
}

impl Channels {
    /// The channels `profile` uses, chosen once at the start.
    pub fn for_profile(profile: &Profile) -> Channels {
        Channels {
            screen: screen::ScreenChannel::new(profile.prompts.len()),
            stream: (profile.output == OutputKind::StreamJson).then(stream::StreamChannel::default),
            acp: (profile.protocol == Protocol::Acp).then_some(acp::AcpChannel),
            hook: hook::HookChannel::default(),
            app_server: app_server::AppServerChannel::default(),
        }
    }

    /// A structured channel (the hooks, the app server) decides tool calls: a tool dialog on
    /// screen is one it left to the operator, and a key from herd would answer it twice.
    pub fn tool_dialogs_decided_elsewhere(&self) -> bool {
        self.hook.seen() || self.app_server.connected()
    }
}

/// An answer given through a channel: kept with every other answer of the attempt, and noted.
pub fn record(approval: Approval, approvals: &mut Vec<Approval>, effects: &mut Vec<Effect>) {
    approvals.push(approval.clone());
    effects.push(Effect::Note(Note::Approval(Box::new(approval))));
}
