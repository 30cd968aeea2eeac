//! One ACP session as a state machine: `initialize`, `authenticate` when asked, `session/new`
//! or `session/load`, herd's mode (`mode`), `session/prompt`, permission requests, unasked tool
//! calls (`unasked`), failed turns (`turn_failure`), follow-ups, and the end as facts. `handle`
//! takes one message and returns what to send and show. Pure; `run::acp` carries it out.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use serde_json::Value;

use super::api_watch::ApiWatch;
use super::audit::Answer;
use super::auth::{self, AuthChoice, AuthMethod};
use super::outcome::Outcome;
use super::permission::{self, PermissionOption, PermissionPolicy};
use super::rpc::{self, Message, RpcError};
use super::transcript::{Shown, ToolCalls};
use super::wire;

mod asking;
mod mode;
mod turn_failure;
mod unasked;
pub use super::outcome::ModeFacts;
use crate::core::guard::{Decision, Request};
pub use mode::MODE_NOT_SET;
use unasked::ToolWatch;
pub use unasked::UNASKED;

/// What a session needs from its attempt.
#[derive(Debug, Clone, Default)]
pub struct SessionSetup {
    pub cwd: String,
    pub prompt: String,
    /// The `authenticate` method the operator named (`HERD_ACP_AUTH`).
    pub auth_method: Option<String>,
    /// The names (never values) of the variables set in the agent's environment.
    pub set_vars: BTreeSet<String>,
    /// The agent as `herd acp login` names it, for an auth failure's fix.
    pub agent: String,
    pub policy: PermissionPolicy,
    /// How long the agent has to answer `initialize`.
    pub init_timeout: Duration,
    /// A session to continue (`session/load`); the prompt then continues it.
    pub load_session: Option<String>,
    /// The session mode herd sets; `None`: the agent's own, recorded.
    pub mode: Option<String>,
}

/// What to do after a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Send(Value),
    Show(Shown),
    /// The session is over; the attempt's facts. Given once.
    Finish(Outcome),
}

/// What one of herd's requests was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Initialize,
    Authenticate,
    NewSession,
    LoadSession,
    SetMode,
    Prompt,
}

/// A permission request waiting for the operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub id: Value,
    pub request: Option<Request>,
    pub decision: Decision,
    /// In the order shown (`permission::ordered`): the operator's key `n` picks the n-th.
    pub options: Vec<PermissionOption>,
    /// The tool call's title, as the agent gave it.
    pub title: Option<String>,
}

#[derive(Debug)]
pub struct Session {
    setup: SessionSetup,
    next_id: u64,
    asked: BTreeMap<u64, Asked>,
    session_id: Option<String>,
    /// `agentCapabilities`, `agentInfo` and `authMethods` as the agent gave them.
    pub capabilities: Option<Value>,
    /// The authentication methods the agent offered in `initialize`.
    auth_methods: Vec<AuthMethod>,
    authenticated: bool,
    tools: ToolCalls,
    watch: ToolWatch,
    /// Tool calls that ran without asking where the policy would have asked, described.
    unasked: Vec<String>,
    mode: ModeFacts,
    /// herd's `session/set_mode` is unanswered: no prompt goes yet.
    mode_pending: bool,
    /// The agent reported a system error for its thread (codex-acp): the text it said since.
    system_error: Option<String>,
    /// The model API's answers as the agent's runtime reports them.
    api: ApiWatch,
    text: String,
    denials: Vec<Request>,
    answers: Vec<Answer>,
    waiting: Option<Waiting>,
    queued: VecDeque<String>,
    prompting: bool,
    initialized: bool,
    cancelled: bool,
    finished: bool,
}

impl Session {
    pub fn new(setup: SessionSetup) -> Session {
        Session {
            setup,
            next_id: 0,
            asked: BTreeMap::new(),
            session_id: None,
            capabilities: None,
            auth_methods: Vec::new(),
            authenticated: false,
            tools: ToolCalls::default(),
            watch: ToolWatch::default(),
            unasked: Vec::new(),
            mode: ModeFacts::default(),
            mode_pending: false,
            system_error: None,
            api: ApiWatch::default(),
            text: String::new(),
            denials: Vec::new(),
            answers: Vec::new(),
            waiting: None,
            queued: VecDeque::new(),
            prompting: false,
            initialized: false,
            cancelled: false,
            finished: false,
        }
    }

    pub fn waiting(&self) -> Option<&Waiting> {
        self.waiting.as_ref()
    }

    pub fn answers(&self) -> &[Answer] {
        &self.answers
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The first message: `initialize`.
    pub fn start(&mut self) -> Vec<Action> {
        vec![
            Action::Show(Shown::Note("initialize".into())),
            self.ask(Asked::Initialize, wire::INITIALIZE, wire::initialize()),
        ]
    }

    /// Time passed: `initialize` unanswered in time, or a failing API (`api_watch`), ends it.
    pub fn tick(&mut self, elapsed: Duration) -> Vec<Action> {
        let failing_api = self.prompting.then(|| self.api.due(elapsed)).flatten();
        if let (Some(outcome), false) = (failing_api, self.finished) {
            let mut actions = self.cancel();
            actions.push(self.finish(outcome));
            return actions;
        }
        if self.initialized || self.finished || elapsed < self.setup.init_timeout {
            return Vec::new();
        }
        let message = format!(
            "the agent did not answer initialize within {} s",
            self.setup.init_timeout.as_secs()
        );
        vec![self.finish(Outcome::failed("no_initialize", &message))]
    }

    /// A line that is not a JSON-RPC message.
    pub fn garbage(&mut self, excerpt: &str, why: &str) -> Vec<Action> {
        vec![Action::Show(Shown::Note(format!(
            "ignored a line from the agent: {why}: {excerpt}"
        )))]
    }

    /// The agent's process ended; `stderr` is the end of what it printed there.
    pub fn exited(&mut self, how: &str, stderr: &[String]) -> Vec<Action> {
        if self.finished {
            return Vec::new();
        }
        let mut message = format!("the agent exited ({how}) before the turn ended");
        if !stderr.is_empty() {
            message.push_str(": ");
            message.push_str(&stderr.join(" | "));
        }
        vec![self.finish(Outcome::failed("agent_exited", &message))]
    }

    /// The agent's runtime reported an HTTP answer: an API that keeps failing ends the turn now,
    /// not when the agent's retries run out.
    pub fn api_response(&mut self, status: u16, at: Duration) -> Vec<Action> {
        if self.finished || !self.prompting {
            return Vec::new();
        }
        let Some(outcome) = self.api.response(status, at) else {
            return Vec::new();
        };
        let mut actions = self.cancel();
        actions.push(self.finish(outcome));
        actions
    }

    /// herd ends the session: `session/cancel`, and a waiting request is answered `cancelled`.
    pub fn cancel(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.cancelled || self.finished {
            return actions;
        }
        self.cancelled = true;
        if let Some(waiting) = self.waiting.take() {
            actions.push(Action::Send(rpc::response(
                &waiting.id,
                permission::cancelled(),
            )));
        }
        if let (true, Some(id)) = (self.prompting, &self.session_id) {
            let cancel = rpc::notification(wire::SESSION_CANCEL, wire::cancel(id));
            actions.push(Action::Send(cancel));
            actions.push(Action::Show(Shown::Note("session/cancel".into())));
        }
        actions
    }

    /// The agent did not end its turn within `grace` of the cancel: the session ends here.
    pub fn cancel_unanswered(&mut self, grace: Duration) -> Vec<Action> {
        if self.finished {
            return Vec::new();
        }
        let message = format!(
            "the agent did not end its turn within {} s of session/cancel",
            grace.as_secs()
        );
        vec![self.finish(Outcome::failed("stop_cancelled", &message))]
    }

    /// A follow-up prompt from the operator: sent now if the agent is idle, else after its turn.
    pub fn follow_up(&mut self, text: &str) -> Vec<Action> {
        if self.finished || text.trim().is_empty() {
            return Vec::new();
        }
        self.queued.push_back(text.to_string());
        if self.prompting || self.mode_pending || self.session_id.is_none() {
            return vec![Action::Show(Shown::Note(
                "follow-up queued until the turn ends".into(),
            ))];
        }
        self.next_prompt()
    }

    /// The operator's key for a waiting request: `1`… picks that option.
    pub fn operator_key(&mut self, key: char, at: Duration) -> Vec<Action> {
        let Some(index) = key.to_digit(10).and_then(|d| (d as usize).checked_sub(1)) else {
            return Vec::new();
        };
        let Some(waiting) = self.waiting.take_if(|w| index < w.options.len()) else {
            return Vec::new();
        };
        let option = waiting.options[index].clone();
        let (asking, decision) = waiting.into_parts();
        self.answer(asking, decision, Some(option), "operator", at)
    }

    /// The operator's "no" to a waiting request: its first reject option, else `cancelled`.
    pub fn operator_reject(&mut self, at: Duration) -> Vec<Action> {
        let Some(waiting) = self.waiting.take() else {
            return Vec::new();
        };
        let reject = waiting
            .options
            .iter()
            .find(|o| o.kind.starts_with("reject"))
            .cloned();
        let (asking, decision) = waiting.into_parts();
        self.answer(asking, decision, reject, "operator", at)
    }

    pub fn handle(&mut self, message: Message, at: Duration) -> Vec<Action> {
        if self.finished {
            return Vec::new();
        }
        match message {
            Message::Response { id, outcome } => self.on_response(&id, outcome),
            Message::Notification { method, params } => match method.as_str() {
                wire::SESSION_UPDATE => params
                    .get("update")
                    .map(|update| self.on_update(update))
                    .unwrap_or_default(),
                _ => Vec::new(),
            },
            Message::Request { id, method, params } => match method.as_str() {
                wire::REQUEST_PERMISSION => self.on_permission(id, &params, at),
                _ => vec![
                    Action::Send(rpc::error_response(
                        &id,
                        rpc::METHOD_NOT_FOUND,
                        &format!("herd does not offer {method}"),
                    )),
                    Action::Show(Shown::Note(format!("refused unknown request {method}"))),
                ],
            },
        }
    }

    /// One `session/update`: shown, the mode kept, an unasked tool call judged.
    fn on_update(&mut self, update: &Value) -> Vec<Action> {
        let mut actions = Vec::new();
        if let Some(shown) = self.tools.read(update) {
            self.api.progress();
            if let Shown::Text(text) = &shown {
                self.text.push_str(text);
                if let Some(error) = &mut self.system_error {
                    error.push_str(text);
                }
            }
            actions.push(Action::Show(shown));
        }
        if let Some(status) = turn_failure::thread_status(update) {
            self.on_thread_status(status);
        }
        if let Some(mode) = wire::mode_of_update(update) {
            actions.extend(self.on_mode_update(mode));
        }
        if let Some(call) = self.watch.saw(update) {
            actions.extend(self.on_unasked_tool(&call));
        }
        actions
    }

    fn ask(&mut self, what: Asked, method: &str, params: Value) -> Action {
        let id = self.next_id;
        self.next_id += 1;
        self.asked.insert(id, what);
        Action::Send(rpc::request(id, method, params))
    }

    fn finish(&mut self, mut outcome: Outcome) -> Action {
        self.finished = true;
        self.waiting = None;
        outcome.session_id = self.session_id.clone();
        outcome.denials = self.denials.clone();
        outcome.answers = self.answers.clone();
        outcome.unasked = self.unasked.clone();
        outcome.mode = Some(self.mode.clone()).filter(|m| *m != ModeFacts::default());
        if outcome.text.is_empty() {
            outcome.text = self.text.clone();
        }
        Action::Finish(outcome)
    }

    fn on_response(&mut self, id: &Value, outcome: Result<Value, RpcError>) -> Vec<Action> {
        let Some(asked) = id.as_u64().and_then(|id| self.asked.remove(&id)) else {
            return vec![Action::Show(Shown::Note(format!(
                "ignored an answer to no request of herd's (id {id})"
            )))];
        };
        match (asked, outcome) {
            (Asked::Initialize, Ok(result)) => self.on_initialized(result),
            (Asked::LoadSession, Ok(result)) => {
                // The history the agent replayed while loading is not this attempt's answer.
                self.text.clear();
                self.session_id = self.setup.load_session.clone();
                self.queued.push_front(self.setup.prompt.clone());
                self.on_session_opened(&result)
            }
            (Asked::LoadSession, Err(error)) => {
                let note = format!("session/load failed ({}): a new session", error.describe());
                vec![Action::Show(Shown::Note(note)), self.new_session()]
            }
            (Asked::Authenticate, Ok(_)) => {
                self.authenticated = true;
                vec![self.new_session()]
            }
            (Asked::NewSession, Ok(result)) => self.on_session_created(&result),
            (Asked::SetMode, answer) => self.on_mode_set(answer),
            (Asked::Prompt, Ok(result)) => self.on_turn_ended(&result),
            (Asked::NewSession, Err(error)) if needs_auth(&error) && !self.authenticated => {
                self.authenticate(&error)
            }
            (asked, Err(error)) => {
                let during = match asked {
                    Asked::Initialize => "initialize",
                    Asked::Authenticate => "authenticate",
                    Asked::NewSession => "session/new",
                    Asked::LoadSession => "session/load",
                    Asked::SetMode => "session/set_mode",
                    Asked::Prompt => "session/prompt",
                };
                vec![self.finish(Outcome::from_error(during, &error))]
            }
        }
    }

    /// Authentication is required: `authenticate` with a usable method, else the attempt ends.
    fn authenticate(&mut self, error: &RpcError) -> Vec<Action> {
        let choice = auth::choose(
            &self.auth_methods,
            self.setup.auth_method.as_deref(),
            &self.setup.set_vars,
            &self.setup.agent,
        );
        match choice {
            AuthChoice::Use { method, why } => vec![
                Action::Show(Shown::Note(format!("authenticate with {method} ({why})"))),
                self.ask(
                    Asked::Authenticate,
                    wire::AUTHENTICATE,
                    wire::authenticate(&method),
                ),
            ],
            AuthChoice::Impossible { message } => {
                let mut outcome = Outcome::from_error("session/new", error);
                outcome.kind = "authentication_failed".into();
                outcome.message = format!("{}: {message}", outcome.message);
                vec![self.finish(outcome)]
            }
        }
    }

    /// `initialize` answered: the session to continue is loaded when possible, else a new one.
    fn on_initialized(&mut self, result: Value) -> Vec<Action> {
        self.initialized = true;
        let info = result.get("agentInfo").cloned().unwrap_or(Value::Null);
        let name = info.get("name").and_then(Value::as_str).unwrap_or("agent");
        let version = info.get("version").and_then(Value::as_str).unwrap_or("?");
        let can_load = result["agentCapabilities"]["loadSession"] == Value::Bool(true);
        self.auth_methods = auth::methods(&result);
        self.capabilities = Some(result);
        let mut actions = vec![Action::Show(Shown::Note(format!(
            "{name} {version} initialized"
        )))];
        match self.setup.load_session.clone() {
            Some(id) if can_load => {
                let params = wire::load_session(&id, &self.setup.cwd);
                actions.push(Action::Show(Shown::Note(format!("session/load {id}"))));
                actions.push(self.ask(Asked::LoadSession, wire::SESSION_LOAD, params));
            }
            Some(_) => {
                let note = "the agent cannot load sessions: a new one".to_string();
                actions.push(Action::Show(Shown::Note(note)));
                actions.push(self.new_session());
            }
            None => actions.push(self.new_session()),
        }
        actions
    }

    /// The agent answered `session/new` (`result`): the prompt is sent in its session.
    fn on_session_created(&mut self, result: &Value) -> Vec<Action> {
        let Some(id) = wire::new_session_id(result) else {
            let outcome = Outcome::failed("bad_response", "session/new gave no sessionId");
            return vec![self.finish(outcome)];
        };
        self.session_id = Some(id.clone());
        self.queued.push_front(self.setup.prompt.clone());
        let mut actions = vec![Action::Show(Shown::Note(format!("session {id}")))];
        actions.extend(self.on_session_opened(result));
        actions
    }

    /// `session/prompt` answered: the next queued prompt is sent, else the session finishes.
    fn on_turn_ended(&mut self, result: &Value) -> Vec<Action> {
        self.prompting = false;
        let stop = result
            .get("stopReason")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let mut actions = vec![Action::Show(Shown::Note(format!("turn ended: {stop}")))];
        let failed = (stop == "end_turn").then(|| self.turn_failure()).flatten();
        if let Some(failure) = failed {
            actions.push(self.finish(failure));
            return actions;
        }
        if stop == "end_turn" && !self.queued.is_empty() && !self.cancelled {
            actions.extend(self.next_prompt());
            return actions;
        }
        actions.push(self.finish(Outcome::stopped(stop)));
        actions
    }

    fn new_session(&mut self) -> Action {
        let params = wire::new_session(&self.setup.cwd);
        self.ask(Asked::NewSession, wire::SESSION_NEW, params)
    }

    fn next_prompt(&mut self) -> Vec<Action> {
        let (Some(text), Some(id)) = (self.queued.pop_front(), self.session_id.clone()) else {
            return Vec::new();
        };
        self.prompting = true;
        let params = wire::prompt(&id, &text);
        vec![
            Action::Show(Shown::Prompt(text)),
            self.ask(Asked::Prompt, wire::SESSION_PROMPT, params),
        ]
    }
}

/// `session/new` failed because the agent wants `authenticate` first (ACP's `auth_required`).
fn needs_auth(error: &RpcError) -> bool {
    let message = error.message.to_ascii_lowercase();
    message.contains("auth") && message.contains("required")
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
