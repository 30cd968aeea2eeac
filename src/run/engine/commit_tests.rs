//! Tests of the pipelined group commit (`commit`): an agent launches only once the write that
//! marks its task `running` is on disk, a failed write stops the run with the store's message,
//! and a stop withdraws the starts still waiting.

use crate::run::clock::Now;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::BatchView;
use super::control_tests::{Fixture, fixture_with};
use super::os_fake::Script;
use crate::core::task::TaskStatus;
use crate::run::engine::inbox::EngineInbox;

/// An agent that prints the tasks file as it finds it on disk when it starts (its folder is
/// the tasks file's), then its marker: the fake plays it (`fixture`).
const PROFILE: &str = r#"
[profiles.look]
command = ["sh", "-c", "tr -d '\n' < tasks.json; echo; echo TASK_COMPLETE:{task_id}"]
"#;

fn fixture(count: usize) -> Fixture {
    let tasks: Vec<String> = (0..count)
        .map(|i| format!(r#"{{"task_id": "t{i}", "agent": "look", "prompt_template": "p"}}"#))
        .collect();
    let f = fixture_with(&format!(r#"{{"tasks": [{}]}}"#, tasks.join(", ")), PROFILE);
    f.os.set_script(Script::says(0, |plan| {
        let file = std::fs::read_to_string(plan.cwd.join("tasks.json")).unwrap_or_default();
        format!("{}\r\n{{marker}}\r\n", file.replace('\n', ""))
    }));
    f
}

fn on_disk(f: &Fixture) -> Value {
    let text = std::fs::read_to_string(&f.path).expect("read tasks");
    serde_json::from_str(&text).expect("json")
}

/// The next report, waiting up to 10 s.
fn next_report(f: &mut Fixture) -> EngineInbox {
    let reports = &mut f.reports;
    f.runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), reports.recv()).await })
        .expect("a report within 10 s")
        .expect("the channel is open")
}

#[test]
fn an_agent_launches_only_once_its_running_state_is_on_disk() {
    let mut f = fixture(2);
    f.engine.fill_slots(Now::read()).expect("fill");
    // Prepared and handed to the writer, not launched: no report was taken in yet.
    assert_eq!(f.engine.attempts.len(), 2);
    assert!(f.engine.live_for_task(0).is_none());
    assert!(f.engine.live_for_task(1).is_none());
    let (handed, durable) = f.engine.generations();
    assert!(
        handed > durable,
        "the start's write is in flight: {handed} {durable}"
    );
    let first = next_report(&mut f);
    assert!(
        matches!(first, EngineInbox::TasksFileWritten { .. }),
        "no agent may report before the write: {first:?}"
    );
    let doc = on_disk(&f);
    assert_eq!(doc["tasks"][0]["status"], "running");
    assert_eq!(doc["tasks"][1]["status"], "running");
    f.engine
        .on_report(
            EngineInbox::TasksFileWritten { generation: handed },
            Now::read(),
        )
        .expect("written");
    assert!(f.engine.live_for_task(0).is_some());
    assert!(f.engine.live_for_task(1).is_some());
    // And the agents themselves found their tasks `running` in the file.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f.engine.is_done() {
        assert!(Instant::now() < deadline, "the agents did not finish");
        let report = next_report(&mut f);
        f.engine.on_report(report, Now::read()).expect("report");
        f.engine.on_tick(Now::read()).expect("tick");
    }
    for task in ["t0", "t1"] {
        let log = f.engine.runs_dir().join(task).join("attempt_1.log");
        let text = std::fs::read_to_string(&log).expect("the attempt's log");
        let flat: String = text.split_whitespace().collect();
        assert_eq!(flat.matches(r#""status":"running""#).count(), 2, "{text}");
    }
}

#[test]
fn a_failed_write_stops_the_run_with_the_store_message() {
    let mut f = fixture(1);
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("nothing to write yet");
    // The folder is gone: no temporary file can be made beside the tasks file.
    let folder = f.path.parent().expect("folder").to_path_buf();
    std::fs::remove_dir_all(&folder).expect("remove");
    f.engine.fill_slots(Now::read()).expect("fill");
    let error = f
        .engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect_err("the write fails");
    let message = format!("{error:#}");
    assert!(
        message.starts_with("cannot write the tasks file: "),
        "{message}"
    );
    assert!(message.contains("tasks.json"), "{message}");
    // Its agent never launched, and the loop's next look says the same.
    assert!(f.engine.live_for_task(0).is_none());
    let error = f.engine.on_tick(Now::read()).expect_err("still failed");
    assert!(format!("{error:#}").contains("cannot write the tasks file"));
}

#[test]
fn a_stop_withdraws_the_starts_that_wait_for_their_write() {
    let mut f = fixture(1);
    f.engine.fill_slots(Now::read()).expect("fill");
    assert_eq!(
        f.engine.store().file().tasks()[0].status,
        TaskStatus::Running
    );
    f.engine.stop(Now::read()).expect("stop");
    assert_eq!(f.engine.attempts.len(), 0);
    assert!(f.engine.is_done());
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    assert!(f.engine.live_for_task(0).is_none());
    let doc = on_disk(&f);
    assert_eq!(doc["tasks"][0]["status"], "pending");
    assert_eq!(doc["tasks"][0]["attempts"], 0);
    assert!(
        !f.engine.runs_dir().join("t0").exists(),
        "nothing is recorded for a start that did not happen"
    );
}
