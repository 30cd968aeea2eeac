//! Which failures are retried, and how long to wait before the next attempt.

use std::time::Duration;

use crate::core::task::{FailureType, TaskStatus};

/// Failures retried when a task does not say otherwise (`retry_on`).
pub const DEFAULT_RETRY_ON: [FailureType; 2] = [FailureType::Timeout, FailureType::Process];

/// The status a task takes after an attempt with this outcome. `attempts` counts the attempt
/// that just ended.
pub fn status_after(
    failure: Option<FailureType>,
    attempts: u32,
    max_retries: u32,
    retry_on: Option<&[FailureType]>,
) -> TaskStatus {
    let Some(failure) = failure else {
        return TaskStatus::Completed;
    };
    let retried = retry_on.unwrap_or(&DEFAULT_RETRY_ON).contains(&failure);
    if retried && attempts <= max_retries {
        TaskStatus::Retryable
    } else {
        TaskStatus::Failed
    }
}

/// A short, growing pause before retry `attempts + 1`: 1 s, 2 s, 4 s … at most 30 s.
pub fn backoff(attempts: u32) -> Duration {
    let exp = attempts.saturating_sub(1).min(5);
    Duration::from_secs((1u64 << exp).min(30))
}

/// `backoff` spread by ±25% so tasks that failed together do not retry together. `spread` is a
/// number in 0..=1 chosen by the caller (random in the shell, fixed in tests).
pub fn backoff_with_jitter(attempts: u32, spread: f64) -> Duration {
    let base = backoff(attempts).as_secs_f64();
    let factor = 0.75 + 0.5 * spread.clamp(0.0, 1.0);
    Duration::from_secs_f64(base * factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use FailureType::*;

    #[test]
    fn retry_table() {
        let cases = [
            (None, 1, 1, None, TaskStatus::Completed),
            (Some(Timeout), 1, 1, None, TaskStatus::Retryable),
            (Some(Process), 1, 1, None, TaskStatus::Retryable),
            (Some(Process), 2, 1, None, TaskStatus::Failed),
            (Some(Process), 1, 0, None, TaskStatus::Failed),
            (Some(Auth), 1, 3, None, TaskStatus::Failed),
            (Some(Quota), 1, 3, None, TaskStatus::Failed),
            (Some(PermissionBlocked), 1, 3, None, TaskStatus::Failed),
            (Some(Incomplete), 1, 3, None, TaskStatus::Failed),
            (Some(Config), 1, 3, None, TaskStatus::Failed),
            (
                Some(Incomplete),
                1,
                3,
                Some(&[Incomplete][..]),
                TaskStatus::Retryable,
            ),
            (
                Some(Timeout),
                1,
                3,
                Some(&[Incomplete][..]),
                TaskStatus::Failed,
            ),
        ];
        for (failure, attempts, max, retry_on, want) in cases {
            assert_eq!(
                status_after(failure, attempts, max, retry_on),
                want,
                "{failure:?} {attempts}/{max}"
            );
        }
    }

    #[test]
    fn jitter_stays_within_a_quarter_of_the_backoff() {
        assert_eq!(backoff_with_jitter(2, 0.0), Duration::from_millis(1500));
        assert_eq!(backoff_with_jitter(2, 0.5), Duration::from_secs(2));
        assert_eq!(backoff_with_jitter(2, 1.0), Duration::from_millis(2500));
        assert_eq!(backoff_with_jitter(2, 7.0), Duration::from_millis(2500));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(3), Duration::from_secs(4));
        assert_eq!(backoff(40), Duration::from_secs(30));
    }
}
