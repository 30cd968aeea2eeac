//! A permission request as data: what an agent asks to do, read from its dialog or its events.

use std::fmt;

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
    /// Any other tool (MCP and the like), by name with its input as text.
    Tool { name: String, input: String },
    /// A prompt whose request herd could not read.
    Unknown,
}

/// One request, with the options the dialog offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub kind: RequestKind,
    /// The options as drawn (`1. Yes`, `2. Yes, and don't ask again …`), when known.
    pub options: Vec<String>,
    /// Other readings of the same screen text (rows joined differently, a description row
    /// kept): judged too, and any refusal among them stands.
    pub alternatives: Vec<String>,
}

impl Request {
    pub fn new(kind: RequestKind) -> Request {
        Request {
            kind,
            options: Vec::new(),
            alternatives: Vec::new(),
        }
    }

    /// The kind's name as rules write it: `Bash`, `Edit`, `Write`, `Read`, `WebFetch`, the
    /// tool's name, or `Unknown`.
    pub fn tool(&self) -> &str {
        match &self.kind {
            RequestKind::Shell { .. } => "Bash",
            RequestKind::Edit { .. } => "Edit",
            RequestKind::Write { .. } => "Write",
            RequestKind::Read { .. } => "Read",
            RequestKind::Fetch { .. } => "WebFetch",
            RequestKind::Tool { name, .. } => name,
            RequestKind::Unknown => "Unknown",
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
            RequestKind::Unknown => "",
        }
    }

    /// `shell`, `edit`, `write`, `read`, `fetch`, `tool` or `unknown`, for records.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            RequestKind::Shell { .. } => "shell",
            RequestKind::Edit { .. } => "edit",
            RequestKind::Write { .. } => "write",
            RequestKind::Read { .. } => "read",
            RequestKind::Fetch { .. } => "fetch",
            RequestKind::Tool { .. } => "tool",
            RequestKind::Unknown => "unknown",
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
            "unknown" => RequestKind::Unknown,
            _ => RequestKind::Tool {
                name: kind.to_string(),
                input: text,
            },
        })
    }

    /// Reads `Bash(rm -rf build)`, `Edit(src/main.rs)`, `WebFetch(https://x)` or a bare tool name.
    pub fn parse(spec: &str) -> Option<Request> {
        let spec = spec.trim();
        match spec.split_once('(') {
            Some((tool, rest)) => {
                let inner = rest.strip_suffix(')')?;
                if tool.is_empty() {
                    return None;
                }
                Some(Request::from_parts(tool, inner))
            }
            None if !spec.is_empty() => Some(Request::from_parts(spec, "")),
            None => None,
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RequestKind::Unknown => f.write_str("a prompt herd could not read"),
            _ => write!(f, "{}({})", self.tool(), self.text()),
        }
    }
}
