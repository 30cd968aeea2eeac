//! The control socket's server: a Unix socket in the user's private rendezvous folder
//! (`rendezvous`), 0600, reachable by this user only — the peer's uid is read with
//! `SO_PEERCRED` and a connection of any other user is closed at once. Nothing on TCP.
//!
//! One thread accepts; each connection has a thread that reads its request lines, hands each
//! command to the run's loop through a channel with a reply per request (`Request`), and writes
//! the answers in order. `events.subscribe` starts a second thread on the connection that
//! writes the run's events (a broadcast the loop publishes into) as notifications. Every call
//! is logged (`runs/herd.log`) with the caller's pid.
//!
//! The registration (`Registration`) is written when the server starts; it and the socket are
//! removed when the server is dropped, if they are still this process's. Dropping it first
//! lets every subscriber's thread write the events published before (the last ones of a run,
//! `finished` and `batch_done`, would otherwise die with the process) and end its stream, for
//! `FLUSH_LIMIT` at most.

use std::io::{self, BufReader};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::protocol::{self, Call, INTERNAL_ERROR, Incoming, RpcError};
use crate::core::approval::AnsweredBy;
use crate::run::ipc::{self, Arrival, BindError, LineRead, Listener};
use crate::run::jobs;
use crate::run::rendezvous::{Registration, Rendezvous, RunMode};

/// The longest request line read; a longer one is answered with an error and skipped.
const MAX_LINE: u64 = 4 << 20;
/// Events kept for a subscriber that reads slowly before it misses some.
const EVENT_BACKLOG: usize = 1024;
/// How long a closing server waits for its subscribers' threads to write the last events.
const FLUSH_LIMIT: Duration = Duration::from_secs(2);
/// Published when the server closes: each subscriber's thread ends its stream on it.
const END_OF_EVENTS: &str = "";

/// One command for the loop, and where its answer goes.
#[derive(Debug)]
pub struct Request {
    pub command: protocol::Method,
    /// Whose answer a `prompts.answer` is: the API's, or the web view's.
    pub by: AnsweredBy,
    pub reply: oneshot::Sender<Result<Value, RpcError>>,
}

/// What the loop holds of a running server: the requests to carry out, where to publish events,
/// and the server itself (its files removed when this is dropped).
pub struct ControlLink {
    pub requests: mpsc::UnboundedReceiver<Request>,
    pub events: broadcast::Sender<Arc<str>>,
    /// Where another face of the run (the web view) sends its requests.
    pub asker: mpsc::UnboundedSender<Request>,
    /// The `hello` result.
    pub hello: Value,
    _server: Server,
}

/// Starts the control socket of the run of `tasks`.
pub fn start(tasks: &Path, runs_dir: &Path, mode: RunMode) -> io::Result<ControlLink> {
    let names = Rendezvous::for_tasks(tasks)?;
    let registration = Registration {
        pid: std::process::id(),
        tasks: std::fs::canonicalize(tasks)?,
        runs_dir: runs_dir.to_path_buf(),
        mode,
        started_at: jiff::Timestamp::now().to_string(),
        herd_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let listener = listen(&names.control)?;
    registration.write(&names.registration)?;
    let (requests_tx, requests) = mpsc::unbounded_channel();
    let (events, _) = broadcast::channel(EVENT_BACKLOG);
    let stop = Arc::new(AtomicBool::new(false));
    let forwarders = Arc::new(AtomicUsize::new(0));
    let accept = Accept {
        listener,
        requests: requests_tx.clone(),
        events: events.clone(),
        forwarders: forwarders.clone(),
        stop: stop.clone(),
    };
    jobs::spawn_thread("herd-control", move || accept.run())?;
    tracing::info!(socket = %names.control.display(), "control socket listening");
    let hello = json!({
        "herd_version": registration.herd_version,
        "pid": registration.pid,
        "tasks": registration.tasks,
        "runs_dir": registration.runs_dir,
        "mode": registration.mode,
        "started_at": registration.started_at,
    });
    Ok(ControlLink {
        requests,
        asker: requests_tx,
        events: events.clone(),
        hello,
        _server: Server {
            socket: names.control,
            registration: names.registration,
            stop,
            events,
            forwarders,
        },
    })
}

/// Serves the control socket at `path`. Only one herd runs a file (the tasks file's lease): a
/// socket that answers there is of a herd that gave the file up and is leaving (it writes its
/// last events for `FLUSH_LIMIT` at most), so it is waited for that long before it is an error.
fn listen(path: &Path) -> io::Result<Listener> {
    let until = Instant::now() + FLUSH_LIMIT + Duration::from_secs(1);
    loop {
        match Listener::bind(path, "control socket") {
            Err(BindError::Live { .. }) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(20));
            }
            bound => return Ok(bound?),
        }
    }
}

/// The server's files, its accept thread's stop switch, and its subscribers' threads.
struct Server {
    socket: PathBuf,
    registration: PathBuf,
    stop: Arc<AtomicBool>,
    events: broadcast::Sender<Arc<str>>,
    /// How many subscribers' threads still run.
    forwarders: Arc<AtomicUsize>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.events.send(END_OF_EVENTS.into());
        let until = Instant::now() + FLUSH_LIMIT;
        while self.forwarders.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Another herd may have taken the file over since (this one was stopped, a new one
        // started): its files stay.
        let ours = std::fs::read_to_string(&self.registration)
            .ok()
            .and_then(|text| serde_json::from_str::<Registration>(&text).ok())
            .is_some_and(|r| r.pid == std::process::id());
        if ours {
            // Wakes the accept thread so it sees the switch.
            ipc::wake(&self.socket);
            let _ = std::fs::remove_file(&self.socket);
            let _ = std::fs::remove_file(&self.registration);
        }
    }
}

struct Accept {
    listener: Listener,
    requests: mpsc::UnboundedSender<Request>,
    events: broadcast::Sender<Arc<str>>,
    forwarders: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Accept {
    fn run(self) {
        loop {
            let arrival = self.listener.accept();
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            let (stream, pid) = match arrival {
                Ok(Arrival::Admitted { stream, peer }) => (stream, peer.pid),
                // Closed unanswered (the kit logged it).
                Ok(Arrival::Refused { .. }) => continue,
                Err(error) => {
                    tracing::warn!("control socket: cannot accept: {error}");
                    continue;
                }
            };
            let connection = Connection {
                stream,
                pid,
                requests: self.requests.clone(),
                events: self.events.clone(),
                forwarders: self.forwarders.clone(),
            };
            let spawned = jobs::spawn_thread("herd-control-conn", move || connection.run());
            if let Err(not) = spawned {
                tracing::warn!("control socket: cannot serve a connection: {not}");
            }
        }
    }
}

struct Connection {
    stream: UnixStream,
    pid: i32,
    requests: mpsc::UnboundedSender<Request>,
    events: broadcast::Sender<Arc<str>>,
    forwarders: Arc<AtomicUsize>,
}

/// Counts a subscriber's thread while it runs.
struct Forwarding(Arc<AtomicUsize>);

impl Forwarding {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

type Writer = Arc<Mutex<UnixStream>>;

impl Connection {
    fn run(self) {
        let Ok(writer) = self.stream.try_clone().map(|s| Arc::new(Mutex::new(s))) else {
            return;
        };
        let mut reader = BufReader::new(&self.stream);
        let mut subscribed = false;
        loop {
            let line = match ipc::read_line(&mut reader, MAX_LINE) {
                LineRead::End => break,
                LineRead::TooLong => {
                    let error = protocol::line_too_long(MAX_LINE);
                    tracing::warn!(pid = self.pid, "control call refused: {}", error.message);
                    // Answered before the rest is skipped: a client that waits for an answer
                    // without ending its line gets one too.
                    if write_line(&writer, &protocol::failure(&Value::Null, &error)).is_err()
                        || !ipc::skip_rest_of_line(&mut reader)
                    {
                        break;
                    }
                    continue;
                }
                LineRead::Line(line) => line,
            };
            let answer = match protocol::parse_bytes(&line) {
                Incoming::Blank => continue,
                Incoming::Notification => continue,
                Incoming::Invalid { id, error } => {
                    tracing::info!(
                        pid = self.pid,
                        code = error.code,
                        "control call refused: {}",
                        error.message
                    );
                    protocol::failure(&id, &error)
                }
                Incoming::Call { id, call } => self.answer(&id, call, &writer, &mut subscribed),
            };
            if write_line(&writer, &answer).is_err() {
                break;
            }
        }
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    fn answer(&self, id: &Value, call: Call, writer: &Writer, subscribed: &mut bool) -> String {
        let command = match call {
            Call::Subscribe => {
                if !*subscribed {
                    *subscribed = true;
                    self.forward_events(writer.clone());
                }
                // Logged once subscribed: a test waits for this line.
                tracing::info!(pid = self.pid, "control call events.subscribe");
                return protocol::success(id, json!({"subscribed": true}));
            }
            Call::Method(command) => command,
        };
        tracing::info!(pid = self.pid, "control call {command:?}");
        let (reply, answer) = oneshot::channel();
        let request = Request {
            command,
            by: AnsweredBy::Api,
            reply,
        };
        let outcome = match self.requests.send(request) {
            Ok(()) => answer.blocking_recv().ok(),
            Err(_) => None,
        };
        let outcome = outcome.unwrap_or_else(|| {
            Err(RpcError::new(
                INTERNAL_ERROR,
                "herd is ending: its loop is gone",
            ))
        });
        match outcome {
            Ok(result) => protocol::success(id, result),
            Err(error) => {
                tracing::info!(
                    pid = self.pid,
                    code = error.code,
                    "control call refused: {}",
                    error.message
                );
                protocol::failure(id, &error)
            }
        }
    }

    /// Writes every event published from now on to this connection, until it closes or the
    /// server does (then its write side is shut: the subscriber reads the end).
    fn forward_events(&self, writer: Writer) {
        let mut events = self.events.subscribe();
        let running = Forwarding::new(&self.forwarders);
        let spawned = jobs::spawn_thread("herd-control-events", move || {
            let _running = running;
            loop {
                let line = match events.blocking_recv() {
                    Ok(line) if *line == *END_OF_EVENTS => {
                        if let Ok(stream) = writer.lock() {
                            let _ = stream.shutdown(std::net::Shutdown::Write);
                        }
                        return;
                    }
                    Ok(line) => line.to_string(),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        protocol::event_line(&json!({"event": "lagged", "missed": missed}))
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if write_line(&writer, &line).is_err() {
                    return;
                }
            }
        });
        if let Err(not) = spawned {
            tracing::warn!("control socket: cannot stream events: {not}");
        }
    }
}

fn write_line(writer: &Writer, line: &str) -> io::Result<()> {
    let mut stream = writer
        .lock()
        .map_err(|_| io::Error::other("a writer panicked"))?;
    ipc::write_line(&mut *stream, line)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, Read, Write};

    use super::*;

    /// A subscriber that reads only after the server closed gets every event published before,
    /// then the end of its stream (before, the last events died with a run that ended).
    #[test]
    fn a_closing_server_writes_every_event_to_its_subscribers_then_ends_their_streams() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = dir.path().join("tasks.json");
        std::fs::write(&tasks, r#"{"tasks": []}"#).unwrap();
        let link = start(&tasks, dir.path(), RunMode::Headless).unwrap();
        let socket = Rendezvous::for_tasks(&tasks).unwrap().control;
        let mut stream = UnixStream::connect(&socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"events.subscribe\"}\n")
            .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut answer = String::new();
        reader.read_line(&mut answer).unwrap();
        assert!(answer.contains("subscribed"), "{answer}");
        let reading = std::thread::spawn(move || {
            let mut rest = String::new();
            reader.read_to_string(&mut rest).map(|_| rest)
        });
        const EVENTS: usize = 500;
        for n in 0..EVENTS {
            let line = protocol::event_line(&json!({"event": "note", "n": n}));
            link.events.send(line.into()).unwrap();
        }
        let closing = Instant::now();
        drop(link);
        assert!(closing.elapsed() < FLUSH_LIMIT, "{:?}", closing.elapsed());
        let rest = reading
            .join()
            .unwrap()
            .expect("the stream ends (no time-out)");
        let lines: Vec<&str> = rest.lines().collect();
        assert_eq!(lines.len(), EVENTS, "{}", lines.last().unwrap_or(&""));
        assert!(lines[EVENTS - 1].contains(&format!("\"n\":{}", EVENTS - 1)));
    }
}
