//! What the agent reported besides its verdict: its events, its signal file and its Claude
//! transcript, read at the end of an attempt and written into its result.

use serde_json::{Map, Value, json};

use super::attempts::LiveAttempt;
use super::gather::TranscriptJob;
use super::tasks::Tasks;
use crate::core::attempt::Attempt;

use crate::run::launch::LaunchPlan;
use crate::run::outcome::{AttemptFacts, TranscriptRef, agent_facts};

/// What the agent reported besides its verdict: its events, its signal file, its transcript.
#[derive(Default)]
pub(super) struct AgentReport {
    pub(super) stream: Option<crate::core::stream::StreamFacts>,
    pub(super) signal: Option<
        std::result::Result<
            crate::core::signal_file::SignalFile,
            crate::core::signal_file::SignalFileError,
        >,
    >,
    /// The transcript's path (relative to the tasks file where below it) and facts.
    pub(super) transcript: Option<(String, crate::core::transcript::TranscriptFacts)>,
}

impl LiveAttempt {
    /// Where a Claude session's transcript is looked for, when the profile leaves them; the
    /// worker looks (`gather`).
    pub(super) fn transcript_job(&self, tasks: &Tasks) -> Option<TranscriptJob> {
        let wants_transcript = tasks
            .profiles
            .get(&tasks.store.file().tasks()[self.task].agent)
            .is_some_and(|p| p.transcripts.is_some());
        if !wants_transcript {
            return None;
        }
        let session = self
            .attempt
            .stream_facts()
            .and_then(|s| s.session_id.clone())
            .or_else(|| self.plan.resumed_session.clone());
        Some(TranscriptJob {
            env: self.plan.env.clone(),
            cwd: self.plan.cwd.clone(),
            session,
            since: std::time::SystemTime::from(self.started_at),
            base_dir: tasks.store.base_dir().to_path_buf(),
        })
    }
}

impl AgentReport {
    /// What the agent reported: its events and signal file (from the attempt), and the
    /// transcript the worker found.
    pub(super) fn of(
        attempt: &Attempt,
        transcript: Option<(String, crate::core::transcript::TranscriptFacts)>,
    ) -> AgentReport {
        AgentReport {
            stream: attempt.stream_facts().cloned(),
            signal: attempt.signal().cloned(),
            transcript,
        }
    }

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
