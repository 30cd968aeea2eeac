//! One kit for every Unix socket herd serves or dials: a private folder (`folder`), sockets
//! served there (`listen`), the peer checked on every connection (`peer`), JSON-line framing
//! (`lines`). Knows no protocol or server.

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

/// Dials the socket at `path` of one of herd's servers, which answer another user themselves.
pub fn connect(path: &Path) -> io::Result<UnixStream> {
    UnixStream::connect(path)
}

/// Dials the socket at `path`, refusing one served by another user before a byte goes through
/// (for the Codex app server, and `herd hook`).
pub fn connect_own(path: &Path) -> io::Result<UnixStream> {
    let stream = UnixStream::connect(path)?;
    Peer::of(&stream).map_err(io::Error::from)?;
    Ok(stream)
}

/// Connects to the socket at `path` and hangs up, waking a thread waiting to accept.
pub fn wake(path: &Path) {
    drop(UnixStream::connect(path));
}

/// Whether something answers on the socket at `path`.
pub fn answers(path: &Path) -> bool {
    UnixStream::connect(path).is_ok()
}
