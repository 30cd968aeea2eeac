//! A simulator scenario: ordered steps, each one action plus optional attempt and resume
//! conditions. Text may use `{marker}`, `{prompt}`, `{task_id}`, `{attempt}`, `{session_id}`,
//! `{dir}`, `{cwd}`, `{row}` and `{col}`.

use serde::Deserialize;

use super::structured::{JsonError, JsonInit, JsonResult, JsonSay, JsonTool, Signal};

/// A parsed scenario, ready to play.
#[derive(Debug, Clone)]
pub(super) struct Scenario {
    pub description: String,
    pub steps: Vec<Step>,
}

/// One step: an action, played only when the attempt and resume conditions hold.
#[derive(Debug, Clone)]
pub(super) struct Step {
    pub action: Action,
    pub attempts: AttemptRange,
    /// `when_resumed = true`: only when resuming (`--resume`); `false`: only when not.
    pub resumed: Option<bool>,
}

impl Step {
    /// Whether this step plays on `attempt` of a run that is `resumed` or not.
    pub(super) fn plays(&self, attempt: u32, resumed: bool) -> bool {
        self.attempts.includes(attempt) && self.resumed.is_none_or(|wanted| wanted == resumed)
    }
}

/// Which attempts (`HERD_ATTEMPT`, 1-based) play a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct AttemptRange {
    /// `when_attempt_below = N`: only attempts 1..N.
    pub below: Option<u32>,
    /// `when_attempt_at_least = N`: only attempts N and later.
    pub at_least: Option<u32>,
}

impl AttemptRange {
    pub(super) fn includes(&self, attempt: u32) -> bool {
        self.below.is_none_or(|below| attempt < below)
            && self.at_least.is_none_or(|at_least| attempt >= at_least)
    }
}

/// Whose look a step imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub(super) enum Style {
    #[default]
    Claude,
    Codex,
    Plain,
}

/// What a step does. The TOML key of the step names the action.
#[derive(Debug, Clone)]
pub(super) enum Action {
    /// `title = "text"`: set the terminal title (OSC 0).
    Title(String),
    /// `claude_header = {}`: the `╭─── Claude Code vX ───╮` welcome box; hides the cursor.
    ClaudeHeader(ClaudeHeader),
    /// `codex_header = {}`: the `>_ OpenAI Codex (vX)` banner.
    CodexHeader(CodexHeader),
    /// `echo = "claude"`: the prompt (`--prompt`) echoed as the user's message, hard-wrapped.
    Echo(Echo),
    /// `line = "text"`: plain output lines (a multi-line string gives several).
    Line(Line),
    /// `say = "text"`: an assistant message, `● text` wrapped with a hanging indent.
    Say(Say),
    /// `tool = { name = "Bash", input = "ls" }`: a finished tool call, `● Bash(ls)` / `⎿  Done`.
    Tool(Tool),
    /// `marker = "claude"`: the completion marker as the agent's own output line.
    Marker(MarkerLine),
    /// `spinner = { text = "Thinking…", seconds = 1 }`: a status line redrawn in place.
    Spinner(Spinner),
    /// `retry = { reason = "API error", delays = [3, 1] }`: Claude's retry countdown.
    Retry(Retry),
    /// `query = { cursor_position = true }`: ask the terminal and wait for its answers.
    Query(Query),
    /// `dialog = { style = "claude", command = "..." }`: a permission menu waiting for a key.
    Dialog(Dialog),
    /// `press = { text = "Press 1 to continue", key = "1" }`: a one-line question for one key.
    Press(Press),
    /// `idle = "claude"`: wait at the input prompt until `/exit`, Ctrl-C twice or Ctrl-D.
    Idle(Idle),
    /// `sleep = 1.5`: seconds.
    Sleep(f64),
    /// `hang = true`: do nothing, forever.
    Hang,
    /// `exit = 1`: end the process with this code.
    Exit(i32),
    /// `ignore_signals = true`: from now on SIGTERM, SIGHUP and SIGINT do nothing.
    IgnoreSignals,
    /// `spawn = { scenario = "term_ignoring_child", count = 2 }`: children in the same process
    /// group, never waited for.
    Spawn(Spawn),
    /// `flood = { megabytes = 5 }`: varied, coloured lines as fast as possible.
    Flood(Flood),
    /// `json_init = {}`: the stream-json `system`/`init` event.
    JsonInit(JsonInit),
    /// `json_say = "text"`: a stream-json assistant text event.
    JsonSay(JsonSay),
    /// `json_tool = { command = "cargo test", result = "ok" }`: tool_use + tool_result events.
    JsonTool(JsonTool),
    /// `json_result = { text = "Done." }`: the stream-json `result` event.
    JsonResult(JsonResult),
    /// `json_error = { type = "overloaded_error", message = "Overloaded" }`: an error line.
    JsonError(JsonError),
    /// `raw = "text"`: exactly these bytes, no newline, no placeholders.
    Raw(String),
    /// `signal = { status = "done", result = "..." }`: write `$HERD_SIGNAL_FILE`.
    Signal(Signal),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClaudeHeader {
    #[serde(default = "default_claude_version")]
    pub version: String,
    #[serde(default = "default_claude_model")]
    pub model: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CodexHeader {
    #[serde(default = "default_codex_version")]
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Echo {
    #[serde(default)]
    pub style: Style,
    /// Echo this instead of the `--prompt` text.
    pub text: Option<String>,
    /// Break the rows so every copy of the marker stands alone on its own (indented) row.
    #[serde(default)]
    pub isolate_marker: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Line {
    pub text: String,
    /// A 256-colour palette index for the text.
    pub color: Option<u8>,
    #[serde(default)]
    pub bold: bool,
    #[serde(default)]
    pub dim: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Say {
    pub text: String,
    #[serde(default)]
    pub style: Style,
    /// The bullet's colour (Claude: 231 normal, 220 API errors, 211 failures).
    pub bullet_color: Option<u8>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Tool {
    #[serde(default = "default_tool_name")]
    pub name: String,
    pub input: String,
    #[serde(default = "default_tool_result")]
    pub result: String,
    #[serde(default)]
    pub style: Style,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MarkerLine {
    #[serde(default)]
    pub style: Style,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Spinner {
    #[serde(default = "default_spinner_text")]
    pub text: String,
    /// How long it spins; without it, forever.
    pub seconds: Option<f64>,
    #[serde(default)]
    pub style: Style,
    /// A line left behind when it stops (`Crunched for 1s`); `{seconds}` is the time spun.
    pub done: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Retry {
    #[serde(default = "default_retry_reason")]
    pub reason: String,
    /// Seconds counted down before each retry; one entry per attempt shown.
    pub delays: Vec<u32>,
    #[serde(default = "default_retry_max")]
    pub max_attempts: u32,
    #[serde(default = "default_one")]
    pub first_attempt: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Query {
    /// Send `CSI 6n` and wait for `ESC [ row ; col R`.
    #[serde(default)]
    pub cursor_position: bool,
    /// Send `CSI c` and wait for `ESC [ ? ... c`.
    #[serde(default)]
    pub device_attributes: bool,
    #[serde(default = "default_query_timeout")]
    pub timeout: f64,
}

/// What a dialog's "No" answer leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub(super) enum OnReject {
    /// Go on with the next step.
    Continue,
    /// Skip to the next `idle` step (exit 0 when there is none), leaving out e.g. the marker.
    #[default]
    Idle,
    /// End the process with `reject_exit_code`.
    Exit,
}

/// How many times a dialog comes back after being answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Repeat {
    Times(u32),
    Forever,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Dialog {
    #[serde(default)]
    pub style: Style,
    pub command: String,
    #[serde(default = "default_dialog_description")]
    pub description: String,
    #[serde(default = "default_tool_name")]
    pub tool: String,
    /// Option 2's text instead of the CLI's own.
    pub dont_ask: Option<String>,
    #[serde(default)]
    pub on_reject: OnReject,
    #[serde(default = "default_one_i32")]
    pub reject_exit_code: i32,
    /// `repeat = 3` or `repeat = "forever"`: shown again after every answer.
    #[serde(default, deserialize_with = "deserialize_repeat")]
    pub repeat: Option<Repeat>,
    /// Seconds of work between an answer and the dialog's next appearance.
    #[serde(default = "default_gap")]
    pub gap: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Press {
    pub text: String,
    pub key: char,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Idle {
    #[serde(default)]
    pub style: Style,
    /// Text at the right end of the footer (`Not logged in · Run /login`).
    pub notice: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Spawn {
    pub scenario: String,
    #[serde(default = "default_one")]
    pub count: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Flood {
    pub megabytes: f64,
}

fn deserialize_repeat<'de, D>(deserializer: D) -> Result<Option<Repeat>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Spelled {
        Count(u32),
        Word(String),
    }
    match Spelled::deserialize(deserializer)? {
        Spelled::Count(count) => Ok(Some(Repeat::Times(count))),
        Spelled::Word(word) if word == "forever" => Ok(Some(Repeat::Forever)),
        Spelled::Word(word) => Err(serde::de::Error::custom(format!(
            "repeat must be a number or \"forever\", not {word:?}"
        ))),
    }
}

fn default_claude_version() -> String {
    "2.1.197".to_string()
}
fn default_claude_model() -> String {
    "Opus 4.8 (1M context) · API Usage Billing".to_string()
}
fn default_codex_version() -> String {
    "0.169.0".to_string()
}
fn default_tool_name() -> String {
    "Bash".to_string()
}
fn default_tool_result() -> String {
    "Done".to_string()
}
fn default_spinner_text() -> String {
    "Thinking…".to_string()
}
fn default_retry_reason() -> String {
    "API error".to_string()
}
fn default_retry_max() -> u32 {
    10
}
fn default_one() -> u32 {
    1
}
fn default_one_i32() -> i32 {
    1
}
fn default_query_timeout() -> f64 {
    10.0
}
fn default_dialog_description() -> String {
    "Run a command".to_string()
}
fn default_gap() -> f64 {
    0.5
}
