//! The client end of the control socket, for `herd ctl` and `herd mcp`: finds the socket of the
//! herd that runs a tasks file (`rendezvous`), sends requests and reads their answers and the
//! events that follow a subscription. A call waits for its answer `DEFAULT_ANSWER_LIMIT` at
//! most (`with_answer_limit`): a herd that hangs must not hang the script or agent that asked.
//! Events after a subscription are waited for as long as the run lasts.

use std::io::{self, BufReader};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use super::protocol;
use crate::run::ipc::{self, LineRead};
use crate::run::rendezvous::Rendezvous;

#[derive(Debug, Error)]
pub enum ClientError {
    #[error(
        "no herd runs {}: start one with `herd run --tasks {}` (or `--headless`)",
        tasks.display(),
        tasks.display()
    )]
    NotRunning { tasks: PathBuf },
    #[error("no tasks file {}", tasks.display())]
    NoTasksFile { tasks: PathBuf },
    #[error("cannot find the control socket of {}: {source}", tasks.display())]
    NoRendezvous { tasks: PathBuf, source: io::Error },
    #[error("cannot reach the control socket {}: {source}", socket.display())]
    Connect { socket: PathBuf, source: io::Error },
    #[error(
        "the herd on {} closed the connection without answering (it answers only the user it \
         runs as)",
        socket.display()
    )]
    Closed { socket: PathBuf },
    #[error("the control socket {}: {source}", socket.display())]
    Io { socket: PathBuf, source: io::Error },
    #[error(
        "the herd on {} did not answer {method} within {}s: it may be hung or very busy; see \
         `herd status` (its pid) and its runs/herd.log, or wait longer with --timeout SECS",
        socket.display(),
        after.as_secs_f64()
    )]
    NoAnswer {
        socket: PathBuf,
        method: String,
        after: Duration,
    },
    #[error("the herd sent a line that is not JSON: {line}")]
    NotJson { line: String },
    #[error("the herd on {} sent a line over {limit} bytes", socket.display())]
    TooLong { socket: PathBuf, limit: u64 },
}

/// The longest line read from the herd (an event carries a task's text and its prompt's
/// screen, far below this).
const MAX_LINE: u64 = 64 << 20;

/// How long a call waits for its answer unless told otherwise: every method answers at once
/// (none waits for an agent), so this is long only for a herd that is very busy.
pub const DEFAULT_ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// A connection to a running herd.
pub struct Client {
    socket: PathBuf,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
    /// How long `call` waits for its answer; `None`: for ever.
    answer_limit: Option<Duration>,
}

impl Client {
    /// Connects to the herd that runs `tasks`.
    pub fn for_tasks(tasks: &Path) -> Result<Client, ClientError> {
        if !tasks.is_file() {
            return Err(ClientError::NoTasksFile {
                tasks: tasks.to_path_buf(),
            });
        }
        let names = Rendezvous::for_tasks(tasks).map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ClientError::NotRunning {
                tasks: tasks.to_path_buf(),
            },
            _ => ClientError::NoRendezvous {
                tasks: tasks.to_path_buf(),
                source,
            },
        })?;
        match Client::connect(&names.control) {
            Err(ClientError::Connect { source, .. })
                if matches!(
                    source.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
                ) =>
            {
                Err(ClientError::NotRunning {
                    tasks: tasks.to_path_buf(),
                })
            }
            other => other,
        }
    }

    /// Connects to the socket at `socket`.
    pub fn connect(socket: &Path) -> Result<Client, ClientError> {
        let stream = ipc::connect(socket).map_err(|source| ClientError::Connect {
            socket: socket.to_path_buf(),
            source,
        })?;
        let writer = stream.try_clone().map_err(|source| ClientError::Io {
            socket: socket.to_path_buf(),
            source,
        })?;
        Ok(Client {
            socket: socket.to_path_buf(),
            reader: BufReader::new(stream),
            writer,
            next_id: 1,
            answer_limit: Some(DEFAULT_ANSWER_LIMIT),
        })
    }

    /// Waits `limit` for each answer (`None`: for ever) instead of `DEFAULT_ANSWER_LIMIT`.
    pub fn with_answer_limit(mut self, limit: Option<Duration>) -> Client {
        self.answer_limit = limit.filter(|limit| !limit.is_zero());
        self
    }

    /// Calls `method`: its result, or the error object the herd answered with.
    pub fn call(
        &mut self,
        method: &str,
        params: &Value,
    ) -> Result<Result<Value, Value>, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let line = protocol::request_line(id, method, params);
        self.send(&line)?;
        self.limit_reads(self.answer_limit)?;
        let answer = self.answer(id).map_err(|error| match error {
            ClientError::Io { source, .. }
                if matches!(
                    source.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                ClientError::NoAnswer {
                    socket: self.socket.clone(),
                    method: method.to_string(),
                    after: self.answer_limit.unwrap_or_default(),
                }
            }
            other => other,
        });
        // Events after a subscription come when they come.
        self.limit_reads(None)?;
        answer
    }

    fn limit_reads(&self, limit: Option<Duration>) -> Result<(), ClientError> {
        self.reader
            .get_ref()
            .set_read_timeout(limit)
            .map_err(|source| self.io(source))
    }

    /// The answer to call `id` (events read before it are skipped).
    fn answer(&mut self, id: u64) -> Result<Result<Value, Value>, ClientError> {
        loop {
            let Some(message) = self.next_message()? else {
                return Err(ClientError::Closed {
                    socket: self.socket.clone(),
                });
            };
            // Events of a subscription may come before the answer.
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            return Ok(match message.get("error") {
                Some(error) => Err(error.clone()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            });
        }
    }

    /// The next line the herd sends, read as JSON; `None` when it closed the connection.
    pub fn next_message(&mut self) -> Result<Option<Value>, ClientError> {
        let line = match ipc::read_line_or_error(&mut self.reader, MAX_LINE) {
            Err(source) => return Err(self.io(source)),
            Ok(LineRead::End) => return Ok(None),
            Ok(LineRead::TooLong) => {
                return Err(ClientError::TooLong {
                    socket: self.socket.clone(),
                    limit: MAX_LINE,
                });
            }
            Ok(LineRead::Line(line)) => line,
        };
        serde_json::from_slice(&line)
            .map(Some)
            .map_err(|_| ClientError::NotJson {
                line: String::from_utf8_lossy(&line).into_owned(),
            })
    }

    fn send(&mut self, line: &str) -> Result<(), ClientError> {
        let sent = ipc::write_line(&mut self.writer, line);
        match sent {
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Err(ClientError::Closed {
                socket: self.socket.clone(),
            }),
            other => other.map_err(|source| self.io(source)),
        }
    }

    fn io(&self, source: io::Error) -> ClientError {
        match source.kind() {
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => ClientError::Closed {
                socket: self.socket.clone(),
            },
            _ => ClientError::Io {
                socket: self.socket.clone(),
                source,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;
    use std::time::Instant;

    use serde_json::json;

    use super::*;

    /// A herd that accepts and never answers: the call gives up after its limit, saying so.
    #[test]
    fn a_call_a_hung_herd_does_not_answer_gives_up_after_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hung.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let _held = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_secs(30));
            drop(stream);
        });
        let limit = Duration::from_millis(300);
        let mut client = Client::connect(&socket)
            .unwrap()
            .with_answer_limit(Some(limit));
        let asked = Instant::now();
        let error = client.call("hello", &json!({})).unwrap_err();
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "{:?}",
            asked.elapsed()
        );
        assert!(matches!(error, ClientError::NoAnswer { .. }), "{error:?}");
        let said = error.to_string();
        assert!(said.contains("did not answer hello within 0.3s"), "{said}");
        assert!(said.contains("--timeout"), "{said}");
    }
}
