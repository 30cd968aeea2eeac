//! Tests of what the control socket asks of the engine (`api`), through the commands' handler
//! (`serve::control::handle`): each command's result or error code, tasks added and changed as
//! the file would have them, a task brought into a `--only` run, and prompts answered only by
//! their id.

use serde_json::{Value, json};

use super::BatchView;
use super::api::{AnswerRefused, ApiAnswer};
use super::control_tests::{Fixture, asking, fixture_with};
use crate::core::approval::AnsweredBy;
use crate::core::task::TaskStatus;
use crate::run::clock::Now;
use crate::serve::control::handle::handle;
use crate::serve::control::protocol::{INVALID_TASK, Method, NO_SUCH_TASK, REFUSED, STALE_PROMPT};

/// A profile whose prompt is `Allow? [y/n]`, answered with its `press_1` rule (`y` Enter).
const PROFILE: &str = r#"
[profiles.ask]
command = ["sh", "-c", "printf 'Allow? [y/n] '; read a; [ \"$a\" = y ] && echo TASK_COMPLETE:{task_id}; sleep 0.2"]
[[profiles.ask.prompts]]
name = "press_1"
label = "Yes"
pattern = 'Allow\? \[y/n\]'
send = "y\r"
"#;

fn fixture(tasks: &[&str]) -> Fixture {
    let list: Vec<String> = tasks
        .iter()
        .map(|t| format!(r#"{{"agent": "ask", "prompt_template": "do it", {t}}}"#))
        .collect();
    asking(
        &format!(
            "{{\n  \"tasks\": [\n    {}\n  ]\n}}\n",
            list.join(",\n    ")
        ),
        PROFILE,
    )
}

fn run(f: &mut Fixture, command: Method) -> Result<Value, i64> {
    let handled = handle(
        &mut f.engine,
        (command, AnsweredBy::Api),
        &json!({"pid": 1}),
        Now::read(),
    );
    assert!(!handled.stop);
    handled.reply.map_err(|e| e.code)
}

/// The engine's events since the last call, as subscribers get them.
fn events_json(f: &mut Fixture) -> Vec<Value> {
    let events = f.engine.drain_events();
    events
        .iter()
        .filter_map(|e| crate::serve::control::events::to_json(&f.engine, e))
        .collect()
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[test]
fn each_command_gives_its_result_or_error_code() {
    let mut f = fixture(&[
        r#""task_id": "a""#,
        r#""task_id": "b", "status": "completed""#,
    ]);
    f.engine.set_paused(true);
    let id = |s: &str| s.to_string();
    let cases: Vec<(Method, Result<(), i64>)> = vec![
        (Method::Hello, Ok(())),
        (
            Method::GetTask {
                task_id: id("nope"),
            },
            Err(NO_SUCH_TASK),
        ),
        (
            Method::Cancel {
                task_id: id("nope"),
            },
            Err(NO_SUCH_TASK),
        ),
        (Method::Cancel { task_id: id("b") }, Err(REFUSED)),
        (Method::Retry { task_id: id("b") }, Err(REFUSED)),
        (Method::Run { task_id: id("b") }, Err(REFUSED)),
        (
            Method::Message {
                task_id: id("a"),
                text: id("  "),
            },
            Err(REFUSED),
        ),
        // A task that is not running takes the message for its next attempt (`m`).
        (
            Method::Message {
                task_id: id("a"),
                text: id("hi"),
            },
            Ok(()),
        ),
        (
            Method::Screen {
                task_id: id("a"),
                styled: false,
            },
            Err(REFUSED),
        ),
        (
            Method::UpdateTask {
                task_id: id("a"),
                patch: object(json!({"status": "completed"})),
            },
            Err(REFUSED),
        ),
        (
            Method::UpdateTask {
                task_id: id("a"),
                patch: object(json!({"timeout_sec": "soon"})),
            },
            Err(INVALID_TASK),
        ),
        (
            Method::UpdateTask {
                task_id: id("a"),
                patch: object(json!({"agent": "nope"})),
            },
            Err(INVALID_TASK),
        ),
        (
            Method::AddTask {
                task: object(json!({"task_id": "a", "agent": "ask", "prompt_template": "x"})),
            },
            Err(INVALID_TASK),
        ),
        (
            Method::AddTask {
                task: object(json!({"agent": "ask", "prompt_template": "x"})),
            },
            Err(INVALID_TASK),
        ),
        (
            Method::AddTask {
                task: object(json!({"task_id": "c", "agent": "ask"})),
            },
            Err(INVALID_TASK),
        ),
        (
            Method::Answer {
                prompt_id: id("a/1/1"),
                answer: ApiAnswer::Approve,
            },
            Err(STALE_PROMPT),
        ),
        (Method::Pause, Ok(())),
        (Method::Concurrency { n: 2 }, Ok(())),
        (Method::ListPrompts, Ok(())),
    ];
    for (command, want) in cases {
        let said = format!("{command:?}");
        assert_eq!(run(&mut f, command).map(|_| ()), want, "{said}");
    }
    assert_eq!(f.engine.concurrency(), 2);
    let stop = handle(
        &mut f.engine,
        (Method::Stop, AnsweredBy::Api),
        &Value::Null,
        Now::read(),
    );
    assert!(stop.stop && stop.reply.is_ok(), "{stop:?}");
    let listed = run(
        &mut f,
        Method::ListTasks {
            status: Some(vec![TaskStatus::Completed]),
        },
    )
    .expect("list");
    let ids: Vec<&Value> = listed["tasks"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| &r["task_id"])
        .collect();
    assert_eq!(ids, [&json!("b")]);
    assert_eq!(listed["tasks"][0]["live"], Value::Null);
    // Nothing refused changed the file.
    assert_eq!(f.on_disk(0, "timeout_sec"), Value::Null);
    assert_eq!(f.on_disk(0, "agent"), json!("ask"));
}

#[test]
fn an_added_task_and_an_update_are_written_like_any_change() {
    let mut f = fixture(&[r#""task_id": "a""#]);
    f.engine.set_paused(true);
    let added = run(
        &mut f,
        Method::AddTask {
            task: object(json!({"task_id": "c", "agent": "ask", "prompt_template": "new one"})),
        },
    );
    assert_eq!(added, Ok(json!({"task_id": "c"})));
    let updated = run(
        &mut f,
        Method::UpdateTask {
            task_id: "a".into(),
            patch: object(json!({"prompt": "changed", "enabled": false})),
        },
    )
    .expect("update");
    assert_eq!(updated["task"]["enabled"], json!(false), "{updated}");
    assert_eq!(f.on_disk(1, "task_id"), json!("c"));
    assert_eq!(f.on_disk(1, "prompt_template"), json!("new one"));
    assert_eq!(f.on_disk(0, "prompt_template"), json!("changed"));
    assert_eq!(f.on_disk(0, "enabled"), json!(false));
    // The file keeps its layout: the new task is written like the one before it.
    let text = std::fs::read_to_string(&f.path).expect("read");
    assert!(
        text.starts_with("{\n  \"tasks\": [\n    {\"agent\": \"ask\""),
        "{text}"
    );
    assert!(
        text.contains("},\n    {\n      \"task_id\": \"c\""),
        "{text}"
    );
    assert!(!f.engine.in_scope(0));
    assert!(f.engine.in_scope(1));
}

#[test]
fn tasks_run_and_tasks_add_take_a_task_into_an_only_run() {
    let mut f = fixture(&[r#""task_id": "a""#, r#""task_id": "b", "enabled": false"#]);
    f.engine.tasks.opts.only = vec!["a".into()];
    f.engine.set_paused(true);
    assert!(!f.engine.in_scope(1));
    let ran = run(
        &mut f,
        Method::Run {
            task_id: "b".into(),
        },
    )
    .expect("run");
    let message = ran["message"].as_str().expect("message");
    assert!(
        message.contains("taken into this run") && message.contains("enabled"),
        "{ran}"
    );
    assert!(message.contains("paused"), "{ran}");
    assert!(f.engine.in_scope(1));
    assert_eq!(f.on_disk(1, "enabled"), json!(true));
    // A task added through the socket is asked for by name: the run takes it in too.
    let added = run(
        &mut f,
        Method::AddTask {
            task: object(json!({"task_id": "c", "agent": "ask", "prompt_template": "x"})),
        },
    );
    assert_eq!(added, Ok(json!({"task_id": "c"})));
    assert!(f.engine.in_scope(2));
}

#[test]
fn a_prompt_is_answered_only_by_its_id() {
    let mut f = fixture(&[r#""task_id": "a""#]);
    f.engine.fill_slots(Now::read()).expect("start");
    f.pump_until("the prompt waits", |e| e.waiting_prompt(0).is_some());
    let prompt = f.engine.waiting_prompt(0).expect("waiting");
    assert_eq!(prompt.prompt_id, "a/1/1");
    // What a subscriber gets: the wait with its id.
    let events = events_json(&mut f);
    let waiting: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "prompt_waiting")
        .collect();
    assert_eq!(waiting.len(), 1, "{events:?}");
    assert_eq!(
        waiting[0]["prompt"]["prompt_id"],
        json!("a/1/1"),
        "{events:?}"
    );
    assert_eq!(waiting[0]["task_id"], json!("a"));
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "started" && e["attempt"] == 1),
        "{events:?}"
    );
    assert_eq!(prompt.options, [ApiAnswer::Approve, ApiAnswer::Deny]);
    // press_1 is guarded and herd cannot read this prompt's request: it asks, and says why.
    let guard = prompt.guard.clone().expect("the guard's word");
    assert_eq!(guard.0, "ask");
    assert_eq!(prompt.request, "a prompt herd could not read");
    assert_eq!(f.engine.waiting_prompts(), [prompt]);
    let answer = |f: &mut Fixture, id: &str, answer| {
        f.engine
            .answer_prompt(id, answer, AnsweredBy::Api, Now::read())
            .expect("answer")
    };
    assert!(matches!(
        answer(&mut f, "a/1/2", ApiAnswer::Approve),
        Err(AnswerRefused::Stale(_))
    ));
    assert!(matches!(
        answer(&mut f, "b/1/1", ApiAnswer::Approve),
        Err(AnswerRefused::Stale(_))
    ));
    assert!(matches!(
        answer(&mut f, "a/1/1", ApiAnswer::ApproveAlways),
        Err(AnswerRefused::NotOffered(_))
    ));
    assert!(answer(&mut f, "a/1/1", ApiAnswer::Approve).is_ok());
    // Answered: the id is spent, whatever shows next.
    assert!(matches!(
        answer(&mut f, "a/1/1", ApiAnswer::Approve),
        Err(AnswerRefused::Stale(_))
    ));
    f.pump_until("the task ends", |e| !e.attempts.has_task(0));
    let events = events_json(&mut f);
    let finished = events
        .iter()
        .find(|e| e["event"] == "finished")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(finished["status"], json!("completed"), "{finished}");
    assert_eq!(finished["verdict"], json!("completed"), "{finished}");
    assert!(
        events.iter().any(|e| e["event"] == "answered"),
        "{events:?}"
    );
    let result = f.on_disk(0, "result");
    assert_eq!(f.on_disk(0, "status"), json!("completed"), "{result}");
    assert_eq!(result["approvals"][0]["by"], json!("api"), "{result}");
}

#[test]
fn the_problems_of_a_task_not_in_the_file_have_no_place() {
    let path = std::path::Path::new("/x/tasks.json");
    for (line, want) in [
        (
            "/x/tasks.json:18:5: task \"b\": agent \"nope\"",
            "task \"b\": agent \"nope\"",
        ),
        ("/x/tasks.json: task \"b\": 2 hosts", "task \"b\": 2 hosts"),
        ("elsewhere: x", "elsewhere: x"),
    ] {
        assert_eq!(super::api::without_place(line, path), want);
    }
}

#[test]
fn no_task_is_added_while_the_file_does_not_parse() {
    let mut f = fixture(&[r#""task_id": "a""#]);
    f.engine.set_paused(true);
    f.engine.tasks.file_invalid = Some((
        "tasks.json:3:1: expected `,`".into(),
        std::time::Instant::now(),
    ));
    let task = object(json!({"task_id": "c", "agent": "ask", "prompt_template": "x"}));
    assert_eq!(
        run(&mut f, Method::AddTask { task: task.clone() }),
        Err(REFUSED)
    );
    f.engine.tasks.file_invalid = None;
    assert_eq!(
        run(&mut f, Method::AddTask { task }),
        Ok(json!({"task_id": "c"}))
    );
}

/// A task that takes its agent and prompt from the file's `defaults` is checked with them when
/// it is changed through the socket: the change stands, and nothing of defaults is copied in.
#[test]
fn a_task_on_defaults_is_updated_with_its_defaults() {
    let mut f = fixture_with(
        "{\n  \"defaults\": {\"agent\": \"ask\", \"prompt_template\": \"do it\"},\n  \
         \"tasks\": [\n    {\"task_id\": \"a\"}\n  ]\n}\n",
        PROFILE,
    );
    f.engine.set_paused(true);
    let updated = run(
        &mut f,
        Method::UpdateTask {
            task_id: "a".into(),
            patch: object(json!({"enabled": false})),
        },
    )
    .expect("update");
    assert_eq!(updated["task"]["enabled"], json!(false), "{updated}");
    assert_eq!(f.on_disk(0, "enabled"), json!(false));
    assert_eq!(f.on_disk(0, "agent"), Value::Null);
    let refused = run(
        &mut f,
        Method::UpdateTask {
            task_id: "a".into(),
            patch: object(json!({"agent": "nope"})),
        },
    );
    assert_eq!(refused, Err(INVALID_TASK));
}
