//! A socket herd serves: bound 0600 in a private folder over a stale socket (never a live one or
//! a non-socket), each peer checked and another user's refused.

use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use super::peer::{Peer, PeerRefused};

/// Why a socket could not be served.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "{} is served by a running herd ({herd}): stop it first, or use the one that runs",
        path.display()
    )]
    Live { path: PathBuf, herd: String },
    #[error(
        "{} is not a socket: herd will not replace it; move it away and start again",
        path.display()
    )]
    NotASocket { path: PathBuf },
    #[error("cannot listen on {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl From<BindError> for io::Error {
    fn from(error: BindError) -> io::Error {
        let kind = match &error {
            BindError::Live { .. } => io::ErrorKind::AddrInUse,
            BindError::NotASocket { .. } => io::ErrorKind::AlreadyExists,
            BindError::Io { source, .. } => source.kind(),
        };
        io::Error::new(kind, error)
    }
}

/// One connection a `Listener` took.
#[derive(Debug)]
pub enum Arrival {
    /// From this user.
    Admitted { stream: UnixStream, peer: Peer },
    /// From another user, or unknown: logged; the stream is there for a last word.
    Refused {
        stream: UnixStream,
        why: PeerRefused,
    },
}

/// A socket served, whose connections come checked.
#[derive(Debug)]
pub struct Listener {
    listener: UnixListener,
    /// What the socket is, for the log ("control socket").
    name: &'static str,
}

impl Listener {
    /// Serves the socket at `path`, called `name` in the log.
    pub fn bind(path: &Path, name: &'static str) -> Result<Listener, BindError> {
        let failed = |source| BindError::Io {
            path: path.to_path_buf(),
            source,
        };
        clear_stale(path)?;
        let listener = UnixListener::bind(path).map_err(failed)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
        Ok(Listener { listener, name })
    }

    /// Waits for the next connection; its peer checked.
    pub fn accept(&self) -> io::Result<Arrival> {
        let (stream, _) = self.listener.accept()?;
        Ok(match Peer::of(&stream) {
            Ok(peer) => Arrival::Admitted { stream, peer },
            Err(why) => {
                why.log(self.name);
                Arrival::Refused { stream, why }
            }
        })
    }
}

/// Removes a socket at `path` nobody answers on; refuses a live one or a non-socket.
fn clear_stale(path: &Path) -> Result<(), BindError> {
    let failed = |source| BindError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        found => found.map_err(failed)?,
    };
    let path_buf = path.to_path_buf();
    if !meta.file_type().is_socket() {
        return Err(BindError::NotASocket { path: path_buf });
    }
    if let Ok(live) = UnixStream::connect(path) {
        let herd = rustix::net::sockopt::socket_peercred(&live)
            .map_or("its pid unknown".into(), |cred| {
                format!("pid {}", cred.pid.as_raw_nonzero())
            });
        return Err(BindError::Live {
            path: path_buf,
            herd,
        });
    }
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(failed(error)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn a_stale_socket_is_replaced_and_the_new_one_is_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.sock");
        drop(UnixListener::bind(&path).expect("bind"));
        assert!(
            path.exists(),
            "a socket nobody answers on, as a killed herd leaves it"
        );
        let listener = Listener::bind(&path, "test socket").expect("replaced");
        assert_eq!(mode(&path), 0o600);
        let _client = UnixStream::connect(&path).expect("connect");
        match listener.accept().expect("accepted") {
            Arrival::Admitted { peer, .. } => assert_eq!(peer.pid, std::process::id() as i32),
            Arrival::Refused { .. } => panic!("this user's connection refused"),
        }
    }

    #[test]
    fn a_live_socket_is_refused_naming_its_herd() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.sock");
        let _live = Listener::bind(&path, "test socket").expect("first");
        let error = Listener::bind(&path, "test socket").expect_err("live");
        let herd = format!("running herd (pid {})", std::process::id());
        assert!(matches!(error, BindError::Live { .. }), "{error:?}");
        assert!(error.to_string().contains(&herd), "{error}");
        assert_eq!(io::Error::from(error).kind(), io::ErrorKind::AddrInUse);
        assert!(
            UnixStream::connect(&path).is_ok(),
            "the live one still serves"
        );
    }

    #[test]
    fn a_file_that_is_not_a_socket_is_never_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.sock");
        std::fs::write(&path, "precious").expect("write");
        let error = Listener::bind(&path, "test socket").expect_err("not a socket");
        assert!(matches!(error, BindError::NotASocket { .. }), "{error:?}");
        assert_eq!(std::fs::read_to_string(&path).expect("kept"), "precious");
    }
}
