//! A permission request as data. A request is read or `Unread`: one with any part herd could not
//! read keeps an excerpt, and the guard never allows it by itself.

use std::fmt;

use super::input;

/// What is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestKind {
    /// Run a shell command line.
    Shell { command: String },
    /// Change an existing file.
    Edit { path: String },
    /// Create or overwrite a file.
    Write { path: String },
    /// Read a file.
    Read { path: String },
    /// Fetch a URL.
    Fetch { url: String },
    /// Any other tool (MCP and the like), by name with every text of its input.
    Tool { name: String, input: String },
    /// A request herd could not read fully (`what`: an excerpt). Only the operator approves it.
    Unread { what: String },
}

/// One request, with the options the dialog offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub kind: RequestKind,
    /// The options as drawn (`1. Yes`, `2. Yes, and don't ask again …`), when known.
    pub options: Vec<String>,
    /// Other readings of the same screen text: judged too, any refusal stands.
    pub alternatives: Vec<String>,
    /// Further things the request does (an edit's other files): each must be allowed.
    pub also: Vec<RequestKind>,
    /// The folder the command runs in, when the request names one.
    pub workdir: Option<String>,
}

impl Request {
    pub fn new(kind: RequestKind) -> Request {
        Request {
            kind,
            options: Vec::new(),
            alternatives: Vec::new(),
            also: Vec::new(),
            workdir: None,
        }
    }

    /// A request herd could not read, with an excerpt of what it saw.
    pub fn unread(what: &str) -> Request {
        Request::new(RequestKind::Unread {
            what: input::excerpt(what),
        })
    }

    /// Whether every part of the request was read: no part of it is `Unread`.
    pub fn is_read(&self) -> bool {
        !std::iter::once(&self.kind)
            .chain(&self.also)
            .any(|k| matches!(k, RequestKind::Unread { .. }))
    }

    /// What herd could not read, when some part of the request is unread.
    pub fn unread_part(&self) -> Option<&str> {
        std::iter::once(&self.kind)
            .chain(&self.also)
            .find_map(|k| match k {
                RequestKind::Unread { what } => Some(what.as_str()),
                _ => None,
            })
    }

    /// The kind's name as rules write it (`Bash`, `Edit`, a tool's name, `Unknown`).
    pub fn tool(&self) -> &str {
        match &self.kind {
            RequestKind::Shell { .. } => "Bash",
            RequestKind::Edit { .. } => "Edit",
            RequestKind::Write { .. } => "Write",
            RequestKind::Read { .. } => "Read",
            RequestKind::Fetch { .. } => "WebFetch",
            RequestKind::Tool { name, .. } => name,
            RequestKind::Unread { .. } => "Unread",
        }
    }

    /// The exact text asked about: the command, the path, the URL or the tool's input.
    pub fn text(&self) -> &str {
        match &self.kind {
            RequestKind::Shell { command } => command,
            RequestKind::Edit { path }
            | RequestKind::Write { path }
            | RequestKind::Read { path } => path,
            RequestKind::Fetch { url } => url,
            RequestKind::Tool { input, .. } => input,
            RequestKind::Unread { what } => what,
        }
    }

    /// `Bash: npm test`, `Edit: src/main.rs`: what is asked, for a row or a notification.
    pub fn short(&self) -> String {
        match (&self.kind, self.text()) {
            (RequestKind::Unread { .. }, "") => "a prompt".to_string(),
            (RequestKind::Unread { .. }, what) => format!("unread: {what}"),
            (_, "") => self.tool().to_string(),
            (_, text) => format!("{}: {text}", self.tool()),
        }
    }

    /// `shell`, `edit`, `write`, `read`, `fetch`, `tool` or `unread`, for records.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            RequestKind::Shell { .. } => "shell",
            RequestKind::Edit { .. } => "edit",
            RequestKind::Write { .. } => "write",
            RequestKind::Read { .. } => "read",
            RequestKind::Fetch { .. } => "fetch",
            RequestKind::Tool { .. } => "tool",
            RequestKind::Unread { .. } => "unread",
        }
    }

    /// Builds a request from a kind name (as `kind_name` gives, or a rule's tool name) and text.
    pub fn from_parts(kind: &str, text: &str) -> Request {
        let text = text.to_string();
        Request::new(match kind.to_ascii_lowercase().as_str() {
            "shell" | "bash" => RequestKind::Shell { command: text },
            "edit" | "multiedit" | "notebookedit" => RequestKind::Edit { path: text },
            "write" | "create" => RequestKind::Write { path: text },
            "read" => RequestKind::Read { path: text },
            "fetch" | "webfetch" => RequestKind::Fetch { url: text },
            "unknown" | "unread" => RequestKind::Unread { what: text },
            _ => RequestKind::Tool {
                name: kind.to_string(),
                input: text,
            },
        })
    }

    /// Reads a request as rules write it (`Bash(rm -rf build)`, `WebFetch(https://x)`, `Bash`, an
    /// MCP tool); `None` for anything else.
    pub fn parse(spec: &str) -> Option<Request> {
        let spec = spec.trim();
        match spec.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest.strip_suffix(')')?;
                is_tool_name(tool).then(|| Request::from_parts(tool, inner))
            }
            None if is_known_tool(spec) => Some(Request::from_parts(spec, "")),
            None => None,
        }
    }

    /// As `parse`, and anything else is the shell command it looks like (`rm -rf ~` is
    /// `Bash(rm -rf ~)`).
    pub fn parse_or_shell(spec: &str) -> Request {
        Request::parse(spec).unwrap_or_else(|| Request::from_parts("shell", spec.trim()))
    }
}

/// A tool's name as rules write it: letters, digits, `_`, `-`, `.`; no spaces or shell syntax.
fn is_tool_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A bare word that names a tool rather than a program: the kinds rules name, and MCP tools.
fn is_known_tool(text: &str) -> bool {
    const TOOLS: [&str; 10] = [
        "Bash",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Write",
        "Read",
        "WebFetch",
        "WebSearch",
        "Glob",
        "Grep",
    ];
    TOOLS.contains(&text) || (text.starts_with("mcp__") && is_tool_name(text))
}

/// `Bash(npm test)`, `Edit(a.rs) + Edit(b.rs)`: the request and every other part of it.
impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_kind(f, self)?;
        for part in &self.also {
            f.write_str(" + ")?;
            write_kind(f, &Request::new(part.clone()))?;
        }
        Ok(())
    }
}

fn write_kind(f: &mut fmt::Formatter<'_>, request: &Request) -> fmt::Result {
    match &request.kind {
        RequestKind::Unread { what } if what.is_empty() => {
            f.write_str("a prompt herd could not read")
        }
        RequestKind::Unread { what } => write!(f, "a request herd could not read: {what}"),
        RequestKind::Tool { name, input } if input.is_empty() => f.write_str(name),
        _ => write!(f, "{}({})", request.tool(), request.text()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_typed_on_the_command_line_is_a_tool_only_when_written_as_one() {
        let shell = |command: &str| RequestKind::Shell {
            command: command.into(),
        };
        let table: [(&str, RequestKind); 8] = [
            ("rm -rf ~", shell("rm -rf ~")),
            ("  make  ", shell("make")),
            ("rm -rf $(pwd)", shell("rm -rf $(pwd)")),
            ("echo (hi)", shell("echo (hi)")),
            ("Bash(rm -rf build)", shell("rm -rf build")),
            (
                "Edit(src/main.rs)",
                RequestKind::Edit {
                    path: "src/main.rs".into(),
                },
            ),
            ("Bash", shell("")),
            (
                "mcp__github__create_issue",
                RequestKind::Tool {
                    name: "mcp__github__create_issue".into(),
                    input: String::new(),
                },
            ),
        ];
        for (typed, expected) in table {
            assert_eq!(Request::parse_or_shell(typed).kind, expected, "{typed:?}");
        }
        assert_eq!(Request::parse("rm -rf ~"), None);
    }

    #[test]
    fn a_request_in_short_says_the_tool_and_what_it_asks() {
        assert_eq!(
            Request::parse_or_shell("npm test").short(),
            "Bash: npm test"
        );
        assert_eq!(
            Request::from_parts("edit", "src/main.rs").short(),
            "Edit: src/main.rs"
        );
        assert_eq!(Request::from_parts("mcp__x", "").short(), "mcp__x");
        assert_eq!(Request::unread("").short(), "a prompt");
    }

    #[test]
    fn requests_as_rules_write_them() {
        assert_eq!(
            Request::parse("Bash(rm -rf $(pwd))").map(|r| r.to_string()),
            Some("Bash(rm -rf $(pwd))".into())
        );
        assert_eq!(
            Request::parse("Edit(src/a.rs)").map(|r| r.kind_name()),
            Some("edit")
        );
        assert!(Request::parse("Bash(unclosed").is_none());
        assert!(Request::parse("").is_none());
    }
}
