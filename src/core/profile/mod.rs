//! Agent profiles: how to start an agent CLI and how to read its screen. Built-in TOML texts
//! (handed in by the shell) and a user file are parsed (`source`), merged and compiled
//! (`compile`) here; nothing reads files.

pub mod folder_trust;

use std::collections::BTreeMap;
use std::fmt;

use regex::Regex;
use serde::Deserialize;
use thiserror::Error;

use compile::compile;
use source::{overlay, parse_file};

use super::guard::capture::RequestCapture;
use super::task::MAX_WAIT_SEC;

/// Seconds a stable ready screen must last before an interactive agent counts as idle.
pub const DEFAULT_IDLE_SEC: f64 = 20.0;
/// Seconds between the exit keys and a TERM signal once herd decided to end an agent.
pub const DEFAULT_EXIT_GRACE_SEC: f64 = 5.0;
/// Non-blank rows at the bottom of the final screen that auth/quota/transient texts are matched on.
pub const DEFAULT_TAIL_ROWS: usize = 12;
/// Non-blank rows at the bottom of the screen a dialog prompt must end within.
pub const DEFAULT_PROMPT_REGION_ROWS: usize = 12;
/// Upper bounds of a profile's numbers (README, "Numbers").
pub const MAX_EXIT_GRACE_SEC: f64 = 3600.0;
pub const MAX_ROWS: usize = 10_000;

/// Where the prompt rules came from, shown by `herd profiles`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileOrigin {
    BuiltIn,
    UserFile,
    /// A built-in profile with fields overridden by the user's file.
    BuiltInOverridden,
}

impl fmt::Display for ProfileOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProfileOrigin::BuiltIn => "built-in",
            ProfileOrigin::UserFile => "user",
            ProfileOrigin::BuiltInOverridden => "built-in, overridden",
        })
    }
}

/// Where on the screen a prompt rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PromptAnchor {
    /// A dialog: the match must end within the last `region_rows` non-blank rows.
    #[default]
    Bottom,
    /// A question on the cursor's line: the match must end on the cursor row.
    Cursor,
}

/// What an agent prints: a screen to read, or a JSON-lines event stream to parse first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OutputKind {
    /// A terminal UI or plain text: herd reads the rendered screen.
    #[default]
    Screen,
    /// JSON lines: the events decide the verdict, the screen rules second.
    StreamJson,
}

/// How herd talks to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// A terminal program in a PTY: herd reads its screen (or its JSON lines) and types keys.
    #[default]
    Terminal,
    /// The Agent Client Protocol, spoken by herd's client (`herd acp-client`) in the attempt's
    /// PTY; it ends with a structured result, as `output = "stream-json"`.
    Acp,
}

/// Session transcripts an agent leaves behind that herd can read after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptKind {
    /// Claude Code's `<config dir>/projects/<cwd>/<session>.jsonl`.
    Claude,
}

/// Hooks an agent CLI calls that herd can answer (see `core::hook`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookKind {
    /// Claude Code's hooks, given as inline settings: `--settings {hook_settings}`.
    Claude,
    /// Gemini CLI's `BeforeTool` hook, in a Gemini home of the attempt's own: it denies what the
    /// guard refuses; approvals stay on the screen.
    Gemini,
}

/// Which file an agent keeps, and so how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentLogKind {
    /// Claude Code's `--debug-file {agent_log}`: herd names the file.
    ClaudeDebug,
    /// Gemini CLI's `GEMINI_DEBUG_LOG_FILE={agent_log}`: herd names the file.
    GeminiDebug,
    /// Codex CLI's session rollout under `$CODEX_HOME/sessions`.
    CodexRollout,
}

/// One permission prompt an agent can show, and the keys that answer it.
#[derive(Debug, Clone)]
pub struct PromptRule {
    pub name: String,
    pub pattern: Regex,
    /// Texts that, when on screen, mean this is not the prompt (a quota menu with `1.` options).
    pub unless: Vec<Regex>,
    /// The bytes to send, e.g. `"1"`, `"\r"`, `"y\r"`.
    pub send: String,
    /// Answered without a policy switch (a folder-trust dialog); `auto_<name>: false` still
    /// turns it off.
    pub auto_by_default: bool,
    pub anchor: PromptAnchor,
    /// A label for the operator's key banner, e.g. `Yes`.
    pub label: String,
    /// The prompt asks permission for a request the guard judges first. `guard = false` for
    /// prompts that approve nothing an agent does (a folder-trust dialog).
    pub guarded: bool,
    /// herd answers by itself only once the dialog stayed this long (CLIs that drop keys typed
    /// while they start).
    pub wait: std::time::Duration,
}

/// A compiled agent profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Keys that end the agent once it is done (`/exit\r`).
    pub exit_keys: Option<String>,
    pub exit_grace_sec: f64,
    pub ready: Option<Regex>,
    pub busy: Vec<Regex>,
    /// Texts the agent shows while it retries by itself: beside an auth, quota or transient
    /// text, the retries are judged as they happen.
    pub retrying: Vec<Regex>,
    pub idle_sec: f64,
    pub auth: Vec<Regex>,
    pub quota: Vec<Regex>,
    /// Texts of transient errors (overloaded, network): `failed_process`, retried.
    pub transient: Vec<Regex>,
    /// Texts of set-up problems: `failed_config`, not retried (the next attempt would meet them).
    pub config: Vec<Regex>,
    /// Exit codes the agent uses for a set-up problem (headless Gemini's 55: untrusted folder).
    pub config_exit_codes: Vec<i32>,
    pub prompts: Vec<PromptRule>,
    /// How to read what the prompts ask, first match wins.
    pub requests: Vec<RequestCapture>,
    /// Permission rules every task of the profile gets after its own (Claude Code syntax).
    pub rules: crate::core::guard::RuleSet,
    pub tail_rows: usize,
    pub prompt_region_rows: usize,
    /// Accounts to rotate through, each a set of environment variables.
    pub accounts: Vec<Account>,
    pub output: OutputKind,
    pub protocol: Protocol,
    /// How to continue a session: an argv with `{session_id}` and `{rendered_prompt}`.
    pub resume: Vec<String>,
    pub transcripts: Option<TranscriptKind>,
    /// The CLI's hooks herd answers (its command places `{hook_settings}`).
    pub hooks: Option<HookKind>,
    /// Its tasks' folders are trusted in the CLI's config (a task's `trust_folder` wins).
    pub trust_folder: bool,
    /// A file the agent writes that herd reads live (Claude's debug log, Codex's rollout).
    pub agent_log: Option<AgentLogKind>,
    /// The ACP session mode herd sets (the agent's manual mode), so an agent's own default never
    /// decides permissions in herd's place. A task's `acp_mode` wins.
    pub acp_mode: Option<String>,
    /// The command told of this profile's tasks' waits and failures; empty: the tasks file's.
    pub notify: Vec<String>,
    pub origin: ProfileOrigin,
}

impl Profile {
    /// Whether a session can be continued: by `resume`, or an ACP client's `session/load`.
    pub fn can_resume(&self) -> bool {
        !self.resume.is_empty() || self.protocol == Protocol::Acp
    }
}

/// One account of a profile. Its variables reach the agent only; only its name is written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    pub name: String,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A problem with a profile text, located in its file where possible.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{}{message}", location.map(|(l, c)| format!("{l}:{c}: ")).unwrap_or_default())]
pub struct ProfileError {
    /// 1-based line and column in the TOML text.
    pub location: Option<(usize, usize)>,
    pub message: String,
}

/// Every profile in effect, by name.
#[derive(Debug, Clone, Default)]
pub struct ProfileSet {
    profiles: BTreeMap<String, Profile>,
}

impl ProfileSet {
    /// Builds the set from built-in TOML texts and an optional user text, collecting every
    /// problem.
    pub fn build(built_in: &[&str], user: Option<&str>) -> Result<ProfileSet, Vec<ProfileError>> {
        let mut errors = Vec::new();
        let mut sources: BTreeMap<String, (ProfileSource, ProfileOrigin)> = BTreeMap::new();
        for text in built_in {
            match parse_file(text) {
                Ok(file) => {
                    for (name, source) in file.profiles {
                        sources.insert(name, (source, ProfileOrigin::BuiltIn));
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        let user_text = user.unwrap_or_default();
        if let Some(text) = user {
            match parse_file(text) {
                Ok(file) => {
                    for (name, source) in file.profiles {
                        match sources.remove(&name) {
                            Some((base, _)) => {
                                sources.insert(
                                    name,
                                    (overlay(base, source), ProfileOrigin::BuiltInOverridden),
                                );
                            }
                            None => {
                                sources.insert(name, (source, ProfileOrigin::UserFile));
                            }
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        let mut profiles = BTreeMap::new();
        for (name, (source, origin)) in sources {
            let text_for_positions = if origin == ProfileOrigin::BuiltIn {
                ""
            } else {
                user_text
            };
            match compile(&name, source, origin, text_for_positions) {
                Ok(profile) => {
                    profiles.insert(name, profile);
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        if errors.is_empty() {
            Ok(ProfileSet { profiles })
        } else {
            Err(errors)
        }
    }

    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.profiles.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Profile> {
        self.profiles.values()
    }
}

#[cfg(test)]
impl ProfileSet {
    /// Profile `t` of a profiles file's text (built-ins included), for tests.
    pub(crate) fn test_profile(text: &str) -> Profile {
        ProfileSet::build(&[text], None)
            .unwrap()
            .get("t")
            .unwrap()
            .clone()
    }
}

mod compile;
mod source;

pub use source::{ProfileSource, PromptRuleSource, RequestCaptureSource};

#[cfg(test)]
mod tests;
