//! Tests of taking in the operator's edits (`edits`) on a real engine and writer: a bad new
//! task fails alone, a version that does not parse holds every write and launch until one
//! parses.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::control_tests::{Fixture, fixture_with};
use super::os_fake::Script;
use super::{BatchView, EngineEvent};
use crate::core::task::TaskStatus;
use crate::run::clock::Now;

const PROFILE: &str = r#"
[profiles.quick]
command = ["sh", "-c", "echo TASK_COMPLETE:{task_id}"]
"#;

const ONE: &str = r#"{"tasks": [
  {"task_id": "t0", "agent": "quick", "prompt_template": "p"}
]}"#;

/// `tasks` run by `PROFILE`'s agent, played by the fake: it prints its marker and exits.
fn quick(tasks: &str) -> Fixture {
    let f = fixture_with(tasks, PROFILE);
    f.os.set_script(Script::says(0, |_| "{marker}\r\n".to_string()));
    f
}

/// `tasks` run by `SAYS_PROMPT`'s agent, played by the fake: it prints its prompt (its
/// last argument), then its marker, and exits.
fn says(tasks: &str) -> Fixture {
    let f = fixture_with(tasks, SAYS_PROMPT);
    f.os.set_script(Script::says(0, |plan| {
        let prompt = plan.argv.last().cloned().unwrap_or_default();
        format!("prompt: {prompt}\r\n{{marker}}\r\n")
    }));
    f
}

fn on_disk(f: &Fixture) -> String {
    std::fs::read_to_string(&f.path).expect("read tasks")
}

/// Takes in reports and ticks until `done` holds of the engine and the events so far (10 s).
fn drive(
    f: &mut Fixture,
    events: &mut Vec<EngineEvent>,
    done: impl Fn(&Fixture, &[EngineEvent]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(f, events) {
        assert!(
            Instant::now() < deadline,
            "waited in vain; events: {events:?}"
        );
        let reports = &mut f.reports;
        let report = f.runtime.block_on(async {
            tokio::time::timeout(Duration::from_millis(100), reports.recv()).await
        });
        if let Ok(Some(report)) = report {
            f.engine.on_report(report, Now::read()).expect("report");
        }
        f.engine.on_tick(Now::read()).expect("tick");
        events.extend(f.engine.drain_events());
    }
}

fn changed(events: &[EngineEvent]) -> Option<&str> {
    events.iter().find_map(|e| match e {
        EngineEvent::TasksFileChanged { summary } => Some(summary.as_str()),
        _ => None,
    })
}

#[test]
fn a_bad_new_task_fails_its_configuration_and_the_rest_of_the_edit_stands() {
    let mut f = quick(ONE);
    let theirs = r#"{"tasks": [
  {"task_id": "t0", "agent": "quick", "prompt_template": "p", "mine": 1},
  {"task_id": "bad", "agent": "nope", "prompt_template": "p"},
  {"task_id": "good", "agent": "quick", "prompt_template": "p"}
]}"#;
    std::fs::write(&f.path, theirs).expect("edit");
    let mut events = Vec::new();
    drive(&mut f, &mut events, |_, events| changed(events).is_some());
    assert_eq!(
        changed(&events),
        Some("tasks file changed: 2 tasks added, 1 task's fields changed")
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::ConfigFailed { task_id, .. } if task_id == "bad")),
        "{events:?}"
    );
    f.engine.fill_slots(Now::read()).expect("fill");
    drive(&mut f, &mut events, |f, _| f.engine.is_done());
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("settled");
    let doc: Value = serde_json::from_str(&on_disk(&f)).expect("json");
    assert_eq!(doc["tasks"][0]["mine"], 1);
    assert_eq!(doc["tasks"][0]["status"], "completed");
    assert_eq!(doc["tasks"][1]["status"], "failed");
    assert_eq!(doc["tasks"][1]["result"]["failure_type"], "failed_config");
    assert_eq!(doc["tasks"][2]["status"], "completed");
}

#[test]
fn while_the_file_does_not_parse_nothing_is_written_and_no_agent_launches() {
    let mut f = quick(ONE);
    let broken = ONE.replace(
        "\"prompt_template\": \"p\"}",
        "\"prompt_template\": \"p\",}",
    );
    std::fs::write(&f.path, &broken).expect("edit");
    let mut events = Vec::new();
    drive(&mut f, &mut events, |_, events| {
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::TasksFileInvalid { .. }))
    });
    let said = events
        .iter()
        .find_map(|e| match e {
            EngineEvent::TasksFileInvalid { problem } => Some(problem.clone()),
            _ => None,
        })
        .expect("said");
    assert!(
        said.starts_with(&format!("{}:2:", f.path.display())),
        "{said}"
    );
    // The task is started in memory; its start waits for a write that cannot be made.
    f.engine.fill_slots(Now::read()).expect("fill");
    for _ in 0..5 {
        f.engine.on_tick(Now::read()).expect("tick");
    }
    assert!(f.engine.live_for_task(0).is_none(), "no agent launches");
    assert_eq!(on_disk(&f), broken, "their text is not written over");
    // Fixed, with a field of theirs: merged, written, and the agent goes.
    let fixed = ONE.replace(
        "\"prompt_template\": \"p\"}",
        "\"prompt_template\": \"p\", \"mine\": 2}",
    );
    std::fs::write(&f.path, &fixed).expect("fix");
    drive(&mut f, &mut events, |f, _| f.engine.is_done());
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("settled");
    let doc: Value = serde_json::from_str(&on_disk(&f)).expect("json");
    assert_eq!(doc["tasks"][0]["mine"], 2);
    assert_eq!(doc["tasks"][0]["status"], "completed");
    assert_eq!(
        f.engine.store().file().tasks()[0].status,
        TaskStatus::Completed
    );
}

const SAYS_PROMPT: &str = r#"
[profiles.says]
command = ["sh", "-c", "echo \"prompt: $0\"; echo TASK_COMPLETE:{task_id}", "{rendered_prompt}"]
"#;

const TWO: &str = r#"{"tasks": [
  {"task_id": "t0", "agent": "says", "prompt_template": "old"},
  {"task_id": "t1", "agent": "says", "prompt_template": "old"}
]}"#;

#[test]
fn a_start_waiting_for_its_write_is_withdrawn_when_the_edit_disables_or_changes_its_task() {
    let mut f = says(TWO);
    // A version that does not parse holds the writes: both starts wait for theirs.
    std::fs::write(&f.path, TWO.replace("]}", "],}")).expect("edit");
    let mut events = Vec::new();
    drive(&mut f, &mut events, |_, events| {
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::TasksFileInvalid { .. }))
    });
    f.engine.fill_slots(Now::read()).expect("fill");
    assert!(f.engine.attempts.has_task(0) && f.engine.attempts.has_task(1));
    assert!(f.engine.live_for_task(0).is_none() && f.engine.live_for_task(1).is_none());
    // The operator's next version, read from before herd marked them running: t0 off, t1's
    // prompt changed. Neither agent has launched, so the edit applies to both.
    let edited = TWO
        .replacen(
            "\"prompt_template\": \"old\"}",
            "\"prompt_template\": \"old\", \"enabled\": false}",
            1,
        )
        .replace("\"old\"}", "\"new\"}");
    std::fs::write(&f.path, &edited).expect("edit");
    drive(&mut f, &mut events, |f, _| f.engine.is_done());
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("settled");
    let doc: Value = serde_json::from_str(&on_disk(&f)).expect("json");
    // Back to what it was, as a withdrawn start leaves it (`pending`, no attempt).
    assert_eq!(doc["tasks"][0]["enabled"], false, "{doc}");
    assert_eq!(doc["tasks"][0]["status"], "pending", "{doc}");
    assert_eq!(doc["tasks"][0]["attempts"], 0, "{doc}");
    assert_eq!(doc["tasks"][1]["status"], "completed", "{doc}");
    assert_eq!(doc["tasks"][1]["attempts"], 1, "{doc}");
    let runs = f.path.parent().expect("dir").join("runs");
    assert!(!runs.join("t0").join("attempt_1.log").exists(), "t0 ran");
    let log = std::fs::read_to_string(runs.join("t1").join("attempt_1.log")).expect("t1 log");
    assert!(log.contains("prompt: new"), "t1 ran with: {log}");
}

#[test]
fn a_start_being_prepared_is_withdrawn_when_the_edit_disables_its_task() {
    // A signal file to clear: the start is prepared on a worker before it is recorded.
    let one = r#"{"tasks": [
  {"task_id": "t0", "agent": "says", "prompt_template": "old", "completion": "signal_file"}
]}"#;
    let mut f = says(one);
    f.engine.fill_slots(Now::read()).expect("fill");
    assert!(f.engine.attempts.has_task(0), "t0 is being prepared");
    assert!(f.engine.live_for_task(0).is_none());
    // The operator disables it while its preparation is out; herd reads the edit before the
    // preparation's report (ticks only, no report taken in).
    let edited = one.replace("\"old\",", "\"old\", \"enabled\": false,");
    std::fs::write(&f.path, &edited).expect("edit");
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while changed(&events).is_none() {
        assert!(
            Instant::now() < deadline,
            "edit not read; events: {events:?}"
        );
        f.engine.on_tick(Now::read()).expect("tick");
        events.extend(f.engine.drain_events());
        std::thread::sleep(Duration::from_millis(10));
    }
    drive(&mut f, &mut events, |f, _| f.engine.is_done());
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("settled");
    let doc: Value = serde_json::from_str(&on_disk(&f)).expect("json");
    assert_eq!(doc["tasks"][0]["enabled"], false, "{doc}");
    // Never started: as the operator left it.
    let status = doc["tasks"][0]["status"].as_str();
    assert!(matches!(status, None | Some("pending")), "{doc}");
    assert_eq!(
        doc["tasks"][0]["attempts"].as_u64().unwrap_or(0),
        0,
        "{doc}"
    );
    let runs = f.path.parent().expect("dir").join("runs");
    assert!(!runs.join("t0").join("attempt_1.log").exists(), "t0 ran");
}
