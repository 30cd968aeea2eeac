//! The verdict of one attempt: success, or which failure class, with the evidence that decided it.
//!
//! First match wins, per SPEC: timeout → permission blocked → auth → quota → process →
//! incomplete. Failure texts are matched only on the end of the output of a failed attempt.

use super::profile::Profile;
use super::task::FailureType;

/// How the agent's process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<String>,
}

impl ExitStatus {
    pub fn success(&self) -> bool {
        self.code == Some(0) && self.signal.is_none()
    }

    pub fn describe(&self) -> String {
        match (&self.signal, self.code) {
            (Some(signal), _) => format!("killed by signal {signal}"),
            (None, Some(code)) => format!("exit code {code}"),
            (None, None) => "exit status unknown".to_string(),
        }
    }
}

/// Why the attempt came to an end.
#[derive(Debug, Clone, PartialEq)]
pub enum EndCause {
    /// The agent exited by itself.
    Exited,
    /// herd ended it after the completion marker (exit keys, then signals).
    AfterMarker,
    /// herd ended it because it sat idle at its input prompt.
    Idle,
    Timeout {
        after_sec: u64,
    },
    PermissionBlocked {
        evidence: String,
    },
    Cancelled,
}

/// The facts a verdict is drawn from.
#[derive(Debug, Clone)]
pub struct EndFacts<'a> {
    pub cause: EndCause,
    pub marker_seen: bool,
    pub exit: ExitStatus,
    /// The last non-blank rows of the screen when the attempt ended (for an idle end: when the
    /// agent was found idle).
    pub tail: &'a [String],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub failure: Option<FailureType>,
    pub evidence: Option<String>,
    /// The operator cancelled the task: neither success nor a failure class.
    pub cancelled: bool,
}

impl Verdict {
    pub fn success() -> Verdict {
        Verdict {
            failure: None,
            evidence: None,
            cancelled: false,
        }
    }

    fn failed(failure: FailureType, evidence: impl Into<String>) -> Verdict {
        Verdict {
            failure: Some(failure),
            evidence: Some(evidence.into()),
            cancelled: false,
        }
    }

    pub fn is_success(&self) -> bool {
        self.failure.is_none() && !self.cancelled
    }

    /// One word for logs and the cast marker.
    pub fn label(&self) -> &'static str {
        match (self.cancelled, self.failure) {
            (true, _) => "cancelled",
            (false, None) => "completed",
            (false, Some(f)) => f.as_str(),
        }
    }
}

pub fn classify(facts: &EndFacts<'_>, profile: &Profile) -> Verdict {
    match &facts.cause {
        EndCause::Cancelled => {
            return Verdict {
                failure: None,
                evidence: Some("cancelled by the operator".into()),
                cancelled: true,
            };
        }
        EndCause::Timeout { after_sec } => {
            return Verdict::failed(FailureType::Timeout, format!("timeout after {after_sec} s"));
        }
        EndCause::PermissionBlocked { evidence } => {
            return Verdict::failed(FailureType::PermissionBlocked, evidence.clone());
        }
        EndCause::AfterMarker if facts.marker_seen => return Verdict::success(),
        EndCause::Exited if facts.marker_seen && facts.exit.success() => {
            return Verdict::success();
        }
        _ => {}
    }
    for (failure, patterns) in [
        (FailureType::Auth, &profile.auth),
        (FailureType::Quota, &profile.quota),
        (FailureType::Process, &profile.transient),
    ] {
        if let Some(row) = facts
            .tail
            .iter()
            .find(|row| patterns.iter().any(|re| re.is_match(row)))
        {
            return Verdict::failed(failure, row.trim());
        }
    }
    let exited_badly = facts.cause == EndCause::Exited && !facts.exit.success();
    if exited_badly {
        let mut evidence = facts.exit.describe();
        if facts.marker_seen {
            evidence.push_str(" after the completion marker");
        }
        return Verdict::failed(FailureType::Process, evidence);
    }
    let evidence = match facts.cause {
        EndCause::Idle => "idle at the input prompt without the completion marker".to_string(),
        _ => format!("no completion marker; {}", facts.exit.describe()),
    };
    Verdict::failed(FailureType::Incomplete, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::profile::ProfileSet;

    fn profile() -> Profile {
        let text = r#"
[profiles.t]
command = ["t"]
auth = ['Invalid API key', 'Please run /login']
quota = ["You[’']ve hit your usage limit"]
transient = ['529 Overloaded']
"#;
        ProfileSet::build(&[text], None)
            .unwrap()
            .get("t")
            .unwrap()
            .clone()
    }

    fn exit(code: i32) -> ExitStatus {
        ExitStatus {
            code: Some(code),
            signal: None,
        }
    }

    #[test]
    fn verdict_table() {
        let p = profile();
        let auth = vec!["  ⎿  Not logged in · Please run /login".to_string()];
        let quota = vec!["You’ve hit your usage limit · resets 3pm".to_string()];
        let both = vec![quota[0].clone(), auth[0].clone()];
        let overloaded = vec!["● API Error: Repeated 529 Overloaded errors.".to_string()];
        let healthy = vec!["done".to_string()];
        type Case<'a> = (
            EndCause,
            bool,
            ExitStatus,
            &'a [String],
            Option<FailureType>,
            &'a str,
        );
        let cases: Vec<Case> = vec![
            (EndCause::Exited, true, exit(0), &healthy, None, ""),
            (EndCause::AfterMarker, true, exit(137), &healthy, None, ""),
            (
                EndCause::Exited,
                true,
                exit(2),
                &healthy,
                Some(FailureType::Process),
                "exit code 2 after the completion marker",
            ),
            (
                EndCause::Exited,
                false,
                exit(0),
                &healthy,
                Some(FailureType::Incomplete),
                "no completion marker; exit code 0",
            ),
            (
                EndCause::Idle,
                false,
                exit(0),
                &healthy,
                Some(FailureType::Incomplete),
                "idle at the input prompt without the completion marker",
            ),
            (
                EndCause::Timeout { after_sec: 30 },
                true,
                exit(0),
                &auth,
                Some(FailureType::Timeout),
                "timeout after 30 s",
            ),
            (
                EndCause::PermissionBlocked {
                    evidence: "prompt press_1 unanswered for 60 s".into(),
                },
                false,
                exit(0),
                &auth,
                Some(FailureType::PermissionBlocked),
                "prompt press_1 unanswered for 60 s",
            ),
            (
                EndCause::Idle,
                false,
                exit(0),
                &auth,
                Some(FailureType::Auth),
                "⎿  Not logged in · Please run /login",
            ),
            (
                EndCause::Exited,
                false,
                exit(1),
                &quota,
                Some(FailureType::Quota),
                "You’ve hit your usage limit · resets 3pm",
            ),
            (
                EndCause::Exited,
                false,
                exit(1),
                &both,
                Some(FailureType::Auth),
                "⎿  Not logged in · Please run /login",
            ),
            (
                EndCause::Idle,
                false,
                exit(0),
                &overloaded,
                Some(FailureType::Process),
                "● API Error: Repeated 529 Overloaded errors.",
            ),
            (
                EndCause::Exited,
                false,
                exit(3),
                &healthy,
                Some(FailureType::Process),
                "exit code 3",
            ),
            (
                EndCause::Exited,
                false,
                ExitStatus {
                    code: None,
                    signal: Some("SIGKILL".into()),
                },
                &healthy,
                Some(FailureType::Process),
                "killed by signal SIGKILL",
            ),
            // Exit codes lie: an auth failure with exit 0 is still an auth failure.
            (
                EndCause::Exited,
                false,
                exit(0),
                &auth,
                Some(FailureType::Auth),
                "⎿  Not logged in · Please run /login",
            ),
        ];
        for (cause, marker_seen, exit, tail, failure, evidence) in cases {
            let facts = EndFacts {
                cause: cause.clone(),
                marker_seen,
                exit,
                tail,
            };
            let v = classify(&facts, &p);
            assert_eq!(v.failure, failure, "{cause:?} marker={marker_seen}");
            assert_eq!(v.evidence.as_deref().unwrap_or(""), evidence, "{cause:?}");
        }
    }

    #[test]
    fn cancelled_is_neither_success_nor_failure() {
        let p = profile();
        let v = classify(
            &EndFacts {
                cause: EndCause::Cancelled,
                marker_seen: true,
                exit: exit(0),
                tail: &[],
            },
            &p,
        );
        assert!(v.cancelled && v.failure.is_none() && !v.is_success());
    }
}
