//! The per-attempt end of herd's hooks (`core::hook`): a Unix socket only this user can reach
//! (0600 in a 0700 folder of its own, never TCP), and a token per attempt that `herd hook`
//! (run by the CLI) must present. Each call is handed to the engine as a `PtyReport::Hook`
//! with a channel for the answer; the engine's attempt decides, this only carries bytes.
//!
//! The folder and socket go when the attempt ends (`HookServer` is dropped). A call that
//! cannot be carried (a wrong token, herd busy past the wait, the attempt gone) is answered
//! with no decision: the CLI then goes on as without the hook, and the screen is in charge.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::pty::PtyReport;
use crate::core::hook;
use crate::core::profile::HookKind;

/// How long a connection may take to send its call.
const READ_WAIT: Duration = Duration::from_secs(5);
/// How long a call waits for the engine's answer (below the hook's own timeout in the CLI).
const ANSWER_WAIT: Duration = Duration::from_secs(25);
/// The most a call may carry (a tool's input can hold a whole file to write).
const MAX_CALL_BYTES: u64 = 16 << 20;

/// The inline settings for a profile's hooks, routed to this very herd binary; `None` when the
/// binary's path is unknown (the screen stays in charge).
pub fn settings(kind: HookKind) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    match kind {
        HookKind::Claude => Some(hook::claude_settings(&exe.display().to_string())),
    }
}

/// A live listener for one attempt.
pub struct HookServer {
    socket: PathBuf,
    token: String,
    stop: Arc<AtomicBool>,
    /// Removed on drop, with the socket in it.
    _dir: tempfile::TempDir,
}

impl HookServer {
    /// Listens for the hook calls of attempt `key`, reported on `reports`.
    pub fn start(key: u64, reports: mpsc::Sender<PtyReport>) -> std::io::Result<HookServer> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("herd-hook-")
            .tempdir_in(base)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
        let socket = dir.path().join("hook.sock");
        let listener = UnixListener::bind(&socket)?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        let token = new_token()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_stop, thread_token) = (stop.clone(), token.clone());
        std::thread::Builder::new()
            .name(format!("hooks-{key}"))
            .spawn(move || accept_loop(listener, key, thread_token, reports, thread_stop))?;
        Ok(HookServer {
            socket,
            token,
            stop,
            _dir: dir,
        })
    }

    /// The environment `herd hook` finds the listener by.
    pub fn env(&self) -> [(String, String); 2] {
        [
            (hook::SOCKET_ENV.into(), self.socket.display().to_string()),
            (hook::TOKEN_ENV.into(), self.token.clone()),
        ]
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for HookServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so it sees the flag and ends.
        let _ = UnixStream::connect(&self.socket);
    }
}

fn accept_loop(
    listener: UnixListener,
    key: u64,
    token: String,
    reports: mpsc::Sender<PtyReport>,
    stop: Arc<AtomicBool>,
) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let (token, reports) = (token.clone(), reports.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("hook-call-{key}"))
            .spawn(move || serve(stream, key, &token, &reports));
        if let Err(error) = spawned {
            tracing::warn!("a hook call of attempt {key} could not be served: {error}");
        }
    }
}

/// One call: `{"token": ..., "input": {...}}` on one line in, the answer's text out.
fn serve(stream: UnixStream, key: u64, token: &str, reports: &mpsc::Sender<PtyReport>) {
    let answer = read_call(&stream, token)
        .and_then(|input| ask_engine(key, input, reports))
        .unwrap_or_else(|| hook::NO_DECISION.to_string());
    let mut stream = stream;
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.flush();
}

fn read_call(stream: &UnixStream, token: &str) -> Option<Value> {
    stream.set_read_timeout(Some(READ_WAIT)).ok()?;
    let mut line = String::new();
    BufReader::new(stream.take(MAX_CALL_BYTES))
        .read_line(&mut line)
        .ok()?;
    let call: Value = serde_json::from_str(&line).ok()?;
    if call.get("token").and_then(Value::as_str) != Some(token) {
        tracing::warn!("a hook call with a wrong token was refused");
        return None;
    }
    call.get("input").cloned()
}

fn ask_engine(key: u64, input: Value, reports: &mpsc::Sender<PtyReport>) -> Option<String> {
    let (reply, answer) = std::sync::mpsc::channel();
    reports
        .blocking_send(PtyReport::Hook { key, input, reply })
        .ok()?;
    answer.recv_timeout(ANSWER_WAIT).ok()
}

/// 128 random bits, in hex.
fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `herd hook`, run by the CLI for each hook: its input on stdin, the running herd's answer on
/// stdout. Without a herd to ask (no socket in the environment, a herd that is gone) it prints
/// no decision: the CLI goes on as without the hook. Always exits 0 (a failing hook must not
/// block the agent; herd's screen path is still there).
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
    let mut stream = UnixStream::connect(socket).ok()?;
    stream
        .set_read_timeout(Some(ANSWER_WAIT + READ_WAIT))
        .ok()?;
    let call = serde_json::json!({"token": token, "input": input});
    stream.write_all(format!("{call}\n").as_bytes()).ok()?;
    stream.shutdown(std::net::Shutdown::Write).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every hook report with `answer`, as the engine would.
    fn engine(mut reports: mpsc::Receiver<PtyReport>, answer: &'static str) {
        std::thread::spawn(move || {
            while let Some(report) = reports.blocking_recv() {
                if let PtyReport::Hook { reply, input, .. } = report {
                    let _ = reply.send(format!("{answer}{}", input["n"]));
                }
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
        let server = HookServer::start(7, tx).expect("start");
        let [(_, _), (_, token)] = server.env();
        assert_eq!(call(&server, &token, r#"{"n": 1}"#), "answer 1");
        assert_eq!(call(&server, &token, r#"{"n": 2}"#), "answer 2");
    }

    #[test]
    fn a_wrong_token_gets_no_decision() {
        let (tx, rx) = mpsc::channel(8);
        engine(rx, "answer ");
        let server = HookServer::start(7, tx).expect("start");
        assert_eq!(call(&server, "not-the-token", r#"{"n": 1}"#), "{}");
    }

    #[test]
    fn only_the_owner_can_reach_it_and_it_goes_with_the_attempt() {
        let (tx, _rx) = mpsc::channel(8);
        let server = HookServer::start(7, tx).expect("start");
        let socket = server.socket().to_path_buf();
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&socket), 0o600);
        assert_eq!(mode(socket.parent().expect("dir")), 0o700);
        drop(server);
        assert!(!socket.exists());
        assert!(!socket.parent().expect("dir").exists());
    }
}
