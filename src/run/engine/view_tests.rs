//! Tests of what a frontend reads through `BatchView`: a running attempt as a `LiveView` (its
//! task, number, prompt waiting with its id, start time), tasks out of the run's scope, and the
//! batch's flags as the operator's switches and the run's end change them.

use std::time::Instant;

use super::control_tests::asking;
use crate::core::task::TaskStatus;
use crate::run::clock::Now;

/// A profile whose agent asks `Allow? [y/n]` and waits for the answer (the fake plays it).
const PROFILE: &str = r#"
[profiles.ask]
command = ["sh", "-c", "printf 'Allow? [y/n] '; read a; [ \"$a\" = y ] && echo TASK_COMPLETE:{task_id}; sleep 0.2"]
[[profiles.ask.prompts]]
name = "press_1"
label = "Yes"
pattern = 'Allow\? \[y/n\]'
send = "y\r"
"#;

const TASKS: &str = r#"{
  "tasks": [
    {"task_id": "a", "agent": "ask", "prompt_template": "do it"},
    {"task_id": "off", "agent": "ask", "prompt_template": "do it", "enabled": false},
    {"task_id": "done", "agent": "ask", "prompt_template": "do it", "status": "completed"}
  ]
}
"#;

#[test]
fn a_running_attempt_reads_as_a_live_view() {
    let mut f = asking(TASKS, PROFILE);
    let before = Instant::now();
    f.engine.fill_slots(Now::read()).expect("start");
    f.pump_until("the prompt waits", |e| {
        e.view().live_attempt(0).is_some_and(|l| l.is_waiting())
    });
    let view = f.engine.view();
    let live = view.live_attempt(0).expect("a's attempt");
    assert_eq!(
        (live.task(), live.task_id(), live.number()),
        (0, "a", 1),
        "task, id and attempt number"
    );
    assert!(live.started() >= before, "it started after the fill");
    assert_eq!(live.prompt_id(), Some("a/1/1"));
    let prompt = view.waiting_prompt(0).expect("the API's prompt");
    assert_eq!(live.prompt_id(), Some(prompt.prompt_id.as_str()));
    assert!(!live.attempt().is_ending());
    assert_eq!((live.host(), live.resumed_session()), (None, None));
    assert!(live.attempt().screen().text().contains("Allow? [y/n]"));
    let running: Vec<usize> = view.live_attempts().iter().map(|l| l.task()).collect();
    assert_eq!(running, [0]);
    // Only a running task has a live view.
    assert!(view.live_attempt(1).is_none() && view.live_attempt(2).is_none());
    assert!(view.live_attempt(99).is_none(), "past the file's end");
    assert_eq!(view.task(0).map(|t| t.status), Some(TaskStatus::Running));
    assert!(!view.is_done());
}

#[test]
fn scope_and_the_batch_flags_read_as_the_engine_holds_them() {
    let mut f = asking(TASKS, PROFILE);
    let view = f.engine.view();
    assert_eq!(
        (0..4).map(|i| view.in_scope(i)).collect::<Vec<_>>(),
        [true, false, true, false],
        "a disabled task and one past the end are out of the run"
    );
    assert!((0..3).all(|i| view.is_listed(i)));
    assert_eq!(view.scoped_tasks(), [0, 2]);
    assert_eq!(
        view.reported_tasks(),
        [0, 1, 2],
        "disabled ones are reported"
    );
    assert_eq!(view.file().task_index("done"), Some(2));
    assert_eq!(view.tasks().len(), 3);
    assert!(!view.is_paused() && !view.is_stopping() && !view.is_done());
    assert_eq!(view.concurrency(), 4);
    assert!(view.tasks_file_problem().is_none());
    f.engine.set_paused(true);
    f.engine.set_concurrency(2);
    let view = f.engine.view();
    assert!(view.is_paused());
    assert_eq!(view.concurrency(), 2);
    // Stopped before anything ran: nothing is left to start, and the exit code says stopped.
    f.engine.stop(Now::read()).expect("stop");
    let view = f.engine.view();
    assert!(view.is_stopping() && view.is_done());
    assert_eq!(view.exit_code(), 130);
}
