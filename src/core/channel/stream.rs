//! A structured agent's stream (`core::stream`) as a channel: its JSON events parsed as they
//! come, a request it retries in vain, and its final result, which ends the turn. What the
//! result means for the attempt (its end, herd's ACP client's record) is the attempt's.

use crate::core::classify::EndCause;
use crate::core::wire::stream::{self, StreamFacts, StreamParser};

/// A structured agent's events, parsed from its output.
#[derive(Debug, Default)]
pub struct StreamChannel {
    parser: StreamParser,
}

/// What one piece of output told, once: the first of these ends the stream's news.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamNews {
    Nothing,
    /// The agent retries a request in vain (a rejected key, a spent quota).
    HopelessRetry(EndCause),
    /// The final result event came.
    Result {
        success: bool,
    },
}

impl StreamChannel {
    /// The agent's events so far.
    pub fn facts(&self) -> &StreamFacts {
        self.parser.facts()
    }

    /// More of the agent's output; nothing new once its result came.
    pub fn feed(&mut self, bytes: &[u8]) -> StreamNews {
        let had_result = self.parser.facts().result.is_some();
        self.parser.feed(bytes);
        if had_result {
            return StreamNews::Nothing;
        }
        if let Some((failure, evidence)) = stream::hopeless_retry(self.parser.facts()) {
            return StreamNews::HopelessRetry(EndCause::HopelessRetry { failure, evidence });
        }
        match &self.parser.facts().result {
            Some(result) => StreamNews::Result {
                success: result.success,
            },
            None => StreamNews::Nothing,
        }
    }

    /// The agent exited: its last partial line is read, and whether its result has `marker`.
    pub fn finish(&mut self, marker: &str) -> bool {
        self.parser.finish();
        stream::result_has_marker(self.parser.facts(), marker)
    }
}
