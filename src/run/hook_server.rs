//! The per-attempt end of herd's hooks: a Unix socket in a private folder, and a token per
//! attempt that `herd hook` must present. Each call goes to the engine as a `HookCall` with a
//! channel for the answer; this only carries bytes. The folder also holds a Gemini CLI's home.
//! A call that cannot be carried is answered with no decision: the screen is in charge.

use std::io::{BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::gemini_home;
use super::ipc::{self, Arrival, LineRead, Listener};
use super::jobs::{self, Outbox};
use crate::core::profile::HookKind;
use crate::core::wire::hook;

/// How long a connection may take to send its call.
const READ_WAIT: Duration = Duration::from_secs(5);
/// How long a call waits for the engine's answer (below the hook's own timeout in the CLI).
const ANSWER_WAIT: Duration = Duration::from_secs(25);
/// The most a call may carry (a tool's input can hold a whole file to write).
const MAX_CALL_BYTES: u64 = 16 << 20;

/// The inline settings for a profile's hooks, routed to this herd; `None` when its path is
/// unknown.
pub fn settings(kind: HookKind) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    match kind {
        HookKind::Claude => Some(hook::claude_settings(&exe.display().to_string())),
        // Gemini reads its hooks from a settings file (see `HookServer::start`).
        HookKind::Gemini => None,
    }
}

/// One call of the hook, for the receiver to answer through `reply`.
#[derive(Debug)]
pub struct HookCall {
    pub input: Value,
    pub reply: std::sync::mpsc::Sender<String>,
}

/// A live listener for one attempt.
pub struct HookServer {
    socket: PathBuf,
    /// The agent's environment for the hooks (Claude inherits socket and token; Gemini's home
    /// hands them to the hook).
    agent_env: Vec<(String, String)>,
    stop: Arc<AtomicBool>,
    /// Removed on drop, with the socket in it.
    _dir: tempfile::TempDir,
}

impl HookServer {
    /// Listens for attempt `key`'s hook calls, handed to `calls`.
    pub fn start(
        kind: HookKind,
        key: u64,
        calls: Outbox<HookCall>,
        agent_env: &std::collections::BTreeMap<String, String>,
    ) -> std::io::Result<HookServer> {
        let dir = ipc::private_subfolder("herd-hook-")?;
        let socket = dir.path().join("hook.sock");
        let listener = Listener::bind(&socket, "hook listener")?;
        let token = new_token()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_stop, thread_token) = (stop.clone(), token.clone());
        let socket_env = vec![
            (hook::SOCKET_ENV.to_string(), socket.display().to_string()),
            (hook::TOKEN_ENV.to_string(), token),
        ];
        let agent_env = match kind {
            HookKind::Claude => socket_env,
            HookKind::Gemini => {
                let exe = std::env::current_exe()?.display().to_string();
                gemini_home::prepare(dir.path(), agent_env, &exe, &socket_env)?
            }
        };
        let accept = move || accept_loop(listener, key, thread_token, calls, thread_stop);
        jobs::spawn_thread(format!("hooks-{key}"), accept)?;
        Ok(HookServer {
            socket,
            agent_env,
            stop,
            _dir: dir,
        })
    }

    /// What the agent's environment needs for its hooks to reach this listener.
    pub fn env(&self) -> &[(String, String)] {
        &self.agent_env
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for HookServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so it sees the flag and ends.
        ipc::wake(&self.socket);
    }
}

fn accept_loop(
    listener: Listener,
    key: u64,
    token: String,
    calls: Outbox<HookCall>,
    stop: Arc<AtomicBool>,
) {
    loop {
        let arrival = listener.accept();
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // Another user's call is closed unanswered (logged by the kit).
        let Ok(Arrival::Admitted { stream, .. }) = arrival else {
            continue;
        };
        let (token, calls) = (token.clone(), calls.clone());
        let call = move || serve(stream, &token, &calls);
        if let Err(not) = jobs::spawn_thread(format!("hook-call-{key}"), call) {
            tracing::warn!(
                "a hook call of attempt {key} could not be served: {}",
                not.error.cause
            );
        }
    }
}

/// One call: `{"token": ..., "input": {...}}` on one line in, the answer's text out.
fn serve(stream: UnixStream, token: &str, calls: &Outbox<HookCall>) {
    let answer = read_call(&stream, token)
        .and_then(|input| ask_receiver(input, calls))
        .unwrap_or_else(|| hook::NO_DECISION.to_string());
    let mut stream = stream;
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.flush();
}

fn read_call(stream: &UnixStream, token: &str) -> Option<Value> {
    stream.set_read_timeout(Some(READ_WAIT)).ok()?;
    let line = match ipc::read_line(&mut BufReader::new(stream), MAX_CALL_BYTES) {
        LineRead::Line(line) => line,
        LineRead::TooLong => {
            tracing::warn!("a hook call over {MAX_CALL_BYTES} bytes was refused");
            return None;
        }
        LineRead::End => return None,
    };
    let call: Value = serde_json::from_slice(&line).ok()?;
    if call.get("token").and_then(Value::as_str) != Some(token) {
        tracing::warn!("a hook call with a wrong token was refused");
        return None;
    }
    call.get("input").cloned()
}

fn ask_receiver(input: Value, calls: &Outbox<HookCall>) -> Option<String> {
    let (reply, answer) = std::sync::mpsc::channel();
    calls.blocking_send(HookCall { input, reply }).ok()?;
    answer.recv_timeout(ANSWER_WAIT).ok()
}

/// 128 random bits, in hex.
fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `herd hook`: the hook's input on stdin, the running herd's answer on stdout, no decision
/// without one. Always exits 0: a failing hook must not block the agent.
pub fn run_client() -> i32 {
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        return 0;
    }
    let answer = ask_herd(&input).unwrap_or_else(|| hook::NO_DECISION.to_string());
    let mut out = std::io::stdout();
    let _ = out.write_all(answer.as_bytes());
    let _ = out.flush();
    0
}

fn ask_herd(input: &str) -> Option<String> {
    let socket = std::env::var_os(hook::SOCKET_ENV)?;
    let token = std::env::var(hook::TOKEN_ENV).ok()?;
    let input: Value = serde_json::from_str(input).ok()?;
    let mut stream = ipc::connect_own(Path::new(&socket)).ok()?;
    stream
        .set_read_timeout(Some(ANSWER_WAIT + READ_WAIT))
        .ok()?;
    let call = serde_json::json!({"token": token, "input": input});
    ipc::write_line(&mut stream, &call.to_string()).ok()?;
    stream.shutdown(std::net::Shutdown::Write).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use tokio::sync::mpsc;

    use super::*;

    /// Answers every hook call with `answer`, as the engine would.
    fn engine(mut calls: mpsc::Receiver<HookCall>, answer: &'static str) {
        std::thread::spawn(move || {
            while let Some(HookCall { reply, input }) = calls.blocking_recv() {
                let _ = reply.send(format!("{answer}{}", input["n"]));
            }
        });
    }

    fn call(server: &HookServer, token: &str, input: &str) -> String {
        let mut stream = UnixStream::connect(server.socket()).expect("connect");
        let call = serde_json::json!({"token": token, "input": serde_json::from_str::<Value>(input).expect("json")});
        stream
            .write_all(format!("{call}\n").as_bytes())
            .expect("write");
        stream
            .shutdown(std::net::Shutdown::Write)
            .expect("shutdown");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read");
        answer
    }

    #[test]
    fn a_call_with_the_token_reaches_the_engine_and_its_answer_comes_back() {
        let (tx, rx) = mpsc::channel(8);
        engine(rx, "answer ");
        let server = HookServer::start(HookKind::Claude, 7, Outbox::new(tx), &Default::default())
            .expect("start");
        let token = server.env()[1].1.clone();
        assert_eq!(call(&server, &token, r#"{"n": 1}"#), "answer 1");
        assert_eq!(call(&server, &token, r#"{"n": 2}"#), "answer 2");
    }

    #[test]
    fn a_wrong_token_gets_no_decision() {
        let (tx, rx) = mpsc::channel(8);
        engine(rx, "answer ");
        let server = HookServer::start(HookKind::Claude, 7, Outbox::new(tx), &Default::default())
            .expect("start");
        assert_eq!(call(&server, "not-the-token", r#"{"n": 1}"#), "{}");
    }

    #[test]
    fn geminis_hook_gets_the_token_from_settings_of_the_attempts_own() {
        let (tx, rx) = mpsc::channel(8);
        engine(rx, "answer ");
        let user = tempfile::tempdir().expect("home");
        let history = user.path().join(".gemini/tmp/chats.json");
        std::fs::create_dir_all(history.parent().expect("dir")).expect("dir");
        std::fs::write(&history, "[]").expect("history");
        let agent_env = std::collections::BTreeMap::from([(
            "HOME".to_string(),
            user.path().display().to_string(),
        )]);
        let server =
            HookServer::start(HookKind::Gemini, 7, Outbox::new(tx), &agent_env).expect("start");
        let env = server.env().to_vec();
        assert!(env.iter().all(|(k, _)| k != hook::TOKEN_ENV), "{env:?}");
        let (_, home) = env
            .iter()
            .find(|(k, _)| k == gemini_home::HOME_ENV)
            .expect("Gemini's home");
        let home = PathBuf::from(home);
        assert!(home.starts_with(server.socket().parent().expect("dir")));
        let settings = home.join(".gemini/settings.json");
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
        let hook_env = &doc["hooks"]["BeforeTool"][0]["hooks"][0]["env"];
        assert_eq!(
            hook_env[hook::SOCKET_ENV],
            server.socket().display().to_string()
        );
        let token = hook_env[hook::TOKEN_ENV].as_str().expect("token");
        assert_eq!(call(&server, token, r#"{"n": 3}"#), "answer 3");
        assert!(home.join(".gemini/tmp/chats.json").exists());
        drop(server);
        assert!(!settings.exists());
        // The links went with the attempt, the user's files they led to did not.
        assert!(history.exists());
    }

    #[test]
    fn only_the_owner_can_reach_it_and_it_goes_with_the_attempt() {
        let (tx, _rx) = mpsc::channel(8);
        let server = HookServer::start(HookKind::Claude, 7, Outbox::new(tx), &Default::default())
            .expect("start");
        let socket = server.socket().to_path_buf();
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&socket), 0o600);
        assert_eq!(mode(socket.parent().expect("dir")), 0o700);
        drop(server);
        assert!(!socket.exists());
        assert!(!socket.parent().expect("dir").exists());
    }
}
