//! The agent's model API as its JavaScript runtime reports it: herd turns on the runtime's fetch
//! diagnostics (`NODE_DEBUG=fetch`, `BUN_CONFIG_VERBOSE_FETCH`), so an agent that retries a
//! failing API in silence for minutes (Qwen Code, OpenCode) still shows each status. Those lines
//! are never shown and only statuses are kept (headers carry the API key). `ApiWatch` ends the
//! turn once auth fails twice, or quota or server errors `TRIES` times over `PERSIST` with no
//! progress of the turn between. Pure.

use std::time::Duration;

use super::outcome::Outcome;

/// How long failing answers must go on, with no other answer between, before the verdict.
pub const PERSIST: Duration = Duration::from_secs(20);
/// How many failing answers, at least, before the verdict.
pub const TRIES: u32 = 3;

/// What a line of the agent's stderr is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StderrLine {
    /// The agent's own text.
    Agent,
    /// A diagnostics line that is not a response's status: neither shown nor recorded.
    Trace,
    /// An HTTP response's status, as the runtime reports it.
    Response { status: u16 },
}

/// Which line is which: Node's `FETCH <pid>: …`, Bun's `> …` and `< …` lines.
pub fn classify(line: &str) -> StderrLine {
    if let Some(rest) = line.strip_prefix("FETCH ") {
        let node = rest
            .split_once(": ")
            .map(|(pid, _)| pid.chars().all(|c| c.is_ascii_digit()));
        if node != Some(true) {
            return StderrLine::Agent;
        }
        return match rest.split_once(" - HTTP ") {
            Some((head, status)) if head.contains("received response to ") => status_of(status)
                .map_or(StderrLine::Trace, |status| StderrLine::Response { status }),
            _ => StderrLine::Trace,
        };
    }
    if line.starts_with("> ") {
        return StderrLine::Trace;
    }
    if let Some(rest) = line.strip_prefix("< ") {
        // `< 429 Too Many Requests` is the status; `< Content-Type: …` a header.
        let first = rest.split_whitespace().next().unwrap_or("");
        return match (first.len() == 3, status_of(first)) {
            (true, Some(status)) => StderrLine::Response { status },
            _ => StderrLine::Trace,
        };
    }
    StderrLine::Agent
}

fn status_of(text: &str) -> Option<u16> {
    text.trim()
        .parse::<u16>()
        .ok()
        .filter(|s| (100..=599).contains(s))
}

/// What kind of failure a status is, as the stream judge reads the result's kind and status.
fn failing(status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => Some("authentication_failed"),
        429 => Some("rate_limit"),
        500..=599 => Some("api_error"),
        _ => None,
    }
}

/// The failing answers since the turn last moved on.
#[derive(Debug, Default)]
pub struct ApiWatch {
    run: Option<FailingRun>,
}

/// The failing answers of one kind since the turn last moved on.
#[derive(Debug, Clone, Copy)]
struct FailingRun {
    kind: &'static str,
    /// The latest failing status.
    status: u16,
    /// When the first came.
    since: Duration,
    count: u32,
}

impl ApiWatch {
    /// The turn moved on: the model answers, so failures so far were healed.
    pub fn progress(&mut self) {
        self.run = None;
    }

    /// One response at `at`; the session's end when the API has kept failing.
    pub fn response(&mut self, status: u16, at: Duration) -> Option<Outcome> {
        // Other answers (a local server, a model list) say nothing of the turn.
        let kind = failing(status)?;
        let run = match self.run {
            Some(run) if run.kind == kind => FailingRun {
                status,
                count: run.count + 1,
                ..run
            },
            _ => FailingRun {
                kind,
                status,
                since: at,
                count: 1,
            },
        };
        self.run = Some(run);
        self.due(at)
    }

    /// The session's end at `at` when failures went on long enough (checked on each answer and
    /// as time passes).
    pub fn due(&self, at: Duration) -> Option<Outcome> {
        let run = self.run?;
        let lasted = at.saturating_sub(run.since);
        let persists = run.count >= TRIES && lasted >= PERSIST;
        let auth_again = run.kind == "authentication_failed" && run.count >= 2;
        if !auth_again && !persists {
            return None;
        }
        let message = format!(
            "the agent's model API answered HTTP {} {} time(s) over {} s while the agent \
             retried without a word to herd; ended before its retries run out",
            run.status,
            run.count,
            lasted.as_secs()
        );
        let mut outcome = Outcome::failed(run.kind, &message);
        outcome.status = Some(run.status);
        Some(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtimes_lines_are_told_from_the_agents() {
        let node = "FETCH 27614: received response to POST http://h/v1/chat/completions - HTTP 429";
        assert_eq!(classify(node), StderrLine::Response { status: 429 });
        assert_eq!(
            classify("FETCH 27614: sending request to POST http://h/v1/chat/completions"),
            StderrLine::Trace
        );
        assert_eq!(
            classify("< 503 Service Unavailable"),
            StderrLine::Response { status: 503 }
        );
        assert_eq!(
            classify("< Content-Type: text/event-stream"),
            StderrLine::Trace
        );
        assert_eq!(
            classify("> Authorization: Bearer sk-secret"),
            StderrLine::Trace
        );
        assert_eq!(
            classify("FETCH failed: the agent's own words"),
            StderrLine::Agent
        );
        assert_eq!(classify("Error handling request {"), StderrLine::Agent);
    }

    #[test]
    fn a_failing_api_ends_the_turn_once_it_persists_and_auth_when_it_repeats() {
        let s = Duration::from_secs;
        let mut watch = ApiWatch::default();
        assert!(watch.response(429, s(10)).is_none());
        assert!(watch.response(429, s(12)).is_none());
        // Three, but not yet for PERSIST; time alone then decides.
        assert!(watch.response(429, s(15)).is_none());
        assert!(watch.due(s(29)).is_none());
        assert!(watch.due(s(30)).is_some());
        let quota = watch.response(429, s(31)).expect("persisted");
        assert_eq!(
            (quota.kind.as_str(), quota.status),
            ("rate_limit", Some(429))
        );
        assert!(
            quota.message.contains("HTTP 429 4 time(s) over 21 s"),
            "{}",
            quota.message
        );
        // The turn's progress between failures starts over; other answers do not.
        let mut watch = ApiWatch::default();
        for at in [0, 10, 20] {
            assert!(watch.response(503, s(at)).is_none());
            assert!(watch.response(200, s(at + 1)).is_none());
            watch.progress();
        }
        assert!(watch.response(503, s(40)).is_none());
        for at in [41, 50] {
            assert!(watch.response(503, s(at)).is_none());
            assert!(watch.response(200, s(at + 1)).is_none());
        }
        assert!(
            watch.response(503, s(61)).is_some(),
            "a 200 elsewhere heals nothing"
        );
        let mut watch = ApiWatch::default();
        assert!(watch.response(401, s(3)).is_none());
        let auth = watch.response(401, s(4)).expect("the second");
        assert_eq!(
            (auth.kind.as_str(), auth.status),
            ("authentication_failed", Some(401))
        );
    }
}
