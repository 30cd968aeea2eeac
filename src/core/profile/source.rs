//! Profiles as written in TOML: every field optional and positioned for errors, the user's file
//! laid over the built-in one field by field.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{
    Account, AgentLogKind, HookKind, OutputKind, ProfileError, PromptAnchor, Protocol,
    TranscriptKind,
};

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
    pub hooks: Option<HookKind>,
    pub trust_folder: Option<bool>,
    pub agent_log: Option<AgentLogKind>,
    pub acp_mode: Option<String>,
    pub notify: Option<Vec<String>>,
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
    pub wait_sec: Option<f64>,
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
pub(super) struct ProfilesFile {
    #[serde(default)]
    pub(super) profiles: BTreeMap<String, ProfileSource>,
    /// Hosts may share the profiles file; `core::remote::hosts` reads them.
    #[serde(default, rename = "hosts")]
    _hosts: Option<toml::Table>,
}
pub(super) fn parse_file(text: &str) -> Result<ProfilesFile, ProfileError> {
    toml::from_str::<ProfilesFile>(text).map_err(|e| {
        let location = e.span().map(|span| line_col(text, span.start));
        ProfileError {
            location,
            message: e.message().trim().to_string(),
        }
    })
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where a literal first appears in the user's text, to point an error at it.
pub(super) fn locate_literal(text: &str, literal: &str) -> Option<(usize, usize)> {
    if text.is_empty() || literal.is_empty() {
        return None;
    }
    text.find(literal).map(|offset| line_col(text, offset))
}

/// The user's fields win; fields the user leaves out keep the built-in value.
pub(super) fn overlay(base: ProfileSource, top: ProfileSource) -> ProfileSource {
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
        hooks: top.hooks.or(base.hooks),
        trust_folder: top.trust_folder.or(base.trust_folder),
        agent_log: top.agent_log.or(base.agent_log),
        acp_mode: top.acp_mode.or(base.acp_mode),
        notify: top.notify.or(base.notify),
    }
}
