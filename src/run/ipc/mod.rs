//! One kit for every Unix socket herd serves or dials: the control socket, the attach socket of
//! a background run, an attempt's hook listener and the Codex app server it talks to.
//!
//! - `folder`: where sockets live, a private folder (0700, this user's, shut to others), made
//!   and checked one way;
//! - `listen`: a socket served there (0600, over a stale one, never over a live one or a file
//!   that is not a socket), whose connections of another user are refused and logged;
//! - `peer`: who is at the other end, checked on every connection, served or dialled;
//! - `lines`: the framing of the sockets that speak JSON lines.
//!
//! It knows no protocol and no server: those build on it, never the other way round.

mod folder;
mod lines;
mod listen;
mod peer;

use std::io;
use std::os::unix::net::UnixStream;
use std::path::Path;

pub use folder::{FolderError, private_folder, private_subfolder};
pub use lines::{LineRead, read_line, read_line_or_error, skip_rest_of_line, write_line};
pub use listen::{Arrival, BindError, Listener};
pub use peer::{Peer, PeerRefused};

/// Dials the socket at `path` of a server that checks who calls and answers another user in
/// its own words (the control socket closes, the attach socket says why): herd's servers.
pub fn connect(path: &Path) -> io::Result<UnixStream> {
    UnixStream::connect(path)
}

/// Dials the socket at `path` and checks that it is served by this user: a socket of another
/// user's is refused (`PermissionDenied`) before a byte goes through. For the servers herd
/// did not write (the Codex app server), and for `herd hook`, which has nothing to say to a
/// stranger.
pub fn connect_own(path: &Path) -> io::Result<UnixStream> {
    let stream = UnixStream::connect(path)?;
    Peer::of(&stream).map_err(io::Error::from)?;
    Ok(stream)
}

/// Connects to the socket at `path` and hangs up: a thread waiting to accept on it wakes (to
/// see that it is to stop).
pub fn wake(path: &Path) {
    drop(UnixStream::connect(path));
}

/// Whether something answers on the socket at `path`.
pub fn answers(path: &Path) -> bool {
    UnixStream::connect(path).is_ok()
}
