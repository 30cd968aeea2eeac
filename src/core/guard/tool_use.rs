//! A named tool call (a hook's payload, a stream's `tool_use`, a denial) read into the guard's
//! request: each family's keys read or passed over, anything else unread. Tools that act inside
//! the agent are read with every text of their input; MCP tools need an allow rule naming them;
//! an unknown tool is unread. Pure.

use serde_json::Value;

use super::input::{self, Fields};
use super::request::{Request, RequestKind};

/// What a tool's name says it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Shell,
    Edit,
    Write,
    Read,
    Fetch,
    /// Acts only inside the agent (search, plan, to-do, sub-agent whose own calls are judged).
    Inert,
    /// An MCP server's tool: herd cannot tell what it does.
    Mcp,
    Unknown,
}

/// Tools that change nothing outside the agent, or whose effects come as calls of their own.
const INERT: [&str; 27] = [
    "Glob",
    "Grep",
    "LS",
    "TodoWrite",
    "WebSearch",
    "Task",
    "Agent",
    "TaskCreate",
    "TaskUpdate",
    "TaskList",
    "TaskGet",
    "TaskOutput",
    "TaskStop",
    "BashOutput",
    "KillShell",
    "ExitPlanMode",
    "EnterPlanMode",
    "AskUserQuestion",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "glob",
    "search_file_content",
    "grep_search",
    "google_web_search",
    "write_todos",
    "list_directory",
    "read_many_files",
];

fn family(name: &str) -> Family {
    match name {
        "Bash" | "run_shell_command" | "shell" | "exec_command" | "local_shell" => Family::Shell,
        "Edit" | "MultiEdit" | "NotebookEdit" | "replace" | "edit_file" => Family::Edit,
        "Write" | "write_file" | "create_file" => Family::Write,
        "Read" | "read_file" => Family::Read,
        "WebFetch" | "web_fetch" => Family::Fetch,
        _ if INERT.contains(&name) => Family::Inert,
        _ if name.starts_with("mcp__") => Family::Mcp,
        _ => Family::Unknown,
    }
}

/// Whether the switch may approve a tool of this name: only tools acting inside the agent.
pub fn switch_may_allow(name: &str) -> bool {
    family(name) == Family::Inert
}

/// Keys of a shell call that carry no action of their own.
pub const SHELL_PASS: [&str; 12] = [
    "description",
    "timeout",
    "timeout_ms",
    "run_in_background",
    "is_background",
    "dangerouslyDisableSandbox",
    "justification",
    "sandbox_permissions",
    "yield_time_ms",
    "max_output_tokens",
    "login",
    "tty",
];

/// Keys of an edit or a write that hold the text it writes: its place is its path.
pub const EDIT_PASS: [&str; 11] = [
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "content",
    "new_source",
    "cell_id",
    "cell_type",
    "edit_mode",
    "expected_replacements",
    "instruction",
];

/// Keys of a read that only narrow it.
pub const READ_PASS: [&str; 3] = ["offset", "limit", "pages"];

/// The name an unread request is written under as a tool call, so it reads back the same.
pub const UNREAD_TOOL: &str = "Unread";

/// Reads a named tool's input into a request.
pub fn read(name: &str, input: Option<&Value>) -> Request {
    if name == UNREAD_TOOL {
        let what = input.and_then(|i| i.get("what")).and_then(Value::as_str);
        return Request::unread(what.unwrap_or_default());
    }
    let family = family(name);
    match family {
        Family::Inert | Family::Mcp => return tool(name, input),
        Family::Unknown => return Request::unread(&named(name, input)),
        _ => {}
    }
    let mut fields = Fields::of(input);
    let request = match family {
        Family::Shell => shell(&mut fields),
        Family::Edit => files(&mut fields, &EDIT_PASS, |path| RequestKind::Edit { path }),
        Family::Write => files(&mut fields, &EDIT_PASS, |path| RequestKind::Write { path }),
        Family::Read => files(&mut fields, &READ_PASS, |path| RequestKind::Read { path }),
        _ => fetch(&mut fields),
    };
    let mut unread = match (request, fields.finish()) {
        (Some(request), Ok(())) => return request,
        (_, Err(left)) => Request::unread(&format!("{name} with {left}")),
        (None, Ok(())) => Request::unread(&named(name, input)),
    };
    // Every text of it is judged as a command too: a dangerous one is refused, not just asked.
    unread.alternatives = input
        .map(input::strings)
        .unwrap_or_default()
        .into_iter()
        .map(str::to_string)
        .collect();
    unread
}

/// `name(every text of its input)`, or the name alone: how an unread call is shown.
fn named(name: &str, input: Option<&Value>) -> String {
    let texts = input.map(input::strings).unwrap_or_default();
    if texts.is_empty() {
        name.to_string()
    } else {
        format!("{name}({})", texts.join(" "))
    }
}

/// A tool read as its name and every text of its input.
fn tool(name: &str, input: Option<&Value>) -> Request {
    let texts = input.map(input::strings).unwrap_or_default();
    Request::new(RequestKind::Tool {
        name: name.to_string(),
        input: texts.join(" "),
    })
}

/// A shell call: every command it states (as one script) and the folder it runs in.
fn shell(fields: &mut Fields<'_>) -> Option<Request> {
    fields.pass_over(&SHELL_PASS);
    let workdir = fields.workdir();
    let mut commands = fields
        .commands()
        .into_iter()
        .map(|command| RequestKind::Shell { command });
    // Each command is judged on its own, as the agent runs it.
    let mut request = Request::new(commands.next()?);
    request.also = commands.collect();
    request.workdir = workdir;
    Some(request)
}

/// A request about files: the first path is the request, the others go with it.
fn files(
    fields: &mut Fields<'_>,
    pass: &[&str],
    kind: impl Fn(String) -> RequestKind,
) -> Option<Request> {
    fields.pass_over(pass);
    let mut paths = fields.paths().into_iter();
    let mut request = Request::new(kind(paths.next()?));
    request.also = paths.map(kind).collect();
    Some(request)
}

/// A fetch: its URL (Gemini's `web_fetch` states its URLs in its prompt, read whole).
fn fetch(fields: &mut Fields<'_>) -> Option<Request> {
    fields.pass_over(&["timeout"]);
    let url = match fields.text(&["url"]) {
        Some(url) => {
            fields.pass_over(&["prompt"]);
            url
        }
        None => fields.text(&["prompt"])?,
    };
    Some(Request::new(RequestKind::Fetch { url }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_as(name: &str, input: Value) -> String {
        read(name, Some(&input)).to_string()
    }

    #[test]
    fn known_tools_read_as_their_requests() {
        let table = [
            (
                "Bash",
                json!({"command": "npm test", "description": "d", "timeout": 5}),
                "Bash(npm test)",
            ),
            (
                "run_shell_command",
                json!({"command": "ls", "dir_path": "src", "is_background": false}),
                "Bash(ls)",
            ),
            (
                "exec_command",
                json!({"cmd": "touch x", "sandbox_permissions": "require_escalated", "justification": "j"}),
                "Bash(touch x)",
            ),
            (
                "Edit",
                json!({"file_path": "/a/b.rs", "old_string": "x", "new_string": "y"}),
                "Edit(/a/b.rs)",
            ),
            (
                "Write",
                json!({"file_path": "/tmp/a.txt", "content": "hello"}),
                "Write(/tmp/a.txt)",
            ),
            (
                "Read",
                json!({"file_path": "a.rs", "offset": 1, "limit": 5}),
                "Read(a.rs)",
            ),
            (
                "WebFetch",
                json!({"url": "https://x.io", "prompt": "p", "timeout": 3}),
                "WebFetch(https://x.io)",
            ),
            (
                "web_fetch",
                json!({"prompt": "read https://x.io"}),
                "WebFetch(read https://x.io)",
            ),
            (
                "Task",
                json!({"description": "d", "prompt": "p"}),
                "Task(d p)",
            ),
            (
                "mcp__x__y",
                json!({"q": "hi", "n": {"deep": "there"}}),
                "mcp__x__y(hi there)",
            ),
        ];
        for (name, input, expected) in table {
            assert_eq!(read_as(name, input.clone()), expected, "{name} {input}");
        }
        let with_dir = read("Bash", Some(&json!({"command": "ls", "cwd": "/elsewhere"})));
        assert_eq!(with_dir.workdir.as_deref(), Some("/elsewhere"));
    }

    #[test]
    fn anything_herd_cannot_read_is_unread() {
        let table = [
            ("Bash", json!({"command": "make test", "then": "rm -rf ~"})),
            ("Bash", json!({"description": "rm -rf ~/x && make test"})),
            ("Bash", json!("rm -rf ~")),
            ("Edit", json!({"old_string": "x"})),
            ("Write", json!({"file_path": "a", "mode": "0777"})),
            ("exec_command", json!({"cmd": "ls", "shell": "/bin/evil"})),
            ("REPL", json!({"code": "import os; os.system('rm -rf ~')"})),
            ("Workflow", json!({"script": "x"})),
        ];
        for (name, input) in table {
            let request = read(name, Some(&input));
            assert!(!request.is_read(), "{name} {input} read as {request}");
        }
    }

    mod arbitrary {
        //! The invariant over input no one wrote by hand: a hook's or a stream's tool call is
        //! allowed by the switch only when every text of its input that can act was judged.

        use proptest::prelude::*;

        use super::*;
        use crate::core::guard::arbitrary_input::{json_value, judged_texts};
        use crate::core::guard::{self, GuardContext, Policy};

        fn name() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("Bash".to_string()),
                Just("exec_command".to_string()),
                Just("Edit".to_string()),
                Just("Write".to_string()),
                Just("Read".to_string()),
                Just("WebFetch".to_string()),
                Just("Task".to_string()),
                Just("mcp__db__query".to_string()),
                Just("REPL".to_string()),
                "[A-Za-z_]{1,10}",
            ]
        }

        /// The keys whose text herd passes over for a tool of this family.
        fn passed_over(family: Family) -> Vec<&'static str> {
            match family {
                Family::Shell => SHELL_PASS.to_vec(),
                Family::Edit | Family::Write => EDIT_PASS.to_vec(),
                Family::Read => READ_PASS.to_vec(),
                Family::Fetch => vec!["prompt", "timeout"],
                _ => Vec::new(),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn nothing_is_allowed_that_was_not_read_and_judged(
                name in name(),
                input in prop::option::of(json_value()),
            ) {
                let request = read(&name, input.as_ref());
                let policy = Policy {
                    allow_unless_refused: Some("auto_press_1".into()),
                    ..Policy::default()
                };
                let ctx = GuardContext {
                    task_dir: "/work/task".into(),
                    home: "/home/u".into(),
                    ..GuardContext::default()
                };
                let decision = guard::decide(&request, &policy, &ctx);
                if !decision.is_allow() {
                    return Ok(());
                }
                prop_assert!(request.is_read(), "{name} {input:?}");
                let family = family(&name);
                prop_assert!(family != Family::Unknown && family != Family::Mcp, "{name} allowed");
                let judged = judged_texts(&request);
                if let Some(Value::Object(map)) = &input {
                    let pass = passed_over(family);
                    for (key, value) in map {
                        if pass.contains(&key.as_str()) {
                            continue;
                        }
                        for said in input::strings(value) {
                            prop_assert!(
                                judged.iter().any(|t| t.contains(said)),
                                "{name}: {key} = {said:?} not judged, yet allowed as {request}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn several_paths_are_all_in_the_request() {
        let request = read(
            "Edit",
            Some(&json!({"file_path": "a", "paths": ["b", "c"]})),
        );
        assert_eq!(request.kind, RequestKind::Edit { path: "a".into() });
        assert_eq!(request.also.len(), 2);
    }
}
