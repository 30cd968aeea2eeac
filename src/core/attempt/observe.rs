//! What the agent shows: its output fed to the screen (query replies, the bell, the marker), a
//! structured agent's stream, its own log and its signal file, and the errors on screen that do
//! not heal by waiting. A child of `attempt` so it shares its state; it decides nothing about
//! prompts (`prompts`) or how the attempt ends (`end`).

use std::time::Duration;

use super::{Attempt, Effect, InputReason, Note, PROMPT_SETTLE, Phase};
use crate::core::classify::EndCause;
use crate::core::detect;
use crate::core::marker::CONTEXT_ROWS;
use crate::core::screen::Snapshot;
use crate::core::signal_file::{Signal, SignalFile, SignalFileError};
use crate::core::stream;
use crate::core::task::{Completion, FailureType};

impl Attempt {
    pub(super) fn on_signal_file(
        &mut self,
        read: Result<SignalFile, SignalFileError>,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        if self.setup.completion != Completion::SignalFile {
            return;
        }
        let valid = read.is_ok();
        if let Ok(file) = &read {
            let already = matches!(&self.signal, Some(Ok(old)) if old == file);
            if !already {
                effects.push(Effect::Note(Note::SignalRead {
                    status: signal_status(&file.signal).to_string(),
                }));
            }
        }
        self.signal = Some(read);
        if valid {
            self.begin_ending(EndCause::AfterSignal, now, effects);
        }
    }

    pub(super) fn feed_stream(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let Some(parser) = self.stream.as_mut() else {
            return;
        };
        let had_result = parser.facts().result.is_some();
        parser.feed(bytes);
        if had_result {
            return;
        }
        if let Some((failure, evidence)) = stream::hopeless_retry(parser.facts()) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
            return;
        }
        if let Some(result) = &parser.facts().result {
            effects.push(Effect::Note(Note::ResultEvent {
                success: result.success,
            }));
            // herd's ACP client's record of its answers is exact (the request as data, the
            // option sent): it replaces what the screen read of the dialogs it drew.
            if let Some(client) = &parser.facts().client_approvals {
                let client = with_api_answers(client, &self.approvals);
                for approval in &client {
                    effects.push(Effect::Note(Note::Approval(Box::new(approval.clone()))));
                }
                self.approvals = client;
            }
            if self.setup.completion != Completion::SignalFile {
                self.begin_ending(EndCause::AfterResult, now, effects);
            }
        }
    }

    /// The agent's log grew: a request it keeps retrying in vain (a rejected key from the first
    /// retry, a spent quota from the second in a row, server errors for `SERVER_ERROR_PATIENCE`)
    /// ends the attempt now; refusals are kept for the verdict.
    pub(super) fn on_agent_log(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let Some(parser) = self.agent_log.as_mut() else {
            return;
        };
        parser.feed(bytes);
        if self.marker_seen {
            return;
        }
        if let Some((failure, evidence)) = self.log_retries.check(&parser.facts().retries, now) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
        }
    }

    pub(super) fn on_output(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let fed = self.screen.feed_counted(bytes);
        if !fed.replies.is_empty() {
            effects.push(Effect::Write {
                bytes: fed.replies,
                reason: InputReason::QueryReply,
            });
        }
        if fed.bell {
            effects.push(Effect::Note(Note::Bell));
        }
        self.feed_stream(bytes, now, effects);
        // A marker line that scrolled off in this burst: the rows above it are read only when
        // one of the scrolled rows has the marker's text.
        if fed.scrolled > 0 && self.watches_screen_marker() && !self.marker_seen {
            let (scrolled, _) = self.screen.scrolled_rows(fed.scrolled, 0);
            if self.watch.may_be_on(&scrolled) {
                let (rows, context) = self.screen.scrolled_rows(fed.scrolled, CONTEXT_ROWS);
                if self.watch.find(&rows, context).is_some() {
                    self.saw_marker(now, effects);
                }
            }
        }
        self.after_screen_change(now, effects);
    }

    /// The screen changed (output, a resize): the attempt's snapshot is brought up to date
    /// (only the rows the output can have written are read again), and when its text or the
    /// cursor's row changed every detector reads that one snapshot (a prompt anchored at the
    /// cursor shows when the cursor comes back to it, even with no text changed).
    pub(super) fn after_screen_change(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        let mut snapshot = std::mem::take(&mut self.snapshot);
        let changed = self.screen.update(&mut snapshot);
        if !changed {
            self.snapshot = snapshot;
            return;
        }
        self.last_change = now;
        self.ready = detect::is_ready(&self.setup.profile, &snapshot.text);
        self.busy = detect::is_busy_rows(&self.setup.profile, &snapshot.rows);
        // Only a screen with the marker's text on it can show the marker line: the rows above
        // it, read to tell an echo of the prompt, are taken from the history only then.
        if self.watches_screen_marker() && !self.marker_seen && self.watch.may_be_on(&snapshot.rows)
        {
            let (rows, history) = snapshot.with_history(self.screen.history_tail(CONTEXT_ROWS));
            if self.watch.find(&rows, history).is_some() {
                self.saw_marker(now, effects);
            }
        }
        self.update_prompts(&snapshot, now, effects);
        self.judge_screen_retries(&snapshot, now, effects);
        self.snapshot = snapshot;
    }

    /// Errors that do not heal by waiting, on screen: the agent waits for input below an auth
    /// or quota text (the idle end comes at once: waiting `idle_sec` would give the same verdict,
    /// and a spinner left running beside a question would keep it from ever coming); or it
    /// retries a failed request beside the cause (the profile's `retrying` texts): auth, quota
    /// or lasting server errors end the attempt now.
    pub(super) fn judge_screen_retries(
        &mut self,
        snapshot: &Snapshot,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let profile = &self.setup.profile;
        if self.marker_seen || self.phase != Phase::Running {
            return;
        }
        let hopeless_idle = self.could_be_idle() && {
            let tail = detect::tail_rows(&snapshot.rows, profile.tail_rows);
            crate::core::classify::failure_text(&tail, profile)
                .is_some_and(|(f, _)| matches!(f, FailureType::Auth | FailureType::Quota))
        };
        if !hopeless_idle {
            self.hopeless_idle_at = None;
        } else if self.hopeless_idle_at.is_none() {
            self.hopeless_idle_at = Some(now + PROMPT_SETTLE);
        }
        if profile.retrying.is_empty() {
            return;
        }
        let (rows, _) = snapshot.with_history(self.screen.history_tail(profile.tail_rows));
        let tail = detect::tail_rows(&rows, profile.tail_rows);
        if let Some((failure, evidence)) = self.screen_retries.check(profile, &tail, now) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
        }
    }

    /// SPEC: success is the marker AND a normal end. An interactive agent (a profile with exit
    /// keys) is ended by herd once its turn is over (see `on_tick`); any other agent is left to
    /// finish by itself, up to the timeout.
    pub(super) fn saw_marker(&mut self, _now: Duration, effects: &mut Vec<Effect>) {
        self.marker_seen = true;
        effects.push(Effect::Note(Note::MarkerSeen));
    }
}

/// The signal's `status` as the agent wrote it.
pub fn signal_status(signal: &Signal) -> &'static str {
    match signal {
        Signal::Done { .. } => "done",
        Signal::Questions { .. } => "questions",
        Signal::Error { .. } => "error",
    }
}

/// The client's record of its answers, where the operator's answers given through the control
/// socket say so: the client saw keys on its dialog and cannot tell; herd's screen records of
/// the same dialogs, in the same order, can (`AnsweredBy::Api`).
fn with_api_answers(
    client: &[crate::core::approval::Approval],
    screen: &[crate::core::approval::Approval],
) -> Vec<crate::core::approval::Approval> {
    use crate::core::approval::AnsweredBy;
    let mut people = screen
        .iter()
        .filter(|a| a.by != AnsweredBy::Herd)
        .map(|a| a.by);
    client
        .iter()
        .map(|approval| {
            let mut approval = approval.clone();
            if approval.by == AnsweredBy::Operator && people.next() == Some(AnsweredBy::Api) {
                approval.by = AnsweredBy::Api;
            }
            approval
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::with_api_answers;
    use crate::core::approval::{AnsweredBy, Approval, Channel};

    fn answer(by: AnsweredBy, channel: Channel) -> Approval {
        Approval {
            at: Duration::ZERO,
            by,
            channel,
            rule: "acp".into(),
            keys: String::new(),
            request: None,
            decision: None,
            option: None,
            title: None,
        }
    }

    #[test]
    fn the_clients_operator_answers_keep_who_gave_them() {
        use AnsweredBy::{Api, Herd, Operator};
        let screen = [
            answer(Api, Channel::Screen),
            answer(Operator, Channel::Screen),
        ];
        let client = [
            answer(Herd, Channel::Acp),
            answer(Operator, Channel::Acp),
            answer(Operator, Channel::Acp),
            answer(Operator, Channel::Acp),
        ];
        let by: Vec<AnsweredBy> = with_api_answers(&client, &screen)
            .iter()
            .map(|a| a.by)
            .collect();
        assert_eq!(by, [Herd, Api, Operator, Operator]);
    }
}
