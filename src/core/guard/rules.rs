//! Permission rules in Claude Code's syntax (see `herd policy check --help`), and matching them
//! against requests. `Edit` rules cover `Write` too; globs are compiled when the rule is read.

use std::fmt;

use thiserror::Error;

use super::glob::{GlobKind, RuleGlob};
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
    /// The specifier as a glob over a command line or a tool's input.
    text_glob: Option<RuleGlob>,
    /// The specifier as a glob over a path, for the tools that name files.
    path_glob: Option<PathGlob>,
}

/// Where a path rule starts: its glob matches what follows that folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathAnchor {
    /// `//…`: an absolute path.
    Root,
    /// `~` or `~/…`: the home folder.
    Home,
    /// Anything else: the task's folder.
    TaskDir,
}

/// A path rule's glob, compiled against the text after its anchor folder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PathGlob {
    anchor: PathAnchor,
    /// What follows the anchor as written: `""` or `/…`.
    rest: String,
    glob: RuleGlob,
}

impl PathGlob {
    fn new(spec: &str) -> Result<PathGlob, globset::Error> {
        let (anchor, rest) = if let Some(abs) = spec.strip_prefix("//") {
            (PathAnchor::Root, format!("/{abs}"))
        } else if spec == "~" || spec.starts_with("~/") {
            (PathAnchor::Home, spec[1..].to_string())
        } else {
            let rel = spec.trim_start_matches("./").trim_start_matches('/');
            (PathAnchor::TaskDir, format!("/{rel}"))
        };
        let glob = RuleGlob::new(&rest, GlobKind::Path)?;
        Ok(PathGlob { anchor, rest, glob })
    }

    fn matches(&self, target: &str, ctx: &GuardContext) -> bool {
        let task_dir;
        let anchor = match self.anchor {
            PathAnchor::Root => "",
            PathAnchor::Home => ctx.home.trim_end_matches('/'),
            PathAnchor::TaskDir => {
                task_dir = normalise(&ctx.task_dir);
                task_dir.trim_end_matches('/')
            }
        };
        target
            .strip_prefix(anchor)
            .is_some_and(|after| self.glob.is_match(after))
            || !self.rest.contains('*')
                && is_within(target, &normalise(&format!("{anchor}{}", self.rest)))
    }
}

/// The tools whose rules name files (`Edit(src/**)`).
const PATH_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "Read"];

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
        let text_glob = specifier
            .as_deref()
            .map(|spec| RuleGlob::new(spec, GlobKind::Text))
            .transpose()
            .map_err(|e| fail(&e.to_string()))?;
        let path_glob = specifier
            .as_deref()
            .filter(|_| PATH_TOOLS.contains(&tool))
            .map(PathGlob::new)
            .transpose()
            .map_err(|e| fail(&e.to_string()))?;
        Ok(Rule {
            text: trimmed.to_string(),
            tool: tool.to_string(),
            specifier,
            text_glob,
            path_glob,
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
            return self.text_glob_matches(command);
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
                self.tool == *name && (self.specifier.is_none() || self.text_glob_matches(input))
            }
            RequestKind::Shell { .. } | RequestKind::Unread { .. } => false,
        }
    }

    fn text_glob_matches(&self, text: &str) -> bool {
        self.text_glob.as_ref().is_some_and(|g| g.is_match(text))
    }

    fn matches_path(&self, path: &str, ctx: &GuardContext) -> bool {
        if self.specifier.is_none() {
            return true;
        }
        let target = ctx.absolute(path);
        self.path_glob
            .as_ref()
            .is_some_and(|glob| glob.matches(&target, ctx))
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

    /// `?` is one character but never `/`, in a path rule and in a command rule.
    #[test]
    fn question_mark_is_one_character_but_never_a_slash() {
        let c = ctx();
        let edit = |p: &str| Request::from_parts("edit", p);
        assert!(rule("Edit(src/?.rs)").matches_other(&edit("src/a.rs"), &c));
        assert!(!rule("Edit(src/?.rs)").matches_other(&edit("src/ab.rs"), &c));
        assert!(rule("Edit(src?a.rs)").matches_other(&edit("src_a.rs"), &c));
        assert!(!rule("Edit(src?a.rs)").matches_other(&edit("src/a.rs"), &c));
        assert!(rule("Bash(cat ?.txt*)").matches_command("cat a.txt"));
        assert!(!rule("Bash(cat ?.txt*)").matches_command("cat /.txt"));
    }

    /// The task's folder is a folder, not a glob: a `*` or `?` in its name is literal.
    #[test]
    fn the_task_folder_is_literal() {
        let c = GuardContext {
            task_dir: "/w/a?c".into(),
            ..ctx()
        };
        let edit = |p: &str| Request::from_parts("edit", p);
        assert!(rule("Edit(src/**)").matches_other(&edit("/w/a?c/src/x.rs"), &c));
        assert!(!rule("Edit(src/**)").matches_other(&edit("/w/abc/src/x.rs"), &c));
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
