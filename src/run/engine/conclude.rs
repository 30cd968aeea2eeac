//! How an attempt ends: once its agent exited, its leftovers were swept and its terminal
//! drained, the verdict becomes the task's next status, a retry or a hold, its result and its
//! recording's facts.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use serde_json::json;
use time::OffsetDateTime;

use super::agent_report::{AgentReport, add_agent_report};
use super::{DRAIN_AFTER_EXIT, Engine, EngineEvent, note_label};

use crate::core::accounts::Choice;
use crate::core::attempt::{Attempt, Event, Note};
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::retry;
use crate::core::task::{FailureType, TaskStatus};
use crate::run::hygiene::EndedProcess;
use crate::run::launch::LaunchPlan;
use crate::run::outcome::{self, AttemptOutcome};
use crate::run::recorder::Recorder;
use crate::run::{failure_report, worktree};

/// An attempt that ended (or could not start), as `conclude` records it.
pub(super) struct Ended<'a> {
    pub(super) index: usize,
    pub(super) task_id: &'a str,
    pub(super) number: u32,
    pub(super) plan: &'a LaunchPlan,
    /// (cols, rows) the PTY started at.
    pub(super) size: (u16, u16),
    pub(super) verdict: &'a Verdict,
    pub(super) exit: &'a ExitStatus,
    pub(super) marker_seen: bool,
    pub(super) auto_inputs: &'a [crate::core::attempt::AutoInput],
    pub(super) approvals: &'a [crate::core::approval::Approval],
    pub(super) auto_counts: Vec<(String, u32)>,
    pub(super) started: Instant,
    pub(super) started_at: OffsetDateTime,
    pub(super) stopped_by_operator: bool,
    /// What went wrong, for the next attempt's `{previous_failure}`.
    pub(super) failure_summary: Option<String>,
    /// A quota failure's reset time, when the task waits for it.
    pub(super) quota_reset: Option<OffsetDateTime>,
    pub(super) account: Option<usize>,
    pub(super) agent: AgentReport,
    /// Leftover processes herd ended after the agent exited.
    pub(super) ended_processes: Vec<EndedProcess>,
    /// The host it ran on, when not here.
    pub(super) host: Option<String>,
}

impl Engine {
    /// An account that hit its quota waits for the reset it named (or half an hour); one whose
    /// login failed is not used again in this run.
    pub(super) fn exhaust_account(
        &mut self,
        profile: &crate::core::profile::Profile,
        index: usize,
        failure: FailureType,
        reset: Option<OffsetDateTime>,
        ended_at: OffsetDateTime,
        now: Instant,
    ) {
        let wait = match (failure, reset) {
            (FailureType::Quota, Some(at)) => {
                Duration::try_from((at - ended_at).max(time::Duration::ZERO)).unwrap_or_default()
            }
            (FailureType::Quota, None) => Duration::from_secs(30 * 60),
            _ => Duration::from_secs(24 * 60 * 60),
        };
        let name = profile.accounts.get(index).map_or("?", |a| a.name.as_str());
        tracing::info!(profile = %profile.name, account = name, wait_sec = wait.as_secs(), "account exhausted");
        self.accounts.mark_exhausted(profile, index, now + wait);
    }

    /// The reset time a quota failure names, when its task waits for quota resets.
    pub(super) fn quota_reset(
        &self,
        index: usize,
        verdict: &Verdict,
        attempt: &mut Attempt,
    ) -> Option<OffsetDateTime> {
        let task = &self.store.file().tasks()[index];
        let has_accounts = self
            .profiles
            .get(&task.agent)
            .is_some_and(|p| !p.accounts.is_empty());
        if verdict.failure != Some(FailureType::Quota)
            || !(task.wait_for_quota_reset || has_accounts)
        {
            return None;
        }
        let rows = attempt
            .screen_mut()
            .rows_with_history(failure_report::TAIL_ROWS);
        let text = crate::core::detect::tail_rows(&rows, failure_report::TAIL_ROWS).join("\n");
        let local = time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC);
        let reset = crate::core::quota_reset::parse_reset(&text, OffsetDateTime::now_utc(), local)?;
        tracing::info!(task = %task.task_id, at = %reset.at, evidence = %reset.evidence, "waiting for the quota reset");
        Some(reset.at)
    }

    pub(super) fn conclude_if_drained(&mut self, key: u64, now: Instant) -> Result<()> {
        let ready = self.live.get(&key).is_some_and(|live| {
            live.exit.is_some()
                && live.swept.is_some()
                && (live.closed || live.exited_at.is_some_and(|t| now >= t + DRAIN_AFTER_EXIT))
        });
        if !ready {
            return Ok(());
        }
        if self.conclude_on_host_trouble(key, now)? {
            return Ok(());
        }
        if self
            .live
            .get(&key)
            .is_some_and(|l| l.plan.signal_file.is_some())
        {
            self.poll_signal(key, now, true)?;
        }
        // The last lines of the agent's log (a Codex refusal the model talked past).
        self.poll_agent_log(key, now)?;
        let Some(mut live) = self.live.remove(&key) else {
            return Ok(());
        };
        self.live_by_task.remove(&live.task);
        let at = now.saturating_duration_since(live.started);
        let exit = live.exit.clone().unwrap_or_default();
        // The verdict note is recorded by `conclude`, with the status it leads to.
        let _ = live.attempt.handle(Event::Exited(exit.clone()), at);
        let verdict = live
            .attempt
            .verdict()
            .cloned()
            .unwrap_or_else(Verdict::success);
        let counts = live.attempt.auto_input_counts();
        let inputs = live.attempt.auto_inputs().to_vec();
        let approvals = live.attempt.approvals().to_vec();
        let marker_seen = live.attempt.marker_seen();
        let failure_summary = (verdict.failure.is_some() && !live.stopped_by_operator).then(|| {
            let rows = live
                .attempt
                .screen_mut()
                .rows_with_history(failure_report::TAIL_ROWS);
            let tail = match live.attempt.stream_facts().filter(|f| f.events > 0) {
                // A structured agent's screen is JSON: its own error texts say more.
                Some(facts) => failure_report::stream_lines(facts),
                None => crate::core::detect::tail_rows(&rows, failure_report::TAIL_ROWS),
            };
            // The agent's own error in its signal file comes first.
            let tail = match live.attempt.signal() {
                Some(Ok(file)) => match &file.signal {
                    crate::core::signal_file::Signal::Error { error } => {
                        let mut lines = vec![format!("Error: {error}")];
                        lines.extend(tail);
                        lines
                    }
                    _ => tail,
                },
                _ => tail,
            };
            let before = live.git_before.take();
            let changed = failure_report::changed_since(before.as_ref(), &live.plan.cwd);
            let errors_path = live.recorder.paths().log.with_extension("errors.json");
            failure_report::report(&tail, changed, &errors_path)
        });
        let quota_reset = self.quota_reset(live.task, &verdict, &mut live.attempt);
        let agent = self.agent_report(&live);
        let ended = Ended {
            index: live.task,
            task_id: &live.task_id,
            number: live.number,
            plan: &live.plan,
            size: live.size,
            verdict: &verdict,
            exit: &exit,
            marker_seen,
            auto_inputs: &inputs,
            approvals: &approvals,
            auto_counts: counts,
            started: live.started,
            started_at: live.started_at,
            stopped_by_operator: live.stopped_by_operator,
            failure_summary,
            quota_reset,
            account: live.account,
            agent,
            ended_processes: live.swept.take().unwrap_or_default(),
            host: live.host().map(str::to_string),
        };
        self.conclude(ended, &mut live.recorder, now)
    }

    pub(super) fn conclude(
        &mut self,
        ended: Ended<'_>,
        recorder: &mut Recorder,
        now: Instant,
    ) -> Result<()> {
        let Ended {
            index,
            task_id,
            number,
            plan,
            size: (cols, rows),
            verdict,
            exit,
            marker_seen,
            auto_inputs,
            approvals,
            auto_counts,
            started,
            started_at,
            stopped_by_operator,
            failure_summary,
            quota_reset,
            account,
            agent,
            ended_processes,
            host,
        } = ended;
        let task = self.store.file().tasks()[index].clone();
        let mut verdict = verdict.clone();
        let ended_at = OffsetDateTime::now_utc();
        let profile = self.profiles.get(&task.agent).cloned();
        let account_name = account
            .and_then(|i| profile.as_ref().and_then(|p| p.accounts.get(i)))
            .map(|a| a.name.clone());
        let account_retry = match (account, &profile, verdict.failure) {
            (Some(i), Some(p), Some(failure @ (FailureType::Quota | FailureType::Auth)))
                if !stopped_by_operator =>
            {
                self.exhaust_account(p, i, failure, quota_reset, ended_at, now);
                match self.accounts.peek(p, now) {
                    Choice::Use(_) => Some(Duration::from_secs(1)),
                    Choice::AllExhausted { until }
                        if failure == FailureType::Quota && task.wait_for_quota_reset =>
                    {
                        Some(until.saturating_duration_since(now))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        // With accounts the exhausted account waits, not the whole profile.
        let quota_reset = if account.is_none() && task.wait_for_quota_reset {
            quota_reset
        } else {
            None
        };
        let status = if account_retry.is_some() || (quota_reset.is_some() && !stopped_by_operator) {
            TaskStatus::Retryable
        } else if stopped_by_operator {
            verdict.evidence = Some("stopped by the operator; the task will run again".into());
            TaskStatus::Retryable
        } else if verdict.cancelled {
            TaskStatus::Cancelled
        } else if verdict.needs_operator() {
            TaskStatus::NeedsInput
        } else {
            retry::status_after(
                verdict.failure,
                number,
                task.max_retries,
                task.retry_on.as_deref(),
            )
        };
        let o = AttemptOutcome {
            attempt: number,
            verdict: &verdict,
            marker_seen,
            exit,
            log_file: outcome::relative_to(&recorder.paths().log, self.store.base_dir()),
            auto_counts,
            auto_inputs,
            approvals,
            started_at,
            ended_at,
            duration: now.saturating_duration_since(started),
        };
        let mut result = outcome::result_json(&o);
        if task.worktree
            && let Some(obj) = result.as_object_mut()
        {
            obj.insert("worktree".into(), worktree_state(&plan.cwd, status));
        }
        if let Some(obj) = result.as_object_mut() {
            if stopped_by_operator {
                obj.insert("interrupted".into(), json!(true));
            }
            if let Some(summary) = failure_summary {
                obj.insert("failure_summary".into(), json!(summary));
            }
            if let Some(name) = &account_name {
                obj.insert("account".into(), json!(name));
            }
            if let Some(host) = &host {
                obj.insert("host".into(), json!(host));
            }
            add_agent_report(obj, &agent, plan, task.result.as_ref());
            if let Some(survivors) = self.survivors.remove(&index) {
                obj.insert("survivors_ended".into(), survivors);
            }
        }
        let mut facts = outcome::facts_json(&o, plan, cols, rows, &task.agent);
        if let Some(obj) = facts.as_object_mut() {
            if let Some(name) = &account_name {
                obj.insert("account".into(), json!(name));
            }
            obj.insert(
                "completion".into(),
                json!(plan.completion.completion.as_str()),
            );
            if let Some(session) = &plan.resumed_session {
                obj.insert("resumed_session".into(), json!(session));
            }
            if let Some(stream) = &agent.stream {
                obj.insert("stream".into(), json!(stream));
            }
            if let Some(signal) = &agent.signal {
                let mut fields = serde_json::Map::new();
                outcome::agent_facts::signal_result_fields(signal, &mut fields);
                obj.insert("signal".into(), fields.remove("signal").unwrap_or_default());
            }
            if let Some((path, transcript)) = &agent.transcript {
                obj.insert(
                    "transcript".into(),
                    json!({"path": path, "facts": transcript}),
                );
            }
            obj.insert("ended_processes".into(), json!(ended_processes));
            if let Some(host) = &host {
                obj.insert("host".into(), json!(host));
            }
        }
        recorder.marker(o.duration, &note_label(&Note::Verdict(verdict.clone())))?;
        recorder.finish(o.duration, &facts)?;
        let retry_after = match (account_retry, quota_reset) {
            (Some(wait), _) => Some(wait),
            (None, Some(at)) => {
                let wait = Duration::try_from((at - ended_at).max(time::Duration::ZERO))
                    .unwrap_or_default();
                self.quota_holds.insert(task.agent.clone(), now + wait);
                Some(wait)
            }
            (None, None) => (status == TaskStatus::Retryable && !stopped_by_operator)
                .then(|| retry::backoff_with_jitter(number, random_spread(index, number))),
        };
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
        tracing::info!(task = task_id, attempt = number, verdict = verdict.label(), evidence = ?verdict.evidence, status = %status, "attempt ended");
        self.events.push(EngineEvent::Finished {
            task_id: task_id.to_string(),
            attempt: number,
            verdict,
            status,
        });
        if let Some(after) = retry_after {
            self.retry_at.insert(index, now + after);
            self.events.push(EngineEvent::RetryScheduled {
                task_id: task_id.to_string(),
                after,
            });
        }
        Ok(())
    }
}

fn worktree_state(path: &std::path::Path, status: TaskStatus) -> serde_json::Value {
    let shown = path.display().to_string();
    if status != TaskStatus::Completed {
        return json!({"path": shown, "state": "kept"});
    }
    match worktree::finish(path) {
        Ok(worktree::Cleanup::Removed) => json!({"path": shown, "state": "removed"}),
        Ok(worktree::Cleanup::KeptDirty { files }) => {
            tracing::info!(path = %shown, changed = files.len(), "kept a dirty worktree");
            json!({"path": shown, "state": "kept: it has changes", "changed_files": files})
        }
        Err(error) => json!({"path": shown, "state": format!("kept: {error}")}),
    }
}

/// A number in 0..=1 that differs between runs, tasks and attempts, to spread retries.
fn random_spread(index: usize, attempt: u32) -> f64 {
    use std::hash::BuildHasher;
    let hash = std::collections::hash_map::RandomState::new().hash_one((index, attempt));
    hash as f64 / u64::MAX as f64
}
