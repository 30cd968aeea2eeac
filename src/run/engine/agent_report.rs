//! What the agent reported besides its verdict: its events, its signal file and its Claude
//! transcript, read at the end of an attempt and written into its result.

use serde_json::{Map, Value, json};

use super::{Engine, LiveAttempt};

use crate::run::launch::LaunchPlan;
use crate::run::outcome::{self, AttemptFacts, TranscriptRef, agent_facts};

/// What the agent reported besides its verdict: its events, its signal file, its transcript.
#[derive(Default)]
pub(super) struct AgentReport {
    pub(super) stream: Option<crate::core::stream::StreamFacts>,
    pub(super) signal: Option<std::result::Result<crate::core::signal_file::SignalFile, String>>,
    /// The transcript's path (relative to the tasks file where below it) and facts.
    pub(super) transcript: Option<(String, crate::core::transcript::TranscriptFacts)>,
}

impl Engine {
    /// What the agent reported: its events and signal file (from the attempt), and a Claude
    /// session's transcript when the profile leaves them.
    pub(super) fn agent_report(&self, live: &LiveAttempt) -> AgentReport {
        let stream = live.attempt.stream_facts().cloned();
        let signal = live.attempt.signal().cloned();
        let wants_transcript = self
            .profiles
            .get(&self.store.file().tasks()[live.task].agent)
            .is_some_and(|p| p.transcripts.is_some());
        let transcript = wants_transcript
            .then(|| {
                let session = stream
                    .as_ref()
                    .and_then(|s| s.session_id.clone())
                    .or_else(|| live.plan.resumed_session.clone());
                let since = std::time::SystemTime::from(live.started_at);
                let path = crate::run::transcripts::find(
                    &live.plan.env,
                    &live.plan.cwd,
                    session.as_deref(),
                    since,
                )?;
                let facts = crate::run::transcripts::read(&path)?;
                Some((outcome::relative_to(&path, self.store.base_dir()), facts))
            })
            .flatten();
        AgentReport {
            stream,
            signal,
            transcript,
        }
    }
}

impl AgentReport {
    /// The agent's own report as fields of `result`: structured fields, the signal file, the
    /// transcript's summary and the session to resume.
    pub(super) fn result_fields(&self, plan: &LaunchPlan) -> Map<String, Value> {
        let mut result = Map::new();
        if let Some(stream) = &self.stream {
            agent_facts::stream_result_fields(stream, &mut result);
        }
        if let Some(signal) = &self.signal {
            agent_facts::signal_result_fields(signal, &mut result);
        }
        if let Some((path, transcript)) = &self.transcript {
            result.insert(
                "transcript".into(),
                agent_facts::transcript_summary(path, transcript),
            );
            if let Some(id) = &transcript.session_id {
                result.entry("session_id").or_insert_with(|| json!(id));
            }
        }
        if let Some(id) = &plan.resumed_session {
            result.entry("session_id").or_insert_with(|| json!(id));
            result.insert("resumed".into(), json!(true));
        }
        result
    }

    /// The task's cost over all attempts: `previous` (its result so far) and this attempt's.
    pub(super) fn total_cost(&self, previous: Option<&Value>) -> Option<f64> {
        let cost = self.stream.as_ref().and_then(|s| s.cost_usd);
        agent_facts::total_cost(previous, cost).map(|total| (total * 1e6).round() / 1e6)
    }

    /// The agent's report into the attempt's facts: its events, its signal file and its
    /// transcript whole.
    pub(super) fn fill_facts<'a>(&'a self, facts: &mut AttemptFacts<'a>) {
        facts.stream = self.stream.as_ref();
        facts.signal = self.signal.as_ref().map(|signal| {
            let mut fields = Map::new();
            agent_facts::signal_result_fields(signal, &mut fields);
            fields.remove("signal").unwrap_or_default()
        });
        facts.transcript = self
            .transcript
            .as_ref()
            .map(|(path, facts)| TranscriptRef { path, facts });
    }
}
