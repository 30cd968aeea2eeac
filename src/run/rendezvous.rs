//! Where a running herd can be found from the tasks file's path alone: in the user's private
//! folder (short: a socket path must fit 108 bytes), under a key hashed from the file's
//! canonical path, `<key>.sock` (control), `<key>.attach.sock`, `<key>.json` (who runs it) and
//! `<key>.start` (locked while `herd run --detach` starts one).

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ipc::{self, answers};

/// The private folder of this user's running herds, made when missing (`ipc::private_folder`).
pub fn folder() -> io::Result<PathBuf> {
    Ok(ipc::private_folder()?)
}

/// The key of a tasks file: every spelling of its path names the same herd.
pub fn key(tasks: &Path) -> io::Result<String> {
    let canonical = fs::canonicalize(tasks)?;
    Ok(format!(
        "{:016x}",
        fnv1a(canonical.as_os_str().as_encoded_bytes())
    ))
}

/// The names belonging to one tasks file in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendezvous {
    /// The control socket (line-framed JSON-RPC 2.0).
    pub control: PathBuf,
    /// The socket `herd attach` connects to while the dashboard runs in the background.
    pub attach: PathBuf,
    /// Who runs the file: a `Registration` as JSON.
    pub registration: PathBuf,
    /// Locked by `herd run --detach` while it starts the file's background herd.
    pub start: PathBuf,
}

impl Rendezvous {
    /// The names for `tasks` in this user's folder (made when missing).
    pub fn for_tasks(tasks: &Path) -> io::Result<Self> {
        Ok(Self::in_folder(&folder()?, &key(tasks)?))
    }

    /// The names for `key` in `dir`.
    pub fn in_folder(dir: &Path, key: &str) -> Self {
        Self {
            control: dir.join(format!("{key}.sock")),
            attach: dir.join(format!("{key}.attach.sock")),
            registration: dir.join(format!("{key}.json")),
            start: dir.join(format!("{key}.start")),
        }
    }
}

impl Rendezvous {
    /// Removes what a gone herd left here (a dead pid, or a reused one whose sockets stay silent)
    /// and gives its registration; `None` when nothing was. Silent sockets go even without one;
    /// anything that answers, or a registration being written, stays.
    pub fn clear_leftovers(&self) -> Option<Registration> {
        let gone = self.gone_registration();
        if let Some(gone) = &gone {
            // Removed only if it is still the gone herd's: a herd starting now writes its own.
            if Registration::read(&self.registration).as_ref() == Some(gone) {
                let _ = fs::remove_file(&self.registration);
            }
        }
        if !Registration::read(&self.registration).is_some_and(|r| process_alive(r.pid)) {
            for socket in [&self.control, &self.attach] {
                if fs::symlink_metadata(socket).is_ok() && !answers(socket) {
                    let _ = fs::remove_file(socket);
                }
            }
        }
        gone
    }

    fn gone_registration(&self) -> Option<Registration> {
        let registration = Registration::read(&self.registration)?;
        if !process_alive(registration.pid) {
            return Some(registration);
        }
        let settled = fs::metadata(&self.registration)
            .and_then(|meta| meta.modified())
            .is_ok_and(|at| at.elapsed().is_ok_and(|age| age > SETTLE));
        let silent = !answers(&self.control) && !answers(&self.attach);
        (settled && silent).then_some(registration)
    }
}

/// How long after registering a herd's control socket must answer before a live pid is taken
/// for reused.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(10);

/// How the herd that runs a file was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// `herd run` with its dashboard in this terminal.
    Dashboard,
    /// `herd run --headless`.
    Headless,
    /// `herd run --detach`: the dashboard with no terminal, reached by `herd attach`.
    Background,
}

impl RunMode {
    /// How the herd runs, said to a person: "pid 12, in the background".
    pub fn describe(self) -> &'static str {
        match self {
            RunMode::Dashboard => "with its dashboard in a terminal",
            RunMode::Headless => "headless",
            RunMode::Background => "in the background",
        }
    }
}

/// Who runs a tasks file, written by the running herd next to its control socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub pid: u32,
    /// The tasks file's canonical path.
    pub tasks: PathBuf,
    pub runs_dir: PathBuf,
    pub mode: RunMode,
    /// When the run started, RFC 3339.
    pub started_at: String,
    pub herd_version: String,
}

impl Registration {
    /// The registration in `path`, if it names a process that still runs.
    pub fn read_live(path: &Path) -> Option<Self> {
        Self::read(path).filter(|registration| process_alive(registration.pid))
    }

    /// The registration in `path`, whether or not its process runs.
    fn read(path: &Path) -> Option<Self> {
        let text = fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// What to say of a herd that is gone without cleaning up, its leftovers removed.
    pub fn gone_note(&self) -> String {
        format!(
            "the herd that ran this file (pid {}, {}, since {}) is gone without cleaning up \
             (killed?); its leftover rendezvous files were removed, and tasks it left running \
             are retried by the next run",
            self.pid,
            self.mode.describe(),
            self.started_at
        )
    }

    /// Writes the registration (0600, replacing any older one atomically).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        let spare = path.with_extension("json.new");
        fs::write(&spare, text)?;
        fs::set_permissions(&spare, fs::Permissions::from_mode(0o600))?;
        fs::rename(&spare, path)
    }
}

/// Whether a process with this pid exists (it may belong to another user).
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => !is_zombie(pid),
        Err(error) => error == rustix::io::Errno::PERM,
    }
}

/// Whether the process has ended and waits only to be reaped (Linux's `/proc`; elsewhere, no).
fn is_zombie(pid: rustix::process::Pid) -> bool {
    fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero()))
        .ok()
        .and_then(|stat| {
            // `pid (comm) S ...`: the state follows the last `)`, as comm may hold one.
            let after = &stat[stat.rfind(')')? + 1..];
            after.split_whitespace().next().map(|state| state == "Z")
        })
        .unwrap_or(false)
}

/// 64-bit FNV-1a: stable across builds and platforms, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn every_spelling_of_a_path_has_one_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tasks = dir.path().join("tasks.json");
        fs::write(&tasks, "{}").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&tasks, &link).expect("symlink");
        let dotted = dir.path().join(".").join("tasks.json");
        let k = key(&tasks).expect("key");
        assert_eq!(k.len(), 16);
        assert_eq!(key(&link).expect("key"), k);
        assert_eq!(key(&dotted).expect("key"), k);
        let other = dir.path().join("other.json");
        fs::write(&other, "{}").expect("write");
        assert_ne!(key(&other).expect("key"), k);
    }

    #[test]
    fn a_registration_of_a_dead_process_is_not_live() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("k.json");
        let mut registration = Registration {
            pid: std::process::id(),
            tasks: dir.path().join("tasks.json"),
            runs_dir: dir.path().join("runs"),
            mode: RunMode::Headless,
            started_at: "2026-11-27T16:00:00Z".into(),
            herd_version: "0.1.0".into(),
        };
        registration.write(&path).expect("write");
        assert_eq!(Registration::read_live(&path), Some(registration.clone()));
        let mode = fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        registration.pid = u32::try_from(i32::MAX).expect("fits");
        registration.write(&path).expect("write");
        assert_eq!(Registration::read_live(&path), None);
    }

    #[test]
    fn the_leftovers_of_a_gone_herd_are_removed_and_a_live_ones_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let names = Rendezvous::in_folder(dir.path(), "k");
        let mut registration = Registration {
            pid: u32::try_from(i32::MAX).expect("fits"),
            tasks: dir.path().join("tasks.json"),
            runs_dir: dir.path().join("runs"),
            mode: RunMode::Background,
            started_at: "2026-11-27T16:00:00Z".into(),
            herd_version: "0.1.0".into(),
        };
        registration.write(&names.registration).expect("write");
        // Sockets nobody listens on any more, as a killed herd leaves them.
        for socket in [&names.control, &names.attach] {
            drop(std::os::unix::net::UnixListener::bind(socket).expect("bind"));
        }
        assert_eq!(names.clear_leftovers(), Some(registration.clone()));
        for path in [&names.registration, &names.control, &names.attach] {
            assert!(!path.exists(), "{} left", path.display());
        }
        assert!(registration.gone_note().contains("pid 2147483647"));
        assert_eq!(
            names.clear_leftovers(),
            None,
            "nothing left the second time"
        );

        registration.pid = std::process::id();
        registration.write(&names.registration).expect("write");
        let _listening = std::os::unix::net::UnixListener::bind(&names.control).expect("bind");
        assert_eq!(names.clear_leftovers(), None);
        assert!(names.registration.exists() && names.control.exists());
    }
}
