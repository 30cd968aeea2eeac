//! `herd attach`: this terminal as a client of a background run's holder. Raw mode and the
//! alternate screen while attached; the keys go to the dashboard except the detach key
//! (Ctrl-\), which leaves; the holder's bytes go to the screen. Leaving by the key, by the
//! dashboard's `q` → `d`, or by the terminal closing (HUP, end of input) leaves the batch
//! running; the terminal is given back as it was.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};

use thiserror::Error;

use super::send;
use crate::core::alternate_screen::AlternateScreen;
use crate::core::attach_wire::{Decoder, Frame, split_at_detach_key};
use crate::run::ipc;
use crate::run::jobs;

#[derive(Debug, Error)]
pub enum AttachError {
    #[error("no background herd answers on {path}: {error}")]
    Connect { path: String, error: io::Error },
    #[error("cannot set up this terminal: {0}")]
    Terminal(io::Error),
    /// The holder's own words (`refused: …`).
    #[error("{0}")]
    Refused(String),
}

/// How an attach ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The detach key: the batch runs on.
    DetachKey,
    /// The holder said why (detached by the dashboard, the batch ended).
    Said(String),
    /// This terminal closed (HUP, TERM, end of input): the batch runs on.
    TerminalClosed,
    /// The holder's connection ended without a word.
    Lost,
}

enum Wake {
    Key,
    Closed,
    Bye(String),
    Lost,
    Resized,
}

/// Undoes what the dashboard may have turned on in this terminal (the holder's screen state
/// carries the dashboard's modes to the client).
const GIVE_BACK: &[u8] =
    b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>\x1b[0m\x1b[?25h";

/// Leaves the alternate screen and puts the cursor back where it was on entry.
const LEAVE_ALTERNATE: &[u8] = b"\x1b[?1049l";

/// Attaches this terminal to the holder at `socket` until one side leaves.
pub fn attach(socket: &Path) -> Result<Ending, AttachError> {
    let shown = socket.display().to_string();
    let stream = ipc::connect(socket).map_err(|error| AttachError::Connect {
        path: shown.clone(),
        error,
    })?;
    let mut writer = stream.try_clone().map_err(AttachError::Terminal)?;
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    if let Err(error) = send(&mut writer, &Frame::Hello { cols, rows }) {
        // The holder may have closed at once: it says why first.
        return Err(last_word(&stream).map_or(AttachError::Terminal(error), AttachError::Refused));
    }
    crossterm::terminal::enable_raw_mode().map_err(AttachError::Terminal)?;
    let mut out = io::stdout();
    let _ = out.write_all(b"\x1b[?1049h");
    let _ = out.flush();
    let writer = Arc::new(Mutex::new(writer));
    let alternate = Arc::new(Mutex::new(AlternateScreen::new(true)));
    let (tx, rx) = mpsc::channel();
    read_holder(stream, Arc::clone(&alternate), tx.clone());
    read_keys(Arc::clone(&writer), tx.clone());
    watch_signals(tx);
    let ending = loop {
        match rx.recv() {
            Ok(Wake::Resized) => {
                let (cols, rows) = crossterm::terminal::size().unwrap_or((cols, rows));
                if let Ok(mut w) = writer.lock() {
                    let _ = send(&mut w, &Frame::Resize { cols, rows });
                }
            }
            Ok(Wake::Key) => break Ending::DetachKey,
            Ok(Wake::Closed) => break Ending::TerminalClosed,
            Ok(Wake::Bye(text)) => break Ending::Said(text),
            Ok(Wake::Lost) | Err(_) => break Ending::Lost,
        }
    };
    let _ = out.write_all(GIVE_BACK);
    // Only while the dashboard's screen is still up: a dashboard that ended left it already and
    // printed its summary below the shell's output; leaving again would restore the cursor
    // saved on entry, and the shell's prompt would land over the summary.
    if alternate.lock().map_or(true, |screen| screen.is_on()) {
        let _ = out.write_all(LEAVE_ALTERNATE);
    }
    let _ = out.flush();
    let _ = crossterm::terminal::disable_raw_mode();
    if let Ok(w) = writer.lock() {
        let _ = w.shutdown(std::net::Shutdown::Both);
    }
    match ending {
        Ending::Said(text) if text.starts_with("refused:") => Err(AttachError::Refused(text)),
        other => Ok(other),
    }
}

/// What the holder said before closing a connection it would not serve.
fn last_word(stream: &UnixStream) -> Option<String> {
    let mut stream = stream.try_clone().ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .ok()?;
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let mut decoder = Decoder::default();
    decoder.push(&bytes);
    std::iter::from_fn(|| decoder.next_frame()).find_map(|frame| match frame {
        Ok(Frame::Bye(text)) => Some(text),
        _ => None,
    })
}

/// The holder's frames: output to the screen (followed by `alternate`), its last word to the
/// loop.
fn read_holder(
    mut stream: UnixStream,
    alternate: Arc<Mutex<AlternateScreen>>,
    tx: mpsc::Sender<Wake>,
) {
    spawn_or_lose("attach-holder", &tx.clone(), move || {
        let mut decoder = Decoder::default();
        let mut buf = [0u8; 16 * 1024];
        let mut out = io::stdout();
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            decoder.push(&buf[..n]);
            while let Some(frame) = decoder.next_frame() {
                match frame {
                    Ok(Frame::Output(bytes)) => {
                        if let Ok(mut screen) = alternate.lock() {
                            screen.feed(&bytes);
                        }
                        let _ = out.write_all(&bytes);
                        let _ = out.flush();
                    }
                    Ok(Frame::Bye(text)) => {
                        let _ = tx.send(Wake::Bye(text));
                        return;
                    }
                    Ok(_) => {}
                    Err(_) => {
                        let _ = tx.send(Wake::Lost);
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Wake::Lost);
    });
}

/// This terminal's keys: to the holder, up to the detach key.
fn read_keys(writer: Arc<Mutex<UnixStream>>, tx: mpsc::Sender<Wake>) {
    spawn_or_lose("attach-keys", &tx.clone(), move || {
        let mut stdin = io::stdin();
        let mut buf = [0u8; 4096];
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Wake::Closed);
                    return;
                }
                Ok(n) => n,
            };
            let (keys, detach) = split_at_detach_key(&buf[..n]);
            if !keys.is_empty()
                && let Ok(mut w) = writer.lock()
                && send(&mut w, &Frame::Input(keys.to_vec())).is_err()
            {
                let _ = tx.send(Wake::Lost);
                return;
            }
            if detach {
                let _ = tx.send(Wake::Key);
                return;
            }
        }
    });
}

/// WINCH resizes; HUP and TERM mean this terminal is gone (the batch runs on).
fn watch_signals(tx: mpsc::Sender<Wake>) {
    use signal_hook::consts::{SIGHUP, SIGTERM, SIGWINCH};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGWINCH, SIGHUP, SIGTERM]) else {
        return;
    };
    spawn_or_lose("attach-signals", &tx.clone(), move || {
        for signal in signals.forever() {
            let wake = if signal == SIGWINCH {
                Wake::Resized
            } else {
                Wake::Closed
            };
            if tx.send(wake).is_err() {
                return;
            }
        }
    });
}

/// Runs `work` on a thread named `name`; one that cannot start ends the attach as lost (the
/// terminal given back), not a half-working one.
fn spawn_or_lose(name: &str, tx: &mpsc::Sender<Wake>, work: impl FnOnce() + Send + 'static) {
    if jobs::spawn_thread(name, work).is_err() {
        let _ = tx.send(Wake::Lost);
    }
}
