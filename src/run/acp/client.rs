//! The client's event loop: every input arrives on one channel; the session decides, this acts.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::inbox::Event;
use super::lines::AgentLine;
use super::log::AcpLog;
use super::spawn::{policy, start_threads};
use super::terminal::{Key, KeyInput, RawMode, Screen, end_agent, excerpt, rows_of};
use crate::core::wire::acp::api_watch::{self, StderrLine};
use crate::core::wire::acp::render::Renderer;
use crate::core::wire::acp::{Action, Session, SessionSetup, Shown, rpc};

/// The exit code when the agent cannot be started: a set-up problem (`failed_config`).
pub(super) const EXIT_CANNOT_START: i32 = 78;
/// How long a cancelled session has to end its turn before the agent is ended.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// Lines of the agent's stderr shown in the transcript (all are recorded).
const SHOWN_STDERR: u32 = 40;
/// Garbage lines shown in the transcript (all are recorded).
const SHOWN_GARBAGE: u32 = 20;

/// `herd acp-client -- <agent command>`.
#[derive(Debug, Clone)]
pub struct ClientArgs {
    pub command: Vec<String>,
}

/// Runs one session; the exit code for the attempt's PTY.
pub fn run(args: ClientArgs) -> i32 {
    let started = Instant::now();
    let mut log = AcpLog::open(
        env_var("HERD_ACP_LOG").as_deref().map(std::path::Path::new),
        started,
    );
    let mut out = Screen::new();
    let Some(program) = args.command.first() else {
        out.text("herd: cannot start the ACP agent: no command given\r\n");
        return EXIT_CANNOT_START;
    };
    let setup = setup_from_env();
    let (events, inbox) = mpsc::channel();
    let Some(child) = spawn_agent(program, &args.command[1..], &mut out, &mut log) else {
        return EXIT_CANNOT_START;
    };
    let pid = child.id();
    log.record("herd", json!({"started": args.command, "pid": pid}));
    let to_agent = start_threads(child, &events);
    let _raw = RawMode::enable();
    let stop = stop_on_signals();
    let mut client = Client::new(setup, out, log, to_agent, started);
    let actions = client.session.start();
    client.apply(actions);
    let exit = client.run_loop(&inbox, &stop);
    drop(client.to_agent.take());
    // An agent already reaped is not signalled: its pid may belong to another process by now.
    if !client.agent_exited {
        end_agent(pid, &inbox);
    }
    exit
}

/// An environment variable herd set for the client, when not empty.
fn env_var(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// The session as herd set it up through the environment (`HERD_ACP_*`).
fn setup_from_env() -> SessionSetup {
    let cwd = std::env::current_dir().unwrap_or_default();
    SessionSetup {
        cwd: cwd.display().to_string(),
        prompt: env_var("HERD_ACP_PROMPT").unwrap_or_default(),
        auth_method: env_var("HERD_ACP_AUTH"),
        set_vars: std::env::vars_os()
            .filter(|(_, value)| !value.is_empty())
            .filter_map(|(name, _)| name.into_string().ok())
            .collect(),
        agent: env_var("HERD_ACP_PROFILE").unwrap_or_else(|| "<agent>".into()),
        policy: policy(env_var("HERD_ACP_POLICY").as_deref(), &cwd),
        init_timeout: Duration::from_secs_f64(
            env_var("HERD_ACP_INIT_TIMEOUT")
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or(60.0),
        ),
        load_session: env_var("HERD_ACP_LOAD_SESSION"),
        mode: env_var("HERD_ACP_MODE"),
    }
}

/// The agent started with its pipes; `None` when it cannot be (said on screen and in the log).
fn spawn_agent(
    program: &str,
    args: &[String],
    out: &mut Screen,
    log: &mut AcpLog,
) -> Option<std::process::Child> {
    let spawned = Command::new(program)
        .args(args)
        .env_remove("HERD_ACP_PROMPT")
        .env_remove("HERD_ACP_POLICY")
        .env_remove("HERD_ACP_LOAD_SESSION")
        .env_remove("HERD_ACP_MODE")
        .env_remove("HERD_ACP_PROFILE")
        .envs(fetch_diagnostics())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    match spawned {
        Ok(child) => Some(child),
        Err(error) => {
            out.text(&format!(
                "herd: cannot start the ACP agent `{program}`: {error}\r\n"
            ));
            log.record(
                "herd",
                json!({"error": format!("cannot start {program}: {error}")}),
            );
            None
        }
    }
}

/// The variables that turn on the runtime's fetch diagnostics for `api_watch`; none with
/// `HERD_ACP_HTTP_TRACE=0`.
fn fetch_diagnostics() -> Vec<(String, String)> {
    if env_var("HERD_ACP_HTTP_TRACE").as_deref() == Some("0") {
        return Vec::new();
    }
    let node = match env_var("NODE_DEBUG") {
        Some(set) if set.split(',').any(|s| s.trim() == "fetch") => set,
        Some(set) => format!("{set},fetch"),
        None => "fetch".into(),
    };
    vec![
        ("NODE_DEBUG".into(), node),
        ("BUN_CONFIG_VERBOSE_FETCH".into(), "true".into()),
    ]
}

/// A flag set when herd asks the client to stop (SIGTERM, SIGHUP, SIGINT).
fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        // Without the handler the default action ends the client at once.
        let _ = signal_hook::flag::register(signal, Arc::clone(&stop));
    }
    stop
}

struct Client {
    session: Session,
    renderer: Renderer,
    out: Screen,
    log: AcpLog,
    to_agent: Option<Sender<Vec<u8>>>,
    started: Instant,
    stderr_tail: Vec<String>,
    stderr_shown: u32,
    garbage: u32,
    keys: KeyInput,
    done: bool,
    shown_session: Option<String>,
    /// Rows the waiting request's dialog takes at the bottom of the screen (0: none shown).
    dialog_rows: usize,
    /// Transcript drawn while a dialog waits, shown once it is answered.
    held: String,
    agent_exited: bool,
}

impl Client {
    fn new(
        setup: SessionSetup,
        out: Screen,
        log: AcpLog,
        to_agent: Sender<Vec<u8>>,
        started: Instant,
    ) -> Client {
        Client {
            session: Session::new(setup),
            renderer: Renderer::new(),
            out,
            log,
            to_agent: Some(to_agent),
            started,
            stderr_tail: Vec::new(),
            stderr_shown: 0,
            garbage: 0,
            keys: KeyInput::default(),
            done: false,
            shown_session: None,
            dialog_rows: 0,
            held: String::new(),
            agent_exited: false,
        }
    }

    fn run_loop(&mut self, inbox: &Receiver<Event>, stop: &AtomicBool) -> i32 {
        let mut cancel_by: Option<Instant> = None;
        loop {
            if self.done {
                return if cancel_by.is_some() { 143 } else { 0 };
            }
            if stop.load(Ordering::Relaxed) && cancel_by.is_none() {
                cancel_by = Some(Instant::now() + CANCEL_GRACE);
                let actions = self.session.cancel();
                self.apply(actions);
            }
            if cancel_by.is_some_and(|by| Instant::now() > by) {
                let actions = self.session.cancel_unanswered(CANCEL_GRACE);
                self.apply(actions);
                return 143;
            }
            let at = self.started.elapsed();
            match inbox.recv_timeout(Duration::from_millis(100)) {
                Ok(Event::Line(AgentLine::Line(line))) => self.on_line(&line, at),
                Ok(Event::Line(AgentLine::Oversized { bytes, head })) => {
                    self.log
                        .record("in", json!({"oversized": bytes, "head": head}));
                    let actions = self
                        .session
                        .garbage(&excerpt(&head), &format!("{bytes} bytes, over the limit"));
                    self.apply(actions);
                }
                Ok(Event::Stderr(line)) => self.on_stderr(line, at),
                Ok(Event::Keys(bytes)) => self.on_keys(&bytes, at),
                Ok(Event::Exited(how)) => {
                    self.agent_exited = true;
                    self.log.record("herd", json!({"agent_exited": how}));
                    let actions = self.session.exited(&how, &self.stderr_tail);
                    self.apply(actions);
                    self.done = true;
                }
                Err(RecvTimeoutError::Timeout) => {
                    let actions = self.session.tick(at);
                    self.apply(actions);
                }
                Err(RecvTimeoutError::Disconnected) => self.done = true,
            }
        }
    }

    fn on_line(&mut self, line: &str, at: Duration) {
        if line.trim().is_empty() {
            return;
        }
        match rpc::parse_line(line) {
            Ok(message) => {
                let body = serde_json::from_str::<Value>(line).unwrap_or(Value::Null);
                self.log.record("in", json!({"msg": body}));
                let actions = self.session.handle(message, at);
                self.apply(actions);
            }
            Err(why) => {
                let why = why.to_string();
                self.log
                    .record("in", json!({"garbage": excerpt(line), "why": why}));
                self.garbage += 1;
                if self.garbage <= SHOWN_GARBAGE {
                    let actions = self.session.garbage(&excerpt(line), &why);
                    self.apply(actions);
                }
            }
        }
    }

    fn on_stderr(&mut self, line: String, at: Duration) {
        match api_watch::classify(&line) {
            StderrLine::Agent => {}
            // A request's lines carry its headers (the API key): never recorded.
            StderrLine::Trace => return,
            StderrLine::Response { status } => {
                self.log.record("http", json!({"status": status}));
                let actions = self.session.api_response(status, at);
                self.apply(actions);
                return;
            }
        }
        self.log.record("stderr", json!({"text": line}));
        let line = excerpt(&line);
        if line.trim().is_empty() {
            return;
        }
        if self.stderr_tail.len() == 6 {
            self.stderr_tail.remove(0);
        }
        self.stderr_tail.push(line.clone());
        self.stderr_shown += 1;
        if self.stderr_shown <= SHOWN_STDERR {
            self.show(&Shown::Note(format!("stderr: {line}")));
        }
    }

    fn on_keys(&mut self, bytes: &[u8], at: Duration) {
        let waiting = self.session.waiting().is_some();
        for key in self.keys.feed(bytes, waiting) {
            let actions = match key {
                Key::Digit(digit) => self.session.operator_key(digit, at),
                Key::Line(text) => self.session.follow_up(&text),
                Key::Reject => self.session.operator_reject(at),
                Key::Accept => self.session.operator_accept(at),
            };
            self.apply(actions);
        }
    }

    /// Draws a piece of the transcript; a waiting request stays last (what comes is held) and is
    /// wiped once answered.
    fn show(&mut self, shown: &Shown) {
        let text = self.renderer.draw(shown);
        match shown {
            Shown::Permission { .. } => {
                self.wipe_dialog();
                self.dialog_rows = rows_of(&text);
                self.out.text(&text);
            }
            Shown::Answered { .. } => {
                self.wipe_dialog();
                self.out.text(&text);
                let held = std::mem::take(&mut self.held);
                self.out.text(&held);
            }
            _ if self.dialog_rows > 0 => self.held.push_str(&text),
            _ => self.out.text(&text),
        }
    }

    fn wipe_dialog(&mut self) {
        if self.dialog_rows > 0 {
            self.out
                .text(&format!("\x1b[{}A\r\x1b[J", self.dialog_rows));
            self.dialog_rows = 0;
        }
    }

    fn apply(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Send(message) => {
                    self.log.record("out", json!({"msg": message}));
                    if let Some(to_agent) = &self.to_agent {
                        let mut line = message.to_string().into_bytes();
                        line.push(b'\n');
                        // A closed stdin shows up as the agent's exit.
                        let _ = to_agent.send(line);
                    }
                }
                Action::Show(shown) => {
                    if let Shown::Answered { .. } = &shown
                        && let Some(answer) = self.session.answers().last()
                    {
                        self.log.record(
                            "herd",
                            json!({"approval": {
                                "by": answer.by,
                                "request": answer.request.as_ref().map(ToString::to_string),
                                "decision": answer.decision.name(),
                                "why": answer.decision.why(),
                                "option": answer.option,
                            }}),
                        );
                    }
                    self.show(&shown);
                }
                Action::Finish(outcome) => {
                    self.wipe_dialog();
                    let held = std::mem::take(&mut self.held);
                    self.out.text(&held);
                    let event = outcome.event();
                    self.log.record("herd", json!({"outcome": event}));
                    self.out.event(&event);
                    self.done = true;
                }
            }
            if let Some(id) = self.session.session_id()
                && self.shown_session.as_deref() != Some(id)
            {
                let id = id.to_string();
                let info = self
                    .session
                    .capabilities
                    .as_ref()
                    .and_then(|c| c.get("agentInfo"));
                let model = info
                    .and_then(|i| i.get("name"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let init =
                    json!({"type": "system", "subtype": "init", "session_id": id, "model": model});
                self.out.event(&init);
                self.shown_session = Some(id);
            }
        }
    }
}
