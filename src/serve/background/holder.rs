//! The session holder of a background run (`herd hold`, started by `herd run --detach`): leads
//! its own session with no terminal, runs `herd run …` (the ordinary dashboard, told by
//! `HERD_BACKGROUND=1` that it is in the background) in a pseudo-terminal it owns, keeps a vt100
//! copy of that terminal's screen, and serves it on the attach socket once the dashboard is up.
//!
//! Any number of clients: each gets the current screen at once and then the live bytes; their
//! keys go to the dashboard, and the terminal takes the size of the client that typed last (as
//! tmux does). A detach request the dashboard writes (`attach_wire::DETACH_REQUEST`) detaches
//! the client that typed last. When the dashboard exits, every client is told why and the
//! holder leaves with the dashboard's exit code. TERM or INT to the holder stops the batch the
//! way they stop a dashboard.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use thiserror::Error;

use super::{ENV_FLAG, send};
use crate::core::attach_wire::{Decoder, DetachScanner, Frame};
use crate::run::ipc::{Arrival, Listener};
use crate::run::jobs::{self, CannotStart};
use crate::run::rendezvous::{Registration, Rendezvous};

/// What the holder needs: the tasks file (for its rendezvous), herd's arguments for the
/// dashboard, and its first size.
#[derive(Debug, Clone)]
pub struct HoldOptions {
    pub tasks: PathBuf,
    pub args: Vec<OsString>,
    pub cols: u16,
    pub rows: u16,
}

#[derive(Debug, Error)]
pub enum HoldError {
    #[error("cannot find herd's own binary: {0}")]
    Exe(std::io::Error),
    #[error("cannot use the rendezvous folder: {0}")]
    Rendezvous(std::io::Error),
    #[error("cannot start the dashboard in a pseudo-terminal: {0}")]
    Pty(String),
    #[error("cannot listen on the attach socket {path}: {error}")]
    Listen {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Thread(#[from] CannotStart),
}

/// How long a client may take to accept a write before it is dropped: a stuck client must not
/// hold the dashboard's output up for the others.
const CLIENT_WRITE_WAIT: Duration = Duration::from_secs(2);

/// What the holder's threads report to its loop.
enum Event {
    Output(Vec<u8>),
    /// The terminal's reader saw its end.
    Closed,
    /// The dashboard exited with this code.
    Exited(u32),
    Joined(u64, UnixStream),
    Frame(u64, Frame),
    Gone(u64),
    Stop,
}

struct Client {
    stream: UnixStream,
    size: Option<(u16, u16)>,
}

/// The dashboard's terminal, its screen, and who is attached.
struct Session {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    parser: vt100::Parser,
    scanner: DetachScanner,
    size: (u16, u16),
    clients: BTreeMap<u64, Client>,
    /// The client that typed last: the one a detach request is about.
    active: Option<u64>,
    /// The dashboard's pid.
    dashboard: u32,
}

/// Runs the holder until the dashboard exits; the dashboard's exit code.
pub fn hold(options: &HoldOptions) -> Result<i32, HoldError> {
    // A new session with no controlling terminal: the launcher's terminal closing is nothing to us.
    let _ = rustix::process::setsid();
    let rendezvous = Rendezvous::for_tasks(&options.tasks).map_err(HoldError::Rendezvous)?;
    let (tx, rx) = mpsc::channel();
    // The dashboard's control server writes the registration (mode background, its pid).
    let mut session = start_dashboard(options, &tx)?;
    forward_stop_signals(&tx);
    let code = serve(&mut session, &rendezvous.attach, &rx, &tx)?;
    let text = session.parser.screen().contents();
    eprintln!("herd hold: the dashboard exited with {code}; its last screen:\n{text}");
    let bye = format!(
        "herd: the background batch ended (exit {code}); see herd status --tasks {}",
        options.tasks.display()
    );
    for client in session.clients.values_mut() {
        let _ = send(&mut client.stream, &Frame::Bye(bye.clone()));
    }
    let _ = std::fs::remove_file(&rendezvous.attach);
    // The control server removes the registration as the dashboard leaves; one left by a
    // dashboard that died names a dead process and is removed here.
    if Registration::read_live(&rendezvous.registration).is_none() {
        let _ = std::fs::remove_file(&rendezvous.registration);
    }
    Ok(i32::try_from(code).unwrap_or(1))
}

/// `herd run …` in a new pseudo-terminal.
fn start_dashboard(options: &HoldOptions, tx: &mpsc::Sender<Event>) -> Result<Session, HoldError> {
    let pty_error = |e: &dyn std::fmt::Display| HoldError::Pty(e.to_string());
    let pair = native_pty_system()
        .openpty(pty_size(options.cols, options.rows))
        .map_err(|e| pty_error(&e))?;
    let exe = std::env::current_exe().map_err(HoldError::Exe)?;
    let mut command = CommandBuilder::new(exe);
    command.args(&options.args);
    if let Ok(cwd) = std::env::current_dir() {
        command.cwd(cwd);
    }
    command.env(ENV_FLAG, "1");
    if std::env::var_os("TERM").is_none_or(|t| t.is_empty() || t == "dumb") {
        command.env("TERM", "xterm-256color");
    }
    let mut child = pair
        .slave
        .spawn_command(command)
        .map_err(|e| pty_error(&e))?;
    drop(pair.slave);
    let pid = child.process_id().unwrap_or(0);
    let mut reader = pair.master.try_clone_reader().map_err(|e| pty_error(&e))?;
    let writer = pair.master.take_writer().map_err(|e| pty_error(&e))?;
    let out = tx.clone();
    jobs::spawn_thread("hold-output", move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || out.send(Event::Output(buf[..n].to_vec())).is_err() {
                break;
            }
        }
        let _ = out.send(Event::Closed);
    })
    .map_err(|not| not.error)?;
    let exited = tx.clone();
    jobs::spawn_thread("hold-exit", move || {
        let code = child.wait().map_or(1, |status| status.exit_code());
        let _ = exited.send(Event::Exited(code));
    })
    .map_err(|not| not.error)?;
    let session = Session {
        master: pair.master,
        writer,
        parser: vt100::Parser::new(nonzero(options.rows), nonzero(options.cols), 0),
        scanner: DetachScanner::default(),
        size: (options.cols, options.rows),
        clients: BTreeMap::new(),
        active: None,
        dashboard: pid,
    };
    Ok(session)
}

fn pty_size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

/// TERM and INT stop the batch (passed to the dashboard as TERM); HUP is ignored.
fn forward_stop_signals(tx: &mpsc::Sender<Event>) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else {
        eprintln!("herd hold: cannot listen for signals");
        return;
    };
    let tx = tx.clone();
    let forwarding = jobs::spawn_thread("hold-signals", move || {
        for signal in signals.forever() {
            if signal != SIGHUP && tx.send(Event::Stop).is_err() {
                break;
            }
        }
    });
    if let Err(not) = forwarding {
        eprintln!("herd hold: cannot listen for signals: {not}");
    }
}

/// The loop: until the dashboard has exited and its terminal is drained; its exit code.
fn serve(
    session: &mut Session,
    attach: &Path,
    rx: &mpsc::Receiver<Event>,
    tx: &mpsc::Sender<Event>,
) -> Result<u32, HoldError> {
    let mut listening = false;
    let mut exited: Option<u32> = None;
    let mut closed = false;
    let mut stop_sent = false;
    loop {
        let wait = if exited.is_some() {
            Duration::from_secs(2)
        } else {
            Duration::from_secs(3600)
        };
        let event = match rx.recv_timeout(wait) {
            Ok(event) => event,
            // The dashboard exited and its terminal stays quiet (a leftover holds it open).
            Err(_) if exited.is_some() => break,
            Err(_) => continue,
        };
        match event {
            Event::Output(bytes) => session.on_output(&bytes),
            Event::Closed => closed = true,
            Event::Exited(code) => exited = Some(code),
            Event::Joined(id, stream) => session.join(id, stream),
            Event::Frame(id, frame) => session.on_frame(id, frame),
            Event::Gone(id) => session.drop_client(id, None),
            Event::Stop if !stop_sent => {
                stop_sent = true;
                session.stop_dashboard();
            }
            Event::Stop => {}
        }
        // Served once the dashboard is up: an invalid tasks file ends it before that, and the
        // launcher reports what it printed.
        if !listening && exited.is_none() && session.parser.screen().alternate_screen() {
            let listener =
                Listener::bind(attach, "attach socket").map_err(|error| HoldError::Listen {
                    path: attach.to_path_buf(),
                    error: error.into(),
                })?;
            accept_clients(listener, tx.clone())?;
            listening = true;
        }
        if let (Some(code), true) = (exited, closed) {
            return Ok(code);
        }
    }
    Ok(exited.unwrap_or(1))
}

/// Accepts clients on their own thread: a peer of another user is told so and closed; each
/// accepted one is read on a thread of its own.
fn accept_clients(listener: Listener, tx: mpsc::Sender<Event>) -> Result<(), CannotStart> {
    let accepting = jobs::spawn_thread("hold-accept", move || {
        let mut next_id = 0u64;
        loop {
            let stream = match listener.accept() {
                Ok(Arrival::Admitted { stream, .. }) => stream,
                Ok(Arrival::Refused { mut stream, why }) => {
                    eprintln!("herd hold: refused an attach from user: {why}");
                    let why = "refused: this background herd belongs to another user";
                    let _ = send(&mut stream, &Frame::Bye(why.into()));
                    continue;
                }
                Err(_) => continue,
            };
            next_id += 1;
            let id = next_id;
            let _ = stream.set_write_timeout(Some(CLIENT_WRITE_WAIT));
            let Ok(reading) = stream.try_clone() else {
                continue;
            };
            if tx.send(Event::Joined(id, stream)).is_err() {
                break;
            }
            read_client(id, reading, tx.clone());
        }
    });
    accepting.map(drop).map_err(|not| not.error)
}

fn read_client(id: u64, mut stream: UnixStream, tx: mpsc::Sender<Event>) {
    let gone = tx.clone();
    let reading = jobs::spawn_thread(format!("hold-client-{id}"), move || {
        let mut decoder = Decoder::default();
        let mut buf = [0u8; 4096];
        'reading: while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            decoder.push(&buf[..n]);
            while let Some(frame) = decoder.next_frame() {
                let Ok(frame) = frame else { break 'reading };
                if tx.send(Event::Frame(id, frame)).is_err() {
                    break 'reading;
                }
            }
        }
        let _ = tx.send(Event::Gone(id));
    });
    if let Err(not) = reading {
        // A client nobody reads is let go at once.
        eprintln!("herd hold: cannot read an attached client: {not}");
        let _ = gone.send(Event::Gone(id));
    }
}

impl Session {
    /// The dashboard's bytes: into the screen copy and out to every client, less the detach
    /// requests, each of which detaches the client that typed last.
    fn on_output(&mut self, bytes: &[u8]) {
        let (clean, requests) = self.scanner.scan(bytes);
        self.parser.process(&clean);
        if !clean.is_empty() {
            let ids: Vec<u64> = self.clients.keys().copied().collect();
            for id in ids {
                if let Some(client) = self.clients.get_mut(&id)
                    && send(&mut client.stream, &Frame::Output(clean.clone())).is_err()
                {
                    self.drop_client(id, None);
                }
            }
        }
        if requests > 0
            && let Some(id) = self.active
        {
            let bye = "herd: detached; the batch runs on in the background";
            self.drop_client(id, Some(bye));
        }
    }

    fn join(&mut self, id: u64, stream: UnixStream) {
        self.clients.insert(id, Client { stream, size: None });
    }

    fn on_frame(&mut self, id: u64, frame: Frame) {
        match frame {
            Frame::Hello { cols, rows } => {
                self.set_client_size(id, cols, rows);
                self.active = Some(id);
                self.resize_to(id);
                let screen = self.parser.screen();
                let mut state = b"\x1b[H\x1b[2J".to_vec();
                state.extend_from_slice(screen.state_formatted().as_bytes());
                if let Some(client) = self.clients.get_mut(&id)
                    && send(&mut client.stream, &Frame::Output(state)).is_err()
                {
                    self.drop_client(id, None);
                }
            }
            Frame::Resize { cols, rows } => {
                self.set_client_size(id, cols, rows);
                if self.active == Some(id) {
                    self.resize_to(id);
                }
            }
            Frame::Input(keys) => {
                self.active = Some(id);
                self.resize_to(id);
                let _ = self.writer.write_all(&keys);
                let _ = self.writer.flush();
            }
            // Holder → client frames coming the wrong way are ignored.
            Frame::Output(_) | Frame::Bye(_) => {}
        }
    }

    fn set_client_size(&mut self, id: u64, cols: u16, rows: u16) {
        if let Some(client) = self.clients.get_mut(&id) {
            client.size = Some((cols.max(1), rows.max(1)));
        }
    }

    /// The terminal takes the size of client `id`.
    fn resize_to(&mut self, id: u64) {
        let Some((cols, rows)) = self.clients.get(&id).and_then(|c| c.size) else {
            return;
        };
        if (cols, rows) == self.size {
            return;
        }
        self.size = (cols, rows);
        self.parser.set_size(nonzero(rows), nonzero(cols));
        if let Err(error) = self.master.resize(pty_size(cols, rows)) {
            eprintln!("herd hold: cannot resize the dashboard's terminal: {error}");
        }
    }

    /// Ends client `id`'s connection, telling it why when there is a reason.
    fn drop_client(&mut self, id: u64, why: Option<&str>) {
        if let Some(mut client) = self.clients.remove(&id) {
            if let Some(why) = why {
                let _ = send(&mut client.stream, &Frame::Bye(why.to_string()));
            }
            let _ = client.stream.shutdown(std::net::Shutdown::Both);
        }
        if self.active == Some(id) {
            self.active = self.clients.keys().next_back().copied();
        }
    }

    /// Stops the batch as TERM stops a dashboard: the agents end, their tasks go back to
    /// retryable.
    fn stop_dashboard(&mut self) {
        let pid = i32::try_from(self.dashboard)
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
    }
}
