//! Operator actions on the engine: what the dashboard's keys do to tasks and agents.
//!
//! Cancel, retry now (or skip a retry's wait), auto-answer switches, prompt edits and messages to
//! a running agent. Each action checks the status transition against `TaskStatus::can_become`,
//! writes the change to the tasks file like every other engine change, and says what it did in a
//! `ControlOutcome` for the status line. Nothing here draws or waits.

use std::path::Path;
use std::time::Instant;

use color_eyre::eyre::{Result, WrapErr};
use serde_json::{Value, json};

use super::LiveAttempt;
use crate::core::attempt::Event;
use crate::core::task::TaskStatus;
use crate::run::pty::PtyReport;

/// What an operator action did, in words for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlOutcome {
    Done(String),
    Refused(String),
}

impl ControlOutcome {
    pub fn message(&self) -> &str {
        match self {
            ControlOutcome::Done(m) | ControlOutcome::Refused(m) => m,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, ControlOutcome::Done(_))
    }
}

pub(super) fn refused(text: impl Into<String>) -> Result<ControlOutcome> {
    Ok(ControlOutcome::Refused(text.into()))
}

pub(super) fn done(text: impl Into<String>) -> Result<ControlOutcome> {
    Ok(ControlOutcome::Done(text.into()))
}

/// The bytes that deliver `text` to an agent as one message, then submit it: a bracketed paste
/// when the agent asked for that mode (so newlines stay inside the message), otherwise typed
/// line by line.
pub fn message_bytes(text: &str, bracketed_paste: bool) -> Vec<u8> {
    let body = text
        .trim_end_matches(['\n', '\r'])
        .replace("\r\n", "\n")
        .replace('\n', "\r");
    let mut out = Vec::with_capacity(body.len() + 16);
    if bracketed_paste {
        out.extend_from_slice(b"\x1b[200~");
        out.extend_from_slice(body.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
    } else {
        out.extend_from_slice(body.as_bytes());
    }
    out.push(b'\r');
    out
}

impl super::Engine {
    /// Where attempts are recorded (and the dashboard writes its log).
    pub fn runs_dir(&self) -> &Path {
        &self.opts.runs_dir
    }

    /// The PTY size (rows, cols) the next agents start at; the cast header states it.
    pub fn launch_size(&self) -> (u16, u16) {
        (self.opts.rows, self.opts.cols)
    }

    /// Starts the next agents at `rows` x `cols`: the dashboard passes the size their pane will
    /// be drawn at, so an agent draws its first screen at the right width (headless keeps
    /// `--pty-size`). Running agents are not touched; the dashboard resizes those itself.
    pub fn set_launch_size(&mut self, rows: u16, cols: u16) {
        let size = (rows.max(1), cols.max(1));
        if size != self.launch_size() {
            tracing::debug!(rows = size.0, cols = size.1, "launch size");
            (self.opts.rows, self.opts.cols) = size;
        }
    }

    /// Whether task `index` belongs to this run (enabled, and picked by `--only` if given).
    pub fn task_in_scope(&self, index: usize) -> bool {
        index < self.store.file().tasks().len() && self.in_scope(index)
    }

    /// The task a PTY report is about, while its attempt is live.
    pub fn task_of_report(&self, report: &PtyReport) -> Option<usize> {
        let key = match report {
            PtyReport::Output { key, .. }
            | PtyReport::Closed { key }
            | PtyReport::Exited { key, .. }
            | PtyReport::Swept { key, .. } => key,
        };
        self.live.get(key).map(|live| live.task)
    }

    fn live_mut(&mut self, index: usize) -> Option<&mut LiveAttempt> {
        let key = self.live_by_task.get(&index)?;
        self.live.get_mut(key)
    }

    pub(super) fn task_label(&self, index: usize) -> Option<(String, TaskStatus)> {
        let task = self.store.file().tasks().get(index)?;
        Some((task.task_id.clone(), task.status))
    }

    /// Cancels a task: a running agent is ended (its process group gets TERM, then KILL) and the
    /// task becomes `cancelled` when it is gone; a pending or retryable task is cancelled now.
    pub fn cancel_task(&mut self, index: usize, now: Instant) -> Result<ControlOutcome> {
        let Some((task_id, status)) = self.task_label(index) else {
            return refused("no such task");
        };
        if let Some(live) = self.live_for_task(index) {
            if live.attempt.is_ending() {
                return refused(format!("{task_id} is already ending"));
            }
            self.send_to_task(index, Event::Cancel, now)?;
            return done(format!("cancelling {task_id}: ending its agent"));
        }
        if !status.can_become(TaskStatus::Cancelled) {
            return refused(format!("{task_id} is {status}; it cannot be cancelled"));
        }
        self.retry_at.remove(&index);
        self.store
            .file_mut()
            .set_status(index, TaskStatus::Cancelled);
        self.store.save().wrap_err("cannot write the tasks file")?;
        done(format!("{task_id} cancelled"))
    }

    /// Runs a task again as soon as there is room: a failed or cancelled task goes back to
    /// `pending`; a retryable task waiting for its backoff skips the rest of the wait.
    pub fn retry_now(&mut self, index: usize, now: Instant) -> Result<ControlOutcome> {
        let Some((task_id, status)) = self.task_label(index) else {
            return refused("no such task");
        };
        if self.live_by_task.contains_key(&index) {
            return refused(format!("{task_id} is running"));
        }
        if !self.in_scope(index) {
            return refused(format!(
                "{task_id} is not part of this run (disabled or not --only)"
            ));
        }
        if self.stopping {
            return refused("herd is stopping; nothing new starts");
        }
        let message = match status {
            TaskStatus::Retryable => {
                self.retry_at.remove(&index);
                format!("{task_id}: retry wait skipped")
            }
            TaskStatus::Pending => {
                self.retry_at.remove(&index);
                format!("{task_id} is already queued")
            }
            _ if status.can_become(TaskStatus::Pending) => {
                self.retry_at.remove(&index);
                self.store.file_mut().set_status(index, TaskStatus::Pending);
                self.store.save().wrap_err("cannot write the tasks file")?;
                format!("{task_id} is pending again")
            }
            _ => return refused(format!("{task_id} is {status}; it does not run again")),
        };
        self.fill_slots(now)?;
        let started = self.live_by_task.contains_key(&index);
        let suffix = if started {
            "; started"
        } else if self.paused {
            "; the queue is paused"
        } else {
            "; it starts when a slot is free"
        };
        done(format!("{message}{suffix}"))
    }

    /// Whether herd answers prompt rule `rule` (an index into the task's profile's prompts) by
    /// itself for this task: for the running attempt at once, and in the task's
    /// `permission_policy` so later attempts keep it. Turning it on while that prompt waits for
    /// the operator answers it now.
    pub fn set_auto_answer(
        &mut self,
        index: usize,
        rule: usize,
        auto: bool,
        now: Instant,
    ) -> Result<ControlOutcome> {
        let Some(task) = self.store.file().tasks().get(index) else {
            return refused("no such task");
        };
        let task_id = task.task_id.clone();
        let Some(name) = self
            .profiles
            .get(&task.agent)
            .and_then(|p| p.prompts.get(rule))
            .map(|r| r.name.clone())
        else {
            return refused(format!("{task_id}: its profile has no prompt rule {rule}"));
        };
        // Key order inside the policy object follows the typed map (sorted by name).
        let mut policy: serde_json::Map<String, Value> = task
            .permission_policy
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        policy.insert(format!("auto_{name}"), json!(auto));
        // The rule lists stay as they are.
        let rules = &task.permission_rules;
        for (key, list) in [
            ("allow", &rules.allow),
            ("ask", &rules.ask),
            ("deny", &rules.deny),
        ] {
            if !list.is_empty() {
                policy.insert(key.to_string(), json!(list));
            }
        }
        let mut answered = false;
        if let Some(live) = self.live_mut(index) {
            live.attempt.set_auto(rule, auto);
            // Never for a request the guard refused: the switch allows only what it does not.
            answered = auto
                && live.attempt.waiting().is_some_and(|w| {
                    w.rule == rule
                        && !matches!(
                            w.decision,
                            Some(crate::core::guard::Decision::Refuse { .. })
                        )
                });
        }
        if answered {
            self.send_to_task(index, Event::OperatorAnswer { rule }, now)?;
        }
        self.store
            .file_mut()
            .set_field(index, "permission_policy", Value::Object(policy));
        self.store.save().wrap_err("cannot write the tasks file")?;
        let state = if auto { "on" } else { "off" };
        let extra = if answered {
            "; the waiting prompt was answered"
        } else {
            ""
        };
        done(format!("{task_id}: auto_{name} {state}{extra}"))
    }

    /// Replaces a task's `prompt_template`; it takes effect from the task's next attempt.
    pub fn set_prompt_template(&mut self, index: usize, text: &str) -> Result<ControlOutcome> {
        let Some((task_id, status)) = self.task_label(index) else {
            return refused("no such task");
        };
        if status == TaskStatus::Completed {
            return refused(format!("{task_id} is completed; it never runs again"));
        }
        self.store
            .file_mut()
            .set_field(index, "prompt_template", json!(text));
        self.store.save().wrap_err("cannot write the tasks file")?;
        let when = if self.live_by_task.contains_key(&index) {
            "from its next attempt"
        } else {
            "for its next attempt"
        };
        done(format!("{task_id}: prompt saved {when}"))
    }

    /// Types a (multi-line) message into a running agent and submits it.
    pub fn send_message(
        &mut self,
        index: usize,
        text: &str,
        now: Instant,
    ) -> Result<ControlOutcome> {
        let Some((task_id, _)) = self.task_label(index) else {
            return refused("no such task");
        };
        let Some(live) = self.live_for_task(index) else {
            return refused(format!("{task_id} is not running"));
        };
        if text.trim().is_empty() {
            return refused("empty message not sent");
        }
        let bytes = message_bytes(text, live.attempt.screen().vt().bracketed_paste());
        self.send_to_task(index, Event::OperatorKeys(bytes), now)?;
        done(format!("message sent to {task_id}"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc;

    use super::*;
    use crate::core::profile::ProfileSet;
    use crate::run::engine::{Engine, EngineOptions};
    use crate::run::store::TaskStore;

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
        pub(crate) reports: mpsc::Receiver<PtyReport>,
        pub(crate) runtime: tokio::runtime::Runtime,
    }

    fn fixture(tasks: &str) -> Fixture {
        fixture_with(tasks, PROFILE)
    }

    /// `tasks` with the built-in profiles and `profiles` (a user profiles text).
    pub(crate) fn fixture_with(tasks: &str, profiles: &str) -> Fixture {
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
        };
        let (tx, reports) = mpsc::channel(256);
        let engine = Engine::new(store, profiles, opts, tx).expect("engine");
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
        }
    }

    impl Fixture {
        fn on_disk(&self, index: usize, field: &str) -> Value {
            let text = std::fs::read_to_string(&self.path).expect("read tasks");
            let doc: Value = serde_json::from_str(&text).expect("json");
            doc["tasks"][index][field].clone()
        }

        fn status(&self, index: usize) -> TaskStatus {
            self.engine.store().file().tasks()[index].status
        }

        /// Drives the engine like the dashboard does until `done` holds (10 s at most).
        fn pump_until(&mut self, what: &str, done: impl Fn(&Engine) -> bool) {
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
                    self.engine
                        .on_report(report, Instant::now())
                        .expect("report");
                }
                self.engine.on_tick(Instant::now()).expect("tick");
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
        f.engine
            .retry_at
            .insert(1, Instant::now() + Duration::from_secs(60));
        let now = Instant::now();
        assert!(f.engine.cancel_task(0, now).expect("cancel").is_done());
        assert!(f.engine.cancel_task(1, now).expect("cancel").is_done());
        assert_eq!(f.engine.retry_at(1), None);
        let outcome = f.engine.cancel_task(2, now).expect("cancel");
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
        f.engine
            .retry_at
            .insert(2, Instant::now() + Duration::from_secs(60));
        let now = Instant::now();
        for index in 0..3 {
            let outcome = f.engine.retry_now(index, now).expect("retry");
            assert!(outcome.is_done(), "{outcome:?}");
            assert!(outcome.message().contains("paused"), "{outcome:?}");
        }
        assert_eq!(f.on_disk(0, "status"), json!("pending"));
        assert_eq!(f.on_disk(0, "attempts"), json!(2), "history is kept");
        assert_eq!(f.on_disk(1, "status"), json!("pending"));
        assert_eq!(f.status(2), TaskStatus::Retryable);
        assert_eq!(f.engine.retry_at(2), None);
        assert!(!f.engine.retry_now(3, now).expect("retry").is_done());
        assert_eq!(f.on_disk(3, "status"), json!("completed"));
    }

    #[test]
    fn prompt_edits_and_policy_switches_are_written_to_the_file() {
        let mut f = fixture(&tasks(&[
            task("a", "pending", r#", "permission_policy": {"other": true}"#),
            task("b", "completed", ""),
        ]));
        f.engine.set_paused(true);
        let now = Instant::now();
        assert!(
            f.engine
                .set_prompt_template(0, "new\nprompt")
                .expect("edit")
                .is_done()
        );
        assert_eq!(f.on_disk(0, "prompt_template"), json!("new\nprompt"));
        assert!(
            !f.engine
                .set_prompt_template(1, "x")
                .expect("edit")
                .is_done()
        );
        assert!(
            f.engine
                .set_auto_answer(0, 0, true, now)
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
                .set_auto_answer(0, 0, false, now)
                .expect("auto")
                .is_done()
        );
        assert_eq!(
            f.on_disk(0, "permission_policy")["auto_press_y"],
            json!(false)
        );
        assert!(
            !f.engine
                .set_auto_answer(0, 7, true, now)
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
        assert_eq!(f.engine.launch_size(), (24, 80));
        // What the dashboard computes for a lone agent on a 120x40 terminal.
        let (rows, cols) =
            crate::ui::layout::launch_size(ratatui::layout::Rect::new(0, 0, 120, 40), false, 1);
        assert_eq!((rows, cols), (36, 76));
        f.engine.set_launch_size(rows, cols);
        assert_eq!(f.engine.launch_size(), (36, 76));
        f.engine.fill_slots(Instant::now()).expect("start");
        let live = f.engine.live_for_task(0).expect("running");
        assert_eq!(live.attempt.screen().size(), (36, 76));
        let cast = f.engine.runs_dir().join("a").join("attempt_1.cast");
        let header = std::fs::read_to_string(&cast).expect("cast");
        let header: Value =
            serde_json::from_str(header.lines().next().expect("header")).expect("json");
        assert_eq!(
            (header["height"].clone(), header["width"].clone()),
            (json!(36), json!(76))
        );
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
        f.engine.fill_slots(Instant::now()).expect("start");
        assert!(f.engine.live_for_task(0).is_some());
        assert!(
            !f.engine
                .retry_now(0, Instant::now())
                .expect("retry")
                .is_done()
        );
        assert!(
            f.engine
                .send_message(0, "hello", Instant::now())
                .expect("send")
                .is_done()
        );
        let outcome = f.engine.cancel_task(0, Instant::now()).expect("cancel");
        assert!(outcome.is_done(), "{outcome:?}");
        f.pump_until("the task to be cancelled", |e| e.live_for_task(0).is_none());
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
        f.engine.fill_slots(Instant::now()).expect("start");
        f.pump_until("the prompt to wait", |e| {
            e.live_for_task(0)
                .is_some_and(|l| l.attempt.waiting().is_some())
        });
        let outcome = f
            .engine
            .set_auto_answer(0, 0, true, Instant::now())
            .expect("auto");
        assert!(outcome.message().contains("answered"), "{outcome:?}");
        f.pump_until("the task to finish", |e| e.live_for_task(0).is_none());
        assert_eq!(f.status(0), TaskStatus::Completed);
        assert_eq!(
            f.on_disk(0, "permission_policy"),
            json!({"auto_press_y": true})
        );
    }
}
