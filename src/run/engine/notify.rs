//! The `notify` command's side of the engine: each time the events of a turn leave the engine
//! (`drain_events`), what the operator should hear of (`core::notify` decides) is handed to the
//! notifier's worker, with the command in effect for it: `herd run --notify` first, then the
//! task's profile's `notify`, then the tasks file's `notify` (read as the file is now, so an
//! operator's edit applies to the next event).

use std::collections::BTreeMap;

use super::attempts::Attempts;
use super::event::EngineEvent;
use super::tasks::Tasks;
use crate::core::guard::Decision;
use crate::core::operator::action_link::ActionLinks;
use crate::core::operator::clock_words;
use crate::core::operator::notify::{
    BatchEnd, EndFact, Notifications, NotifyEvent, Turn, WaitFact,
};
use crate::core::profile::ProfileSet;
use crate::core::task::TaskStatus;
use crate::run::notify::{Notifier, NotifyJob, TIME_LIMIT};
use crate::run::store::TaskStore;

/// What the `notify` command was told, and its worker.
#[derive(Default)]
pub(super) struct Notify {
    /// `herd run --notify`, as an argv; overrides every other.
    command: Option<Vec<String>>,
    told: Notifications,
    /// Started with the first event that has a command to run.
    notifier: Option<Notifier>,
    /// The web view's one-time links, while it runs: a waiting prompt's event carries one per
    /// answer (`actions`).
    links: Option<ActionLinks>,
}

/// What a notification's commands and payload are read from: the tasks file as it is now, the
/// profiles, the run's scope and the time of the turn.
struct NotifyContext<'a> {
    store: &'a TaskStore,
    profiles: &'a ProfileSet,
    scope: &'a [usize],
    wall: jiff::Timestamp,
}

impl Notify {
    /// `herd run --notify CMD`: the argv that gets every event, whatever the file and profiles
    /// say.
    pub(super) fn set_command(&mut self, argv: Option<Vec<String>>) {
        self.command = argv;
    }

    /// The web view runs (`Some`): prompts' events carry its one-time links.
    pub(super) fn set_links(&mut self, links: Option<ActionLinks>) {
        self.links = links;
    }

    /// Tells the commands what a turn's `events` and the waits of `attempts` call for
    /// (`core::notify` decides), on the notifier's worker (never waited for); `ended`: the
    /// run's exit code, once the batch is done.
    pub(super) fn turn(
        &mut self,
        events: &[EngineEvent],
        attempts: &Attempts,
        tasks: &Tasks,
        ended: Option<i32>,
        wall: jiff::Timestamp,
    ) {
        let (waits, ends) = (
            wait_facts(attempts, &self.told),
            end_facts(&tasks.store, events),
        );
        // The scope walks the whole file: only at the end, or when there is something to tell.
        let scope = if ended.is_some() {
            tasks.scope()
        } else {
            Vec::new()
        };
        let batch_end = ended.map(|code| batch_end(&tasks.store, &scope, code));
        let told = self.told.observe(Turn {
            waits: &waits,
            ends: &ends,
            batch_end,
        });
        if told.is_empty() {
            return;
        }
        let scope = if ended.is_some() {
            scope
        } else {
            tasks.scope()
        };
        let from = NotifyContext {
            store: &tasks.store,
            profiles: &tasks.profiles,
            scope: &scope,
            wall,
        };
        for event in &told {
            self.send(event, &from);
        }
    }

    /// The commands for an event about `task_id`: the flag, else the task's profile's, else
    /// the file's. The batch's end goes to the flag's or the file's, else to the command of
    /// every profile the run's tasks use (each once), so a profile's `notify` hears it too.
    fn commands(&self, task_id: Option<&str>, from: &NotifyContext<'_>) -> Vec<Vec<String>> {
        if let Some(argv) = &self.command {
            return vec![argv.clone()];
        }
        let file = from.store.file();
        let profile_command = |index: usize| {
            from.profiles
                .get(&file.tasks()[index].agent)
                .filter(|p| !p.notify.is_empty())
                .map(|p| p.notify.clone())
        };
        let Some(task_id) = task_id else {
            if let Some(argv) = file.notify_command() {
                return vec![argv];
            }
            let mut commands: Vec<Vec<String>> = Vec::new();
            for argv in from.scope.iter().copied().filter_map(profile_command) {
                if !commands.contains(&argv) {
                    commands.push(argv);
                }
            }
            return commands;
        };
        file.task_index(task_id)
            .and_then(profile_command)
            .or_else(|| file.notify_command())
            .into_iter()
            .collect()
    }

    fn send(&mut self, event: &NotifyEvent, from: &NotifyContext<'_>) {
        let task_id = event_task(event);
        let commands = self.commands(task_id, from);
        if commands.is_empty() {
            return;
        }
        let mut payload = match serde_json::to_value(event) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => return,
        };
        payload.insert(
            "at".into(),
            crate::run::outcome::utc_timestamp(from.wall).into(),
        );
        // The same moment on the operator's clock, for a message read in the morning.
        payload.insert(
            "at_local".into(),
            clock_words::local_iso(from.wall, &jiff::tz::TimeZone::system()).into(),
        );
        let tasks_file = std::path::absolute(from.store.path())
            .unwrap_or_else(|_| from.store.path().to_path_buf());
        payload.insert("tasks_file".into(), tasks_file.display().to_string().into());
        if let Some(run_id) = from.store.file().run_id() {
            payload.insert("run_id".into(), run_id.into());
        }
        if let (
            Some(links),
            NotifyEvent::PromptWaiting {
                prompt_id: Some(id),
                answers,
                ..
            },
        ) = (&self.links, event)
        {
            let offers = links.offers(id, answers, from.wall.as_second());
            payload.insert("actions".into(), serde_json::json!(offers));
        }
        let field = |key: &str| {
            payload
                .get(key)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let mut env = vec![
            ("HERD_EVENT".to_string(), field("event")),
            ("HERD_MESSAGE".to_string(), field("message")),
        ];
        if let Some(id) = task_id {
            env.push(("HERD_TASK_ID".to_string(), id.to_string()));
        }
        let payload = serde_json::Value::Object(payload).to_string();
        let cwd = tasks_file.parent().map(std::path::Path::to_path_buf);
        let notifier = self
            .notifier
            .get_or_insert_with(|| Notifier::start(TIME_LIMIT));
        for argv in commands {
            notifier.send(NotifyJob {
                argv,
                payload: payload.clone(),
                env: env.clone(),
                cwd: cwd.clone(),
            });
        }
    }
}

/// What waits for the operator now, for the `notify` command; the answers a prompt takes are
/// read (from its dialog) only for a wait not told yet, not on every turn it waits.
fn wait_facts(attempts: &Attempts, told: &Notifications) -> Vec<WaitFact> {
    attempts
        .live()
        .filter_map(|(_, live)| {
            let waiting = live.attempt.waiting()?;
            let rule = live.attempt.profile().prompts.get(waiting.rule)?;
            let judged = waiting.decision.as_ref().filter(|d| !d.is_allow());
            let mut fact = WaitFact {
                task_id: live.task_id.clone(),
                attempt: live.number,
                rule: rule.name.clone(),
                since: waiting.since,
                request: waiting.request.as_ref().map(ToString::to_string),
                decision: judged.map(Decision::name),
                reason: judged.map(|d| d.why().to_string()),
                prompt: waiting.sighting.text.clone(),
                prompt_id: live.prompts.current().map(str::to_string),
                answers: Vec::new(),
            };
            if told.is_new(&fact) {
                fact.answers = offered_answers(live);
            }
            Some(fact)
        })
        .collect()
}

/// The answers the prompt waiting in `live` takes, as `prompts.answer` names them.
fn offered_answers(live: &super::attempts::LiveAttempt) -> Vec<&'static str> {
    super::api::PromptInfo::of(live)
        .map(|p| p.options.iter().map(|a| a.as_str()).collect())
        .unwrap_or_default()
}

/// The ends among `events`, for the `notify` command.
fn end_facts(store: &TaskStore, events: &[EngineEvent]) -> Vec<EndFact> {
    let local = crate::run::clock::local_now();
    // The result of this very attempt (written before its end is told), never an older one.
    let why_of = |task_id: &str, attempt: u32| {
        let file = store.file();
        let result = file.tasks()[file.task_index(task_id)?].result.as_ref()?;
        let same =
            result.get("attempt").and_then(serde_json::Value::as_u64) == Some(u64::from(attempt));
        same.then(|| crate::core::operator::deciding_event::why_of(Some(result), &local))
            .flatten()
    };
    let changes_of = |task_id: &str, attempt: u32| {
        let file = store.file();
        let result = file.tasks()[file.task_index(task_id)?].result.as_ref()?;
        let same =
            result.get("attempt").and_then(serde_json::Value::as_u64) == Some(u64::from(attempt));
        let summary = result.pointer("/changes/summary")?.as_str()?;
        same.then(|| summary.to_string())
    };
    let attempts_of = |task_id: &str| {
        let file = store.file();
        file.task_index(task_id)
            .map_or(0, |i| file.tasks()[i].attempts)
    };
    events
        .iter()
        .filter_map(|event| match event {
            EngineEvent::Finished {
                task_id,
                attempt,
                verdict,
                status,
            } => Some(EndFact {
                task_id: task_id.clone(),
                attempt: *attempt,
                status: *status,
                failure: verdict.failure,
                evidence: verdict.evidence.clone(),
                why: why_of(task_id, *attempt),
                questions: verdict.questions.clone(),
                changes: changes_of(task_id, *attempt),
            }),
            EngineEvent::ConfigFailed { task_id, evidence } => Some(EndFact {
                task_id: task_id.clone(),
                attempt: attempts_of(task_id),
                status: TaskStatus::Failed,
                failure: Some(crate::core::task::FailureType::Config),
                evidence: Some(evidence.clone()),
                why: None,
                questions: Vec::new(),
                changes: None,
            }),
            _ => None,
        })
        .collect()
}

/// The batch's end: how many tasks of `scope` ended at each status, and the exit code.
fn batch_end(store: &TaskStore, scope: &[usize], exit_code: i32) -> BatchEnd {
    let mut counts = BTreeMap::new();
    for &index in scope {
        let status = store.file().tasks()[index].status;
        *counts.entry(status.as_str().to_string()).or_insert(0) += 1;
    }
    BatchEnd { counts, exit_code }
}

fn event_task(event: &NotifyEvent) -> Option<&str> {
    match event {
        NotifyEvent::PromptWaiting { task_id, .. }
        | NotifyEvent::NeedsInput { task_id, .. }
        | NotifyEvent::TaskFailed { task_id, .. } => Some(task_id),
        NotifyEvent::BatchEnded { .. } => None,
    }
}
