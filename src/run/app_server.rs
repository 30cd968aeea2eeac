//! The transport of herd's second client of an attempt's Codex app server: a private folder for
//! the server's socket, the launcher running server and TUI in the attempt's process group (`herd
//! app-server-pair`), and a worker speaking WebSocket that carries messages both ways. It only
//! carries bytes and never blocks the loop; a server herd cannot reach leaves the screen in
//! charge. Folder and socket go when `AppServerLink` is dropped.

use std::io::ErrorKind;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tungstenite::{Message, WebSocket};

use super::ipc;
use super::jobs::{self, Outbox};
use crate::core::wire::app_server::{self, AppServerReport, Subscriber};

/// How long the worker looks for the server's socket (the launcher waits as long for it).
const CONNECT_WAIT: Duration = Duration::from_secs(60);
/// Between two looks for the socket.
const CONNECT_POLL: Duration = Duration::from_millis(25);
/// The worker's read blocks this long at most before it looks at its outbox.
const READ_POLL: Duration = Duration::from_millis(20);
/// The hidden subcommand that runs the server and then the TUI.
pub const PAIR_COMMAND: &str = "app-server-pair";

/// herd's client of one attempt's app server.
pub struct AppServerLink {
    socket: PathBuf,
    outbox: std_mpsc::Sender<String>,
    stop: Arc<AtomicBool>,
    /// Removed on drop, with the socket in it.
    _dir: tempfile::TempDir,
}

impl AppServerLink {
    /// A private folder for attempt `key`'s socket, and the worker that connects once the server
    /// listens.
    pub fn start(key: u64, reports: Outbox<AppServerReport>) -> std::io::Result<AppServerLink> {
        let dir = ipc::private_subfolder("herd-codex-")?;
        let socket = dir.path().join(app_server::SOCKET_NAME);
        let stop = Arc::new(AtomicBool::new(false));
        let (outbox, inbox) = std_mpsc::channel();
        let worker = Worker {
            key,
            socket: socket.clone(),
            reports,
            inbox,
            stop: stop.clone(),
        };
        jobs::spawn_thread(format!("app-server-{key}"), move || worker.run())?;
        Ok(AppServerLink {
            socket,
            outbox,
            stop,
            _dir: dir,
        })
    }

    /// `unix://<socket>`, for `--listen` and `--remote`.
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// Sends a message (an answer of the attempt's) to the server.
    pub fn send(&self, text: String) {
        let _ = self.outbox.send(text);
    }
}

impl Drop for AppServerLink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The argv that starts an attempt: its `{app_server}` element replaced by `--remote <url>` under
/// the launcher, or by `--no-daemon` where herd runs no server.
pub fn argv_for(argv: Vec<String>, url: Option<&str>, herd_exe: &str) -> Vec<String> {
    if !argv.iter().any(|a| a == app_server::PLACEHOLDER) {
        return argv;
    }
    let Some(url) = url else {
        return argv
            .into_iter()
            .map(|a| match a == app_server::PLACEHOLDER {
                true => "--no-daemon".to_string(),
                false => a,
            })
            .collect();
    };
    let mut out = vec![
        herd_exe.to_string(),
        PAIR_COMMAND.to_string(),
        "--listen".to_string(),
        url.to_string(),
        "--".to_string(),
    ];
    for arg in argv {
        if arg == app_server::PLACEHOLDER {
            out.push("--remote".to_string());
            out.push(url.to_string());
        } else {
            out.push(arg);
        }
    }
    out
}

struct Worker {
    key: u64,
    socket: PathBuf,
    reports: Outbox<AppServerReport>,
    inbox: std_mpsc::Receiver<String>,
    stop: Arc<AtomicBool>,
}

impl Worker {
    fn run(self) {
        let why = match self.connect() {
            Ok(socket) => self.serve(socket),
            Err(why) => why,
        };
        if !self.stop.load(Ordering::SeqCst) {
            tracing::info!(attempt = self.key, "the app server connection ended: {why}");
        }
        self.report(AppServerReport::Closed(why));
    }

    fn report(&self, report: AppServerReport) {
        let _ = self.reports.blocking_send(report);
    }

    /// The WebSocket once the server listens.
    fn connect(&self) -> Result<WebSocket<UnixStream>, String> {
        let deadline = Instant::now() + CONNECT_WAIT;
        let stream = loop {
            if self.stop.load(Ordering::SeqCst) {
                return Err("the attempt ended before the server listened".into());
            }
            match ipc::connect_own(&self.socket) {
                Ok(stream) => break stream,
                // Served by another user: nothing to wait for.
                Err(error) if error.kind() == ErrorKind::PermissionDenied => {
                    return Err(format!("refused {}: {error}", self.socket.display()));
                }
                Err(_) if Instant::now() < deadline => std::thread::sleep(CONNECT_POLL),
                Err(error) => {
                    return Err(format!("no server at {}: {error}", self.socket.display()));
                }
            }
        };
        let (socket, _) = tungstenite::client("ws://localhost/", stream)
            .map_err(|e| format!("the WebSocket handshake failed: {e}"))?;
        socket
            .get_ref()
            .set_read_timeout(Some(READ_POLL))
            .map_err(|e| e.to_string())?;
        Ok(socket)
    }

    /// Reads and writes until the connection or the attempt ends; why it ended.
    fn serve(&self, mut socket: WebSocket<UnixStream>) -> String {
        let mut subscriber = Subscriber::new();
        let start = subscriber.start(env!("CARGO_PKG_VERSION"));
        if let Err(error) = socket.send(Message::text(start.to_string())) {
            return format!("initialize could not be sent: {error}");
        }
        loop {
            if self.stop.load(Ordering::SeqCst) {
                let _ = socket.close(None);
                return "the attempt ended".into();
            }
            while let Ok(text) = self.inbox.try_recv() {
                tracing::debug!(attempt = self.key, "to the app server: {text}");
                if let Err(error) = socket.send(Message::text(text)) {
                    return format!("an answer could not be sent: {error}");
                }
            }
            match socket.read() {
                Ok(Message::Text(text)) => {
                    let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else {
                        continue;
                    };
                    tracing::debug!(attempt = self.key, "app server: {message}");
                    let was_initialized = subscriber.initialized();
                    for reply in subscriber.on_message(&message) {
                        if let Err(error) = socket.send(Message::text(reply.to_string())) {
                            return format!("a subscription could not be sent: {error}");
                        }
                    }
                    if !was_initialized && subscriber.initialized() {
                        self.report(AppServerReport::Connected);
                    }
                    if app_server::wanted(&message) {
                        self.report(AppServerReport::Message(message));
                    }
                }
                Ok(Message::Close(_)) => return "the server closed the connection".into(),
                Ok(_) => {}
                Err(tungstenite::Error::Io(error))
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    // Pongs and queued frames go out between reads.
                    let _ = socket.flush();
                }
                Err(error) => return format!("the connection failed: {error}"),
            }
        }
    }
}

/// How long the server is given to end by itself after the TUI, before it is killed.
const SERVER_GRACE: Duration = Duration::from_secs(3);

/// `herd app-server-pair --listen <url> -- <TUI argv>`, the attempt's agent: starts `<program>
/// app-server` (the TUI's own program, the same version) in the process group, waits until it
/// listens, runs the TUI, and ends the server with it. Returns the TUI's exit status.
pub fn run_pair(url: &str, tui: &[String]) -> i32 {
    let (Some(program), Some(socket)) = (tui.first(), url.strip_prefix("unix://")) else {
        eprintln!("herd app-server-pair: needs --listen unix://<socket> and the TUI's command");
        return 2;
    };
    let mut server = match start_server(program, url, Path::new(socket)) {
        Ok(server) => server,
        Err((message, code)) => {
            eprintln!("herd: {message}");
            return code;
        }
    };
    let status = std::process::Command::new(program).args(&tui[1..]).status();
    end_server(&mut server);
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .or_else(|| status.signal().map(|s| 128 + s))
                .unwrap_or(1)
        }
        Err(error) => {
            eprintln!("herd: cannot start {program}: {error}");
            127
        }
    }
}

/// The server, listening on `socket`; or what went wrong and the exit status to give.
fn start_server(
    program: &str,
    url: &str,
    socket: &Path,
) -> Result<std::process::Child, (String, i32)> {
    let log = socket.with_extension("log");
    let output = std::fs::File::create(&log)
        .map_err(|e| (format!("cannot write {}: {e}", log.display()), 1))?;
    let stdout = output
        .try_clone()
        .map_err(|e| (format!("cannot write {}: {e}", log.display()), 1))?;
    let mut server = std::process::Command::new(program)
        .args(["app-server", "--listen", url])
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(output)
        .spawn()
        .map_err(|e| (format!("cannot start {program} app-server: {e}"), 127))?;
    let deadline = Instant::now() + CONNECT_WAIT;
    while !ipc::answers(socket) {
        if let Ok(Some(status)) = server.try_wait() {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            return Err((
                format!("{program} app-server ended ({status}) before it listened:\n{said}"),
                1,
            ));
        }
        if Instant::now() >= deadline {
            end_server(&mut server);
            return Err((
                format!("{program} app-server did not listen on {url} in time"),
                1,
            ));
        }
        std::thread::sleep(CONNECT_POLL);
    }
    Ok(server)
}

/// TERM, `SERVER_GRACE` to end, then KILL.
fn end_server(server: &mut std::process::Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(server.id() as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    let deadline = Instant::now() + SERVER_GRACE;
    while Instant::now() < deadline {
        if !matches!(server.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(CONNECT_POLL);
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use tokio::sync::mpsc;

    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_placeholder_becomes_the_remote_under_the_launcher() {
        let argv = strings(&["codex", "{app_server}", "-s", "read-only", "hi"]);
        assert_eq!(
            argv_for(argv.clone(), Some("unix:///r/codex.sock"), "/bin/herd"),
            strings(&[
                "/bin/herd",
                PAIR_COMMAND,
                "--listen",
                "unix:///r/codex.sock",
                "--",
                "codex",
                "--remote",
                "unix:///r/codex.sock",
                "-s",
                "read-only",
                "hi"
            ])
        );
        // No server (another host): a session of the TUI's own, never the shared daemon.
        assert_eq!(
            argv_for(argv, None, "/bin/herd"),
            strings(&["codex", "--no-daemon", "-s", "read-only", "hi"])
        );
        // A command without the placeholder keeps the screen path as it is.
        let plain = strings(&["codex", "--no-daemon", "hi"]);
        assert_eq!(
            argv_for(plain.clone(), Some("unix:///r/codex.sock"), "/bin/herd"),
            plain
        );
    }

    /// The next report of the worker, within a few seconds.
    fn next_report(rx: &mut mpsc::Receiver<AppServerReport>) -> AppServerReport {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match rx.try_recv() {
                Ok(report) => return report,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(error) => panic!("no report from the worker: {error}"),
            }
        }
    }

    fn read_json(server: &mut WebSocket<UnixStream>) -> Value {
        loop {
            if let Message::Text(text) = server.read().expect("read") {
                return serde_json::from_str(text.as_str()).expect("json");
            }
        }
    }

    fn send_json(server: &mut WebSocket<UnixStream>, message: Value) {
        server
            .send(Message::text(message.to_string()))
            .expect("send");
    }

    #[test]
    fn the_worker_subscribes_carries_requests_to_the_engine_and_answers_back() {
        let (tx, mut rx) = mpsc::channel(64);
        let link = AppServerLink::start(7, Outbox::new(tx)).expect("start");
        let path = PathBuf::from(link.url().trim_start_matches("unix://"));
        // A stand-in for Codex's app server on the attempt's socket.
        let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        let (stream, _) = listener.accept().expect("accept");
        let mut server = tungstenite::accept(stream).expect("handshake");
        let init = read_json(&mut server);
        assert_eq!(init["method"], "initialize");
        send_json(
            &mut server,
            serde_json::json!({"id": init["id"], "result": {}}),
        );
        assert!(matches!(next_report(&mut rx), AppServerReport::Connected));
        assert_eq!(read_json(&mut server)["method"], "initialized");
        let list = read_json(&mut server);
        assert_eq!(list["method"], "thread/loaded/list");
        send_json(
            &mut server,
            serde_json::json!({"id": list["id"], "result": {"data": ["t1"]}}),
        );
        let resume = read_json(&mut server);
        assert_eq!(resume["method"], "thread/resume");
        assert_eq!(resume["params"]["threadId"], "t1");
        // A delta is the worker's alone; a request to approve reaches the engine.
        send_json(
            &mut server,
            serde_json::json!({"method": "item/agentMessage/delta", "params": {"delta": "x"}}),
        );
        let request = serde_json::json!({"id": 0, "method": app_server::COMMAND_APPROVAL,
            "params": {"threadId": "t1", "itemId": "c", "command": "touch x"}});
        send_json(&mut server, request.clone());
        match next_report(&mut rx) {
            AppServerReport::Message(message) => assert_eq!(message, request),
            other => panic!("expected the request, got {other:?}"),
        }
        // The attempt's answer goes back on the same connection.
        link.send(
            app_server::answer(&serde_json::json!(0), app_server::Answer::Accept).to_string(),
        );
        assert_eq!(
            read_json(&mut server),
            serde_json::json!({"id": 0, "result": {"decision": "accept"}})
        );
        drop(link);
        assert!(matches!(next_report(&mut rx), AppServerReport::Closed(_)));
    }

    #[test]
    fn the_socket_folder_is_private_and_goes_with_the_link() {
        let (tx, _rx) = mpsc::channel(8);
        let link = AppServerLink::start(7, Outbox::new(tx)).expect("start");
        let socket = PathBuf::from(link.url().trim_start_matches("unix://"));
        let dir = socket.parent().expect("dir").to_path_buf();
        let mode = std::fs::metadata(&dir).expect("dir").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        drop(link);
        assert!(!dir.exists());
    }
}
