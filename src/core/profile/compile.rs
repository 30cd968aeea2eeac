//! A profile's TOML source compiled into a `Profile`: regexes built, values checked, every
//! problem collected with its place in the user's text.

use regex::Regex;

use super::source::{ProfileSource, PromptRuleSource, RequestCaptureSource, locate_literal};
use super::*;
use crate::core::guard::capture::RequestCapture;

struct Compiler<'a> {
    profile: &'a str,
    text: &'a str,
    errors: Vec<ProfileError>,
}

/// The rules that read herd's own ACP client's dialog (the same for every ACP agent): Enter
/// allows once, the digits pick any option.
fn acp_dialog() -> (Vec<PromptRuleSource>, Vec<RequestCaptureSource>) {
    let rule = |name: &str, label: &str, option: &str, send: &str| PromptRuleSource {
        name: name.to_string(),
        pattern: format!(r"(?m)^\s*{option}\. {label}(?-u:\b)"),
        unless: Vec::new(),
        send: send.to_string(),
        auto: false,
        anchor: PromptAnchor::default(),
        label: Some(label.to_string()),
        guard: true,
        wait_sec: None,
    };
    let prompts = vec![
        rule("press_1", "Allow once", "1", "1"),
        rule("press_p", "Allow always", "2", "2"),
    ];
    let requests = vec![RequestCaptureSource {
        kind: "tool".to_string(),
        pattern: r"(?ms)^Request: (?P<tool>[A-Za-z_][\w.:-]*)\((?P<text>.*)\)\nGuard: ".to_string(),
        drop_last_line: false,
    }];
    (prompts, requests)
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

pub(super) fn compile(
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
    // An empty command is allowed: every task using the profile must then give its own.
    let command = source.command.unwrap_or_default();
    let ready = source.ready.as_deref().and_then(|p| c.regex("ready", p));
    let busy = c.regexes("busy", &source.busy.unwrap_or_default());
    let retrying = c.regexes("retrying", &source.retrying.unwrap_or_default());
    let auth = c.regexes("auth", &source.auth.unwrap_or_default());
    let quota = c.regexes("quota", &source.quota.unwrap_or_default());
    let transient = c.regexes("transient", &source.transient.unwrap_or_default());
    let config = c.regexes("config", &source.config.unwrap_or_default());
    let protocol = source.protocol.unwrap_or_default();
    // An ACP profile with no rules of its own reads herd's dialog with the built-in ones, so
    // its `auto_press_1` means the same.
    let (prompt_sources, request_sources) = match (protocol, source.prompts, source.requests) {
        (Protocol::Acp, None, None) => acp_dialog(),
        (_, prompts, requests) => (prompts.unwrap_or_default(), requests.unwrap_or_default()),
    };
    let prompts = c.prompts(prompt_sources);
    let requests = c.requests(request_sources);
    let rules = c.rules(
        &source.allow.unwrap_or_default(),
        &source.ask.unwrap_or_default(),
        &source.deny.unwrap_or_default(),
    );
    let (idle_sec, exit_grace_sec) = c.times(source.idle_sec, source.exit_grace_sec);
    c.rows(source.tail_rows, source.prompt_region_rows);
    let accounts = source.accounts.unwrap_or_default();
    c.accounts(&accounts);
    let resume = source.resume.unwrap_or_default();
    c.resume(&resume);
    let notify = source.notify.unwrap_or_default();
    c.notify(&notify);
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
        hooks: source.hooks,
        trust_folder: source.trust_folder.unwrap_or(false),
        agent_log: source.agent_log,
        acp_mode: source.acp_mode.filter(|mode| !mode.trim().is_empty()),
        notify,
        origin,
    })
}

impl Compiler<'_> {
    /// The prompt rules: unique names usable as `auto_<name>` keys, something to send, patterns
    /// (a rule whose pattern does not compile is left out, its error kept).
    fn prompts(&mut self, rules: Vec<PromptRuleSource>) -> Vec<PromptRule> {
        let mut prompts = Vec::new();
        let mut seen = Vec::new();
        for (i, rule) in rules.into_iter().enumerate() {
            if rule.name.is_empty()
                || !rule
                    .name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            {
                self.fail(
                    format!(
                        "prompt rule {} has name {:?}; use letters, digits and _ (it becomes the policy key auto_<name>)",
                        i + 1,
                        rule.name
                    ),
                    &rule.name,
                );
            }
            if seen.contains(&rule.name) {
                self.fail(
                    format!("prompt rule name {:?} is used twice", rule.name),
                    &rule.name,
                );
            }
            seen.push(rule.name.clone());
            if rule.send.is_empty() {
                self.fail(
                    format!(
                        "prompt rule {:?} sends nothing; set send = \"1\" or similar",
                        rule.name
                    ),
                    &rule.name,
                );
            }
            let pattern = self.regex(&format!("prompts.{}.pattern", rule.name), &rule.pattern);
            let unless = self.regexes(&format!("prompts.{}.unless", rule.name), &rule.unless);
            if let Some(pattern) = pattern {
                let label = rule.label.unwrap_or_else(|| rule.name.clone());
                let wait = wait_of(self, &rule.name, rule.wait_sec);
                prompts.push(PromptRule {
                    name: rule.name,
                    pattern,
                    unless,
                    send: rule.send,
                    auto_by_default: rule.auto,
                    anchor: rule.anchor,
                    label,
                    guarded: rule.guard,
                    wait,
                });
            }
        }
        prompts
    }

    /// The `requests` patterns, each with a `text` group.
    fn requests(&mut self, captures: Vec<RequestCaptureSource>) -> Vec<RequestCapture> {
        let mut requests = Vec::new();
        for (i, capture) in captures.into_iter().enumerate() {
            let Some(pattern) = self.regex(&format!("requests[{i}].pattern"), &capture.pattern)
            else {
                continue;
            };
            if !pattern.capture_names().any(|n| n == Some("text")) {
                self.fail(
                    format!(
                        "requests[{i}].pattern has no (?P<text>…) group for the request's text"
                    ),
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
        requests
    }

    /// The profile's allow, ask and deny rules; none when one does not read (its error is kept).
    fn rules(
        &mut self,
        allow: &[String],
        ask: &[String],
        deny: &[String],
    ) -> crate::core::guard::RuleSet {
        match crate::core::guard::RuleSet::parse(allow, ask, deny) {
            Ok(rules) => rules,
            Err(errors) => {
                for e in errors {
                    self.fail(e.to_string(), &e.rule);
                }
                crate::core::guard::RuleSet::default()
            }
        }
    }

    /// `idle_sec` and `exit_grace_sec` within their bounds, with their defaults.
    fn times(&mut self, idle_sec: Option<f64>, exit_grace_sec: Option<f64>) -> (f64, f64) {
        let idle_sec = idle_sec.unwrap_or(DEFAULT_IDLE_SEC);
        if !(idle_sec.is_finite() && idle_sec > 0.0 && idle_sec <= MAX_WAIT_SEC) {
            self.fail(
                format!(
                    "idle_sec must be above 0 and at most {MAX_WAIT_SEC} seconds (30 days), got {idle_sec}"
                ),
                "idle_sec",
            );
        }
        let exit_grace_sec = exit_grace_sec.unwrap_or(DEFAULT_EXIT_GRACE_SEC);
        if !(exit_grace_sec.is_finite() && (0.0..=MAX_EXIT_GRACE_SEC).contains(&exit_grace_sec)) {
            self.fail(
                format!(
                    "exit_grace_sec must be from 0 to {MAX_EXIT_GRACE_SEC} seconds, got {exit_grace_sec}"
                ),
                "exit_grace_sec",
            );
        }
        (idle_sec, exit_grace_sec)
    }

    /// `tail_rows` and `prompt_region_rows`: from 1 to `MAX_ROWS`.
    fn rows(&mut self, tail_rows: Option<usize>, prompt_region_rows: Option<usize>) {
        for (key, rows) in [
            ("tail_rows", tail_rows),
            ("prompt_region_rows", prompt_region_rows),
        ] {
            if let Some(rows) = rows
                && !(1..=MAX_ROWS).contains(&rows)
            {
                self.fail(
                    format!("{key} must be from 1 to {MAX_ROWS}, got {rows}"),
                    key,
                );
            }
        }
    }

    /// Every account has a name, used once.
    fn accounts(&mut self, accounts: &[Account]) {
        for (i, account) in accounts.iter().enumerate() {
            if account.name.trim().is_empty() {
                self.fail(format!("account {} has no name", i + 1), "accounts");
            } else if accounts[..i].iter().any(|a| a.name == account.name) {
                self.fail(
                    format!("account name {:?} is used twice", account.name),
                    &account.name,
                );
            }
        }
    }

    /// A `resume` argv says where the session id goes.
    fn resume(&mut self, resume: &[String]) {
        if !resume.is_empty() && !resume.iter().any(|part| part.contains("{session_id}")) {
            self.fail(
                "resume has no {session_id}; write the argv that continues a session, e.g. \
                 [\"claude\", \"--resume\", \"{session_id}\", \"-p\", \"{rendered_prompt}\"]"
                    .to_string(),
                "resume",
            );
        }
    }

    /// A `notify` argv starts with a program.
    fn notify(&mut self, notify: &[String]) {
        if notify
            .first()
            .is_some_and(|program| program.trim().is_empty())
        {
            self.fail(
                "notify must start with the program to run, e.g. [\"sh\", \"-c\", \"curl -d @- \
                 ntfy.sh/my-topic\"]"
                    .to_string(),
                "notify",
            );
        }
    }
}

/// A prompt rule's `wait_sec`: from 0 to a minute.
fn wait_of(c: &mut Compiler<'_>, rule: &str, wait_sec: Option<f64>) -> std::time::Duration {
    match wait_sec {
        None => std::time::Duration::ZERO,
        Some(sec) if sec.is_finite() && (0.0..=60.0).contains(&sec) => {
            std::time::Duration::from_secs_f64(sec)
        }
        Some(sec) => {
            c.fail(
                format!("prompts {rule}: wait_sec must be from 0 to 60 seconds"),
                &sec.to_string(),
            );
            std::time::Duration::ZERO
        }
    }
}
