//! Codex's app server as herd uses it: herd is a second client of the attempt's own server (the
//! TUI in the pane is the first), subscribed to every thread, and answers the approvals the
//! server asks of its clients. This is the protocol (`Subscriber`, `read`, `answer`); which
//! decision to give is the guard's. Checked against Codex 0.171.0: JSON-RPC without `jsonrpc`,
//! one message per WebSocket frame; a file change's paths come in its `item/started`; the first
//! client to answer wins (`serverRequest/resolved`). Pure.

use serde_json::{Value, json};

use crate::core::guard::input::Fields;
use crate::core::guard::{Request, RequestKind};
use crate::core::task::FailureType;

/// The socket's name in the attempt's private folder.
pub const SOCKET_NAME: &str = "codex.sock";

/// The placeholder of a command that runs the TUI against herd's app server: replaced by
/// `--remote unix://<socket>` (or `--no-daemon` where herd runs no server).
pub const PLACEHOLDER: &str = "{app_server}";

/// The method of a command's approval, and of an edit's.
pub const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
pub const FILE_CHANGE_APPROVAL: &str = "item/fileChange/requestApproval";

/// What one message from the server says, as far as herd cares.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerMessage {
    /// The server asks its clients to approve a command.
    CommandApproval {
        id: Value,
        item_id: String,
        request: Request,
        /// Codex's own reason for asking (`reason`), when it gave one.
        reason: Option<String>,
    },
    /// The server asks its clients to approve the file changes of item `item_id`.
    FileChangeApproval { id: Value, item_id: String },
    /// Another question for a person (user input, an MCP elicitation): left to the TUI.
    OtherQuestion { id: Value, method: String },
    /// A `fileChange` item started: the files it changes, each as the guard's request.
    FileChangeStarted {
        item_id: String,
        changes: Vec<Request>,
    },
    /// A request was answered (by herd or by the operator in the TUI).
    Resolved { id: Value },
    /// The turn failed, or an error the server will not retry: its class and message.
    Failed {
        class: Option<FailureType>,
        evidence: String,
    },
    /// Anything else.
    Other,
}

/// Reads one message of the server.
pub fn read(message: &Value) -> ServerMessage {
    let method = message.get("method").and_then(Value::as_str);
    let params = &message["params"];
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let id = message.get("id").cloned();
    match (method, id) {
        (Some(COMMAND_APPROVAL), Some(id)) => ServerMessage::CommandApproval {
            id,
            item_id: text(params, "itemId").unwrap_or_default(),
            request: command_request(params),
            reason: text(params, "reason").filter(|r| !r.is_empty()),
        },
        (Some(FILE_CHANGE_APPROVAL), Some(id)) => ServerMessage::FileChangeApproval {
            id,
            item_id: text(params, "itemId").unwrap_or_default(),
        },
        (Some(method), Some(id)) if asks_a_person(method) => ServerMessage::OtherQuestion {
            id,
            method: method.to_string(),
        },
        (Some("item/started"), None) if params["item"]["type"] == "fileChange" => {
            let item = &params["item"];
            ServerMessage::FileChangeStarted {
                item_id: text(item, "id").unwrap_or_default(),
                changes: item["changes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(change_request)
                    .collect(),
            }
        }
        (Some("serverRequest/resolved"), None) => ServerMessage::Resolved {
            id: params["requestId"].clone(),
        },
        (Some("error"), None) if params["willRetry"] != json!(true) => failed(&params["error"]),
        (Some("turn/completed"), None) if params["turn"]["status"] == "failed" => {
            failed(&params["turn"]["error"])
        }
        _ => ServerMessage::Other,
    }
}

/// A request of the server that a person answers in the TUI (not token refreshes, dynamic tool
/// calls, attestations).
fn asks_a_person(method: &str) -> bool {
    method.ends_with("/requestApproval")
        || method.ends_with("/requestUserInput")
        || method.ends_with("elicitation/request")
}

/// Params of a command's approval that say nothing the command does not.
pub const COMMAND_PASS_OVER: [&str; 12] = [
    "threadId",
    "turnId",
    "itemId",
    "approvalId",
    "startedAtMs",
    "environmentId",
    "reason",
    "commandActions",
    "availableDecisions",
    "proposedExecpolicyAmendment",
    "proposedNetworkPolicyAmendments",
    "skillMetadata",
];

/// The command a server asks about, in its folder; anything else it asks for with it (network,
/// sandbox permissions, unknown fields) makes the request unread.
fn command_request(params: &Value) -> Request {
    let mut fields = Fields::of(Some(params));
    fields.pass_over(&COMMAND_PASS_OVER);
    // Neither sends a command line herd can judge.
    if fields.text(&["kind"]).is_some_and(|kind| kind != "command") {
        return Request::unread(&params.to_string());
    }
    let workdir = fields.workdir();
    let command = fields.text(&["command"]);
    match (command, fields.finish()) {
        (Some(command), Ok(())) => {
            let mut request = Request::new(RequestKind::Shell { command });
            request.workdir = workdir;
            request
        }
        (_, Err(left)) => Request::unread(&format!("a command's approval with {left}")),
        (None, Ok(())) => Request::unread("a command's approval that names no command"),
    }
}

/// One changed file as the guard's request: a new file is a write, a move an edit of both
/// places, any other change an edit; no path is unread.
fn change_request(change: &Value) -> Request {
    let Some(path) = change["path"].as_str().filter(|p| !p.trim().is_empty()) else {
        return Request::unread(&change.to_string());
    };
    let path = path.to_string();
    match change["kind"]["type"].as_str() {
        Some("add") => Request::new(RequestKind::Write { path }),
        Some("update") => match change["kind"]["move_path"].as_str() {
            Some(to) => {
                let mut request = Request::new(RequestKind::Edit {
                    path: to.to_string(),
                });
                request.also = vec![RequestKind::Edit { path }];
                request
            }
            None => Request::new(RequestKind::Edit { path }),
        },
        Some("delete") => Request::new(RequestKind::Edit { path }),
        _ => Request::unread(&change.to_string()),
    }
}

fn failed(error: &Value) -> ServerMessage {
    let message = error["message"].as_str().unwrap_or("an error").to_string();
    let info = &error["codexErrorInfo"];
    let name = info
        .as_str()
        .map(str::to_string)
        .or_else(|| info.as_object().and_then(|o| o.keys().next().cloned()));
    let evidence = match &name {
        Some(name) => format!("app server error {name}: {message}"),
        None => format!("app server error: {message}"),
    };
    ServerMessage::Failed {
        class: failure_of(info),
        evidence,
    }
}

/// The failure an error class names, when retrying cannot heal it soon or the API failed.
pub fn failure_of(info: &Value) -> Option<FailureType> {
    let by_status = |status: u64| match status {
        401 | 403 => Some(FailureType::Auth),
        429 => Some(FailureType::Quota),
        500..=599 => Some(FailureType::Process),
        _ => None,
    };
    match info {
        Value::String(name) => match name.as_str() {
            "unauthorized" => Some(FailureType::Auth),
            "usageLimitExceeded" | "rateLimitExceeded" => Some(FailureType::Quota),
            "serverOverloaded" | "internalServerError" => Some(FailureType::Process),
            _ => None,
        },
        Value::Object(map) => map
            .values()
            .find_map(|v| v.get("httpStatusCode").and_then(Value::as_u64))
            .and_then(by_status),
        _ => None,
    }
}

/// herd's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Accept,
    Decline,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Accept => "accept",
            Answer::Decline => "decline",
        }
    }
}

/// The response to request `id` with `answer`.
pub fn answer(id: &Value, answer: Answer) -> Value {
    json!({"id": id, "result": {"decision": answer.as_str()}})
}

/// The messages the attempt reads (the rest, the stream of deltas, stays with the client).
pub fn wanted(message: &Value) -> bool {
    !matches!(read(message), ServerMessage::Other)
}

/// herd's side of the plumbing: initialize, then subscribe to every thread, loaded or new, so
/// the server sends herd all their approvals. A thread is resumable only once its rollout is
/// written, so a failed subscription is retried on its next notification (a pending approval is
/// replayed); ephemeral threads have no rollout and are left alone.
#[derive(Debug, Default)]
pub struct Subscriber {
    next_id: u64,
    initialize_id: Option<u64>,
    list_id: Option<u64>,
    /// Threads subscribed to, or being subscribed to.
    subscribed: std::collections::BTreeSet<String>,
    /// herd's `thread/resume` requests waiting for their answer: id → thread.
    resuming: std::collections::BTreeMap<u64, String>,
    ephemeral: std::collections::BTreeSet<String>,
    initialized: bool,
}

impl Subscriber {
    pub fn new() -> Subscriber {
        Subscriber::default()
    }

    /// The first message: `initialize`.
    pub fn start(&mut self, version: &str) -> Value {
        let id = self.take_id();
        self.initialize_id = Some(id);
        json!({"id": id, "method": "initialize", "params": {
            "clientInfo": {"name": "herd", "title": "herd", "version": version}}})
    }

    /// The server answered `initialize`.
    pub fn initialized(&self) -> bool {
        self.initialized
    }

    /// What herd sends in reply to `message` to keep its subscriptions.
    pub fn on_message(&mut self, message: &Value) -> Vec<Value> {
        match message.get("method").and_then(Value::as_str) {
            None => self.on_response(message),
            Some("thread/started") => {
                let thread = &message["params"]["thread"];
                let Some(id) = thread["id"].as_str() else {
                    return Vec::new();
                };
                if thread["ephemeral"] == json!(true) {
                    self.ephemeral.insert(id.to_string());
                    return Vec::new();
                }
                self.resume(id).into_iter().collect()
            }
            Some(_) => match message["params"]["threadId"].as_str() {
                Some(thread) if !self.ephemeral.contains(thread) => {
                    self.resume(thread).into_iter().collect()
                }
                _ => Vec::new(),
            },
        }
    }

    fn on_response(&mut self, message: &Value) -> Vec<Value> {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return Vec::new();
        };
        if Some(id) == self.initialize_id {
            self.initialized = true;
            let list = self.take_id();
            self.list_id = Some(list);
            return vec![
                json!({"method": "initialized"}),
                json!({"id": list, "method": "thread/loaded/list", "params": {}}),
            ];
        }
        if Some(id) == self.list_id {
            let threads: Vec<String> = message["result"]["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            return threads.iter().filter_map(|t| self.resume(t)).collect();
        }
        if let Some(thread) = self.resuming.remove(&id)
            && message.get("error").is_some()
        {
            // Not resumable yet: tried again on its next notification.
            self.subscribed.remove(&thread);
        }
        Vec::new()
    }

    fn resume(&mut self, thread: &str) -> Option<Value> {
        if !self.subscribed.insert(thread.to_string()) {
            return None;
        }
        let id = self.take_id();
        self.resuming.insert(id, thread.to_string());
        // Without the history: herd needs the thread's live requests, not its past.
        Some(json!({"id": id, "method": "thread/resume",
                    "params": {"threadId": thread, "excludeTurns": true}}))
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}

/// What herd's client of an attempt's app server (`run::app_server`) tells the engine.
#[derive(Debug)]
pub enum AppServerReport {
    /// Initialized and subscribing: the TUI's dialogs are this channel's from now on.
    Connected,
    /// A message the attempt reads (`core::app_server::wanted`).
    Message(Value),
    /// The connection ended or never came, with why (for the log).
    Closed(String),
}

#[cfg(test)]
#[path = "app_server_tests.rs"]
mod tests;
