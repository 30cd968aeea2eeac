//! The real CLIs' structured captures (`tests/fixtures`: Claude Code `-p --output-format
//! stream-json --verbose`, `codex exec --json`, Gemini `-p --output-format stream-json`) through
//! the whole attempt state machine with the matching built-in `-json` profile: each ends with the
//! verdict the fixtures README names, with the facts the events carry (session id, final text),
//! however the output is split into reads.
//!
//! Also: a success whose text lacks a required marker is incomplete, and the interactive `claude`
//! profile still reads the print-mode auth failure off the screen.
//!
//! The captures are not optional: they are vendored in the repository, so a missing folder fails
//! every test here with the path it looked at.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use herd::assets::built_in_profile_texts;
use herd::core::attempt::{Attempt, AttemptSetup, Event};
use herd::core::classify::{ExitStatus, Verdict};
use herd::core::profile::{Profile, ProfileSet};
use herd::core::task::{Completion, FailureType};
use herd::core::wire::stream::StreamFacts;

const ROWS: u16 = 40;
const COLS: u16 = 120;
/// What the mock provider answered in every successful capture.
const MOCK_REPLY: &str = "Hi! This is the mock server speaking.";
/// Byte size of the pieces in the even chunking: a prime, so the cuts fall everywhere.
const PIECE: usize = 97;
/// Two-way splits tried per capture, at evenly spaced offsets.
const TWO_WAY_SPLITS: usize = 50;

// ---------------------------------------------------------------------------------------------
// Captures

fn fixtures_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    assert!(
        dir.join("README.md").is_file(),
        "the real CLIs' captures are missing: no README.md in {} (they are vendored in the \
         repository: restore `tests/fixtures`)",
        dir.display()
    );
    dir
}

/// One capture: its raw PTY bytes, when each recorded read ended, and how the CLI exited.
struct Capture {
    name: String,
    raw: Vec<u8>,
    /// Per recorded read: its time and the offset in `raw` where it ends.
    reads: Vec<(f64, usize)>,
    exit: ExitStatus,
    /// The last time in the timeline.
    end_time: f64,
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn signal_name(signal: i64) -> String {
    match signal {
        2 => "SIGINT".into(),
        9 => "SIGKILL".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

impl Capture {
    fn load(name: &str) -> Capture {
        let base = fixtures_dir().join(name);
        let with = |ext: &str| PathBuf::from(format!("{}.{ext}", base.display()));
        let raw_path = with("raw");
        let raw =
            std::fs::read(&raw_path).unwrap_or_else(|e| panic!("{}: {e}", raw_path.display()));
        let timeline_path = with("timeline.jsonl");
        let timeline = std::fs::read_to_string(&timeline_path)
            .unwrap_or_else(|e| panic!("{}: {e}", timeline_path.display()));
        let mut reads = Vec::new();
        let mut offset = 0;
        let mut end_time: f64 = 0.0;
        for line in timeline.lines().filter(|l| !l.trim().is_empty()) {
            let entry: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: {e}: {line}", timeline_path.display()));
            let t = entry["t"].as_f64().unwrap_or(0.0);
            end_time = end_time.max(t);
            if entry["dir"] == "out" {
                offset += entry["len"].as_u64().unwrap() as usize;
                reads.push((t, offset));
            }
        }
        assert_eq!(
            offset,
            raw.len(),
            "{name}: the reads add up to the raw bytes"
        );
        let meta = read_json(&with("meta.json"));
        Capture {
            name: name.to_string(),
            raw,
            reads,
            exit: ExitStatus {
                code: meta["exit_code"].as_i64().map(|c| c as i32),
                signal: meta["exit_signal"].as_i64().map(signal_name),
            },
            end_time,
        }
    }

    /// When the byte at `offset` arrived: the time of the recorded read holding it.
    fn time_of_byte(&self, offset: usize) -> Duration {
        let t = self
            .reads
            .iter()
            .find(|(_, end)| offset < *end)
            .map_or(self.end_time, |(t, _)| *t);
        Duration::from_secs_f64(t)
    }

    /// The top-level `key` of each JSON line in the capture that has one, in order (read here on
    /// its own, without herd's parser).
    fn json_fields(&self, key: &str) -> Vec<Value> {
        String::from_utf8_lossy(&self.raw)
            .lines()
            .filter_map(|line| {
                let mut value: Value = serde_json::from_str(line.trim()).ok()?;
                value.get_mut(key).map(Value::take)
            })
            .collect()
    }

    /// The first top-level string `key` of a JSON line: the session id the CLI announced.
    fn first_json_string(&self, key: &str) -> Option<String> {
        self.json_fields(key)
            .into_iter()
            .find_map(|v| v.as_str().map(str::to_string))
    }
}

// ---------------------------------------------------------------------------------------------
// Driving an attempt

fn profiles() -> ProfileSet {
    match ProfileSet::build(&built_in_profile_texts(), None) {
        Ok(set) => set,
        Err(errors) => panic!("built-in profiles do not compile: {errors:#?}"),
    }
}

fn profile(name: &str) -> Profile {
    profiles()
        .get(name)
        .unwrap_or_else(|| panic!("no built-in profile {name}"))
        .clone()
}

/// How the attempt is told to finish.
#[derive(Clone, Copy)]
struct Finish<'a> {
    completion: Completion,
    marker: &'a str,
    marker_required: bool,
}

/// A successful final event decides; no marker needed.
const BY_RESULT: Finish<'static> = Finish {
    completion: Completion::Result,
    marker: "TASK_COMPLETE:capture",
    marker_required: false,
};

/// What the attempt concluded and what the events said.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    verdict: Verdict,
    stream: Option<StreamFacts>,
}

/// Feeds the capture to an attempt cut at `cuts` (ascending offsets inside the capture), each
/// piece at the time its last byte was recorded, ticking at every deadline in between, and ends
/// it with the capture's exit.
fn run_attempt(
    capture: &Capture,
    profile: &Profile,
    finish: Finish<'_>,
    cuts: &[usize],
) -> Outcome {
    let mut attempt = Attempt::new(AttemptSetup {
        profile: profile.clone(),
        marker: finish.marker.into(),
        prompt: "create a marker file".into(),
        rows: ROWS,
        cols: COLS,
        timeout: Duration::from_secs(600),
        idle: Duration::from_secs_f64(profile.idle_sec),
        permission_wait: Some(Duration::from_secs(60)),
        auto_rules: vec![false; profile.prompts.len()],
        answer_cap: 5,
        completion: finish.completion,
        marker_required: finish.marker_required,
        guard: Default::default(),
    });
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(capture.raw.len());
    let mut start = 0;
    for end in bounds {
        if end <= start {
            continue;
        }
        let now = capture.time_of_byte(end - 1);
        tick_until(&mut attempt, now);
        attempt.handle(Event::Output(&capture.raw[start..end]), now);
        start = end;
    }
    let end = Duration::from_secs_f64(capture.end_time);
    tick_until(&mut attempt, end);
    attempt.handle(Event::Exited(capture.exit.clone()), end);
    let verdict = attempt
        .verdict()
        .cloned()
        .unwrap_or_else(|| panic!("{}: no verdict after the exit", capture.name));
    Outcome {
        verdict,
        stream: attempt.stream_facts().cloned(),
    }
}

/// Ticks at every deadline up to `until`, as the shell does between reads.
fn tick_until(attempt: &mut Attempt, until: Duration) {
    for _ in 0..8 {
        match attempt.next_deadline() {
            Some(deadline) if deadline <= until => {
                attempt.handle(Event::Tick, deadline);
            }
            _ => break,
        }
    }
}

/// Cut lists: the whole capture, pieces of `PIECE` bytes, and `TWO_WAY_SPLITS` two-way splits
/// at evenly spaced offsets; each with a name for messages.
fn chunkings(len: usize) -> Vec<(String, Vec<usize>)> {
    let mut out = vec![("one piece".to_string(), Vec::new())];
    out.push((
        format!("pieces of {PIECE} bytes"),
        (PIECE..len).step_by(PIECE).collect(),
    ));
    for i in 1..=TWO_WAY_SPLITS {
        let at = len * i / (TWO_WAY_SPLITS + 1);
        if at > 0 && at < len {
            out.push((format!("split at byte {at}"), vec![at]));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// What each capture must give

/// One capture and what the fixtures README says herd must conclude from it.
struct Expected {
    capture: &'static str,
    profile: &'static str,
    /// `None`: success.
    failure: Option<FailureType>,
    /// Words of the CLI's own that the evidence must hold (a failure's cause).
    evidence: &'static str,
    /// The JSON key the CLI names its session with (Codex: its thread).
    session_key: &'static str,
    /// The agent's final text, for a success.
    result_text: Option<&'static str>,
}

const EXPECTED: &[Expected] = &[
    Expected {
        // `result` with `is_error: true`, text `Not logged in · Please run /login`, exit 1.
        capture: "claude/b_print_streamjson_nocreds",
        profile: "claude-json",
        failure: Some(FailureType::Auth),
        evidence: "Not logged in",
        session_key: "session_id",
        result_text: None,
    },
    Expected {
        // A Bash tool needing approval is denied: `permission_denials` in a successful result.
        capture: "claude/p_tool_streamjson",
        profile: "claude-json",
        failure: Some(FailureType::PermissionBlocked),
        evidence: "touch mock_created_by_agent.txt",
        session_key: "session_id",
        result_text: Some(MOCK_REPLY),
    },
    Expected {
        // `API Error: Request rejected (429) · Rate limited`, `api_error_status: 429`.
        capture: "claude/p_quota429_streamjson",
        profile: "claude-json",
        failure: Some(FailureType::Quota),
        evidence: "Rate limited",
        session_key: "session_id",
        result_text: None,
    },
    Expected {
        capture: "claude/p_text_streamjson",
        profile: "claude-json",
        failure: None,
        evidence: "",
        session_key: "session_id",
        result_text: Some(MOCK_REPLY),
    },
    Expected {
        // Tracing lines and a non-fatal error item around `turn.completed`.
        capture: "codex/e_text_json",
        profile: "codex-json",
        failure: None,
        evidence: "",
        session_key: "thread_id",
        result_text: Some(MOCK_REPLY),
    },
    Expected {
        // Five `Reconnecting... n/5 (unexpected status 401 ...)`, then `turn.failed`.
        capture: "codex/e_auth401_json",
        profile: "codex-json",
        failure: Some(FailureType::Auth),
        evidence: "401 Unauthorized",
        session_key: "thread_id",
        result_text: None,
    },
    Expected {
        capture: "codex/e_quota429_json",
        profile: "codex-json",
        failure: Some(FailureType::Quota),
        evidence: "Quota exceeded",
        session_key: "thread_id",
        result_text: None,
    },
    Expected {
        // Warnings before the events, the reply as a `delta` message.
        capture: "gemini/p_text_streamjson",
        profile: "gemini-json",
        failure: None,
        evidence: "",
        session_key: "session_id",
        result_text: Some(MOCK_REPLY),
    },
    Expected {
        // Stack traces between the events; a `result` with status `error`; exit 144.
        capture: "gemini/p_auth401_streamjson",
        profile: "gemini-json",
        failure: Some(FailureType::Auth),
        evidence: "API key not valid",
        session_key: "session_id",
        result_text: None,
    },
];

/// Problems with one outcome against what the README says, as lines.
fn check(expected: &Expected, capture: &Capture, outcome: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    let verdict = &outcome.verdict;
    if verdict.failure != expected.failure || verdict.cancelled {
        problems.push(format!(
            "verdict {:?} (evidence {:?}), expected {:?}",
            verdict.label(),
            verdict.evidence,
            expected.failure.map_or("completed", FailureType::as_str)
        ));
    }
    if expected.failure.is_some() {
        let evidence = verdict.evidence.as_deref().unwrap_or_default();
        if !evidence.contains(expected.evidence) {
            problems.push(format!(
                "evidence {evidence:?} does not hold the CLI's words {:?}",
                expected.evidence
            ));
        }
    }
    let Some(facts) = &outcome.stream else {
        problems.push("no stream facts: the profile does not read JSON events".into());
        return problems;
    };
    let announced = capture.first_json_string(expected.session_key);
    if announced.is_none() {
        problems.push(format!("the capture names no {}", expected.session_key));
    }
    if facts.session_id != announced {
        problems.push(format!(
            "session id {:?}, the capture's {} is {announced:?}",
            facts.session_id, expected.session_key
        ));
    }
    if let Some(text) = expected.result_text
        && facts.result_text.as_deref() != Some(text)
    {
        problems.push(format!(
            "result_text {:?}, expected {text:?}",
            facts.result_text
        ));
    }
    // Claude reports the run's cost in its result.
    let cost = capture
        .json_fields("total_cost_usd")
        .last()
        .and_then(Value::as_f64);
    if facts.cost_usd != cost {
        problems.push(format!(
            "cost_usd {:?}, the capture's total_cost_usd is {cost:?}",
            facts.cost_usd
        ));
    }
    if expected.failure.is_none() && !facts.result.as_ref().is_some_and(|r| r.success) {
        problems.push(format!("no successful final event: {:?}", facts.result));
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Tests

/// The whole capture in one read: the README's verdict, the announced session, the final text.
#[test]
fn each_structured_capture_gets_the_readme_verdict() {
    let mut failures = Vec::new();
    for expected in EXPECTED {
        let capture = Capture::load(expected.capture);
        let outcome = run_attempt(&capture, &profile(expected.profile), BY_RESULT, &[]);
        for problem in check(expected, &capture, &outcome) {
            failures.push(format!(
                "{} ({}): {problem}",
                expected.capture, expected.profile
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Pieces of 97 bytes (cutting JSON lines, CRLFs and UTF-8 characters anywhere) and 50 two-way
/// splits give the same verdict, evidence and stream facts as one read.
#[test]
fn the_verdict_does_not_depend_on_how_the_output_is_split() {
    let mut failures = Vec::new();
    for expected in EXPECTED {
        let capture = Capture::load(expected.capture);
        let profile = profile(expected.profile);
        let whole = run_attempt(&capture, &profile, BY_RESULT, &[]);
        let chunkings = chunkings(capture.raw.len());
        assert!(
            chunkings.len() > TWO_WAY_SPLITS,
            "{}: too short to split {TWO_WAY_SPLITS} ways ({} bytes)",
            capture.name,
            capture.raw.len()
        );
        for (how, cuts) in chunkings {
            let split = run_attempt(&capture, &profile, BY_RESULT, &cuts);
            for problem in check(expected, &capture, &split) {
                failures.push(format!("{} {how}: {problem}", expected.capture));
            }
            if split != whole {
                failures.push(format!(
                    "{} {how}: differs from one read\n  one read: {whole:?}\n  split:    {split:?}",
                    expected.capture
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A successful result whose text lacks a required marker is not a success.
#[test]
fn a_success_without_the_required_marker_is_incomplete() {
    let capture = Capture::load("claude/p_text_streamjson");
    let profile = profile("claude-json");
    let marker = "TASK_COMPLETE:x";
    assert!(
        !String::from_utf8_lossy(&capture.raw).contains(marker),
        "the capture must not hold the marker"
    );
    let finish = Finish {
        completion: Completion::Result,
        marker,
        marker_required: true,
    };
    for (how, cuts) in chunkings(capture.raw.len()) {
        let outcome = run_attempt(&capture, &profile, finish, &cuts);
        assert_eq!(
            outcome.verdict.failure,
            Some(FailureType::Incomplete),
            "{how}: {:?}",
            outcome.verdict
        );
        let facts = outcome.stream.as_ref().unwrap();
        assert!(
            facts.result.as_ref().is_some_and(|r| r.success),
            "{how}: the result itself succeeded: {facts:?}"
        );
        assert_eq!(facts.result_text.as_deref(), Some(MOCK_REPLY), "{how}");
    }

    // The marker the reply does hold completes the same capture.
    let finish = Finish {
        marker: "This is the mock server",
        ..finish
    };
    let outcome = run_attempt(&capture, &profile, finish, &[]);
    assert!(outcome.verdict.is_success(), "{:?}", outcome.verdict);
}

/// The interactive `claude` profile reads no events; the print-mode auth failure still reads as
/// auth through its screen text (`"error":"authentication_failed"`).
#[test]
fn the_interactive_profile_reads_print_mode_auth_off_the_screen() {
    let capture = Capture::load("claude/b_print_streamjson_nocreds");
    let profile = profile("claude");
    let finish = Finish {
        completion: Completion::Marker,
        marker: "TASK_COMPLETE:capture",
        marker_required: true,
    };
    for (how, cuts) in chunkings(capture.raw.len()) {
        let outcome = run_attempt(&capture, &profile, finish, &cuts);
        assert!(
            outcome.stream.is_none(),
            "{how}: a screen profile has no stream facts"
        );
        assert_eq!(
            outcome.verdict.failure,
            Some(FailureType::Auth),
            "{how}: {:?}",
            outcome.verdict
        );
        let evidence = outcome.verdict.evidence.unwrap_or_default();
        assert!(
            evidence.contains(r#""error":"authentication_failed""#),
            "{how}: evidence {evidence:?}"
        );
    }
}

/// The same capture through `claude-json` and through a profile that is `claude-json` with its
/// screen texts removed gives auth both ways: the events alone decide.
#[test]
fn the_events_alone_decide_without_the_profiles_texts() {
    let text = r#"
[profiles.bare-json]
command = ["claude", "-p", "{rendered_prompt}", "--output-format", "stream-json", "--verbose"]
output = "stream-json"
"#;
    let set = ProfileSet::build(&built_in_profile_texts(), Some(text))
        .unwrap_or_else(|e| panic!("{e:#?}"));
    let bare = set.get("bare-json").unwrap().clone();
    assert!(bare.auth.is_empty() && bare.quota.is_empty() && bare.transient.is_empty());
    for (name, failure) in [
        ("claude/b_print_streamjson_nocreds", FailureType::Auth),
        ("claude/p_quota429_streamjson", FailureType::Quota),
        ("claude/p_tool_streamjson", FailureType::PermissionBlocked),
    ] {
        let capture = Capture::load(name);
        let outcome = run_attempt(&capture, &bare, BY_RESULT, &[]);
        assert_eq!(
            outcome.verdict.failure,
            Some(failure),
            "{name}: {:?}",
            outcome.verdict
        );
    }
}
