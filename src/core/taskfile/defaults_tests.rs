//! `defaults`: how a task and the file's defaults combine, what cannot be a default, where a
//! wrong default is reported, and that herd's writes leave `defaults` alone.

use serde_json::{Value, json};

use super::super::{TaskFile, TaskStatus};
use super::apply;

fn object(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[test]
fn a_task_and_the_defaults_combine() {
    // (defaults, task, the task as herd reads it)
    let table = [
        (
            json!({"agent": "claude", "timeout_sec": 600}),
            json!({"task_id": "t", "timeout_sec": 60}),
            json!({"task_id": "t", "timeout_sec": 60, "agent": "claude"}),
        ),
        (
            json!({"env": {"A": "1", "B": "2"}}),
            json!({"env": {"B": "task"}}),
            json!({"env": {"B": "task", "A": "1"}}),
        ),
        (
            json!({"inputs": {"repo": "r", "branch": "main"}}),
            json!({"inputs": {"branch": "dev"}}),
            json!({"inputs": {"branch": "dev", "repo": "r"}}),
        ),
        (
            json!({"permission_policy": {"auto_press_1": true, "allow": ["Bash(make:*)"],
                   "deny": ["Bash(rm:*)"]}}),
            json!({"permission_policy": {"auto_press_1": false, "allow": ["Bash(npm test:*)"]}}),
            json!({"permission_policy": {"auto_press_1": false,
                   "allow": ["Bash(npm test:*)", "Bash(make:*)"], "deny": ["Bash(rm:*)"]}}),
        ),
        // A list that is not one of the rule lists is the task's own.
        (
            json!({"command": ["a", "b"]}),
            json!({"command": ["c"]}),
            json!({"command": ["c"]}),
        ),
        // A wrong kind in the task wins (and is the task's problem), never mixed.
        (
            json!({"env": {"A": "1"}}),
            json!({"env": "x"}),
            json!({"env": "x"}),
        ),
        (json!({}), json!({"task_id": "t"}), json!({"task_id": "t"})),
    ];
    for (defaults, task, expected) in table {
        let got = apply(&object(defaults.clone()), &object(task.clone()));
        assert_eq!(
            Value::Object(got),
            expected,
            "defaults {defaults} with task {task}"
        );
    }
}

const FILE: &str = r#"{
  "run_id": "r",
  "defaults": {
    "agent": "sim",
    "timeout_sec": 120,
    "env": {"SHARED": "1"},
    "worktree": true
  },
  "tasks": [
    {"task_id": "a", "prompt_template": "p"},
    {"task_id": "b", "agent": "claude", "timeout_sec": 5, "env": {"OWN": "2"}, "prompt_template": "p"}
  ]
}
"#;

#[test]
fn tasks_take_what_they_do_not_set() {
    let file = TaskFile::parse(FILE).expect("parses");
    assert_eq!(file.problems(), &[]);
    let [a, b] = file.tasks() else {
        panic!("two tasks expected, got {:?}", file.tasks());
    };
    assert_eq!(
        (a.agent.as_str(), a.timeout_sec, a.worktree),
        ("sim", 120, true)
    );
    assert_eq!(a.env.get("SHARED").map(String::as_str), Some("1"));
    assert_eq!(
        (b.agent.as_str(), b.timeout_sec, b.worktree),
        ("claude", 5, true)
    );
    assert_eq!(
        b.env.keys().map(String::as_str).collect::<Vec<_>>(),
        ["OWN", "SHARED"]
    );
    // A field a task takes from defaults is found where defaults write it.
    let at = file.location(0, Some("timeout_sec")).expect("a place");
    assert_eq!((at.line, at.column), (5, 20));
}

#[test]
fn herd_writes_leave_defaults_alone() {
    let mut file = TaskFile::parse(FILE).expect("parses");
    file.set_status(0, TaskStatus::Completed);
    file.set_attempts(0, 1);
    file.set_field(1, "enabled", json!(false));
    assert!(file.splice_changes());
    let text = file.shared_text().to_string();
    let defaults_text = |t: &str| {
        t[t.find("\"defaults\"").unwrap_or(0)..t.find("\"tasks\"").unwrap_or(0)].to_string()
    };
    assert_eq!(defaults_text(&text), defaults_text(FILE));
    let again = TaskFile::parse(&text).expect("still parses");
    assert_eq!(again.problems(), &[]);
    assert_eq!(again.tasks()[0].status, TaskStatus::Completed);
    assert_eq!(again.tasks()[1].agent, "claude");
    // Nothing of defaults was copied into a task.
    let task_a = again.task_object(0).expect("task a");
    assert!(!task_a.contains_key("agent") && !task_a.contains_key("worktree"));
    // A task re-read after herd's write still takes its defaults.
    assert!(!again.tasks()[1].enabled);
    assert_eq!(file.tasks()[1].timeout_sec, 5);
    assert!(file.tasks()[1].worktree);
}

fn problems_of(text: &str) -> Vec<String> {
    match TaskFile::parse(text) {
        Ok(file) => file.problems().iter().map(ToString::to_string).collect(),
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn wrong_defaults_are_reported_where_they_are_written() {
    let tasks = r#""tasks": [{"task_id": "a", "prompt_template": "p"}, {"task_id": "b", "prompt_template": "p"}]"#;
    // (defaults as written on line 2, the problems)
    let table: &[(&str, &[&str])] = &[
        (
            r#""x""#,
            &[
                "2:15: \"defaults\" must be an object of task fields like {\"agent\": \"claude\", \"timeout_sec\": 1800}, got a string",
                "3:13: task \"a\": missing \"agent\": name the agent profile that runs this task, e.g. \"agent\": \"claude\"",
                "3:55: task \"b\": missing \"agent\": name the agent profile that runs this task, e.g. \"agent\": \"claude\"",
            ],
        ),
        (
            r#"{"agent": "sim", "status": "completed", "attempts": 2, "task_id": "x"}"#,
            &[
                "2:32: defaults: \"status\" is not allowed here: herd writes it for each task as the task runs; it is never taken from \"defaults\"; remove it",
                "2:55: defaults: \"attempts\" is not allowed here: herd writes it for each task as the task runs; it is never taken from \"defaults\"; remove it",
                "2:70: defaults: \"task_id\" is not allowed here: every task needs its own \"task_id\"; it cannot be a default; remove it",
            ],
        ),
        // Said once, of defaults, however many tasks take it; a task's own value is its own.
        (
            r#"{"agent": "sim", "timeout_sec": -1, "env": {"A": 3}}"#,
            &[
                "2:47: defaults: \"timeout_sec\" must be a whole number of seconds from 1 to 2592000 (30 days), got -1",
                "2:64: defaults: \"env.A\" must be a string, got 3",
            ],
        ),
    ];
    for (defaults, expected) in table {
        let text = format!("{{\"run_id\": \"r\",\n  \"defaults\": {defaults},\n  {tasks}}}\n");
        assert_eq!(problems_of(&text), *expected, "defaults {defaults}");
    }
    // A state field in defaults is not taken.
    let text = format!(
        "{{\"defaults\": {{\"agent\": \"sim\", \"status\": \"completed\"}},\n  {tasks}}}\n"
    );
    let file = TaskFile::parse(&text).expect("parses");
    assert!(file.tasks().iter().all(|t| t.status == TaskStatus::Pending));
}
