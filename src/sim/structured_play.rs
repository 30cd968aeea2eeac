//! Plays the steps that produce structured output: stream-json lines, raw bytes, the signal file.
//! Placeholders are filled before encoding, so any text comes out escaped.

use std::io::{self, Write};

use super::player::Player;
use super::signal_file;
use super::stream_json::StreamSession;
use super::structured::{Denial, JsonError, JsonInit, JsonResult, JsonSay, JsonTool, Signal};

impl<W: Write> Player<W> {
    pub(super) fn json_init(&mut self, init: &JsonInit) -> io::Result<()> {
        let init = JsonInit {
            model: self.fill(&init.model),
        };
        let line = self.stream.init(&init);
        self.print_json_lines(&[line])
    }

    pub(super) fn json_say(&mut self, say: &JsonSay) -> io::Result<()> {
        let line = self.stream.say(&self.fill(&say.text));
        self.print_json_lines(&[line])
    }

    pub(super) fn json_tool(&mut self, tool: &JsonTool) -> io::Result<()> {
        let tool = JsonTool {
            name: self.fill(&tool.name),
            command: self.fill(&tool.command),
            description: tool.description.as_deref().map(|text| self.fill(text)),
            result: self.fill(&tool.result),
            is_error: tool.is_error,
        };
        let lines = self.stream.tool(&tool, &timestamp_now());
        self.print_json_lines(&lines)
    }

    pub(super) fn json_result(&mut self, result: &JsonResult) -> io::Result<()> {
        let result = JsonResult {
            text: self.fill(&result.text),
            subtype: self.fill(&result.subtype),
            denials: result
                .denials
                .iter()
                .map(|denial| Denial {
                    tool: self.fill(&denial.tool),
                    command: self.fill(&denial.command),
                })
                .collect(),
            assistant_error: result
                .assistant_error
                .as_deref()
                .map(|text| self.fill(text)),
            ..result.clone()
        };
        let duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let lines = self.stream.result(&result, duration_ms);
        self.print_json_lines(&lines)
    }

    pub(super) fn json_error(&mut self, error: &JsonError) -> io::Result<()> {
        let error = JsonError {
            kind: self.fill(&error.kind),
            message: self.fill(&error.message),
        };
        self.print_json_lines(&[StreamSession::error(&error)])
    }

    /// The bytes exactly as written in the scenario.
    pub(super) fn raw(&mut self, bytes: &str) -> io::Result<()> {
        self.terminal.clear()?;
        self.terminal.write_raw(bytes)
    }

    /// Writes the signal file, or says on the screen why not and goes on.
    pub(super) fn signal(&mut self, signal: &Signal) -> io::Result<()> {
        let filled = Signal {
            status: signal.status,
            result: signal.result.as_deref().map(|text| self.fill(text)),
            questions: signal
                .questions
                .as_ref()
                .map(|questions| questions.iter().map(|text| self.fill(text)).collect()),
            error: signal.error.as_deref().map(|text| self.fill(text)),
            session_id: signal.session_id.as_deref().map(|text| self.fill(text)),
            text: signal.text.as_deref().map(|text| self.fill(text)),
        };
        let content = signal_file::content(&filled, &self.context.session_id);
        let problem = match &self.context.signal_file {
            None => Some("herd sim: HERD_SIGNAL_FILE is not set".to_string()),
            Some(path) => signal_file::write_atomically(path, &content)
                .err()
                .map(|error| {
                    format!(
                        "herd sim: cannot write the signal file {}: {error}",
                        path.display()
                    )
                }),
        };
        match problem {
            Some(message) => self.terminal.commit(&[message]),
            None => Ok(()),
        }
    }

    /// Complete lines, each ended by `\n` (a PTY shows `\r\n`).
    fn print_json_lines(&mut self, lines: &[String]) -> io::Result<()> {
        self.terminal.clear()?;
        let mut text = String::new();
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        self.terminal.write_raw(&text)
    }
}

/// Now, as tool results carry it: `2026-11-21T00:15:06.577Z`.
fn timestamp_now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
