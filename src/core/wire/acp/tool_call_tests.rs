use serde_json::{Value, json};

use super::*;
use crate::core::approval::GuardSetup;
use crate::core::guard::{Decision, GuardContext, RuleSet};
use crate::core::wire::acp::permission::{self, Choice, PermissionOption, PermissionPolicy};

/// Both auto switches on: the setup in which an unread request used to be approved.
fn both_switches() -> PermissionPolicy {
    PermissionPolicy {
        guard: GuardSetup {
            rules: RuleSet::default(),
            context: GuardContext {
                task_dir: "/work/task".into(),
                home: "/home/u".into(),
                ..GuardContext::default()
            },
        },
        auto_once: true,
        auto_always: true,
    }
}

fn options() -> Vec<PermissionOption> {
    permission::options_of(&json!({"options": [
        {"optionId": "always", "name": "Always Allow", "kind": "allow_always"},
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]}))
}

fn judged(tool_call: &Value) -> (Request, Decision, Choice) {
    let request = request_of(tool_call);
    let (decision, choice) = permission::decide(Some(&request), &options(), &both_switches());
    (request, decision, choice)
}

/// "Run the tests", with the real action stated the ways different agents state it.
fn run_the_tests(kind: Option<&str>, raw: Option<Value>, content: Option<&str>) -> Value {
    let mut call = json!({"toolCallId": "t1", "title": "Run the tests"});
    if let Some(kind) = kind {
        call["kind"] = json!(kind);
    }
    if let Some(raw) = raw {
        call["rawInput"] = raw;
    }
    if let Some(text) = content {
        call["content"] = json!([{"type": "content", "content": {"type": "text", "text": text}}]);
    }
    call
}

#[test]
fn a_dangerous_action_in_any_shape_under_a_harmless_title_is_never_allowed() {
    let danger = "rm -rf ~/x && make test";
    let shapes = [
        run_the_tests(Some("execute"), Some(json!({"command": danger})), None),
        run_the_tests(
            Some("execute"),
            Some(json!({"argv": ["sh", "-c", danger]})),
            None,
        ),
        run_the_tests(Some("execute"), Some(json!({"script": danger})), None),
        run_the_tests(
            Some("execute"),
            Some(json!({"commands": ["make test", "rm -rf ~/x"]})),
            None,
        ),
        run_the_tests(
            Some("execute"),
            Some(json!({"cmd": ["rm", "-rf", "/home/u/x"]})),
            None,
        ),
        run_the_tests(Some("execute"), None, Some(danger)),
        run_the_tests(Some("other"), Some(json!({"shell": danger})), None),
        run_the_tests(Some("think"), Some(json!({"command": danger})), None),
        run_the_tests(None, Some(json!({"command": danger})), None),
        run_the_tests(
            Some("execute"),
            Some(json!({"command": "make test", "then": danger})),
            None,
        ),
        run_the_tests(Some("mystery"), Some(json!({"text": danger})), None),
        json!({"kind": "delete", "title": "Clean up", "locations": [{"path": "/home/u/x"}]}),
        json!({"kind": "edit", "title": "Tidy", "rawInput": {"file_path": "/etc/hosts"}}),
        json!({"kind": "edit", "title": "Tidy", "rawInput": {"paths": ["src/a.rs", "/etc/passwd"]}}),
        json!({"kind": "move", "title": "Tidy", "locations": [{"path": "a"}, {"path": "/home/u/.ssh/id_rsa"}]}),
        json!({"kind": "execute", "title": "Run the tests",
               "rawInput": {"command": "make test", "cwd": "/"}}),
    ];
    for call in shapes {
        let (request, decision, choice) = judged(&call);
        assert!(
            !decision.is_allow()
                && !matches!(&choice, Choice::Select(o) if o.kind.starts_with("allow")),
            "{call}\n read as {request}\n decided {decision}"
        );
    }
}

#[test]
fn what_cannot_be_read_says_so_and_waits_for_the_operator() {
    let unread = [
        run_the_tests(Some("execute"), Some(json!({"shell": "make test"})), None),
        run_the_tests(Some("execute"), None, Some("make test && make lint")),
        run_the_tests(Some("other"), None, None),
        run_the_tests(Some("execute"), Some(json!("make test")), None),
        run_the_tests(Some("execute"), Some(json!({})), None),
        // codex-acp passing on a request for network access or more sandbox permissions.
        run_the_tests(
            Some("execute"),
            Some(json!({"command": "make test", "network_approval_context": {"host": "x.io"}})),
            None,
        ),
        run_the_tests(
            Some("execute"),
            Some(json!({"command": "make test", "additional_permissions": {"write": ["/"]}})),
            None,
        ),
    ];
    for call in unread {
        let (request, decision, choice) = judged(&call);
        assert!(!request.is_read(), "{call} read as {request}");
        assert!(
            decision
                .why()
                .starts_with("herd could not read this request"),
            "{call}: {decision}"
        );
        assert!(matches!(choice, Choice::Wait), "{call}");
    }
}

#[test]
fn a_harmless_command_in_the_same_setup_is_allowed() {
    let harmless = [
        run_the_tests(Some("execute"), Some(json!({"command": "make test"})), None),
        run_the_tests(
            Some("execute"),
            Some(json!({"argv": ["sh", "-c", "make test"]})),
            None,
        ),
        run_the_tests(Some("execute"), Some(json!({"script": "cargo test"})), None),
        run_the_tests(
            Some("execute"),
            Some(json!({"commands": ["make", "make test"]})),
            None,
        ),
        run_the_tests(
            Some("execute"),
            Some(json!({"command": "npm", "args": ["test"]})),
            None,
        ),
        run_the_tests(
            None,
            Some(json!({"command": "make test", "cwd": "/work/task"})),
            None,
        ),
        // claude-agent-acp's Bash: the description also shown as content.
        json!({"kind": "execute", "title": "make test", "rawInput":
            {"command": "make test", "description": "Run the tests", "timeout": 60000},
            "content": [{"type": "content", "content": {"type": "text", "text": "Run the tests"}}]}),
        // Gemini CLI: the command only as the title, its context as content.
        json!({"kind": "execute", "title": "make test", "locations": [],
            "content": [{"type": "content", "content": {"type": "text",
                "text": "[current working directory /work/task] (Run the tests)"}}]}),
        // codex-acp: the command with its folder.
        json!({"kind": "execute", "title": "make test",
            "rawInput": {"command": "make test", "cwd": "/work/task"}}),
        // codex-acp 2.6.0: Codex's approval request passed on whole, its reason as content.
        json!({"toolCallId": "call_mock_1", "kind": "execute", "status": "pending",
            "title": "touch conformance_tool_ran.txt",
            "content": [{"type": "content", "content": {"type": "text", "text":
                "Create the marker file the task asks for\nProposed Amendment: touch\nconformance_tool_ran.txt\nAvailable Decisions: Approved\nApprovedExecpolicyAmendment\nAbort"}}],
            "rawInput": {"call_id": "call_mock_1", "turn_id": "01a2", "started_at_ms": 1_795_913_841_357_u64,
                "command": ["/bin/bash", "-lc", "touch conformance_tool_ran.txt"], "cwd": "/work/task",
                "reason": "Create the marker file the task asks for",
                "proposed_execpolicy_amendment": ["touch", "conformance_tool_ran.txt"],
                "available_decisions": ["approved", {"approved_execpolicy_amendment":
                    {"proposed_execpolicy_amendment": ["touch", "conformance_tool_ran.txt"]}}, "abort"],
                "parsed_cmd": [{"type": "unknown", "cmd": "touch conformance_tool_ran.txt"}]}}),
    ];
    for call in harmless {
        let (request, decision, choice) = judged(&call);
        assert!(
            decision.is_allow(),
            "{call}\n read as {request}\n decided {decision}"
        );
        assert!(matches!(choice, Choice::Select(_)), "{call}");
    }
}

#[test]
fn the_real_adapters_shapes_read_as_their_requests() {
    let table = [
        // claude-agent-acp: Edit and Write carry the path in rawInput, locations and a diff.
        (
            json!({"kind": "edit", "title": "Edit src/a.rs",
                "rawInput": {"file_path": "/work/task/src/a.rs", "old_string": "a", "new_string": "b"},
                "locations": [{"path": "/work/task/src/a.rs"}],
                "content": [{"type": "diff", "path": "/work/task/src/a.rs", "oldText": "a", "newText": "b"}]}),
            "Edit(/work/task/src/a.rs)",
        ),
        (
            json!({"kind": "read", "title": "Read a.rs",
                "rawInput": {"file_path": "/work/task/a.rs", "offset": 1, "limit": 20},
                "locations": [{"path": "/work/task/a.rs", "line": 1}]}),
            "Read(/work/task/a.rs)",
        ),
        (
            json!({"kind": "search", "title": "grep \"x\"", "rawInput": {"pattern": "x", "output_mode": "content"}}),
            "Read(.)",
        ),
        (
            json!({"kind": "fetch", "title": "Fetch https://x.io",
                "rawInput": {"url": "https://x.io", "prompt": "summarise"},
                "content": [{"type": "content", "content": {"type": "text", "text": "summarise"}}]}),
            "WebFetch(https://x.io)",
        ),
        (
            json!({"kind": "execute", "title": "ls", "rawInput": {"command": ["bash", "-lc", "rm -rf build && ls"]}}),
            "Bash(rm -rf build && ls)",
        ),
    ];
    for (call, expected) in table {
        assert_eq!(request_of(&call).to_string(), expected, "{call}");
    }
    let two_files =
        request_of(&json!({"kind": "move", "locations": [{"path": "a"}, {"path": "b"}]}));
    assert_eq!(two_files.also, vec![RequestKind::Edit { path: "b".into() }]);
}

mod arbitrary {
    //! The invariant over input no one wrote by hand: whatever an agent sends, herd allows by
    //! itself only a request whose every stated command, path and URL it extracted and judged.

    use proptest::prelude::*;

    use super::*;
    use crate::core::guard::arbitrary_input::{json_value, judged_texts};

    /// Whether herd passes over `key` as carrying no action of its own.
    fn passed_over(key: &str) -> bool {
        PASS_OVER.iter().any(|list| list.contains(&key))
    }

    fn kind() -> impl Strategy<Value = Option<String>> {
        prop::option::of(prop_oneof![
            Just("execute".to_string()),
            Just("edit".to_string()),
            Just("delete".to_string()),
            Just("read".to_string()),
            Just("search".to_string()),
            Just("fetch".to_string()),
            Just("think".to_string()),
            Just("other".to_string()),
            "[a-z]{1,8}",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn nothing_is_allowed_that_was_not_read_and_judged(
            kind in kind(),
            raw in prop::option::of(json_value()),
            content in prop::option::of("[a-z ~/.-]{0,16}"),
            title in "[A-Za-z ~/.-]{0,16}",
        ) {
            let mut call = json!({"toolCallId": "t", "title": title});
            if let Some(kind) = &kind { call["kind"] = json!(kind); }
            if let Some(raw) = &raw { call["rawInput"] = raw.clone(); }
            if let Some(text) = &content {
                call["content"] = json!([{"type": "content", "content": {"type": "text", "text": text}}]);
            }
            let (request, decision, _) = judged(&call);
            if decision.is_allow() {
                prop_assert!(request.is_read());
                let texts = judged_texts(&request);
                prop_assert!(texts.iter().any(|t| !t.is_empty()), "allowed with nothing judged: {call}");
                // Every command-, path- or URL-carrying string of the input is in what was judged.
                if let Some(Value::Object(map)) = &raw {
                    for (key, value) in map {
                        if passed_over(key) || key == "prompt" { continue; }
                        for said in input::strings(value) {
                            prop_assert!(
                                texts.iter().any(|t| t.contains(said)),
                                "{key}: {said:?} was not judged, yet allowed: {call} as {request}"
                            );
                        }
                    }
                }
                // A text in content is never the statement that was allowed: what was judged
                // came from the input (Gemini's titled command has no content of this shape).
                if content.as_deref().is_some_and(|t| !t.trim().is_empty()) {
                    prop_assert!(raw.is_some(), "allowed on content alone: {call} as {request}");
                }
                prop_assert!(!matches!(kind.as_deref(), Some("think" | "other")), "{call}");
            }
        }
    }
}
