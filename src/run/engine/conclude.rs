//! How an attempt ends, carried out: once its end's stages say so (`core::batch::end`: exit,
//! sweep, drain, host check, last file read), the attempt's outcome is gathered,
//! `core::outcome::decide` says what follows (next status, retry, account rest, quota hold),
//! and this carries it out: the task's `result`, the recording's facts, the account book, the
//! holds and the retry.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use super::agent_report::AgentReport;
use super::attempts::{Attempts, LiveAttempt, Starting};
use super::event::{EngineEvent, note_label};
use super::gather::{self, FailureJob, GatherJob};
use super::gathered::Gathered;
use super::inbox::EngineInbox;
use super::outgoing::Outgoing;
use super::snapshots;
use super::tasks::Tasks;

use crate::core::attempt::{Attempt, Event, Note};
use crate::core::batch::outcome::{Decision, OutcomeInput};
use crate::core::batch::{Batch, EndInput};
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::facts::changes::lines_before_marker;
use crate::core::facts::failure_context::headline_says_more;
use crate::core::operator::deciding_event::EndingScene;
use crate::core::task::{FailureType, TaskSpec, TaskStatus};
use crate::run::changes::attempt::{ChangesFound, OnCompleteJob};
use crate::run::failure_report::FailureReport;
use crate::run::jobs::Outbox;
use crate::run::launch::LaunchPlan;
use crate::run::outcome::{self, AttemptFacts, AttemptOutcome, AttemptResult, Size, WorktreeState};
use crate::run::recorder::Recorder;
use crate::run::{failure_report, worktree};

impl Attempts {
    /// Attempt `key`'s agent exited, its leftovers were swept, its terminal drained and its
    /// files read (`core::batch::end`): the attempt takes its verdict, leaves the live attempts,
    /// and what its end needs from git and the disk is gathered off the loop (`gather`).
    /// `Gathered` follows: now when no worker could be had, else with the worker's report
    /// (into `reports`). `exit`: how its agent exited; `snapshots`: where a local attempt
    /// started, for its changes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gather_end(
        &mut self,
        key: u64,
        exit: ExitStatus,
        tasks: &Tasks,
        snapshots: &mut snapshots::Snapshots,
        reports: Outbox<EngineInbox>,
        now: Instant,
    ) -> Option<EndInput> {
        // It keeps its task and its slot until it is concluded.
        let mut live = self.take_live(key)?;
        let at = now.saturating_duration_since(live.started);
        // The verdict note is recorded by `conclude`, with the status it leads to.
        let _ = live.attempt.handle(Event::Exited(exit), at);
        let verdict = live
            .attempt
            .verdict()
            .cloned()
            .unwrap_or_else(Verdict::success);
        let failure =
            (verdict.failure.is_some() && !live.stopped_by_operator).then(|| FailureJob {
                tail: failure_tail(&mut live.attempt),
                before: std::mem::take(&mut live.git_before),
                cwd: live.plan.cwd.clone(),
                errors_path: live.recorder.paths().log.with_extension("errors.json"),
            });
        let task = &tasks.store.file().tasks()[live.task];
        // Only a completed task's worktree is removed; `conclude` says so again.
        let finish_worktree = (task.worktree && verdict.is_success() && !live.stopped_by_operator)
            .then(|| live.plan.cwd.clone());
        let completed = verdict.is_success() && !live.stopped_by_operator;
        let on_complete = (completed && task.on_complete.is_some() && live.host().is_none())
            .then(|| on_complete_job(&mut live, task));
        let runs_dir = &tasks.opts.runs_dir;
        let folder = snapshots::attempt_folder(
            live.plan.cwd.clone(),
            runs_dir.join(&live.task_id),
            live.number,
            vec![tasks.store.path().to_path_buf(), runs_dir.clone()],
        );
        let changes = live
            .host()
            .is_none()
            .then(|| snapshots.end(key, folder, on_complete));
        let job = GatherJob {
            changes,
            failure,
            transcript: live.transcript_job(tasks),
            finish_worktree,
            remote: live.remote_end_job(tasks),
            recordings: live
                .recorder
                .paths()
                .log
                .parent()
                .map(|dir| (dir.to_path_buf(), live.number)),
        };
        let gathered = gather::gather_in_background(key, job, reports);
        let now_gathered = gathered.is_some();
        live.gathered = gathered.map(Box::new);
        self.end(key, live);
        now_gathered.then_some(EndInput::Gathered)
    }
}

impl LiveAttempt {
    /// Concludes the ended attempt with what was gathered for it (`exit`: how its agent
    /// exited): the batch decides what follows (`Tasks::decide_end`); its task's result, status
    /// and retry time go into `tasks`, its facts into its recording, its end to `out`.
    pub(super) fn conclude(
        mut self,
        (gathered, exit): (Gathered, ExitStatus),
        tasks: &mut Tasks,
        batch: &mut Batch,
        out: &mut Outgoing,
        (now, wall): (Instant, jiff::Timestamp),
    ) -> Result<()> {
        let mut outcome = self.outcome(exit, tasks, (now, wall));
        let quota_resets_at = self.quota_reset(&outcome.verdict, wall);
        let waits = tasks.waits_for_quota(self.task);
        let end = OutcomeInput {
            verdict: &outcome.verdict,
            attempt: self.number,
            account: self.account,
            stopped_by_operator: self.stopped_by_operator,
            quota_reset_in: (quota_resets_at.as_ref().filter(|_| waits)).map(|at| wait(wall, at)),
            jitter: random_spread(self.task, self.number),
        };
        let (decision, account) = tasks.decide_end(batch, self.task, &end, now);
        if let Some(evidence) = decision.evidence {
            outcome.verdict.evidence = Some(evidence.into());
        }
        let report = AgentReport::of(&self.attempt, gathered.transcript);
        let host = self.remote.as_ref().map(|r| r.host.name.as_str());
        let ran = (&self.plan, host, account.clone());
        let mut result = tasks.attempt_result(self.task, &outcome, ran, &report);
        let task = &tasks.store.file().tasks()[self.task];
        let (status, cleanup) = (decision.status, gathered.worktree);
        result.worktree = (task.worktree).then(|| worktree_state(&self.plan.cwd, status, cleanup));
        let deciding_event = self.attempt.ending_scene().and_then(EndingScene::describe);
        let failure = gathered.failure;
        result.failure_cause = failure_cause(&outcome.verdict, deciding_event, failure.as_ref());
        result.interrupted = self.stopped_by_operator;
        result.quota_resets_at = quota_resets_at.as_ref().map(ToString::to_string);
        result.failure_summary = failure.map(|f| f.summary);
        let result = with_changes(result, gathered.changes)?;
        let agent = task.agent.clone();
        let (cols, rows) = self.size;
        let mut facts = AttemptFacts::new(&outcome, &self.plan, Size { cols, rows }, &agent);
        facts.account = account;
        report.fill_facts(&mut facts);
        facts.ended_processes = &self.swept;
        facts.host = host;
        let ended = (&outcome, &decision);
        tasks.finish_attempt(self.task, ended, result, facts, &mut self.recorder, out)
    }

    /// Its outcome at its end (`exit`: how its agent exited): its verdict (success without
    /// one), its marker, its answers, its times.
    fn outcome(
        &self,
        exit: ExitStatus,
        tasks: &Tasks,
        (now, wall): (Instant, jiff::Timestamp),
    ) -> AttemptOutcome {
        AttemptOutcome {
            attempt: self.number,
            verdict: (self.attempt.verdict().cloned()).unwrap_or_else(Verdict::success),
            marker_seen: self.attempt.marker_seen(),
            exit,
            log_file: outcome::relative_to(&self.recorder.paths().log, tasks.store.base_dir()),
            auto_counts: self.attempt.auto_input_counts(),
            auto_inputs: self.attempt.auto_inputs().to_vec(),
            approvals: self.attempt.approvals().to_vec(),
            started_at: self.started_at,
            ended_at: wall,
            duration: now.saturating_duration_since(self.started),
        }
    }

    /// The reset time its quota failure names, if it names one (in the zone it named).
    fn quota_reset(&mut self, verdict: &Verdict, wall: jiff::Timestamp) -> Option<jiff::Zoned> {
        if verdict.failure != Some(FailureType::Quota) {
            return None;
        }
        let rows = (self.attempt)
            .screen_mut()
            .rows_with_history(failure_report::TAIL_ROWS);
        let mut text =
            crate::core::screen::detect::tail_rows(&rows, failure_report::TAIL_ROWS).join("\n");
        // The verdict's own words last (the last match of a rank wins): a hook's `StopFailure`
        // payload says when the limit resets even where the screen does not.
        if let Some(evidence) = &verdict.evidence {
            text.push('\n');
            text.push_str(evidence);
        }
        let local = jiff::tz::TimeZone::system();
        let reset = crate::core::facts::quota_reset::parse_reset(&text, wall, local)?;
        tracing::info!(task = %self.task_id, at = %reset.at, evidence = %reset.evidence, "the quota resets");
        Some(reset.at)
    }
}

impl Starting {
    /// An agent that could not even start: a process failure of this attempt, with the reason
    /// (`error`), recorded into `recorder`. The batch decides what follows; its task's result,
    /// status and retry time go into `tasks`, its end to `out`.
    pub(super) fn conclude_unspawned(
        self,
        (mut recorder, error): (Recorder, &color_eyre::eyre::Report),
        tasks: &mut Tasks,
        batch: &mut Batch,
        out: &mut Outgoing,
        (now, wall): (Instant, jiff::Timestamp),
    ) -> Result<()> {
        let outcome = AttemptOutcome {
            attempt: self.number,
            verdict: Verdict::failed(FailureType::Process, format!("{error:#}")),
            marker_seen: false,
            exit: ExitStatus::default(),
            log_file: outcome::relative_to(&recorder.paths().log, tasks.store.base_dir()),
            auto_counts: Vec::new(),
            auto_inputs: Vec::new(),
            approvals: Vec::new(),
            started_at: wall,
            ended_at: wall,
            duration: Duration::ZERO,
        };
        let end = OutcomeInput {
            verdict: &outcome.verdict,
            attempt: self.number,
            account: self.account,
            stopped_by_operator: false,
            quota_reset_in: None,
            jitter: random_spread(self.index, self.number),
        };
        let (decision, account) = tasks.decide_end(batch, self.index, &end, now);
        let host = self.host.as_ref().map(|host| host.name.as_str());
        let ran = (&self.plan, host, account.clone());
        let mut result = tasks.attempt_result(self.index, &outcome, ran, &AgentReport::default());
        let status = decision.status;
        result.worktree =
            (self.task.worktree).then(|| worktree_state(&self.plan.cwd, status, None));
        let result = with_changes(result, ChangesFound::default())?;
        let (rows, cols) = self.size;
        let size = Size { cols, rows };
        let mut facts = AttemptFacts::new(&outcome, &self.plan, size, &self.task.agent);
        facts.account = account;
        facts.host = host;
        let ended = (&outcome, &decision);
        tasks.finish_attempt(self.index, ended, result, facts, &mut recorder, out)
    }
}

impl Tasks {
    /// Whether task `index` waits for its quota to reset (rather than failing or retrying at
    /// once): it asked to, or its profile has accounts to rotate through.
    fn waits_for_quota(&self, index: usize) -> bool {
        let task = &self.store.file().tasks()[index];
        let has_accounts = self
            .profiles
            .get(&task.agent)
            .is_some_and(|p| !p.accounts.is_empty());
        task.wait_for_quota_reset || has_accounts
    }

    /// What follows attempt `end` of task `index` (`Batch::decide_end`, which tells the queue:
    /// next status, retry, account rest, quota hold), and the name of the account it used.
    fn decide_end(
        &self,
        batch: &mut Batch,
        index: usize,
        end: &OutcomeInput<'_>,
        now: Instant,
    ) -> (Decision, Option<String>) {
        let task = &self.store.file().tasks()[index];
        let profile = self.profiles.get(&task.agent);
        let decision = batch.decide_end(end, (index, task), profile, now);
        if let (Some(rest), Some(profile)) = (decision.rest, profile) {
            let name = profile
                .accounts
                .get(rest.account)
                .map_or("?", |a| a.name.as_str());
            tracing::info!(profile = %profile.name, account = name, wait_sec = rest.wait.as_secs(), "account exhausted");
        }
        let account = end.account.and_then(|i| profile?.accounts.get(i));
        (decision, account.map(|a| a.name.clone()))
    }

    /// The `result` of attempt `outcome` of task `index` as far as every attempt has one: run
    /// by `plan` (on `host`, with `account`), with what its agent reported (`report`) and the
    /// survivors herd ended for the task.
    fn attempt_result(
        &mut self,
        index: usize,
        outcome: &AttemptOutcome,
        (plan, host, account): (&LaunchPlan, Option<&str>, Option<String>),
        report: &AgentReport,
    ) -> AttemptResult {
        let task = &self.store.file().tasks()[index];
        AttemptResult {
            trusted_folder: (plan.trust_folder.as_ref())
                .map(|trust| trust.folder.display().to_string()),
            account,
            host: host.map(str::to_string),
            agent: report.result_fields(plan),
            total_cost_usd: report.total_cost(task.result.as_ref()),
            survivors_ended: self.survivors.remove(&index),
            ..AttemptResult::new(outcome)
        }
    }

    /// The end of attempt `outcome` of task `index` carried out as `decision` says: its
    /// `result`, status and retry time into the document, its recording finished with its
    /// `facts`, the frontends told through `out`.
    fn finish_attempt(
        &mut self,
        index: usize,
        (outcome, decision): (&AttemptOutcome, &Decision),
        result: serde_json::Value,
        mut facts: AttemptFacts<'_>,
        recorder: &mut Recorder,
        out: &mut Outgoing,
    ) -> Result<()> {
        let (status, retry_after) = (decision.status, decision.retry_after);
        facts.task_status = Some(status.as_str());
        facts.task_result = Some(result.clone());
        let verdict = Note::Verdict(outcome.verdict.clone());
        recorder.marker(outcome.duration, &note_label(&verdict))?;
        recorder.finish(outcome.duration, &facts)?;
        self.write_end(index, result, status, retry_after, outcome.ended_at);
        self.announce_end(index, outcome, status, retry_after, out);
        Ok(())
    }

    /// The task's result, status and retry time set in the tasks file.
    fn write_end(
        &mut self,
        index: usize,
        result: serde_json::Value,
        status: TaskStatus,
        retry_after: Option<Duration>,
        ended_at: jiff::Timestamp,
    ) {
        let file = self.store.file_mut();
        file.set_result(index, result);
        file.set_status(index, status);
        match retry_after {
            Some(after) => file.set_field(
                index,
                "retry_at",
                json!(outcome::utc_timestamp(ended_at + after)),
            ),
            None => file.remove_field(index, "retry_at"),
        }
        // Group commit: written with whatever else this turn of the loop changes, by `on_tick`
        // at the latest, and always before the next agent starts (`start` saves first).
        // Nothing here acts on the new state before then: a retry waits for `start`.
    }

    /// The end said in the log and to the frontends (the verdict, the task's new status, the
    /// retry to come); the attempt's duration remembered.
    fn announce_end(
        &mut self,
        index: usize,
        outcome: &AttemptOutcome,
        status: TaskStatus,
        retry_after: Option<Duration>,
        out: &mut Outgoing,
    ) {
        let task_id = &self.store.file().tasks()[index].task_id;
        let (number, verdict) = (outcome.attempt, outcome.verdict.clone());
        tracing::info!(task = task_id.as_str(), attempt = number, verdict = verdict.label(), evidence = ?verdict.evidence, status = %status, "attempt ended");
        out.events.push(EngineEvent::Finished {
            task_id: task_id.clone(),
            attempt: number,
            verdict,
            status,
        });
        if let Some(after) = retry_after {
            out.events.push(EngineEvent::RetryScheduled {
                task_id: task_id.clone(),
                after,
            });
        }
        self.last_durations.insert(index, outcome.duration);
    }
}

/// How long from `from` until `at` (nothing when it is past).
fn wait(from: jiff::Timestamp, at: &jiff::Zoned) -> Duration {
    Duration::try_from(at.timestamp().duration_since(from)).unwrap_or_default()
}

/// A task's worktree after an attempt: removed when the task completed with a clean tree, kept
/// (with its changed files) otherwise.
/// `cleanup` is what the worker's removal found (a completed task's removal is always tried
/// there: git never runs on the loop).
fn worktree_state(
    path: &std::path::Path,
    status: TaskStatus,
    cleanup: Option<Result<worktree::Cleanup, worktree::WorktreeError>>,
) -> WorktreeState {
    let path_shown = path.display().to_string();
    let state = |state: String, changed_files| WorktreeState {
        path: path_shown.clone(),
        state,
        changed_files,
    };
    if status != TaskStatus::Completed {
        return state("kept".into(), None);
    }
    match cleanup.unwrap_or(Err(worktree::WorktreeError::NotTried)) {
        Ok(worktree::Cleanup::Removed) => state("removed".into(), None),
        Ok(worktree::Cleanup::KeptDirty { files }) => {
            tracing::info!(path = %path_shown, changed = files.len(), "kept a dirty worktree");
            state("kept: it has changes".into(), Some(files))
        }
        Err(error) => state(format!("kept: {error}"), None),
    }
}

/// A number in 0..=1 that differs between runs, tasks and attempts, to spread retries.
fn random_spread(index: usize, attempt: u32) -> f64 {
    use std::hash::BuildHasher;
    let hash = std::collections::hash_map::RandomState::new().hash_one((index, attempt));
    hash as f64 / u64::MAX as f64
}

/// The last lines a failed attempt showed, for its summary: a structured agent's own error
/// texts (its screen is JSON), else the screen's last rows; the agent's error in its signal file
/// first.
fn failure_tail(attempt: &mut Attempt) -> Vec<String> {
    let rows = attempt
        .screen_mut()
        .rows_with_history(failure_report::TAIL_ROWS);
    let tail = match attempt.stream_facts().filter(|f| f.events > 0) {
        Some(facts) => failure_report::stream_lines(facts),
        None => crate::core::screen::detect::tail_rows(&rows, failure_report::TAIL_ROWS),
    };
    match attempt.signal() {
        Some(Ok(file)) => match &file.signal {
            crate::core::facts::signal_file::Signal::Error { error } => {
                let mut lines = vec![format!("Error: {error}")];
                lines.extend(tail);
                lines
            }
            _ => tail,
        },
        _ => tail,
    }
}

/// The task's `result` as written: `result`, with `changes` and `on_complete` when the
/// gathering worker found them.
fn with_changes(result: AttemptResult, found: ChangesFound) -> Result<serde_json::Value> {
    let mut result = serde_json::to_value(&result).wrap_err("cannot build the task's result")?;
    if let Some(fields) = result.as_object_mut() {
        if let Some(changes) = found.changes {
            fields.insert("changes".into(), changes.to_json());
        }
        if let Some(record) = found.on_complete {
            fields.insert("on_complete".into(), record);
        }
    }
    Ok(result)
}

/// How many of the last screen's rows (history included) a commit message may come from.
const SUMMARY_ROWS: usize = 200;

/// What a completed attempt's `on_complete` needs from it: its final result text, and the
/// lines it showed before the marker.
fn on_complete_job(live: &mut LiveAttempt, task: &TaskSpec) -> OnCompleteJob {
    let rows = live.attempt.screen_mut().rows_with_history(SUMMARY_ROWS);
    OnCompleteJob {
        task: task.clone(),
        result_text: live
            .attempt
            .stream_facts()
            .and_then(|facts| facts.result_text.clone()),
        output_tail: lines_before_marker(&rows.join("\n"), &live.plan.marker),
    }
}

/// `result.failure_cause`: for a timeout or a blocked prompt the event that decided it (the
/// prompt nobody answered, or what the agent showed last: never its echo of the prompt); for
/// other failures whose evidence is a bare fact, the output's headline.
fn failure_cause(
    verdict: &Verdict,
    deciding_event: Option<String>,
    failure: Option<&FailureReport>,
) -> Option<String> {
    let kind = verdict.failure?;
    let decided_by_event = matches!(kind, FailureType::Timeout | FailureType::PermissionBlocked);
    if decided_by_event && deciding_event.is_some() {
        return deciding_event;
    }
    if kind == FailureType::Timeout {
        // A timeout's output headline is whatever scrolled by last; without an event there is
        // nothing better than its evidence.
        return None;
    }
    failure
        .and_then(|f| f.headline.clone())
        .filter(|_| headline_says_more(kind))
}
