//! An attempt explained from its recording and facts file (a `.cast`, or a task's folder for
//! its latest attempt): the timeline `replay::explain` makes of them, a line each, for
//! `herd explain` and the MCP server's `explain`.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use crate::core::failure_context::headline_of;
use crate::replay::cast::{Step, read_header};
use crate::replay::explain::{AttemptRecord, explain as explain_record};
use crate::replay::print::resolve_cast;
use crate::run::inputs::load_profiles;

/// Why an attempt cannot be explained.
#[derive(Debug, Error)]
pub enum ExplainError {
    /// The recording cannot be found or read (the path as given, or the `.cast` it led to).
    #[error("{}: {cause}", path.display())]
    Recording { path: PathBuf, cause: String },
    /// The profiles file cannot be used: one line per problem.
    #[error("{}", problems.join("\n"))]
    Profiles { problems: Vec<String> },
}

/// One attempt explained: the recording read and the explanation, a line each.
#[derive(Debug, Clone)]
pub struct Explained {
    pub cast: PathBuf,
    pub lines: Vec<String>,
}

/// The explanation of the attempt recorded at `path` (a `.cast`, or a task's folder for its
/// latest attempt), with the profiles of `profiles` on top of the built-in ones and `agent`'s
/// profile in place of the one the attempt names.
pub fn explain_attempt(
    path: &Path,
    profiles: Option<&Path>,
    agent: Option<&str>,
) -> Result<Explained, ExplainError> {
    let unreadable = |path: &Path, cause: String| ExplainError::Recording {
        path: path.to_path_buf(),
        cause,
    };
    let cast = resolve_cast(path).map_err(|error| unreadable(path, error.to_string()))?;
    let file = std::fs::File::open(&cast)
        .map_err(|error| unreadable(&cast, format!("cannot read the recording: {error}")))?;
    let (header, mut problems, mut reader) =
        read_header(BufReader::new(file)).map_err(|error| unreadable(&cast, error.to_string()))?;
    let mut events = Vec::new();
    while let Some(step) = reader
        .next_step()
        .map_err(|error| unreadable(&cast, error.to_string()))?
    {
        match step {
            Step::Event(event) => events.push(event),
            Step::Problem(problem) => problems.push(problem),
        }
    }
    let facts = read_facts(&cast.with_extension("json"));
    let profiles =
        load_profiles(profiles).map_err(|problems| ExplainError::Profiles { problems })?;
    let recorded_agent = facts
        .as_ref()
        .and_then(|f| f.get("agent"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let profile = agent
        .or(recorded_agent.as_deref())
        .and_then(|name| profiles.get(name));
    let errors = read_facts(&cast.with_extension("errors.json"));
    let mut lines = explain_record(&AttemptRecord {
        header: &header,
        events: &events,
        facts: facts.as_ref(),
        profile,
        failure_cause: errors.as_ref().and_then(headline),
    });
    // An ACP attempt's session, from its protocol log beside the recording.
    let acp_log = cast.with_extension("acp.jsonl");
    if let Ok(text) = std::fs::read_to_string(&acp_log) {
        lines.push(format!("ACP session ({}):", acp_log.display()));
        lines.extend(
            crate::replay::explain_acp::explain_acp(&text)
                .into_iter()
                .map(|line| format!("  {line}")),
        );
    }
    lines.extend(
        problems
            .iter()
            .map(|problem| format!("recording problem: {problem}")),
    );
    Ok(Explained { cast, lines })
}

/// The headline of an attempt's `errors.json` (its `lines`, each with `text` and `score`).
fn headline(errors: &Value) -> Option<&str> {
    let lines = errors.get("lines")?.as_array()?;
    headline_of(lines.iter().filter_map(|line| {
        let text = line.get("text")?.as_str()?;
        let score = u8::try_from(line.get("score")?.as_u64()?).ok()?;
        Some((text, score))
    }))
}

/// The attempt's facts file beside the recording, when it is there and is JSON.
fn read_facts(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}
