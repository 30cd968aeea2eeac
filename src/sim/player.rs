//! Plays a scenario's steps in order against a [`Terminal`] and an [`Input`]. Interactive steps
//! live in `interact`, structured output in `structured_play`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::draw::{self, Region, claude, codex};
use super::keys::{Input, InputEvent};
use super::scenario::{
    Action, ClaudeHeader, CodexHeader, Echo, MarkerLine, Query, Retry, Say, Scenario, Spawn,
    Spinner, Style, Tool,
};
use super::stream_json::StreamSession;
use super::terminal::Terminal;
use super::text::Placeholders;

/// How often a spinner is redrawn.
const FRAME: Duration = Duration::from_millis(100);
/// Bytes written to the terminal per write while flooding.
const FLOOD_CHUNK: usize = 64 * 1024;

/// What the simulated agent knows about its task.
#[derive(Debug, Clone)]
pub(super) struct Context {
    pub marker: String,
    /// Whether the prompt asks for the marker: like a model, the simulator prints it only when
    /// told to (a resumed session was told before).
    pub marker_asked: bool,
    pub prompt: String,
    pub attempt: u32,
    /// The session this run continues (`--resume`) or starts.
    pub session_id: String,
    /// Whether the run resumes an earlier session.
    pub resumed: bool,
    /// Where `signal` steps write (`$HERD_SIGNAL_FILE`).
    pub signal_file: Option<PathBuf>,
    pub cwd: String,
    pub placeholders: Placeholders,
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ending {
    Exit(i32),
    /// An error message for stderr, then this exit code.
    Failed {
        code: i32,
        message: String,
    },
}

/// What comes after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Flow {
    Next,
    /// Leave out the steps up to the next `idle`.
    SkipToIdle,
    End(Ending),
}

/// Plays scenarios.
pub(super) struct Player<W: Write> {
    pub(super) terminal: Terminal<W>,
    pub(super) input: Input,
    pub(super) context: Context,
    /// The print-mode event stream of `json_*` steps.
    pub(super) stream: StreamSession,
    /// When playing began; stream results report the time since.
    pub(super) started: Instant,
    children: Vec<Child>,
    /// Flags set by ignored signals; kept so the registrations stay meaningful.
    ignored_signals: Vec<Arc<AtomicBool>>,
}

impl<W: Write> Player<W> {
    pub(super) fn new(terminal: Terminal<W>, input: Input, context: Context) -> Player<W> {
        let stream = StreamSession::new(&context.session_id, &context.cwd);
        Player {
            terminal,
            input,
            context,
            stream,
            started: Instant::now(),
            children: Vec::new(),
            ignored_signals: Vec::new(),
        }
    }

    /// Plays every step meant for this attempt; reaching the end is exit code 0.
    pub(super) fn play(&mut self, scenario: &Scenario) -> io::Result<Ending> {
        self.started = Instant::now();
        let mut skipping_to_idle = false;
        for step in &scenario.steps {
            if !step.plays(self.context.attempt, self.context.resumed) {
                continue;
            }
            if skipping_to_idle && !matches!(step.action, Action::Idle(_)) {
                continue;
            }
            skipping_to_idle = false;
            match self.step(&step.action)? {
                Flow::Next => {}
                Flow::SkipToIdle => skipping_to_idle = true,
                Flow::End(ending) => return Ok(ending),
            }
        }
        Ok(Ending::Exit(0))
    }

    /// Restores what the terminal shows to a normal state (cursor visible, below the region).
    pub(super) fn finish(&mut self) -> io::Result<()> {
        self.terminal.finish()
    }

    pub(super) fn fill(&self, template: &str) -> String {
        self.context.placeholders.fill(template)
    }

    fn step(&mut self, action: &Action) -> io::Result<Flow> {
        match action {
            Action::Title(title) => {
                let title = self.fill(title);
                self.terminal.write_raw(&format!("\x1b]0;{title}\x07"))?;
            }
            Action::ClaudeHeader(header) => self.claude_header(header)?,
            Action::CodexHeader(header) => self.codex_header(header)?,
            Action::Echo(echo) => self.echo_prompt(echo)?,
            Action::Line(line) => {
                let text = self.fill(&line.text);
                let width = self.terminal.width();
                let rows = draw::plain_lines(width, &text, line.color, line.bold, line.dim);
                self.terminal.commit(&rows)?;
            }
            Action::Say(say) => self.say(say)?,
            Action::Tool(tool) => self.tool_call(tool)?,
            Action::Marker(marker) if self.context.marker_asked => self.marker_line(marker)?,
            Action::Marker(_) => {}
            Action::Spinner(spinner) => self.spin(spinner)?,
            Action::Retry(retry) => self.retry(retry)?,
            Action::Query(query) => return self.query(query),
            Action::Dialog(dialog) => return self.dialog(dialog),
            Action::Press(press) => return self.press(press),
            Action::Idle(idle) => return self.idle(idle),
            Action::Sleep(seconds) => std::thread::sleep(Duration::from_secs_f64(*seconds)),
            Action::Hang => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
            Action::Exit(code) => return Ok(Flow::End(Ending::Exit(*code))),
            Action::IgnoreSignals => self.ignore_signals()?,
            Action::Spawn(spawn) => self.spawn(spawn)?,
            Action::Flood(flood) => self.flood(flood.megabytes)?,
            Action::JsonInit(init) => self.json_init(init)?,
            Action::JsonSay(say) => self.json_say(say)?,
            Action::JsonTool(tool) => self.json_tool(tool)?,
            Action::JsonResult(result) => self.json_result(result)?,
            Action::JsonError(error) => self.json_error(error)?,
            Action::Raw(bytes) => self.raw(bytes)?,
            Action::Signal(signal) => self.signal(signal)?,
        }
        Ok(Flow::Next)
    }

    /// Claude Code's welcome box, its title set and the cursor hidden.
    fn claude_header(&mut self, header: &ClaudeHeader) -> io::Result<()> {
        self.terminal.hide_cursor()?;
        self.terminal.write_raw("\x1b]0;✳ Claude Code\x07")?;
        let width = self.terminal.width();
        let rows = claude::header(width, &header.version, &header.model, &self.context.cwd);
        self.terminal.commit(&rows)
    }

    /// Codex's banner, drawn in synchronized updates from here on, the cursor hidden.
    fn codex_header(&mut self, header: &CodexHeader) -> io::Result<()> {
        self.terminal.set_synchronized(true);
        self.terminal.hide_cursor()?;
        let rows = codex::header(&header.version, &self.context.cwd);
        self.terminal.commit(&rows)
    }

    /// The prompt (or the step's text) echoed as the user's message.
    fn echo_prompt(&mut self, echo: &Echo) -> io::Result<()> {
        let width = self.terminal.width();
        let text = echo
            .text
            .as_deref()
            .map_or_else(|| self.context.prompt.clone(), |text| self.fill(text));
        let isolated = echo.isolate_marker.then_some(self.context.marker.as_str());
        let rows = match echo.style {
            Style::Claude => claude::echo(width, &text, isolated),
            Style::Codex => codex::echo(width, &text, isolated),
            Style::Plain => draw::plain_lines(width, &format!("> {text}"), None, false, false),
        };
        self.commit_block(echo.style, rows)
    }

    /// An assistant message.
    fn say(&mut self, say: &Say) -> io::Result<()> {
        let width = self.terminal.width();
        let text = self.fill(&say.text);
        let rows = match say.style {
            Style::Claude => claude::say(width, &text, say.bullet_color.unwrap_or(231)),
            Style::Codex => codex::say(width, &text),
            Style::Plain => draw::plain_lines(width, &text, say.bullet_color, false, false),
        };
        self.commit_block(say.style, rows)
    }

    /// A finished tool call and its result.
    fn tool_call(&mut self, tool: &Tool) -> io::Result<()> {
        let (input, result) = (self.fill(&tool.input), self.fill(&tool.result));
        let rows = match tool.style {
            Style::Claude => claude::tool(&tool.name, &input, &result),
            Style::Codex => codex::tool(&input, &result),
            Style::Plain => vec![format!("$ {input}"), result],
        };
        self.commit_block(tool.style, rows)
    }

    /// The completion marker as the agent's own output line.
    fn marker_line(&mut self, marker: &MarkerLine) -> io::Result<()> {
        let width = self.terminal.width();
        let text = self.context.marker.clone();
        let rows = match marker.style {
            Style::Claude => claude::marker(&text),
            Style::Codex => codex::say(width, &text),
            Style::Plain => vec![text],
        };
        self.commit_block(marker.style, rows)
    }

    /// Commits rows as one block: Claude and Codex put a blank row before each message.
    pub(super) fn commit_block(&mut self, style: Style, rows: Vec<String>) -> io::Result<()> {
        let mut block = Vec::with_capacity(rows.len() + 1);
        if style != Style::Plain {
            block.push(String::new());
        }
        block.extend(rows);
        self.terminal.commit(&block)
    }

    /// The working state for `seconds` (forever without), then the `done` line if any.
    pub(super) fn spin(&mut self, spinner: &Spinner) -> io::Result<()> {
        let started = Instant::now();
        let limit = spinner.seconds.map(Duration::from_secs_f64);
        let text = self.fill(&spinner.text);
        for frame in 0usize.. {
            let elapsed = started.elapsed();
            if limit.is_some_and(|limit| elapsed >= limit) {
                break;
            }
            let region = self.busy_region(spinner.style, frame, &text, elapsed.as_secs());
            self.terminal.show(region)?;
            let pause = limit.map_or(FRAME, |limit| FRAME.min(limit.saturating_sub(elapsed)));
            std::thread::sleep(pause);
        }
        self.terminal.clear()?;
        if let Some(done) = &spinner.done {
            let done = self
                .fill(done)
                .replace("{seconds}", &started.elapsed().as_secs().to_string());
            let rows = match spinner.style {
                Style::Claude => vec![claude::done_line(&done)],
                Style::Codex | Style::Plain => vec![done],
            };
            self.commit_block(spinner.style, rows)?;
        }
        Ok(())
    }

    fn busy_region(&self, style: Style, frame: usize, text: &str, elapsed_secs: u64) -> Region {
        let width = self.terminal.width();
        match style {
            Style::Claude => claude::busy(width, claude::spinner_status(frame, text, elapsed_secs)),
            Style::Codex => codex::busy(width, codex::spinner_status(frame, text, elapsed_secs)),
            Style::Plain => Region::of(vec![draw::plain_spinner(frame, text, elapsed_secs)]),
        }
    }

    /// Claude's retry line, counting down each delay a second at a time.
    fn retry(&mut self, retry: &Retry) -> io::Result<()> {
        let reason = self.fill(&retry.reason);
        for (offset, delay) in (0u32..).zip(&retry.delays) {
            let attempt = retry.first_attempt + offset;
            for seconds_left in (1..=*delay).rev() {
                let width = self.terminal.width();
                let status =
                    claude::retry_status(&reason, seconds_left, attempt, retry.max_attempts);
                self.terminal.show(claude::busy(width, status))?;
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        self.terminal.clear()
    }

    /// Asks the terminal and waits for every answer; without them the agent gives up, as a real
    /// CLI stalls.
    fn query(&mut self, query: &Query) -> io::Result<Flow> {
        let mut asked = String::new();
        if query.cursor_position {
            asked.push_str("\x1b[6n");
        }
        if query.device_attributes {
            asked.push_str("\x1b[c");
        }
        self.terminal.write_raw(&asked)?;
        let deadline = Instant::now() + Duration::from_secs_f64(query.timeout);
        let (mut need_position, mut need_attributes) =
            (query.cursor_position, query.device_attributes);
        while need_position || need_attributes {
            match self.input.next_event(Some(deadline)) {
                Some(InputEvent::CursorPosition { row, column }) => {
                    self.context.placeholders.set("row", row.to_string());
                    self.context.placeholders.set("col", column.to_string());
                    need_position = false;
                }
                Some(InputEvent::DeviceAttributes) => need_attributes = false,
                Some(InputEvent::Key(_)) => {}
                None | Some(InputEvent::Closed) => {
                    let unanswered = if need_position {
                        "cursor position"
                    } else {
                        "device attributes"
                    };
                    return Ok(Flow::End(Ending::Failed {
                        code: 3,
                        message: format!(
                            "error: the terminal did not answer the {unanswered} query"
                        ),
                    }));
                }
            }
        }
        Ok(Flow::Next)
    }

    /// From now on TERM, HUP and INT only set a flag nobody reads.
    fn ignore_signals(&mut self) -> io::Result<()> {
        for signal in [
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
            signal_hook::consts::SIGINT,
        ] {
            let flag = Arc::new(AtomicBool::new(false));
            signal_hook::flag::register(signal, Arc::clone(&flag))?;
            self.ignored_signals.push(flag);
        }
        Ok(())
    }

    /// Child `herd sim SCENARIO` processes: same process group, stdin closed, output shared.
    fn spawn(&mut self, spawn: &Spawn) -> io::Result<()> {
        let program = std::env::current_exe()?;
        for _ in 0..spawn.count {
            let child = Command::new(&program)
                .arg("sim")
                .arg(&spawn.scenario)
                .stdin(Stdio::null())
                .spawn()?;
            self.children.push(child);
        }
        Ok(())
    }

    /// About `megabytes` of log-like, coloured lines, written as fast as the reader takes them.
    fn flood(&mut self, megabytes: f64) -> io::Result<()> {
        let total = (megabytes * 1024.0 * 1024.0) as usize;
        let mut written = 0;
        let mut chunk = String::with_capacity(FLOOD_CHUNK + 256);
        let mut number = 0usize;
        while written < total {
            chunk.clear();
            while chunk.len() < FLOOD_CHUNK {
                chunk.push_str(&flood_line(number));
                number += 1;
            }
            self.terminal.write_bulk(chunk.as_bytes())?;
            written += chunk.len();
        }
        self.terminal.flush()
    }
}

const FLOOD_WORDS: &[&str] = &[
    "compiling",
    "resolving",
    "checking",
    "module",
    "parser",
    "vector",
    "index",
    "cache",
    "fixture",
    "snapshot",
    "build",
    "linker",
    "tokens",
    "buffer",
    "worker",
    "render",
];
const FLOOD_LEVELS: &[(&str, u8)] = &[("INFO", 34), ("DEBUG", 244), ("WARN", 178), ("TRACE", 67)];

/// One varied line of a flood.
fn flood_line(number: usize) -> String {
    let (level, color) = FLOOD_LEVELS[number % FLOOD_LEVELS.len()];
    let word_count = 3 + (number * 7) % 14;
    let words: Vec<&str> = (0..word_count)
        .map(|offset| FLOOD_WORDS[(number + offset * 5) % FLOOD_WORDS.len()])
        .collect();
    format!(
        "\x1b[38;5;{color}m{level:>5}\x1b[39m {number:08} \x1b[1msrc/{}.rs\x1b[22m: {}\r\n",
        FLOOD_WORDS[number % FLOOD_WORDS.len()],
        words.join(" ")
    )
}
