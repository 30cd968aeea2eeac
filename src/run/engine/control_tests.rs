//! Tests of the operator actions (`control`), and the hand-driven engine fixture the session
//! tests share.

use crate::run::clock::Now;
use std::time::Duration;

use tokio::sync::mpsc;

use serde_json::{Value, json};

use super::control::*;
use super::os::Os;
use super::os_fake::{FakeOs, Script};
use crate::core::batch::Input;
use crate::core::profile::ProfileSet;
use crate::core::task::TaskStatus;
use crate::run::engine::inbox::EngineInbox;
use crate::run::engine::{BatchView, Engine, EngineOptions};
use crate::run::store::TaskStore;
use std::time::Instant;

/// A profile whose prompt is `Allow? [y/n]`, answered with `y` + Enter.
const PROFILE: &str = r#"
[profiles.ask]
command = ["sh", "-c", "printf 'Allow? [y/n] '; read a; [ \"$a\" = y ] && echo TASK_COMPLETE:{task_id}; sleep 0.2"]
[[profiles.ask.prompts]]
name = "press_y"
label = "Yes"
pattern = 'Allow\? \[y/n\]'
send = "y\r"
"#;

/// An engine on a temporary tasks file, driven by hand (shared with the session tests).
pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    pub(crate) path: std::path::PathBuf,
    pub(crate) engine: Engine,
    pub(crate) reports: mpsc::Receiver<EngineInbox>,
    pub(crate) runtime: tokio::runtime::Runtime,
    /// What the engine's agents run on: the fake plays its script (idle unless told).
    pub(crate) os: FakeOs,
}

fn fixture(tasks: &str) -> Fixture {
    asking(tasks, PROFILE)
}

/// `fixture_with`, its agents played as `PROFILE`'s: they ask `Allow? [y/n]`, and on `y`
/// print their marker and exit.
pub(crate) fn asking(tasks: &str, profiles: &str) -> Fixture {
    let f = fixture_with(tasks, profiles);
    f.os.set_script(Script::asks("Allow? [y/n] ", "y\r"));
    f
}

/// `tasks` with the built-in profiles and `profiles` (a user profiles text); its agents are
/// fakes (`os_fake`): none is spawned.
pub(crate) fn fixture_with(tasks: &str, profiles: &str) -> Fixture {
    let os = FakeOs::default();
    fixture_on(tasks, profiles, Box::new(os.clone()), os)
}

fn fixture_on(tasks: &str, profiles: &str, on: Box<dyn Os>, os: FakeOs) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.json");
    std::fs::write(&path, tasks).expect("write tasks");
    let store = TaskStore::open(&path).expect("open store");
    let profiles = ProfileSet::build(&crate::assets::built_in_profile_texts(), Some(profiles))
        .expect("profiles");
    let opts = EngineOptions {
        concurrency: 4,
        rows: 24,
        cols: 80,
        runs_dir: dir.path().join("runs"),
        only: Vec::new(),
        operator_present: true,
        hosts: Default::default(),
        record_input: false,
    };
    let (tx, reports) = mpsc::channel(256);
    let engine = Engine::with_os(store, profiles, opts, tx, Now::read(), on).expect("engine");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    Fixture {
        _dir: dir,
        path,
        engine,
        reports,
        runtime,
        os,
    }
}

impl Fixture {
    /// Task `index`'s `field` in the file, once every change made so far is written.
    pub(crate) fn on_disk(&mut self, index: usize, field: &str) -> Value {
        self.engine
            .settle_writes(Now::read(), Duration::from_secs(10))
            .expect("written");
        let text = std::fs::read_to_string(&self.path).expect("read tasks");
        let doc: Value = serde_json::from_str(&text).expect("json");
        doc["tasks"][index][field].clone()
    }

    fn status(&self, index: usize) -> TaskStatus {
        self.engine.store().file().tasks()[index].status
    }

    /// Drives the engine like the dashboard does until `done` holds (10 s at most).
    pub(crate) fn pump_until(&mut self, what: &str, done: impl Fn(&Engine) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done(&self.engine) {
            if Instant::now() > deadline {
                let screen = self
                    .engine
                    .live()
                    .map(|l| l.attempt.screen().text())
                    .collect::<Vec<_>>();
                panic!("timed out waiting for {what}; screens: {screen:?}");
            }
            let reports = &mut self.reports;
            let next = self.runtime.block_on(async {
                tokio::time::timeout(Duration::from_millis(50), reports.recv()).await
            });
            if let Ok(Some(report)) = next {
                self.engine.on_report(report, Now::read()).expect("report");
            }
            self.engine.on_tick(Now::read()).expect("tick");
        }
    }
}

fn task(id: &str, status: &str, extra: &str) -> String {
    format!(
        r#"{{"task_id": "{id}", "agent": "ask", "prompt_template": "do it", "status": "{status}"{extra}}}"#
    )
}

fn tasks(list: &[String]) -> String {
    format!(r#"{{"run_id": "r", "tasks": [{}]}}"#, list.join(", "))
}

#[test]
fn cancel_moves_waiting_tasks_to_cancelled_and_refuses_finished_ones() {
    let mut f = fixture(&tasks(&[
        task("a", "pending", ""),
        task("b", "retryable", r#", "attempts": 1"#),
        task("c", "completed", ""),
    ]));
    f.engine.set_paused(true);
    let at = Instant::now() + Duration::from_secs(60);
    f.engine
        .batch
        .handle(Input::RetryAt { task: 1, at }, Instant::now());
    assert!(
        f.engine
            .cancel_task(0, Now::read())
            .expect("cancel")
            .is_done()
    );
    assert!(
        f.engine
            .cancel_task(1, Now::read())
            .expect("cancel")
            .is_done()
    );
    assert_eq!(f.engine.retry_at(1), None);
    let outcome = f.engine.cancel_task(2, Now::read()).expect("cancel");
    assert!(!outcome.is_done(), "{outcome:?}");
    assert_eq!(f.status(0), TaskStatus::Cancelled);
    assert_eq!(f.on_disk(0, "status"), json!("cancelled"));
    assert_eq!(f.on_disk(1, "status"), json!("cancelled"));
    assert_eq!(f.on_disk(2, "status"), json!("completed"));
}

#[test]
fn retry_now_requeues_failed_and_cancelled_tasks_and_skips_waits() {
    let mut f = fixture(&tasks(&[
        task("failed", "failed", r#", "attempts": 2"#),
        task("cancelled", "cancelled", ""),
        task("waiting", "retryable", r#", "attempts": 1"#),
        task("done", "completed", ""),
    ]));
    f.engine.set_paused(true);
    let at = Instant::now() + Duration::from_secs(60);
    f.engine
        .batch
        .handle(Input::RetryAt { task: 2, at }, Instant::now());
    for index in 0..3 {
        let outcome = f.engine.retry_now(index, Now::read()).expect("retry");
        assert!(outcome.is_done(), "{outcome:?}");
        assert!(outcome.message().contains("paused"), "{outcome:?}");
    }
    assert_eq!(f.on_disk(0, "status"), json!("pending"));
    assert_eq!(f.on_disk(0, "attempts"), json!(2), "history is kept");
    // A fresh retry budget, as `herd run --retry` gives: max_retries counts from attempt 3.
    assert_eq!(f.on_disk(0, "attempts_before_retry"), json!(2));
    assert_eq!(f.on_disk(1, "status"), json!("pending"));
    assert_eq!(f.on_disk(1, "attempts_before_retry"), json!(0));
    assert_eq!(f.status(2), TaskStatus::Pending);
    assert_eq!(f.on_disk(2, "attempts_before_retry"), json!(1));
    assert_eq!(f.engine.retry_at(2), None);
    assert!(!f.engine.retry_now(3, Now::read()).expect("retry").is_done());
    assert_eq!(f.on_disk(3, "status"), json!("completed"));
}

#[test]
fn prompt_edits_and_policy_switches_are_written_to_the_file() {
    let mut f = fixture(&tasks(&[
        task("a", "pending", r#", "permission_policy": {"other": true}"#),
        task("b", "completed", ""),
    ]));
    f.engine.set_paused(true);
    assert!(
        f.engine
            .apply(prompt_template(0, "new\nprompt"), Now::read())
            .expect("edit")
            .is_done()
    );
    assert_eq!(f.on_disk(0, "prompt_template"), json!("new\nprompt"));
    assert!(
        !f.engine
            .apply(prompt_template(1, "x"), Now::read())
            .expect("edit")
            .is_done()
    );
    assert!(
        f.engine
            .set_auto_answer(0, 0, true, Now::read())
            .expect("auto")
            .is_done()
    );
    assert_eq!(
        f.on_disk(0, "permission_policy"),
        json!({"auto_press_y": true, "other": true})
    );
    assert_eq!(
        f.engine.store().file().tasks()[0].policy_for("press_y"),
        Some(true)
    );
    assert!(
        f.engine
            .set_auto_answer(0, 0, false, Now::read())
            .expect("auto")
            .is_done()
    );
    assert_eq!(
        f.on_disk(0, "permission_policy")["auto_press_y"],
        json!(false)
    );
    assert!(
        !f.engine
            .set_auto_answer(0, 7, true, Now::read())
            .expect("auto")
            .is_done()
    );
}

#[test]
fn agents_start_at_the_launch_size_and_the_cast_header_says_so() {
    let mut f = fixture(&tasks(&[task(
        "a",
        "pending",
        r#", "command": ["sleep", "30"]"#,
    )]));
    f.os.set_script(Script::idle());
    assert_eq!(f.engine.sizes.at(0), (24, 80));
    // What the dashboard computes for a lone agent on a 120x40 terminal.
    let (rows, cols) =
        crate::ui::layout::launch_size(ratatui::layout::Rect::new(0, 0, 120, 40), false, 1);
    assert_eq!((rows, cols), (36, 76));
    f.engine.set_launch_sizes(vec![(rows, cols)]);
    assert_eq!(f.engine.sizes.at(0), (36, 76));
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    let live = f.engine.live_for_task(0).expect("running");
    assert_eq!(live.attempt.screen().size(), (36, 76));
    let cast = f.engine.runs_dir().join("a").join("attempt_1.cast");
    let header = std::fs::read_to_string(&cast).expect("cast");
    let header: Value = serde_json::from_str(header.lines().next().expect("header")).expect("json");
    assert_eq!(
        (header["height"].clone(), header["width"].clone()),
        (json!(36), json!(76))
    );
    assert_eq!(f.os.spawned(0).size, (36, 76));
    f.engine.kill_all();
}

#[test]
fn messages_are_pasted_when_the_agent_allows_it() {
    assert_eq!(
        message_bytes("one\ntwo\n", true),
        b"\x1b[200~one\rtwo\x1b[201~\r"
    );
    assert_eq!(message_bytes("one\r\ntwo", false), b"one\rtwo\r");
    assert_eq!(message_bytes("hi", false), b"hi\r");
}

#[test]
fn cancelling_a_running_task_ends_its_agent() {
    let mut f = fixture(&tasks(&[task(
        "a",
        "pending",
        r#", "command": ["sleep", "30"], "max_retries": 3"#,
    )]));
    f.os.set_script(Script::idle());
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    assert!(f.engine.live_for_task(0).is_some());
    assert!(!f.engine.retry_now(0, Now::read()).expect("retry").is_done());
    assert!(
        f.engine
            .send_message(0, "hello", Now::read())
            .expect("send")
            .is_done()
    );
    let outcome = f.engine.cancel_task(0, Now::read()).expect("cancel");
    assert!(outcome.is_done(), "{outcome:?}");
    f.pump_until("the task to be cancelled", |e| e.live_for_task(0).is_none());
    let agent = f.os.spawned(0);
    assert_eq!(agent.writes, vec![b"hello\r".to_vec()]);
    assert!(!agent.signals.is_empty(), "{agent:?}");
    assert_eq!(f.status(0), TaskStatus::Cancelled);
    assert_eq!(f.on_disk(0, "status"), json!("cancelled"));
    assert_eq!(
        f.engine.retry_at(0),
        None,
        "a cancelled task is not retried"
    );
}

#[test]
fn switching_auto_answer_on_answers_the_waiting_prompt() {
    let mut f = fixture(&tasks(&[task("a", "pending", "")]));
    f.engine.fill_slots(Now::read()).expect("start");
    f.engine
        .settle_writes(Now::read(), Duration::from_secs(10))
        .expect("written");
    f.pump_until("the prompt to wait", |e| {
        e.live_for_task(0)
            .is_some_and(|l| l.attempt.waiting().is_some())
    });
    let outcome = f
        .engine
        .set_auto_answer(0, 0, true, Now::read())
        .expect("auto");
    assert!(outcome.message().contains("answered"), "{outcome:?}");
    f.pump_until("the task to finish", |e| e.live_for_task(0).is_none());
    assert_eq!(f.status(0), TaskStatus::Completed);
    assert_eq!(
        f.on_disk(0, "permission_policy"),
        json!({"auto_press_y": true})
    );
}

#[test]
fn a_task_cancelled_while_its_worktree_is_made_does_not_start() {
    let repo = tempfile::tempdir().expect("temp dir");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.email=t@e",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "1",
        ],
    ] {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(repo.path())
            .args(args)
            .status()
            .expect("git");
        assert!(ok.success());
    }
    let extra = format!(r#", "worktree": true, "cwd": "{}""#, repo.path().display());
    let mut f = fixture(&tasks(&[task("a", "pending", &extra)]));
    f.engine.on_tick(Now::read()).expect("tick");
    assert!(f.engine.live().next().is_none(), "made off the loop first");
    assert!(!f.engine.is_done(), "the task holds its slot meanwhile");
    assert!(
        f.engine
            .cancel_task(0, Now::read())
            .expect("cancel")
            .is_done()
    );
    f.pump_until("the preparation to come back", Engine::is_done);
    assert_eq!(f.status(0), TaskStatus::Cancelled);
    assert_eq!(f.on_disk(0, "status"), json!("cancelled"));
    assert_eq!(
        f.engine.store().file().tasks()[0].attempts,
        0,
        "no attempt started"
    );
}

/// What one operator action does to a running agent's terminal.
type Action = fn(&mut Engine);

/// What the fake saw: writes, resizes, signals.
type Seen = (
    Vec<&'static [u8]>,
    Vec<(u16, u16)>,
    Vec<crate::core::attempt::StopSignal>,
);

#[test]
fn each_operator_action_reaches_the_agents_terminal_as_the_fake_records_it() {
    use crate::core::attempt::{Event, StopSignal};
    let cases: [(&str, Action, Seen); 5] = [
        (
            "resize",
            |e| {
                let resize = Event::Resize {
                    rows: 30,
                    cols: 100,
                };
                e.send_to_task(0, resize, Now::read()).expect("resize");
            },
            (vec![], vec![(30, 100)], vec![]),
        ),
        (
            "keys",
            |e| {
                let keys = Event::OperatorKeys(b"\x1b[A".to_vec());
                e.send_to_task(0, keys, Now::read()).expect("keys");
            },
            (vec![b"\x1b[A"], vec![], vec![]),
        ),
        (
            "message",
            |e| drop(e.send_message(0, "hi", Now::read()).expect("send")),
            (vec![b"hi\r"], vec![], vec![]),
        ),
        (
            "cancel",
            |e| drop(e.cancel_task(0, Now::read()).expect("cancel")),
            (vec![], vec![], vec![StopSignal::Term]),
        ),
        (
            "kill",
            Engine::kill_all,
            (vec![], vec![], vec![StopSignal::Kill]),
        ),
    ];
    for (name, act, (writes, resizes, signals)) in cases {
        let mut f = fixture(&tasks(&[task("a", "pending", "")]));
        f.os.set_script(Script::idle());
        f.engine.fill_slots(Now::read()).expect("start");
        f.engine
            .settle_writes(Now::read(), Duration::from_secs(10))
            .expect("written");
        assert!(f.engine.live_for_task(0).is_some(), "{name}: running");
        act(&mut f.engine);
        let agent = f.os.spawned(0);
        let written: Vec<&[u8]> = agent.writes.iter().map(Vec::as_slice).collect();
        assert_eq!(written, writes, "{name}: writes");
        assert_eq!(agent.resizes, resizes, "{name}: resizes");
        assert_eq!(agent.signals, signals, "{name}: signals");
        f.engine.kill_all();
    }
}

/// The command that replaces task `task`'s `prompt_template` with `text`.
fn prompt_template(task: usize, text: &str) -> super::command::Command {
    let text = text.to_string();
    super::command::Command::SetPromptTemplate { task, text }
}

#[test]
fn a_task_whose_configuration_fails_in_the_fill_leaves_its_slot_to_the_next() {
    let bad =
        r#"{"task_id": "bad", "agent": "nope", "prompt_template": "do it", "status": "pending"}"#;
    let mut f = fixture(&tasks(&[
        bad.to_string(),
        task("a", "pending", ""),
        task("b", "pending", ""),
    ]));
    assert_eq!(f.status(0), TaskStatus::Failed, "no such profile");
    f.engine.set_concurrency(1);
    // Sent back to the queue, it takes the one slot first and fails again in the same fill.
    let outcome = f.engine.retry_now(0, Now::read()).expect("retry");
    assert!(outcome.is_done(), "{outcome:?}");
    assert_eq!(f.status(0), TaskStatus::Failed);
    assert_eq!(
        f.status(1),
        TaskStatus::Running,
        "the slot went to the next task"
    );
    assert_eq!(f.status(2), TaskStatus::Pending);
}
