//! Background runs, the dtach/tmux way: `herd run --detach` starts a session holder (`holder`)
//! that runs the ordinary dashboard in a pseudo-terminal of its own, keeps that terminal's
//! screen, and serves it on the attach socket of the tasks file's rendezvous; `herd attach`
//! (`client`) is a terminal client of it. The batch lives as long as the dashboard, whoever is
//! attached.
//!
//! The attach socket is reachable by its owner only: it is made 0600 in the 0700 rendezvous
//! folder, and each side checks the other's user id (SO_PEERCRED) before a byte goes through.

pub mod client;
pub mod holder;
pub mod start;

use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use crate::core::attach_wire::Frame;

/// The environment variable the holder sets for the dashboard it runs: the dashboard is in the
/// background (its `q` asks "detach or stop?", and it leaves by itself when the batch is done).
pub const ENV_FLAG: &str = "HERD_BACKGROUND";

/// Whether this herd runs as the dashboard of a background run.
pub fn in_background() -> bool {
    std::env::var_os(ENV_FLAG).is_some_and(|v| v == "1")
}

/// The user id of the process at the other end of a Unix socket.
pub fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    Ok(rustix::net::sockopt::socket_peercred(stream)?.uid.as_raw())
}

/// Asks the holder, through the dashboard's own output, to detach the client that typed last.
pub fn request_detach() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(crate::core::attach_wire::DETACH_REQUEST);
    let _ = out.flush();
}

/// Whether the peer runs as this process's user.
pub fn peer_is_us(stream: &UnixStream) -> io::Result<bool> {
    Ok(peer_uid(stream)? == rustix::process::getuid().as_raw())
}

/// Whether something answers on the socket at `path`.
pub fn answers(path: &Path) -> bool {
    UnixStream::connect(path).is_ok()
}

/// Listens on `path` (0600): a leftover socket nobody answers on is replaced; one that answers
/// belongs to a running herd and is refused.
pub fn listen_private(path: &Path) -> io::Result<UnixListener> {
    if path.exists() {
        if answers(path) {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("{} is served by a running herd", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Writes one frame.
pub fn send(stream: &mut UnixStream, frame: &Frame) -> io::Result<()> {
    stream.write_all(&frame.encode())?;
    stream.flush()
}
