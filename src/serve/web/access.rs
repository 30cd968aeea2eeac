//! Who may use the web view: the operator, who holds the token herd printed once. The token is
//! exchanged for a session (an HttpOnly, SameSite=Strict cookie) with its own CSRF token, which
//! every state-changing request sends back in a header; a request that names another origin is
//! refused; failed logins are counted per client and refused for a while past a few.
//!
//! Pure: the secrets and the time are handed in; the routes read headers and write cookies.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use crate::core::operator::action_link::same;

/// Failed logins a client may make within `FAILURE_WINDOW_SECS` before it is refused.
pub(super) const FAILURES_ALLOWED: usize = 5;
pub(super) const FAILURE_WINDOW_SECS: i64 = 60;
/// Sessions kept at most; the oldest goes first.
const SESSIONS_MAX: usize = 64;

/// Why a request was refused, as the refusal is recorded (never with a secret in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Refused {
    #[error("no session (sign in with the token herd printed)")]
    NoSession,
    #[error("wrong token")]
    WrongToken,
    #[error("too many failed logins from this client; wait a minute")]
    TooManyFailures,
    #[error("missing or wrong CSRF token")]
    Csrf,
    #[error("the request comes from another origin")]
    ForeignOrigin,
}

/// A signed-in browser: the cookie's value and the CSRF token its page sends back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Session {
    pub(super) id: String,
    pub(super) csrf: String,
}

/// The web view's secrets and what it remembers of its clients.
#[derive(Debug)]
pub(super) struct Gate {
    token: String,
    sessions: VecDeque<Session>,
    failures: HashMap<IpAddr, Vec<i64>>,
}

impl Gate {
    pub(super) fn new(token: String) -> Gate {
        Gate {
            token,
            sessions: VecDeque::new(),
            failures: HashMap::new(),
        }
    }

    /// Signs `client` in with `token` at `now` (Unix seconds); `fresh` makes the new session's
    /// secrets.
    pub(super) fn log_in(
        &mut self,
        client: IpAddr,
        token: &str,
        now: i64,
        fresh: impl FnOnce() -> Session,
    ) -> Result<Session, Refused> {
        // Failures past the window are forgotten, and clients left with none: the table holds
        // only the last minute's failures, however many clients tried.
        self.failures.retain(|_, times| {
            times.retain(|at| now - at < FAILURE_WINDOW_SECS);
            !times.is_empty()
        });
        let failures = self.failures.entry(client).or_default();
        if failures.len() >= FAILURES_ALLOWED {
            return Err(Refused::TooManyFailures);
        }
        if !same(token.as_bytes(), self.token.as_bytes()) {
            failures.push(now);
            return Err(Refused::WrongToken);
        }
        let session = fresh();
        if self.sessions.len() >= SESSIONS_MAX {
            self.sessions.pop_front();
        }
        self.sessions.push_back(session.clone());
        Ok(session)
    }

    /// The session a request's cookie names.
    pub(super) fn session(&self, cookie: Option<&str>) -> Result<&Session, Refused> {
        let cookie = cookie.ok_or(Refused::NoSession)?;
        self.sessions
            .iter()
            .find(|s| same(s.id.as_bytes(), cookie.as_bytes()))
            .ok_or(Refused::NoSession)
    }

    /// The session of a state-changing request: its cookie and its CSRF header must match.
    pub(super) fn session_for_change(
        &self,
        cookie: Option<&str>,
        csrf: Option<&str>,
    ) -> Result<&Session, Refused> {
        let session = self.session(cookie)?;
        match csrf {
            Some(csrf) if same(csrf.as_bytes(), session.csrf.as_bytes()) => Ok(session),
            _ => Err(Refused::Csrf),
        }
    }
}

/// Whether a request may change state, by its `Origin` (else its `Referer`) against the origin
/// the web view is reached at (`http://` + its `Host`): a browser names the page that sent it,
/// so a page of another site is refused; a client that names none (curl, an ntfy action) is
/// not a browser carrying the operator's cookie.
pub(super) fn origin_ok(origin: Option<&str>, referer: Option<&str>, host: Option<&str>) -> bool {
    let Some(host) = host else {
        return origin.is_none() && referer.is_none();
    };
    let ours = format!("http://{host}");
    match (origin, referer) {
        (Some(origin), _) => origin == ours,
        (None, Some(referer)) => referer == ours || referer.starts_with(&format!("{ours}/")),
        (None, None) => true,
    }
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
