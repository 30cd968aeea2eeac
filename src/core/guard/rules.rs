//! Permission rules in the syntax Claude Code users know, and matching them against requests.
//!
//! `Bash` (any command), `Bash(npm test)` (exactly), `Bash(npm test:*)` (that prefix, then
//! anything), `Bash(git * main)` (`*` is any text); `Edit(src/**)`, `Write(docs/*.md)`,
//! `Read(~/.config/**)` (globs: `**` crosses folders, `*` does not; relative to the task's
//! folder, `~/` the home, `//` an absolute path); `Edit` rules cover `Write` too;
//! `WebFetch(domain:example.com)` (that host or its subdomains); any other tool by its name,
//! optionally with a glob on its input (`mcp__github__create_issue`).

use std::fmt;

use thiserror::Error;

use super::paths::{GuardContext, is_within, normalise};
use super::request::{Request, RequestKind};

/// A rule that does not read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("rule {rule:?}: {problem}")]
pub struct RuleError {
    pub rule: String,
    pub problem: String,
}

/// One compiled rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// As written, for messages.
    pub text: String,
    tool: String,
    specifier: Option<String>,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let trimmed = text.trim();
        let fail = |problem: &str| RuleError {
            rule: text.to_string(),
            problem: problem.to_string(),
        };
        let (tool, specifier) = match trimmed.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| fail("a rule with `(` must end with `)`"))?;
                (tool, (!inner.is_empty()).then(|| inner.to_string()))
            }
            None => (trimmed, None),
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(fail(
                "name a tool first, e.g. Bash(npm test:*), Edit(src/**), WebFetch(domain:example.com)",
            ));
        }
        if tool == "WebFetch"
            && let Some(spec) = &specifier
            && !spec.starts_with("domain:")
        {
            return Err(fail(
                "WebFetch rules name a domain: WebFetch(domain:example.com)",
            ));
        }
        Ok(Rule {
            text: trimmed.to_string(),
            tool: tool.to_string(),
            specifier,
        })
    }

    /// Whether the rule covers one simple command line (already split by the shell parser).
    pub fn matches_command(&self, command: &str) -> bool {
        if self.tool != "Bash" {
            return false;
        }
        let Some(spec) = &self.specifier else {
            return true;
        };
        let command = command.trim();
        if let Some(prefix) = spec.strip_suffix(":*") {
            let prefix = prefix.trim();
            return command == prefix
                || command
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with(' '));
        }
        if spec.contains('*') {
            return glob_match(spec, command, true);
        }
        command == spec.trim()
    }

    /// Whether the rule covers a request that is not a shell command.
    pub fn matches_other(&self, request: &Request, ctx: &GuardContext) -> bool {
        match &request.kind {
            RequestKind::Edit { path } | RequestKind::Write { path } => {
                let tool_ok = self.tool == "Edit"
                    || self.tool == request.tool()
                    || self.tool == "MultiEdit" && matches!(request.kind, RequestKind::Edit { .. });
                tool_ok && self.matches_path(path, ctx)
            }
            RequestKind::Read { path } => self.tool == "Read" && self.matches_path(path, ctx),
            RequestKind::Fetch { url } => {
                self.tool == "WebFetch"
                    && self.specifier.as_deref().is_none_or(|spec| {
                        let domain = spec.trim_start_matches("domain:").to_ascii_lowercase();
                        let host = url_host(url);
                        host == domain || host.ends_with(&format!(".{domain}"))
                    })
            }
            RequestKind::Tool { name, input } => {
                self.tool == *name
                    && self
                        .specifier
                        .as_deref()
                        .is_none_or(|spec| glob_match(spec, input, true))
            }
            RequestKind::Shell { .. } | RequestKind::Unknown => false,
        }
    }

    fn matches_path(&self, path: &str, ctx: &GuardContext) -> bool {
        let Some(spec) = &self.specifier else {
            return true;
        };
        let target = ctx.absolute(path);
        let pattern = if let Some(abs) = spec.strip_prefix("//") {
            format!("/{abs}")
        } else if spec == "~" || spec.starts_with("~/") {
            format!("{}{}", ctx.home.trim_end_matches('/'), &spec[1..])
        } else {
            let rel = spec.trim_start_matches("./").trim_start_matches('/');
            format!("{}/{rel}", normalise(&ctx.task_dir).trim_end_matches('/'))
        };
        glob_match(&pattern, &target, false)
            || !pattern.contains('*') && is_within(&target, &normalise(&pattern))
    }
}

/// The host of a URL, lower-cased (`https://user@Example.com:443/x` → `example.com`).
pub fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    host.to_ascii_lowercase()
}

/// `*` matches any text (or, for paths, any text without `/`); `**` any text; `?` one char.
pub fn glob_match(pattern: &str, text: &str, star_crosses_slash: bool) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with memo on (pi, ti).
    let mut memo = vec![vec![None; t.len() + 1]; p.len() + 1];
    fn go(
        p: &[char],
        t: &[char],
        pi: usize,
        ti: usize,
        cross: bool,
        memo: &mut Vec<Vec<Option<bool>>>,
    ) -> bool {
        if let Some(v) = memo[pi][ti] {
            return v;
        }
        let result = if pi == p.len() {
            ti == t.len()
        } else if p[pi] == '*' {
            let double = p.get(pi + 1) == Some(&'*');
            let next = if double { pi + 2 } else { pi + 1 };
            // `**/` also matches no folder at all.
            let skip_slash = double && p.get(next) == Some(&'/');
            let any = cross || double;
            let mut found = go(p, t, next, ti, cross, memo)
                || skip_slash && go(p, t, next + 1, ti, cross, memo);
            let mut k = ti;
            while !found && k < t.len() && (any || t[k] != '/') {
                k += 1;
                found = go(p, t, next, k, cross, memo);
            }
            found
        } else if ti < t.len() && (p[pi] == '?' && t[ti] != '/' || p[pi] == t[ti]) {
            go(p, t, pi + 1, ti + 1, cross, memo)
        } else {
            false
        };
        memo[pi][ti] = Some(result);
        result
    }
    go(&p, &t, 0, 0, star_crosses_slash, &mut memo)
}

/// Allow, ask and deny lists, compiled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleSet {
    pub allow: Vec<Rule>,
    pub ask: Vec<Rule>,
    pub deny: Vec<Rule>,
}

impl RuleSet {
    /// Compiles the three lists; every rule that does not read is reported.
    pub fn parse(
        allow: &[String],
        ask: &[String],
        deny: &[String],
    ) -> Result<RuleSet, Vec<RuleError>> {
        let mut errors = Vec::new();
        let mut compile = |list: &[String]| {
            list.iter()
                .filter_map(|r| Rule::parse(r).map_err(|e| errors.push(e)).ok())
                .collect::<Vec<_>>()
        };
        let set = RuleSet {
            allow: compile(allow),
            ask: compile(ask),
            deny: compile(deny),
        };
        if errors.is_empty() {
            Ok(set)
        } else {
            Err(errors)
        }
    }

    /// Adds the rules of `other` after these (a task's rules first, then its profile's).
    pub fn extend(&mut self, other: &RuleSet) {
        self.allow.extend(other.allow.iter().cloned());
        self.ask.extend(other.ask.iter().cloned());
        self.deny.extend(other.deny.iter().cloned());
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> GuardContext {
        GuardContext {
            task_dir: "/w/p".into(),
            home: "/h".into(),
            ..GuardContext::default()
        }
    }

    fn rule(text: &str) -> Rule {
        Rule::parse(text).expect("rule")
    }

    #[test]
    fn bash_rules() {
        assert!(rule("Bash(npm test:*)").matches_command("npm test"));
        assert!(rule("Bash(npm test:*)").matches_command("npm test -- --watch"));
        assert!(!rule("Bash(npm test:*)").matches_command("npm testing"));
        assert!(rule("Bash(npm test)").matches_command("npm test"));
        assert!(!rule("Bash(npm test)").matches_command("npm test x"));
        assert!(rule("Bash(git * main)").matches_command("git push origin main"));
        assert!(rule("Bash").matches_command("anything at all"));
        assert!(!rule("Edit").matches_command("ls"));
    }

    #[test]
    fn path_rules() {
        let c = ctx();
        let edit = |p: &str| Request::from_parts("edit", p);
        assert!(rule("Edit(src/**)").matches_other(&edit("src/a/b.rs"), &c));
        assert!(rule("Edit(src/**)").matches_other(&edit("/w/p/src/x.rs"), &c));
        assert!(!rule("Edit(src/**)").matches_other(&edit("tests/x.rs"), &c));
        assert!(!rule("Edit(src/*.rs)").matches_other(&edit("src/a/b.rs"), &c));
        assert!(
            rule("Edit(src/*.rs)").matches_other(&Request::from_parts("write", "src/b.rs"), &c)
        );
        assert!(!rule("Write(src/**)").matches_other(&edit("src/b.rs"), &c));
        assert!(
            rule("Read(~/.cache/**)").matches_other(&Request::from_parts("read", "~/.cache/x"), &c)
        );
        assert!(rule("Edit(//etc/hosts)").matches_other(&edit("/etc/hosts"), &c));
        assert!(rule("Edit").matches_other(&edit("anything"), &c));
    }

    #[test]
    fn fetch_and_tool_rules() {
        let c = ctx();
        let fetch = |u: &str| Request::from_parts("fetch", u);
        let r = rule("WebFetch(domain:example.com)");
        assert!(r.matches_other(&fetch("https://example.com/a"), &c));
        assert!(r.matches_other(&fetch("https://docs.Example.com:8080/a"), &c));
        assert!(!r.matches_other(&fetch("https://evilexample.com/"), &c));
        assert!(!r.matches_other(&fetch("https://example.com.evil.net/"), &c));
        let t = Request::from_parts("mcp__gh__create_issue", "{\"title\":\"x\"}");
        assert!(rule("mcp__gh__create_issue").matches_other(&t, &c));
        assert!(!rule("mcp__gh__delete_repo").matches_other(&t, &c));
    }

    #[test]
    fn bad_rules_are_reported() {
        assert!(Rule::parse("Bash(npm test").is_err());
        assert!(Rule::parse("(x)").is_err());
        assert!(Rule::parse("WebFetch(example.com)").is_err());
        let errors = RuleSet::parse(&["ok".into(), "Bad rule(".into()], &[], &[]).unwrap_err();
        assert_eq!(errors.len(), 1);
    }
}
