//! How an attempt's end changes its task: the next status, when it runs again, which account
//! rests and for how long, whether the whole profile waits for its quota reset, and the evidence
//! the operator's stop replaces. Pure: the clock, the account book and the reset time the agent
//! named come in; the shell carries the `Decision` out (it writes, logs and schedules).
//! It must not read files, the clock or the terminal.

use std::time::{Duration, Instant};

use super::accounts::{AccountBook, Choice};
use super::classify::Verdict;
use super::profile::Profile;
use super::retry;
use super::task::{FailureType, TaskSpec, TaskStatus};

/// What a task says about its retries.
#[derive(Debug, Clone, Copy)]
pub struct RetryRules<'a> {
    /// The last attempt whose retryable failure is retried (`max_retries`, counted after the
    /// attempts an operator's `--retry` set aside).
    pub max_retries: u32,
    pub retry_on: Option<&'a [FailureType]>,
    pub wait_for_quota_reset: bool,
}

impl<'a> RetryRules<'a> {
    pub fn of(task: &'a TaskSpec) -> RetryRules<'a> {
        RetryRules {
            max_retries: task.last_retried_attempt(),
            retry_on: task.retry_on.as_deref(),
            wait_for_quota_reset: task.wait_for_quota_reset,
        }
    }
}

/// How long an account that hit its quota rests when the agent named no reset time.
pub const QUOTA_REST: Duration = Duration::from_secs(30 * 60);
/// How long an account whose login failed rests (the rest of the run, in practice).
pub const AUTH_REST: Duration = Duration::from_secs(24 * 60 * 60);
/// The pause before the next attempt runs on another account.
pub const NEXT_ACCOUNT_AFTER: Duration = Duration::from_secs(1);
/// The evidence of an attempt the operator stopped.
pub const STOPPED_EVIDENCE: &str = "stopped by the operator; the task will run again";

/// One attempt's end, as far as the next step depends on it.
#[derive(Debug, Clone, Copy)]
pub struct OutcomeInput<'a> {
    pub verdict: &'a Verdict,
    /// The attempt that ended (1 for the first).
    pub attempt: u32,
    /// The profile's account the attempt used, by index.
    pub account: Option<usize>,
    /// The operator stopped herd while it ran.
    pub stopped_by_operator: bool,
    /// A quota failure's reset, as the wait from the attempt's end (found only when the task
    /// waits for resets or its profile has accounts).
    pub quota_reset_in: Option<Duration>,
    /// A number in 0..=1 that spreads the retry backoff (random in the shell).
    pub jitter: f64,
}

/// An account that rests: not used again until `wait` passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountRest {
    pub account: usize,
    pub wait: Duration,
}

/// What the shell does after an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub status: TaskStatus,
    /// Replaces the verdict's evidence (an attempt the operator stopped).
    pub evidence: Option<&'static str>,
    /// The account to rest (quota or login failure).
    pub rest: Option<AccountRest>,
    /// The whole profile waits until its quota reset (a task without accounts).
    pub hold_profile: Option<Duration>,
    /// The task runs again after this wait (its `retry_at`); `None` removes `retry_at`.
    pub retry_after: Option<Duration>,
}

/// The decision for `end` of a task with these `rules`, whose agent runs under `profile`;
/// `accounts` is the run's account book as it was before this end (it is not changed: `rest`
/// says which account to mark).
pub fn decide(
    end: &OutcomeInput<'_>,
    task: RetryRules<'_>,
    profile: Option<&Profile>,
    accounts: &AccountBook,
    now: Instant,
) -> Decision {
    let verdict = end.verdict;
    let stopped = end.stopped_by_operator;
    let mut rest = None;
    let account_retry = match (end.account, profile, verdict.failure) {
        (
            Some(account),
            Some(profile),
            Some(failure @ (FailureType::Quota | FailureType::Auth)),
        ) if !stopped => {
            let wait = match (failure, end.quota_reset_in) {
                (FailureType::Quota, Some(wait)) => wait,
                (FailureType::Quota, None) => QUOTA_REST,
                _ => AUTH_REST,
            };
            rest = Some(AccountRest { account, wait });
            let mut after = accounts.clone();
            after.mark_exhausted(profile, account, now + wait);
            match after.peek(profile, now) {
                Choice::Use(_) => Some(NEXT_ACCOUNT_AFTER),
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
    let hold_profile = if end.account.is_none() && task.wait_for_quota_reset {
        end.quota_reset_in
    } else {
        None
    };
    let mut evidence = None;
    let status = if account_retry.is_some() || (hold_profile.is_some() && !stopped) {
        TaskStatus::Retryable
    } else if stopped {
        evidence = Some(STOPPED_EVIDENCE);
        TaskStatus::Retryable
    } else if verdict.cancelled {
        TaskStatus::Cancelled
    } else if verdict.needs_operator() {
        TaskStatus::NeedsInput
    } else {
        retry::status_after(
            verdict.failure,
            end.attempt,
            task.max_retries,
            task.retry_on,
        )
    };
    let retry_after = match (account_retry, hold_profile) {
        (Some(wait), _) | (None, Some(wait)) => Some(wait),
        (None, None) => (status == TaskStatus::Retryable && !stopped)
            .then(|| retry::backoff_with_jitter(end.attempt, end.jitter)),
    };
    Decision {
        status,
        evidence,
        rest,
        hold_profile,
        retry_after,
    }
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
