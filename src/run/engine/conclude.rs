//! How an attempt ends, carried out: once its end's stages say so (`core::batch::end`: exit,
//! sweep, drain, host check, last file read), the attempt's outcome is gathered,
//! `core::outcome::decide` says what follows (next status, retry, account rest, quota hold),
//! and this carries it out: the task's `result`, the recording's facts, the account book, the
//! holds and the retry.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use super::agent_report::AgentReport;
use super::attempts::{Attempts, LiveAttempt};
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
use crate::core::profile::Profile;
use crate::core::task::{FailureType, TaskSpec, TaskStatus};
use crate::run::changes::attempt::{ChangesFound, OnCompleteJob};
use crate::run::failure_report::FailureReport;
use crate::run::hygiene::EndedProcess;
use crate::run::jobs::Outbox;
use crate::run::launch::LaunchPlan;
use crate::run::outcome::{self, AttemptFacts, AttemptOutcome, AttemptResult, Size, WorktreeState};
use crate::run::recorder::Recorder;
use crate::run::{failure_report, worktree};

/// An attempt that ended (or could not start), as `conclude` records it: which task's attempt
/// it was, its outcome, and what the shell found around it.
pub(super) struct Ended<'a> {
    pub(super) index: usize,
    pub(super) task_id: &'a str,
    pub(super) plan: &'a LaunchPlan,
    /// (cols, rows) the PTY started at.
    pub(super) size: (u16, u16),
    pub(super) account: Option<usize>,
    pub(super) stopped_by_operator: bool,
    pub(super) outcome: AttemptOutcome,
    /// What went wrong: the summary for the next attempt's `{previous_failure}` and the
    /// output's headline.
    pub(super) failure: Option<FailureReport>,
    /// A quota failure's reset time, when the task waits for it.
    pub(super) quota_reset: Option<jiff::Timestamp>,
    /// The reset time a quota failure named (in the zone it named), waited for or not.
    pub(super) quota_resets_at: Option<jiff::Zoned>,
    /// The event that decided a timeout or a blocked prompt, in words (`waited 30 min for an
    /// answer to Bash(touch x); nobody answered`, `last seen: ✢ Thinking…`).
    pub(super) deciding_event: Option<String>,
    pub(super) agent: AgentReport,
    /// Leftover processes herd ended after the agent exited.
    pub(super) ended_processes: Vec<EndedProcess>,
    /// The host it ran on, when not here.
    pub(super) host: Option<String>,
    /// A completed task's worktree after its removal was tried (on the worker).
    pub(super) worktree: Option<Result<worktree::Cleanup, worktree::WorktreeError>>,
    /// What the attempt changed in its folder, and its `on_complete`'s record (`run::changes`).
    pub(super) changes: ChangesFound,
}

impl LiveAttempt {
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
}

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
    /// exited) into `tasks`, the `batch` and `out`, at `now` (`wall`).
    pub(super) fn conclude(
        mut self,
        (gathered, exit): (Gathered, ExitStatus),
        tasks: &mut Tasks,
        batch: &mut Batch,
        out: &mut Outgoing,
        (now, wall): (Instant, jiff::Timestamp),
    ) -> Result<()> {
        let verdict = self
            .attempt
            .verdict()
            .cloned()
            .unwrap_or_else(Verdict::success);
        let quota_resets_at = self.quota_reset(&verdict, wall);
        let quota_reset = quota_resets_at
            .as_ref()
            .filter(|_| tasks.waits_for_quota(self.task))
            .map(jiff::Zoned::timestamp);
        let agent = AgentReport::of(&self.attempt, gathered.transcript);
        let outcome = AttemptOutcome {
            attempt: self.number,
            marker_seen: self.attempt.marker_seen(),
            exit,
            log_file: outcome::relative_to(&self.recorder.paths().log, tasks.store.base_dir()),
            auto_counts: self.attempt.auto_input_counts(),
            auto_inputs: self.attempt.auto_inputs().to_vec(),
            approvals: self.attempt.approvals().to_vec(),
            started_at: self.started_at,
            ended_at: wall,
            duration: now.saturating_duration_since(self.started),
            verdict,
        };
        let ended = Ended {
            index: self.task,
            task_id: &self.task_id,
            plan: &self.plan,
            size: self.size,
            account: self.account,
            stopped_by_operator: self.stopped_by_operator,
            outcome,
            failure: gathered.failure,
            quota_reset,
            quota_resets_at,
            deciding_event: self.attempt.ending_scene().and_then(EndingScene::describe),
            agent,
            ended_processes: std::mem::take(&mut self.swept),
            host: self.host().map(str::to_string),
            worktree: gathered.worktree,
            changes: gathered.changes,
        };
        tasks.conclude(ended, &mut self.recorder, batch, out, now)
    }
}

impl Tasks {
    /// Carries out the end of `ended`: the decision (the `batch` told what follows), the
    /// result, the facts, the retry; the frontends told through `out`.
    pub(super) fn conclude(
        &mut self,
        mut ended: Ended<'_>,
        recorder: &mut Recorder,
        batch: &mut Batch,
        out: &mut Outgoing,
        now: Instant,
    ) -> Result<()> {
        let index = ended.index;
        let task = self.store.file().tasks()[index].clone();
        let profile = self.profiles.get(&task.agent).cloned();
        let decision = decide_what_follows(&ended, &task, profile.as_ref(), batch, now);
        if let Some(evidence) = decision.evidence {
            ended.outcome.verdict.evidence = Some(evidence.into());
        }
        let status = decision.status;
        let account_name = ended
            .account
            .and_then(|i| profile.as_ref().and_then(|p| p.accounts.get(i)))
            .map(|a| a.name.clone());
        let result = self.attempt_result(&mut ended, &task, status, account_name.clone());
        let mut result =
            serde_json::to_value(&result).wrap_err("cannot build the task's result")?;
        add_changes(&mut result, std::mem::take(&mut ended.changes));
        let facts = EndFacts {
            agent: &task.agent,
            status,
            account: account_name,
            result: result.clone(),
        };
        record_facts(&ended, facts, recorder)?;
        let retry_after = decision.retry_after;
        self.write_end(index, result, status, retry_after, ended.outcome.ended_at);
        self.announce_end(&ended, status, retry_after, out);
        Ok(())
    }

    /// The task's `result` for `ended`, whose task goes to `status` (its failure and worktree
    /// are taken from it); the survivors herd ended for the task are counted in.
    fn attempt_result(
        &mut self,
        ended: &mut Ended<'_>,
        task: &TaskSpec,
        status: TaskStatus,
        account: Option<String>,
    ) -> AttemptResult {
        let plan = ended.plan;
        let failure = ended.failure.take();
        let worktree = ended.worktree.take();
        AttemptResult {
            worktree: task
                .worktree
                .then(|| worktree_state(&plan.cwd, status, worktree)),
            trusted_folder: plan
                .trust_folder
                .as_ref()
                .map(|trust| trust.folder.display().to_string()),
            interrupted: ended.stopped_by_operator,
            failure_cause: failure_cause(ended, failure.as_ref()),
            quota_resets_at: ended.quota_resets_at.as_ref().map(ToString::to_string),
            failure_summary: failure.map(|f| f.summary),
            account,
            host: ended.host.clone(),
            agent: ended.agent.result_fields(plan),
            total_cost_usd: ended.agent.total_cost(task.result.as_ref()),
            survivors_ended: self.survivors.remove(&ended.index),
            ..AttemptResult::new(&ended.outcome)
        }
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
        ended: &Ended<'_>,
        status: TaskStatus,
        retry_after: Option<Duration>,
        out: &mut Outgoing,
    ) {
        let (task_id, number) = (ended.task_id, ended.outcome.attempt);
        let verdict = ended.outcome.verdict.clone();
        tracing::info!(task = task_id, attempt = number, verdict = verdict.label(), evidence = ?verdict.evidence, status = %status, "attempt ended");
        self.last_durations
            .insert(ended.index, ended.outcome.duration);
        out.events.push(EngineEvent::Finished {
            task_id: task_id.to_string(),
            attempt: number,
            verdict,
            status,
        });
        if let Some(after) = retry_after {
            out.events.push(EngineEvent::RetryScheduled {
                task_id: task_id.to_string(),
                after,
            });
        }
    }
}

/// What follows `ended` (`Batch::decide_end`: next status, retry, account rest, quota hold;
/// the queue told).
fn decide_what_follows(
    ended: &Ended<'_>,
    task: &TaskSpec,
    profile: Option<&Profile>,
    batch: &mut Batch,
    now: Instant,
) -> Decision {
    let number = ended.outcome.attempt;
    let ended_at = ended.outcome.ended_at;
    let quota_reset_in = ended
        .quota_reset
        .map(|at| Duration::try_from(at.duration_since(ended_at)).unwrap_or_default());
    let end = OutcomeInput {
        verdict: &ended.outcome.verdict,
        attempt: number,
        account: ended.account,
        stopped_by_operator: ended.stopped_by_operator,
        quota_reset_in,
        jitter: random_spread(ended.index, number),
    };
    let decision = batch.decide_end(&end, (ended.index, task), profile, now);
    if let (Some(rest), Some(profile)) = (decision.rest, profile) {
        let name = profile
            .accounts
            .get(rest.account)
            .map_or("?", |a| a.name.as_str());
        tracing::info!(profile = %profile.name, account = name, wait_sec = rest.wait.as_secs(), "account exhausted");
    }
    decision
}

/// What `conclude` decided about an ended attempt, for its recording's facts.
struct EndFacts<'a> {
    agent: &'a str,
    status: TaskStatus,
    account: Option<String>,
    result: serde_json::Value,
}

/// The recording of `ended` finished: its verdict marked, its facts written.
fn record_facts(ended: &Ended<'_>, end: EndFacts<'_>, recorder: &mut Recorder) -> Result<()> {
    let outcome = &ended.outcome;
    let (cols, rows) = ended.size;
    let mut facts = AttemptFacts::new(outcome, ended.plan, Size { cols, rows }, end.agent);
    facts.account = end.account;
    ended.agent.fill_facts(&mut facts);
    facts.ended_processes = &ended.ended_processes;
    facts.host = ended.host.as_deref();
    facts.task_status = Some(end.status.as_str());
    facts.task_result = Some(end.result);
    recorder.marker(
        outcome.duration,
        &note_label(&Note::Verdict(outcome.verdict.clone())),
    )?;
    recorder.finish(outcome.duration, &facts)?;
    Ok(())
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

/// `result.changes` and `result.on_complete`, when the gathering worker found them.
fn add_changes(result: &mut serde_json::Value, found: ChangesFound) {
    let Some(fields) = result.as_object_mut() else {
        return;
    };
    if let Some(changes) = found.changes {
        fields.insert("changes".into(), changes.to_json());
    }
    if let Some(record) = found.on_complete {
        fields.insert("on_complete".into(), record);
    }
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
fn failure_cause(ended: &Ended<'_>, failure: Option<&FailureReport>) -> Option<String> {
    let kind = ended.outcome.verdict.failure?;
    let decided_by_event = matches!(kind, FailureType::Timeout | FailureType::PermissionBlocked);
    if decided_by_event && let Some(event) = &ended.deciding_event {
        return Some(event.clone());
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
