//! Agent profiles: how to start an agent CLI and how to read its screen (prompt rules, ready,
//! busy, auth, quota and transient error texts).
//!
//! Built-in profiles are TOML texts handed in by the shell (from `assets/profiles/`); a user file
//! adds profiles or overrides fields of built-in ones. This module parses, merges and compiles
//! them; it never reads files itself.

use std::collections::BTreeMap;
use std::fmt;

use regex::Regex;
use serde::Deserialize;
use thiserror::Error;

use super::task::MAX_WAIT_SEC;

/// Seconds a stable ready screen must last before an interactive agent counts as idle.
pub const DEFAULT_IDLE_SEC: f64 = 20.0;
/// Seconds between the exit keys and a TERM signal once herd decided to end an agent.
pub const DEFAULT_EXIT_GRACE_SEC: f64 = 5.0;
/// Non-blank rows at the bottom of the final screen that auth/quota/transient texts are matched on.
pub const DEFAULT_TAIL_ROWS: usize = 12;
/// Non-blank rows at the bottom of the screen a dialog prompt must end within.
pub const DEFAULT_PROMPT_REGION_ROWS: usize = 12;
/// Upper bounds of a profile's numbers (README, "Numbers"); `idle_sec` shares the tasks file's
/// `MAX_WAIT_SEC`.
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
    /// A dialog: the match must end within the last `region_rows` non-blank rows. One appearance
    /// lasts while the rule keeps matching.
    #[default]
    Bottom,
    /// A question on the cursor's line (`Run shell command? (Y)es/(N)o [Yes]:`): the match must
    /// end on the cursor row; a question on a new line is a new appearance.
    Cursor,
}

/// What an agent prints: a screen to read, or a JSON-lines event stream to parse first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OutputKind {
    /// A terminal UI or plain text: herd reads the rendered screen.
    #[default]
    Screen,
    /// JSON lines (Claude `-p --output-format stream-json`, Codex `exec --json`, Gemini
    /// `--output-format stream-json`): the events decide the verdict, the screen rules second.
    StreamJson,
}

/// How herd talks to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// A terminal program in a PTY: herd reads its screen (or its JSON lines) and types keys.
    #[default]
    Terminal,
    /// The Agent Client Protocol on the agent's stdio: herd's ACP client (`herd acp-client`)
    /// runs it in the attempt's PTY, draws the session there and ends with a structured result,
    /// so the profile reads as `output = "stream-json"`.
    Acp,
}

/// Session transcripts an agent leaves behind that herd can read after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptKind {
    /// Claude Code's `<config dir>/projects/<cwd>/<session>.jsonl`.
    Claude,
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
    /// Answered without a policy switch (a folder-trust dialog); `auto_<name>: false` still turns
    /// it off for a task.
    pub auto_by_default: bool,
    pub anchor: PromptAnchor,
    /// A label for the operator's key banner, e.g. `Yes`.
    pub label: String,
    /// The prompt asks permission for a request (a command, an edit, …) that the guard judges
    /// before herd answers by itself. `guard = false` for prompts that approve nothing an agent
    /// does (a folder-trust dialog, adding `.aider*` to `.gitignore`).
    pub guarded: bool,
}

/// How to read the request a permission prompt asks about, from the screen.
#[derive(Debug, Clone)]
pub struct RequestCapture {
    /// `shell`, `edit`, `write`, `read`, `fetch` or a tool name.
    pub kind: String,
    /// Matched on the prompt's rows (box borders `│` stripped, hard-wrapped rows joined); the
    /// group `text` is the request's text, an optional group `tool` names the tool.
    pub pattern: Regex,
    /// The last line of `text` is a description, not part of the request (Claude's Bash dialog).
    pub drop_last_line: bool,
}

/// A compiled agent profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Keys that end the agent once it is done (`/exit\r`); `None` for agents that exit by
    /// themselves.
    pub exit_keys: Option<String>,
    pub exit_grace_sec: f64,
    pub ready: Option<Regex>,
    pub busy: Vec<Regex>,
    /// Texts the agent shows while it retries a failed request by itself (`Retrying in 4.0
    /// seconds...`): with an auth, quota or transient text beside them, the retries are judged
    /// as they happen instead of waited out.
    pub retrying: Vec<Regex>,
    pub idle_sec: f64,
    pub auth: Vec<Regex>,
    pub quota: Vec<Regex>,
    /// Texts of transient errors (overloaded, network): `failed_process`, retried.
    pub transient: Vec<Regex>,
    /// Texts of set-up problems (an untrusted folder, a missing flag): `failed_config`, not
    /// retried, since the next attempt would meet the same set-up.
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
    /// Accounts to rotate through: each a set of environment variables (a config folder, an API
    /// key variable). Empty: the agent's own environment.
    pub accounts: Vec<Account>,
    pub output: OutputKind,
    pub protocol: Protocol,
    /// How to continue a session: an argv with `{session_id}` and `{rendered_prompt}` (the
    /// message to continue with); empty when the agent cannot resume.
    pub resume: Vec<String>,
    pub transcripts: Option<TranscriptKind>,
    /// A file the agent writes while it runs that herd reads live (Claude's debug log, Codex's
    /// rollout): failed requests it keeps retrying, tool calls it refused by itself.
    pub agent_log: Option<crate::core::agent_log::AgentLogKind>,
    pub origin: ProfileOrigin,
}

/// One account of a profile. Its variables reach the agent only; they are never written to the
/// tasks file, the recordings or the screen (only the name is).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    pub name: String,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A profile as written in TOML, every field optional so a user file can override a few.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSource {
    pub description: Option<String>,
    pub command: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub exit_keys: Option<String>,
    pub exit_grace_sec: Option<f64>,
    pub ready: Option<String>,
    pub busy: Option<Vec<String>>,
    pub retrying: Option<Vec<String>>,
    pub idle_sec: Option<f64>,
    pub auth: Option<Vec<String>>,
    pub quota: Option<Vec<String>>,
    pub transient: Option<Vec<String>>,
    pub config: Option<Vec<String>>,
    pub config_exit_codes: Option<Vec<i32>>,
    pub prompts: Option<Vec<PromptRuleSource>>,
    pub requests: Option<Vec<RequestCaptureSource>>,
    pub allow: Option<Vec<String>>,
    pub ask: Option<Vec<String>>,
    pub deny: Option<Vec<String>>,
    pub tail_rows: Option<usize>,
    pub prompt_region_rows: Option<usize>,
    pub accounts: Option<Vec<Account>>,
    pub output: Option<OutputKind>,
    pub protocol: Option<Protocol>,
    pub resume: Option<Vec<String>>,
    pub transcripts: Option<TranscriptKind>,
    pub agent_log: Option<crate::core::agent_log::AgentLogKind>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptRuleSource {
    pub name: String,
    pub pattern: String,
    #[serde(default)]
    pub unless: Vec<String>,
    pub send: String,
    #[serde(default)]
    pub auto: bool,
    #[serde(default)]
    pub anchor: PromptAnchor,
    pub label: Option<String>,
    #[serde(default = "yes")]
    pub guard: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestCaptureSource {
    pub kind: String,
    pub pattern: String,
    #[serde(default)]
    pub drop_last_line: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfilesFile {
    #[serde(default)]
    profiles: BTreeMap<String, ProfileSource>,
    /// Hosts may share the profiles file; `core::hosts` reads them.
    #[serde(default, rename = "hosts")]
    _hosts: Option<toml::Table>,
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
    /// Builds the set from built-in TOML texts and an optional user TOML text. Collects every
    /// problem rather than stopping at the first.
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

fn parse_file(text: &str) -> Result<ProfilesFile, ProfileError> {
    toml::from_str::<ProfilesFile>(text).map_err(|e| {
        let location = e.span().map(|span| line_col(text, span.start));
        ProfileError {
            location,
            message: e.message().trim().to_string(),
        }
    })
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where a literal first appears in the user's text, to point an error at it.
fn locate_literal(text: &str, literal: &str) -> Option<(usize, usize)> {
    if text.is_empty() || literal.is_empty() {
        return None;
    }
    text.find(literal).map(|offset| line_col(text, offset))
}

/// The user's fields win; fields the user leaves out keep the built-in value.
fn overlay(base: ProfileSource, top: ProfileSource) -> ProfileSource {
    ProfileSource {
        description: top.description.or(base.description),
        command: top.command.or(base.command),
        env: top.env.or(base.env),
        exit_keys: top.exit_keys.or(base.exit_keys),
        exit_grace_sec: top.exit_grace_sec.or(base.exit_grace_sec),
        ready: top.ready.or(base.ready),
        busy: top.busy.or(base.busy),
        retrying: top.retrying.or(base.retrying),
        idle_sec: top.idle_sec.or(base.idle_sec),
        auth: top.auth.or(base.auth),
        quota: top.quota.or(base.quota),
        transient: top.transient.or(base.transient),
        config: top.config.or(base.config),
        config_exit_codes: top.config_exit_codes.or(base.config_exit_codes),
        prompts: top.prompts.or(base.prompts),
        requests: top.requests.or(base.requests),
        allow: top.allow.or(base.allow),
        ask: top.ask.or(base.ask),
        deny: top.deny.or(base.deny),
        tail_rows: top.tail_rows.or(base.tail_rows),
        prompt_region_rows: top.prompt_region_rows.or(base.prompt_region_rows),
        accounts: top.accounts.or(base.accounts),
        output: top.output.or(base.output),
        protocol: top.protocol.or(base.protocol),
        resume: top.resume.or(base.resume),
        transcripts: top.transcripts.or(base.transcripts),
        agent_log: top.agent_log.or(base.agent_log),
    }
}

struct Compiler<'a> {
    profile: &'a str,
    text: &'a str,
    errors: Vec<ProfileError>,
}

impl Compiler<'_> {
    fn regex(&mut self, field: &str, pattern: &str) -> Option<Regex> {
        match Regex::new(pattern) {
            Ok(re) => Some(re),
            Err(e) => {
                let detail = e.to_string();
                let detail = detail
                    .lines()
                    .last()
                    .unwrap_or("invalid")
                    .trim()
                    .to_string();
                self.errors.push(ProfileError {
                    location: locate_literal(self.text, pattern),
                    message: format!(
                        "profile '{}': {field} is not a valid regular expression ({detail}): {pattern}",
                        self.profile
                    ),
                });
                None
            }
        }
    }

    fn regexes(&mut self, field: &str, patterns: &[String]) -> Vec<Regex> {
        patterns
            .iter()
            .enumerate()
            .filter_map(|(i, p)| self.regex(&format!("{field}[{i}]"), p))
            .collect()
    }

    fn fail(&mut self, message: String, literal: &str) {
        self.errors.push(ProfileError {
            location: locate_literal(self.text, literal),
            message: format!("profile '{}': {message}", self.profile),
        });
    }
}

fn compile(
    name: &str,
    source: ProfileSource,
    origin: ProfileOrigin,
    text: &str,
) -> Result<Profile, Vec<ProfileError>> {
    let mut c = Compiler {
        profile: name,
        text,
        errors: Vec::new(),
    };
    // An empty command is allowed: every task using the profile must then give its own
    // `command` (the `generic` profile); the task check reports it otherwise.
    let command = source.command.unwrap_or_default();
    let ready = source.ready.as_deref().and_then(|p| c.regex("ready", p));
    let busy = c.regexes("busy", &source.busy.unwrap_or_default());
    let retrying = c.regexes("retrying", &source.retrying.unwrap_or_default());
    let auth = c.regexes("auth", &source.auth.unwrap_or_default());
    let quota = c.regexes("quota", &source.quota.unwrap_or_default());
    let transient = c.regexes("transient", &source.transient.unwrap_or_default());
    let config = c.regexes("config", &source.config.unwrap_or_default());
    let mut prompts = Vec::new();
    let mut seen = Vec::new();
    for (i, rule) in source.prompts.unwrap_or_default().into_iter().enumerate() {
        if rule.name.is_empty()
            || !rule
                .name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        {
            c.fail(
                format!(
                    "prompt rule {} has name {:?}; use letters, digits and _ (it becomes the policy key auto_<name>)",
                    i + 1,
                    rule.name
                ),
                &rule.name,
            );
        }
        if seen.contains(&rule.name) {
            c.fail(
                format!("prompt rule name {:?} is used twice", rule.name),
                &rule.name,
            );
        }
        seen.push(rule.name.clone());
        if rule.send.is_empty() {
            c.fail(
                format!(
                    "prompt rule {:?} sends nothing; set send = \"1\" or similar",
                    rule.name
                ),
                &rule.name,
            );
        }
        let pattern = c.regex(&format!("prompts.{}.pattern", rule.name), &rule.pattern);
        let unless = c.regexes(&format!("prompts.{}.unless", rule.name), &rule.unless);
        if let Some(pattern) = pattern {
            let label = rule.label.unwrap_or_else(|| rule.name.clone());
            prompts.push(PromptRule {
                name: rule.name,
                pattern,
                unless,
                send: rule.send,
                auto_by_default: rule.auto,
                anchor: rule.anchor,
                label,
                guarded: rule.guard,
            });
        }
    }
    let mut requests = Vec::new();
    for (i, capture) in source.requests.unwrap_or_default().into_iter().enumerate() {
        let Some(pattern) = c.regex(&format!("requests[{i}].pattern"), &capture.pattern) else {
            continue;
        };
        if !pattern.capture_names().any(|n| n == Some("text")) {
            c.fail(
                format!("requests[{i}].pattern has no (?P<text>…) group for the request's text"),
                &capture.pattern,
            );
            continue;
        }
        requests.push(RequestCapture {
            kind: capture.kind,
            pattern,
            drop_last_line: capture.drop_last_line,
        });
    }
    let rules = match crate::core::guard::RuleSet::parse(
        &source.allow.unwrap_or_default(),
        &source.ask.unwrap_or_default(),
        &source.deny.unwrap_or_default(),
    ) {
        Ok(rules) => rules,
        Err(errors) => {
            for e in errors {
                c.fail(e.to_string(), &e.rule);
            }
            crate::core::guard::RuleSet::default()
        }
    };
    let idle_sec = source.idle_sec.unwrap_or(DEFAULT_IDLE_SEC);
    if !(idle_sec.is_finite() && idle_sec > 0.0 && idle_sec <= MAX_WAIT_SEC) {
        c.fail(
            format!(
                "idle_sec must be above 0 and at most {MAX_WAIT_SEC} seconds (30 days), got {idle_sec}"
            ),
            "idle_sec",
        );
    }
    let exit_grace_sec = source.exit_grace_sec.unwrap_or(DEFAULT_EXIT_GRACE_SEC);
    if !(exit_grace_sec.is_finite() && (0.0..=MAX_EXIT_GRACE_SEC).contains(&exit_grace_sec)) {
        c.fail(
            format!(
                "exit_grace_sec must be from 0 to {MAX_EXIT_GRACE_SEC} seconds, got {exit_grace_sec}"
            ),
            "exit_grace_sec",
        );
    }
    for (key, rows) in [
        ("tail_rows", source.tail_rows),
        ("prompt_region_rows", source.prompt_region_rows),
    ] {
        if let Some(rows) = rows
            && !(1..=MAX_ROWS).contains(&rows)
        {
            c.fail(
                format!("{key} must be from 1 to {MAX_ROWS}, got {rows}"),
                key,
            );
        }
    }
    let accounts = source.accounts.unwrap_or_default();
    for (i, account) in accounts.iter().enumerate() {
        if account.name.trim().is_empty() {
            c.fail(format!("account {} has no name", i + 1), "accounts");
        } else if accounts[..i].iter().any(|a| a.name == account.name) {
            c.fail(
                format!("account name {:?} is used twice", account.name),
                &account.name,
            );
        }
    }
    let protocol = source.protocol.unwrap_or_default();
    let resume = source.resume.unwrap_or_default();
    if !resume.is_empty() && !resume.iter().any(|part| part.contains("{session_id}")) {
        c.fail(
            "resume has no {session_id}; write the argv that continues a session, e.g. \
             [\"claude\", \"--resume\", \"{session_id}\", \"-p\", \"{rendered_prompt}\"]"
                .to_string(),
            "resume",
        );
    }
    if !c.errors.is_empty() {
        return Err(c.errors);
    }
    Ok(Profile {
        name: name.to_string(),
        description: source.description.unwrap_or_default(),
        command,
        env: source.env.unwrap_or_default(),
        exit_keys: source.exit_keys.filter(|k| !k.is_empty()),
        exit_grace_sec,
        ready,
        busy,
        retrying,
        idle_sec,
        auth,
        quota,
        transient,
        config,
        config_exit_codes: source.config_exit_codes.unwrap_or_default(),
        prompts,
        requests,
        rules,
        tail_rows: source.tail_rows.unwrap_or(DEFAULT_TAIL_ROWS).max(1),
        prompt_region_rows: source
            .prompt_region_rows
            .unwrap_or(DEFAULT_PROMPT_REGION_ROWS)
            .max(1),
        accounts,
        // An ACP session ends with one structured result event from herd's client.
        output: match protocol {
            Protocol::Acp => OutputKind::StreamJson,
            Protocol::Terminal => source.output.unwrap_or_default(),
        },
        protocol,
        resume,
        transcripts: source.transcripts,
        agent_log: source.agent_log,
        origin,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
[profiles.mycli]
command = ["mycli", "--task", "{rendered_prompt}"]
exit_keys = "/exit\r"
ready = '(?m)^❯\s*$'
auth = ['Invalid API key', 'Please run /login']
quota = ['(?i)rate limit exceeded', "You[’']ve hit your usage limit"]
[[profiles.mycli.prompts]]
name = "press_1"
pattern = '(?m)^\s*❯\s*1\. Yes'
send = "1"
"#;

    #[test]
    fn the_spec_example_compiles() {
        let set = ProfileSet::build(&[BASE], None).unwrap();
        let p = set.get("mycli").unwrap();
        assert_eq!(p.command, ["mycli", "--task", "{rendered_prompt}"]);
        assert_eq!(p.exit_keys.as_deref(), Some("/exit\r"));
        assert_eq!(p.prompts.len(), 1);
        assert!(p.prompts[0].pattern.is_match("  ❯ 1. Yes"));
        assert!(p.quota[1].is_match("You’ve hit your usage limit"));
        assert_eq!(p.idle_sec, DEFAULT_IDLE_SEC);
        assert_eq!(p.origin, ProfileOrigin::BuiltIn);
    }

    #[test]
    fn a_user_file_overrides_fields_and_adds_profiles() {
        let user = r#"
[profiles.mycli]
command = ["/opt/mycli"]
idle_sec = 3

[profiles.other]
command = ["other"]
"#;
        let set = ProfileSet::build(&[BASE], Some(user)).unwrap();
        let p = set.get("mycli").unwrap();
        assert_eq!(p.command, ["/opt/mycli"]);
        assert_eq!(p.idle_sec, 3.0);
        assert_eq!(p.prompts.len(), 1, "fields the user left out stay");
        assert_eq!(p.origin, ProfileOrigin::BuiltInOverridden);
        assert_eq!(set.get("other").unwrap().origin, ProfileOrigin::UserFile);
    }

    #[test]
    fn every_problem_is_reported_with_its_place() {
        let user = "[profiles.bad]\ncommand = []\nauth = ['(unclosed']\n[[profiles.bad.prompts]]\nname = 'press 1'\npattern = 'x'\nsend = ''\n";
        let errors = ProfileSet::build(&[], Some(user)).unwrap_err();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(
            text.iter()
                .any(|e| e
                    .starts_with("3:10: profile 'bad': auth[0] is not a valid regular expression")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|e| e.contains("has name \"press 1\"")),
            "{text:?}"
        );
        assert!(text.iter().any(|e| e.contains("sends nothing")), "{text:?}");
    }

    #[test]
    fn accounts_are_read_and_checked() {
        let user = "[profiles.mycli]\n[[profiles.mycli.accounts]]\nname = 'a'\nenv = { KEY = 'x' }\n[[profiles.mycli.accounts]]\nname = 'b'\n";
        let set = ProfileSet::build(&[BASE], Some(user)).unwrap();
        let p = set.get("mycli").unwrap();
        assert_eq!(p.accounts.len(), 2);
        assert_eq!(p.accounts[0].env["KEY"], "x");
        let twice = "[profiles.mycli]\n[[profiles.mycli.accounts]]\nname = 'a'\n[[profiles.mycli.accounts]]\nname = 'a'\n";
        let errors = ProfileSet::build(&[BASE], Some(twice)).unwrap_err();
        assert!(errors[0].to_string().contains("used twice"), "{errors:?}");
    }

    #[test]
    fn toml_syntax_errors_have_a_position() {
        let errors = ProfileSet::build(&[], Some("[profiles.x]\ncommand = [\"a\"\n")).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].location.is_some(), "{errors:?}");
        let errors = ProfileSet::build(&[], Some("[profiles.x]\ncommand = [\"a\"]\nbogus = 1\n"))
            .unwrap_err();
        assert!(errors[0].to_string().contains("bogus"), "{errors:?}");
        assert_eq!(errors[0].location.map(|l| l.0), Some(3));
    }
}
