//! Who is at the other end of a socket: a peer of this user is admitted, any other refused.

use std::io;
use std::os::unix::net::UnixStream;

/// The process at the other end of a connection, of this user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub pid: i32,
    pub uid: u32,
}

/// Why a peer was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum PeerRefused {
    #[error(
        "the other end belongs to another user (uid {uid}, pid {pid}), not to this one (uid \
         {me}): herd's sockets join a user's own processes only"
    )]
    OtherUser { uid: u32, pid: i32, me: u32 },
    #[error("cannot read who is at the other end of the socket: {0}")]
    Unknown(#[source] io::Error),
}

impl From<PeerRefused> for io::Error {
    fn from(refused: PeerRefused) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, refused)
    }
}

impl PeerRefused {
    /// Logs the refusal of a connection to the socket called `server`.
    pub fn log(&self, server: &str) {
        match self {
            PeerRefused::OtherUser { uid, pid, .. } => {
                tracing::warn!(pid, uid, "{server}: refused a connection of another user");
            }
            PeerRefused::Unknown(error) => {
                tracing::warn!("{server}: cannot read the caller's credentials: {error}");
            }
        }
    }
}

impl Peer {
    /// The peer of `stream` (`SO_PEERCRED`), if it runs as this user.
    pub fn of(stream: &UnixStream) -> Result<Peer, PeerRefused> {
        let cred = rustix::net::sockopt::socket_peercred(stream)
            .map_err(|errno| PeerRefused::Unknown(errno.into()))?;
        let peer = Peer {
            pid: cred.pid.as_raw_nonzero().get(),
            uid: cred.uid.as_raw(),
        };
        peer.admitted_by(rustix::process::getuid().as_raw())
    }

    /// This peer if it runs as user `me`; refused otherwise.
    pub fn admitted_by(self, me: u32) -> Result<Peer, PeerRefused> {
        match self.uid == me {
            true => Ok(self),
            false => Err(PeerRefused::OtherUser {
                uid: self.uid,
                pid: self.pid,
                me,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_of_another_user_is_refused_and_ours_admitted() {
        let me = rustix::process::getuid().as_raw();
        let stranger = Peer {
            pid: 42,
            uid: me.wrapping_add(1),
        };
        let refused = stranger.admitted_by(me).expect_err("another user");
        let said = refused.to_string();
        assert!(said.contains("belongs to another user"), "{said}");
        assert!(
            said.contains(&format!("uid {}", me.wrapping_add(1))),
            "{said}"
        );
        assert!(said.contains("pid 42"), "{said}");
        let io: io::Error = refused.into();
        assert_eq!(io.kind(), io::ErrorKind::PermissionDenied);
        let (ours, _other_end) = UnixStream::pair().expect("pair");
        let peer = Peer::of(&ours).expect("this user");
        assert_eq!(peer.uid, me);
        assert_eq!(peer.pid, std::process::id() as i32);
    }
}
