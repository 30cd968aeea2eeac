//! The tasks file read and written back: every field, every problem with its place, and the
//! text kept byte for byte. Longer than ~400 lines on purpose: a table of cases reads best whole.

use serde_json::json;

use super::*;

/// A file with one task on line 2: `{"task_id": "t", "agent": "a", "prompt_template": "p"<extra>}`.
fn one_task(extra: &str) -> String {
    format!(
        "{{\"tasks\": [\n{{\"task_id\": \"t\", \"agent\": \"a\", \"prompt_template\": \"p\"{extra}}}\n]}}\n"
    )
}

fn shown(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

fn problems_of(text: &str) -> Vec<String> {
    match TaskFile::parse(text) {
        Ok(file) => shown(file.problems()),
        Err(problems) => shown(&problems),
    }
}

#[test]
fn files_that_cannot_be_used() {
    let table: &[(&str, &str)] = &[
        (
            "",
            "1:1: not valid JSON: the file is empty: it must be a JSON object like {\"tasks\": [ ... ]}",
        ),
        (
            "[1]",
            "1:1: the file must be a JSON object like {\"tasks\": [ ... ]}, got a list",
        ),
        (
            "\n  \"x\"",
            "2:3: the file must be a JSON object like {\"tasks\": [ ... ]}, got \"x\"",
        ),
        (
            "{\"run_id\": \"x\"}",
            "1:1: the file has no \"tasks\" list: add \"tasks\": [ ... ] with one object per task",
        ),
        (
            "{\"tasks\": {}}",
            "1:11: \"tasks\" must be a list of task objects, got an object",
        ),
        (
            "{\"tasks\": [\n  {\"a\": 1}\n  {\"b\": 2}\n]}",
            "3:3: not valid JSON: expected `,` or `]`: a comma between items, or a `]`, is missing",
        ),
        (
            "{\"tasks\": [], \"é\": 1 \"x\": 2}",
            "1:22: not valid JSON: expected `,` or `}`: a comma between fields, or a `}`, is missing",
        ),
        (
            "{\"tasks\": [1,]}",
            "1:14: not valid JSON: trailing comma: JSON allows no comma before `}` or `]`",
        ),
        (
            "{\"tasks\": [",
            "1:11: not valid JSON: the file ends inside a list: a `]` is missing",
        ),
        (
            "{\"tasks\": []",
            "1:12: not valid JSON: the file ends inside an object: a `}` is missing",
        ),
        (
            "{\"tasks\": [\"ab",
            "1:14: not valid JSON: the file ends inside a string: a closing `\"` is missing",
        ),
        (
            "{tasks: []}",
            "1:2: not valid JSON: expected a key in double quotes, like \"agent\"",
        ),
        (
            "{\"tasks\" []}",
            "1:10: not valid JSON: expected `:` after the key",
        ),
        (
            "{\"tasks\": [tru]}",
            "1:15: not valid JSON: expected true, false or null",
        ),
        (
            "{\"tasks\": [']}",
            "1:12: not valid JSON: expected a value: a string in double quotes, a number, true, false, null, an object or a list",
        ),
        (
            "{\"tasks\": []} x",
            "1:15: not valid JSON: unexpected text after the end of the JSON object",
        ),
        (
            "{\"tasks\": [\"a\tb\"]}",
            "1:14: not valid JSON: a line break or tab inside a string: write it as \\n or \\t",
        ),
    ];
    for (text, expected) in table {
        let result = TaskFile::parse(text);
        let Err(problems) = result else {
            panic!("{text:?} parsed");
        };
        assert_eq!(shown(&problems), vec![expected.to_string()], "{text:?}");
    }
}

#[test]
fn every_kind_of_field_problem() {
    let names = "failed_timeout, failed_permission_blocked, failed_auth, failed_quota, \
                 failed_process, failed_incomplete, failed_config";
    let statuses = "pending, running, completed, retryable, failed, cancelled, needs_input";
    let retry_item =
        format!("2:69: task \"t\": \"retry_on\" item 1 must be one of {names}, got \"timeout\"");
    let retry_list = format!(
        "2:68: task \"t\": \"retry_on\" must be a list of failure types from {names}, got \"failed_timeout\""
    );
    let status = format!("2:66: task \"t\": \"status\" must be one of {statuses}, got \"done\"");
    let table: Vec<(&str, Vec<&str>)> = vec![
        (
            ", \"timeout_sec\": -5",
            vec![
                "2:71: task \"t\": \"timeout_sec\" must be a whole number of seconds from 1 to 2592000 (30 days), got -5",
            ],
        ),
        (
            ", \"timeout_sec\": 0",
            vec![
                "2:71: task \"t\": \"timeout_sec\" must be a whole number of seconds from 1 to 2592000 (30 days), got 0",
            ],
        ),
        (
            ", \"timeout_sec\": 1.5",
            vec![
                "2:71: task \"t\": \"timeout_sec\" must be a whole number of seconds from 1 to 2592000 (30 days), got 1.5",
            ],
        ),
        (
            ", \"max_retries\": -1",
            vec!["2:71: task \"t\": \"max_retries\" must be a whole number from 0 to 1000, got -1"],
        ),
        (
            ", \"max_retries\": 4294967296",
            vec![
                "2:71: task \"t\": \"max_retries\" must be a whole number from 0 to 1000, got 4294967296",
            ],
        ),
        (
            ", \"attempts\": 1.0",
            vec![
                "2:68: task \"t\": \"attempts\" must be a whole number from 0 to 1000000, got 1.0",
            ],
        ),
        (
            ", \"enabled\": \"yes\"",
            vec!["2:67: task \"t\": \"enabled\" must be true or false, got \"yes\""],
        ),
        (
            ", \"cwd\": \"\"",
            vec!["2:63: task \"t\": \"cwd\" must be a non-empty string (a folder path), got \"\""],
        ),
        (
            ", \"permission_policy\": []",
            vec![
                "2:77: task \"t\": \"permission_policy\" must be an object of switches like {\"auto_press_1\": true}, got an empty list",
            ],
        ),
        (
            ", \"permission_policy\": {\"auto_press_1\": \"yes\"}",
            vec![
                "2:94: task \"t\": \"permission_policy.auto_press_1\" must be true or false, got \"yes\"",
            ],
        ),
        (
            ", \"permission_policy\": {\"press_1\": true}",
            vec![
                "2:78: task \"t\": \"permission_policy\" switch \"press_1\" does nothing: switches are named \"auto_<prompt rule>\", e.g. \"auto_press_1\", and rule lists \"allow\", \"ask\", \"deny\"",
            ],
        ),
        (
            ", \"permission_policy\": {\"allow\": [\"Bash(npm test:*)\", \"Bash(x\"]}",
            vec![
                "2:108: task \"t\": \"permission_policy.allow\": rule \"Bash(x\": a rule with `(` must end with `)`",
            ],
        ),
        (
            ", \"permission_policy\": {\"deny\": \"Bash\"}",
            vec![
                "2:86: task \"t\": \"permission_policy.deny\" must be a list of rules like [\"Bash(npm test:*)\", \"Edit(src/**)\"], got \"Bash\"",
            ],
        ),
        (
            ", \"inputs\": {\"a\": null, \"b\": [1], \"c\": 1.5, \"d\": true}",
            vec![
                "2:72: task \"t\": \"inputs.a\" must be a string, a number or true/false, got null",
                "2:83: task \"t\": \"inputs.b\" must be a string, a number or true/false, got a list",
            ],
        ),
        (
            ", \"inputs\": \"x\"",
            vec![
                "2:66: task \"t\": \"inputs\" must be an object of placeholder values like {\"doc_url\": \"https://...\"}, got \"x\"",
            ],
        ),
        (
            ", \"command\": []",
            vec![
                "2:67: task \"t\": \"command\" must be a non-empty list of strings like [\"mycli\", \"{rendered_prompt}\"], got an empty list",
            ],
        ),
        (
            ", \"command\": \"x --y\"",
            vec![
                "2:67: task \"t\": \"command\" must be a non-empty list of strings like [\"mycli\", \"{rendered_prompt}\"], got \"x --y\"",
            ],
        ),
        (
            ", \"command\": [\"x\", 5]",
            vec!["2:73: task \"t\": \"command\" item 2 must be a string, got 5"],
        ),
        (
            ", \"command\": [\"x\", \"{oops\"]",
            vec![
                "2:73: task \"t\": \"command\" item 2: unclosed { at character 1 (write {{ for a literal brace)",
            ],
        ),
        (
            ", \"env\": {\"A\": 1}",
            vec!["2:69: task \"t\": \"env.A\" must be a string, got 1"],
        ),
        (
            ", \"env\": {\"B\": \"{}\"}",
            vec![
                "2:69: task \"t\": \"env.B\": empty placeholder {} at character 1 (write {{}} for literal braces)",
            ],
        ),
        (
            ", \"env\": [\"A=1\"]",
            vec![
                "2:63: task \"t\": \"env\" must be an object of strings like {\"NAME\": \"value\"}, got a list",
            ],
        ),
        (
            ", \"completion_marker\": \"\"",
            vec!["2:77: task \"t\": \"completion_marker\" must be a non-empty string, got \"\""],
        ),
        (
            ", \"completion_marker\": \"DONE}\"",
            vec![
                "2:77: task \"t\": \"completion_marker\": stray } at character 5 (write }} for a literal brace)",
            ],
        ),
        (
            ", \"idle_sec\": 0",
            vec![
                "2:68: task \"t\": \"idle_sec\" must be a number of seconds above 0 and at most 2592000 (30 days), got 0",
            ],
        ),
        (
            ", \"permission_wait_sec\": \"60\"",
            vec![
                "2:79: task \"t\": \"permission_wait_sec\" must be a number of seconds above 0 and at most 2592000 (30 days), got \"60\"",
            ],
        ),
        (
            ", \"result\": \"ok\"",
            vec!["2:66: task \"t\": \"result\" must be an object or null, got \"ok\""],
        ),
        (
            ", \"prompt_file\": \"p.md\"",
            vec![
                "2:71: task \"t\": has both \"prompt_template\" and \"prompt_file\": keep only one of them",
            ],
        ),
        (
            ", \"agent\": \"b\"",
            vec![
                "2:56: task \"t\": \"agent\" is written twice (first on line 2): only the last one would be kept, remove the other",
            ],
        ),
    ];
    for (extra, expected) in table {
        assert_eq!(problems_of(&one_task(extra)), expected, "{extra}");
    }
    let text = one_task(", \"retry_on\": [\"timeout\"]");
    assert_eq!(problems_of(&text), vec![retry_item]);
    let text = one_task(", \"retry_on\": \"failed_timeout\"");
    assert_eq!(problems_of(&text), vec![retry_list]);
    assert_eq!(
        problems_of(&one_task(", \"status\": \"done\"")),
        vec![status]
    );
}

#[test]
fn task_level_problems() {
    let text = r#"{"run_id": 7, "tasks": [
  {"task_id": "a", "agent": "x", "prompt_template": "use {url"},
  {"agent": 1},
  {"task_id": "a/b", "agent": "x", "prompt_file": "p.md"},
  "not a task",
  {"task_id": 5, "agent": "x", "prompt_template": "p"},
  {"task_id": "ok", "prompt_template": "p", "timeout_sec": -1},
  {"task_id": "a", "agent": "x", "prompt_template": "p"},
  {"task_id": "none", "agent": ""}
]}"#;
    let file = TaskFile::parse(text).expect("usable");
    let expected = [
        "1:12: \"run_id\" must be a string, got 7",
        "2:53: task \"a\": \"prompt_template\": unclosed { at character 5 (write {{ for a literal brace)",
        "3:3: task #2: missing \"task_id\": give every task a unique name, e.g. \"task_id\": \"fix-login-001\"",
        "3:3: task #2: missing \"prompt_template\": give the prompt to send, or \"prompt_file\" with the path of a file holding it",
        "3:13: task #2: \"agent\" must be a string naming an agent profile, e.g. \"claude\", got 1",
        "4:15: task \"a/b\": \"task_id\" cannot be used as a folder name: use only letters, digits and - _ . + @ (at most 128 characters)",
        "5:3: task #4: must be an object like {\"task_id\": ..., \"agent\": ..., \"prompt_template\": ...}, got \"not a task\"",
        "6:15: task #5: \"task_id\" must be a string, got 5",
        "7:3: task \"ok\": missing \"agent\": name the agent profile that runs this task, e.g. \"agent\": \"claude\"",
        "7:60: task \"ok\": \"timeout_sec\" must be a whole number of seconds from 1 to 2592000 (30 days), got -1",
        "8:15: task \"a\": \"task_id\" is already used by the task on line 2: every task needs its own task_id",
        "9:3: task \"none\": missing \"prompt_template\": give the prompt to send, or \"prompt_file\" with the path of a file holding it",
        "9:32: task \"none\": \"agent\" must be a string naming an agent profile, e.g. \"claude\", got \"\"",
    ];
    assert_eq!(shown(file.problems()), expected);
    let ids: Vec<&str> = file.tasks().iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["a", "ok", "none"]);
    let by_task: Vec<Option<&str>> = file
        .problems()
        .iter()
        .map(|p| p.task_id.as_deref())
        .collect();
    assert_eq!(
        by_task,
        [
            None,
            Some("a"),
            None,
            None,
            None,
            Some("a/b"),
            None,
            None,
            Some("ok"),
            Some("ok"),
            Some("a"),
            Some("none"),
            Some("none")
        ]
    );
    // Task indexes skip the unusable ones; locations are those of the text.
    assert_eq!(file.task_index("ok"), Some(1));
    assert_eq!(
        file.location(1, None),
        Some(Location { line: 7, column: 3 })
    );
    assert_eq!(
        file.location(1, Some("timeout_sec")),
        Some(Location {
            line: 7,
            column: 60
        })
    );
    assert_eq!(file.location(1, Some("agent")), None);
    assert_eq!(file.location(3, None), None);
}

#[test]
fn defaults_and_typed_fields() {
    let text = r#"{"run_id": "r1", "tasks": [
  {"task_id": "t", "agent": "codex", "prompt_template": "Do {doc_url}", "inputs": {"doc_url": "u", "n": 3, "f": 1.5, "b": false},
   "permission_policy": {"auto_press_1": true}, "command": ["x", "{rendered_prompt}"], "env": {"A": "1"},
   "retry_on": ["failed_auth"], "idle_sec": 2.5, "status": "retryable", "attempts": 2, "result": {"exit_code": 1}},
  {"task_id": "d", "agent": "claude", "prompt_file": "p.md", "result": null}
]}"#;
    let file = TaskFile::parse(text).expect("valid");
    assert!(file.problems().is_empty(), "{:?}", file.problems());
    assert_eq!(file.run_id(), Some("r1"));
    let t = &file.tasks()[0];
    assert_eq!(t.inputs.get("n").map(String::as_str), Some("3"));
    assert_eq!(t.inputs.get("f").map(String::as_str), Some("1.5"));
    assert_eq!(t.inputs.get("b").map(String::as_str), Some("false"));
    assert_eq!(t.policy_for("press_1"), Some(true));
    assert_eq!(
        t.command.as_deref(),
        Some(&["x".to_string(), "{rendered_prompt}".to_string()][..])
    );
    assert_eq!(t.retry_on, Some(vec![crate::core::task::FailureType::Auth]));
    assert_eq!(
        (t.idle_sec, t.status, t.attempts),
        (Some(2.5), TaskStatus::Retryable, 2)
    );
    assert_eq!(t.result, Some(json!({"exit_code": 1})));
    let d = &file.tasks()[1];
    let expected = TaskSpec {
        task_id: "d".into(),
        agent: "claude".into(),
        enabled: true,
        cwd: None,
        timeout_sec: 1800,
        max_retries: 1,
        permission_policy: Default::default(),
        permission_rules: Default::default(),
        inputs: Default::default(),
        prompt_template: None,
        prompt_file: Some("p.md".into()),
        args: Vec::new(),
        command: None,
        env: Default::default(),
        completion_marker: None,
        completion: None,
        marker_instruction: true,
        retry_mode: crate::core::task::RetryMode::Restart,
        resume_message: None,
        retry_on: None,
        idle_sec: None,
        permission_wait_sec: None,
        status: TaskStatus::Pending,
        attempts: 0,
        attempts_before_retry: 0,
        result: None,
        retry_at: None,
        wait_for_quota_reset: false,
        trust_folder: None,
        acp_mode: None,
        worktree: false,
        on_complete: None,
        host: None,
        ran_on: None,
        lost_on: None,
    };
    assert_eq!(d, &expected);
}

#[test]
fn byte_order_mark_is_ignored() {
    let file = TaskFile::parse("\u{feff}{\"tasks\": []}").expect("valid");
    assert!(file.tasks().is_empty() && file.problems().is_empty());
}

const KEEP: &str = r#"{
  "zeta": {"mine": [1, 2, {"deep": null}]},
  "tasks": [
    {
      "note": "keep me",
      "task_id": "t",
      "status": "pending",
      "agent": "a",
      "x-extra": {"b": 1, "a": 2},
      "prompt_template": "p {{literal}} é😀",
      "result": null
    }
  ],
  "run_id": "r",
  "alpha": 1.5
}
"#;

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn updates_keep_unknown_fields_and_key_order() {
    let mut file = TaskFile::parse(KEEP).expect("valid");
    file.set_status(0, TaskStatus::Running);
    file.set_attempts(0, 1);
    file.set_result(0, json!({"exit_code": 0, "failure_type": null}));
    file.set_field(0, "retry_at", json!("2026-02-24T12:00:00Z"));
    file.set_field(0, "timeout_sec", json!(60));
    file.set_field(0, "task_id", json!("renamed"));
    file.remove_field(0, "note");
    file.remove_field(0, "task_id");
    file.set_status(9, TaskStatus::Failed);

    let spec = &file.tasks()[0];
    assert_eq!(
        (spec.status, spec.attempts, spec.timeout_sec),
        (TaskStatus::Running, 1, 60)
    );
    assert_eq!(spec.task_id, "t");
    assert_eq!(
        spec.result,
        Some(json!({"exit_code": 0, "failure_type": null}))
    );

    let text = file.to_text();
    assert!(text.ends_with("}\n") && text.contains("\n  \"tasks\": [\n    {\n      \"task_id\""));
    let reread = TaskFile::parse(&text).expect("round trips");
    assert!(reread.problems().is_empty());
    assert_eq!(reread.tasks(), file.tasks());
    let doc: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(keys(&doc), ["zeta", "tasks", "run_id", "alpha"]);
    let task = &doc["tasks"][0];
    assert_eq!(
        keys(task),
        [
            "task_id",
            "status",
            "agent",
            "x-extra",
            "prompt_template",
            "result",
            "attempts",
            "retry_at",
            "timeout_sec"
        ]
    );
    assert_eq!(keys(&task["x-extra"]), ["b", "a"]);
    assert_eq!(doc["zeta"], json!({"mine": [1, 2, {"deep": null}]}));
    assert_eq!(task["prompt_template"], json!("p {{literal}} é😀"));

    file.set_result(0, Value::Null);
    file.remove_field(0, "timeout_sec");
    assert_eq!(
        (file.tasks()[0].result.clone(), file.tasks()[0].timeout_sec),
        (None, 1800)
    );
}

#[test]
fn unchanged_files_round_trip_with_all_their_data() {
    let file = TaskFile::parse(KEEP).expect("valid");
    let text = file.to_text();
    let before: Value = serde_json::from_str(KEEP).expect("json");
    let after: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(before, after);
    assert_eq!(TaskFile::parse(&text).expect("valid").to_text(), text);
}

#[test]
fn set_field_keeps_the_typed_task_in_step() {
    let mut file = TaskFile::parse(&one_task("")).expect("valid");
    file.set_field(0, "enabled", json!(false));
    file.set_field(0, "inputs", json!({"url": "u", "n": 2}));
    file.set_field(0, "retry_on", json!(["failed_quota"]));
    let task = &file.tasks()[0];
    assert!(!task.enabled);
    assert_eq!(task.inputs.get("n").map(String::as_str), Some("2"));
    assert_eq!(
        task.retry_on,
        Some(vec![crate::core::task::FailureType::Quota])
    );
    // A wrong value is written, the typed field falls back, and the next parse reports it.
    file.set_field(0, "timeout_sec", json!(-1));
    assert_eq!(file.tasks()[0].timeout_sec, 1800);
    let reread = TaskFile::parse(&file.to_text()).expect("usable");
    assert_eq!(reread.problems().len(), 1);
    assert!(
        reread.problems()[0]
            .message
            .contains("\"timeout_sec\" must be")
    );
}

#[test]
fn the_tasks_that_may_start_follow_every_change() {
    let text = r#"{"tasks": [
        {"task_id": "a", "agent": "x", "prompt_template": "p", "status": "completed"},
        {"task_id": "b", "agent": "x", "prompt_template": "p"},
        {"task_id": "c", "agent": "x", "prompt_template": "p", "enabled": false},
        {"task_id": "d", "agent": "x", "prompt_template": "p", "status": "retryable"}
    ]}"#;
    let mut file = TaskFile::parse(text).expect("valid");
    let runnable = |file: &TaskFile| {
        std::iter::successors(file.next_runnable(0), |&i| file.next_runnable(i + 1))
            .collect::<Vec<_>>()
    };
    assert_eq!(runnable(&file), [1, 3]);
    assert_eq!(file.next_runnable(2), Some(3));
    file.set_status(1, TaskStatus::Running);
    assert_eq!(runnable(&file), [3]);
    file.set_field(2, "enabled", json!(true));
    file.set_status(0, TaskStatus::Retryable);
    assert_eq!(runnable(&file), [0, 2, 3]);
    file.set_field(3, "enabled", json!(false));
    file.remove_field(2, "enabled");
    assert_eq!(runnable(&file), [0, 2]);
    file.set_status(0, TaskStatus::Failed);
    assert_eq!(runnable(&file), [2]);
}

#[test]
fn repeated_keys_anywhere_are_problems() {
    let text = "{\"tasks\": [\n{\"task_id\": \"t\", \"agent\": \"a\", \"prompt_template\": \"p\", \
                \"inputs\": {\"u\": 1, \"u\": 2}}\n], \"tasks\": [], \"x\": {\"a/b\": 1, \"a/b\": 2}}";
    assert_eq!(
        problems_of(text),
        [
            "3:4: \"tasks\" is written twice (first on line 1): only the last one would be kept, \
             remove the other",
            "3:33: \"x.a/b\" is written twice (first on line 3): only the last one would be kept, \
             remove the other",
        ]
    );
    let text = one_task(", \"inputs\": {\"u\": 1, \"u\": 2}");
    assert_eq!(
        problems_of(&text),
        [
            "2:75: task \"t\": \"inputs.u\" is written twice (first on line 2): only the last one \
          would be kept, remove the other"
        ]
    );
}

#[test]
fn retry_at_is_read_as_a_time_and_checked() {
    let file = TaskFile::parse(
        r#"{"tasks": [{"task_id": "a", "agent": "x", "prompt_template": "p", "retry_at": "2026-02-24T12:00:05Z"}]}"#,
    )
    .unwrap();
    assert_eq!(
        file.tasks()[0].retry_at.map(|t| t.as_second()),
        Some(1_771_934_405)
    );
    let file = TaskFile::parse(
        r#"{"tasks": [{"task_id": "a", "agent": "x", "prompt_template": "p", "retry_at": "soon"}]}"#,
    )
    .unwrap();
    assert_eq!(file.problems().len(), 1);
    assert!(
        file.problems()[0]
            .message
            .contains("\"retry_at\" must be a time like"),
        "{:?}",
        file.problems()
    );
}

#[test]
fn structured_task_fields_are_read_and_checked() {
    let text = r#"{"tasks": [
  {"task_id": "a", "agent": "x", "prompt_file": "c.md", "args": ["one", "two"],
   "completion": "signal_file", "retry_mode": "resume", "resume_message": "go on",
   "status": "needs_input"},
  {"task_id": "b", "agent": "x", "prompt_template": "p", "args": ["x"],
   "completion": "done", "retry_mode": "again", "status": "asking"}
]}"#;
    let file = TaskFile::parse(text).unwrap();
    let messages: Vec<String> = file.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(
        messages,
        [
            "5:66: task \"b\": \"args\" fills $ARGUMENTS, $1, $2... of a \"prompt_file\"; this task has no prompt_file (use \"inputs\" and {placeholders} with prompt_template)",
            "6:18: task \"b\": \"completion\" must be one of \"marker\", \"result\", \"signal_file\", got \"done\"",
            "6:40: task \"b\": \"retry_mode\" must be \"restart\" or \"resume\", got \"again\"",
            "6:59: task \"b\": \"status\" must be one of pending, running, completed, retryable, failed, cancelled, needs_input, got \"asking\"",
        ]
    );
    let good = text.replace(
        r#"{"task_id": "b", "agent": "x", "prompt_template": "p", "args": ["x"],
   "completion": "done", "retry_mode": "again", "status": "asking"}"#,
        r#"{"task_id": "b", "agent": "x", "prompt_template": "p"}"#,
    );
    let file = TaskFile::parse(&good).unwrap();
    assert!(file.problems().is_empty(), "{:?}", file.problems());
    let a = &file.tasks()[0];
    assert_eq!(a.args, ["one", "two"]);
    assert_eq!(
        a.completion,
        Some(crate::core::task::Completion::SignalFile)
    );
    assert_eq!(a.retry_mode, crate::core::task::RetryMode::Resume);
    assert_eq!(a.resume_message.as_deref(), Some("go on"));
    assert_eq!(a.status, TaskStatus::NeedsInput);
}

#[test]
fn on_complete_is_commit_or_a_command() {
    use crate::core::task::OnComplete;
    let text = r#"{"tasks": [
  {"task_id": "a", "agent": "x", "prompt_template": "p", "on_complete": "commit"},
  {"task_id": "b", "agent": "x", "prompt_template": "p", "on_complete": ["gh", "pr", "create"]},
  {"task_id": "c", "agent": "x", "prompt_template": "p", "on_complete": "push"},
  {"task_id": "d", "agent": "x", "prompt_template": "p", "on_complete": []},
  {"task_id": "e", "agent": "x", "prompt_template": "p", "on_complete": ["gh", 1]}
]}"#;
    let file = TaskFile::parse(text).unwrap();
    let on_complete: Vec<Option<OnComplete>> =
        file.tasks().iter().map(|t| t.on_complete.clone()).collect();
    let command = ["gh", "pr", "create"].map(String::from).to_vec();
    assert_eq!(
        on_complete,
        [
            Some(OnComplete::Commit),
            Some(OnComplete::Command(command)),
            None,
            None,
            None
        ]
    );
    let expected = "\"on_complete\" must be \"commit\" or a command as a non-empty list of \
                    strings like [\"gh\", \"pr\", \"create\", \"--draft\", \"--fill\"], got";
    let messages: Vec<String> = file.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    for (message, got) in messages.iter().zip(["\"push\"", "an empty list", "a list"]) {
        assert!(message.contains(expected), "{message}");
        assert!(message.ends_with(got), "{message}");
    }
}
