//! An agent's retries as its screen shows them, judged as they happen by the same rule as
//! logged retries (`agent_log::RetryWatch`), for CLIs that keep no log. Pure.

use std::time::Duration;

use crate::core::classify;
use crate::core::facts::agent_log::SERVER_ERROR_PATIENCE;
use crate::core::profile::Profile;
use crate::core::task::FailureType;

/// Watches the bottom of the screen while the agent retries.
#[derive(Debug, Clone, Default)]
pub struct ScreenRetryWatch {
    /// Since when the screen shows retries of a server error.
    server_errors_since: Option<Duration>,
}

impl ScreenRetryWatch {
    /// `tail`: the screen's last rows. `Some((failure, evidence))` when the agent should end: a
    /// retry beside an auth text at once, quota after two, transient after
    /// [`SERVER_ERROR_PATIENCE`].
    pub fn check(
        &mut self,
        profile: &Profile,
        tail: &[String],
        now: Duration,
    ) -> Option<(FailureType, String)> {
        let text = tail.join("\n");
        let retries: usize = profile
            .retrying
            .iter()
            .map(|re| re.find_iter(&text).count())
            .max()
            .unwrap_or(0);
        if retries == 0 {
            self.server_errors_since = None;
            return None;
        }
        let (failure, line) = classify::failure_text(tail, profile)?;
        let evidence = |what: String| format!("{line} ({what})");
        match failure {
            FailureType::Auth => Some((failure, evidence("retried in vain".into()))),
            FailureType::Quota if retries >= 2 => {
                Some((failure, evidence(format!("{retries} retries shown"))))
            }
            FailureType::Process => {
                let since = *self.server_errors_since.get_or_insert(now);
                let lasted = now.saturating_sub(since);
                (lasted >= SERVER_ERROR_PATIENCE).then(|| {
                    (
                        failure,
                        evidence(format!("retried for {} s", lasted.as_secs())),
                    )
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::profile::ProfileSet;

    fn profile() -> Profile {
        let text = r#"
[profiles.t]
command = ["t"]
retrying = ['Retrying in [\d.]+ seconds']
auth = ['not able to authenticate you']
quota = ['rate limited you']
transient = ['servers are down or overloaded']
"#;
        ProfileSet::test_profile(text)
    }

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn auth_ends_at_the_first_retry_and_quota_at_the_second() {
        let p = profile();
        let mut watch = ScreenRetryWatch::default();
        let auth =
            rows("The API provider is not able to authenticate you.\nRetrying in 0.5 seconds...");
        let (failure, evidence) = watch.check(&p, &auth, Duration::ZERO).unwrap();
        assert_eq!(failure, FailureType::Auth);
        assert!(
            evidence.starts_with("The API provider is not able"),
            "{evidence}"
        );

        let once = "The API provider has rate limited you.\nRetrying in 0.5 seconds...";
        assert_eq!(watch.check(&p, &rows(once), Duration::ZERO), None);
        let twice = format!("{once}\n{once}");
        assert_eq!(
            watch.check(&p, &rows(&twice), Duration::ZERO).unwrap().0,
            FailureType::Quota
        );
        // A quota text without a retry is left to the verdict.
        assert_eq!(
            watch.check(
                &p,
                &rows("The API provider has rate limited you."),
                Duration::ZERO
            ),
            None
        );
    }

    #[test]
    fn server_errors_end_once_they_lasted() {
        let p = profile();
        let mut watch = ScreenRetryWatch::default();
        let shown =
            rows("The API provider's servers are down or overloaded.\nRetrying in 1.0 seconds...");
        assert_eq!(watch.check(&p, &shown, Duration::from_secs(5)), None);
        assert_eq!(watch.check(&p, &shown, Duration::from_secs(12)), None);
        let (failure, evidence) = watch.check(&p, &shown, Duration::from_secs(15)).unwrap();
        assert_eq!(failure, FailureType::Process);
        assert!(evidence.ends_with("(retried for 10 s)"), "{evidence}");
        // Answers came: the retries left the screen, the clock starts again.
        assert_eq!(
            watch.check(&p, &rows("All done."), Duration::from_secs(36)),
            None
        );
        assert_eq!(watch.check(&p, &shown, Duration::from_secs(40)), None);
    }
}
