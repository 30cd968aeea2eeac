//! Background runs, the dtach/tmux way: `herd run --detach` starts a session holder (`holder`)
//! that runs the ordinary dashboard in a pseudo-terminal of its own, keeps that terminal's
//! screen, and serves it on the attach socket of the tasks file's rendezvous; `herd attach`
//! (`client`) is a terminal client of it. The batch lives as long as the dashboard, whoever is
//! attached.
//!
//! The attach socket is reachable by its owner only: it is served with `ipc` (0600 in the 0700
//! rendezvous folder), and each side checks the other's user id (SO_PEERCRED) before a byte
//! goes through.

pub mod client;
pub mod holder;
pub mod start;

use std::io::{self, Write};
use std::os::unix::net::UnixStream;

use crate::core::attach_wire::Frame;

pub use crate::run::spawn::BACKGROUND_FLAG as ENV_FLAG;

/// Whether this herd runs as the dashboard of a background run.
pub fn in_background() -> bool {
    std::env::var_os(ENV_FLAG).is_some_and(|v| v == "1")
}

/// Asks the holder, through the dashboard's own output, to detach the client that typed last.
pub fn request_detach() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(crate::core::attach_wire::DETACH_REQUEST);
    let _ = out.flush();
}

/// Writes one frame.
pub fn send(stream: &mut UnixStream, frame: &Frame) -> io::Result<()> {
    stream.write_all(&frame.encode())?;
    stream.flush()
}
