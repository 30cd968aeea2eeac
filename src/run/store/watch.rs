//! Whether the tasks file on disk is still the version herd accounts for, so herd never writes
//! over someone else's. `DiskVersion` (device, inode, size, times; one `stat`) tells a rename or
//! an in-place write; `Guard` compares it before every write and reads the text only when it
//! differs or `watch` saw a write (timestamps are coarse). `watch` is an inotify thread that
//! tells the writer within a second, even when herd has nothing to write.

use std::fs::{self, File, Metadata};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

use crate::core::taskfile::splice::SharedText;

/// One version of a file on disk, as `stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskVersion {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl DiskVersion {
    pub fn of(metadata: &Metadata) -> DiskVersion {
        DiskVersion {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// The same file with the same content, whatever its name (the change time is left out).
    pub fn same_content(&self, other: &DiskVersion) -> bool {
        (self.device, self.inode, self.size, self.modified)
            == (other.device, other.inode, other.size, other.modified)
    }
}

/// A version of the tasks file that herd did not write: the operator's.
#[derive(Debug, Clone)]
pub struct OperatorVersion {
    /// The bytes as read (a byte order mark included).
    pub text: Vec<u8>,
    /// What it was on disk when read: a merge of it may be written only over this version.
    pub version: DiskVersion,
}

/// What the file on disk is now, for the writer.
#[derive(Debug)]
pub enum OnDisk {
    /// The version herd accounts for: it may write.
    Expected,
    /// A version someone else wrote, not reported before.
    Changed(OperatorVersion),
    /// The operator's version already reported, not merged yet: wait for the merge.
    Reported,
    /// There is no file to look at: nothing of anyone's to be written over.
    Missing,
}

/// The text of the version herd accounts for, to tell a real change from a touched file.
#[derive(Debug)]
enum Known {
    Ours(SharedText, bool),
    Theirs(Vec<u8>),
    Unknown,
}

/// The writer thread's knowledge of the file on disk (see the module header).
#[derive(Debug)]
pub struct Guard {
    target: PathBuf,
    /// The version herd wrote or merged last.
    expected: Option<DiskVersion>,
    known: Known,
    /// The operator's version reported last.
    reported: Option<OperatorVersion>,
}

const BYTE_ORDER_MARK: &[u8] = "\u{feff}".as_bytes();

impl Guard {
    /// Starts from the version a store read (`None`: unknown, the first look reports it).
    pub fn new(
        target: PathBuf,
        version: Option<DiskVersion>,
        text: SharedText,
        byte_order_mark: bool,
    ) -> Guard {
        Guard {
            target,
            expected: version,
            known: Known::Ours(text, byte_order_mark),
            reported: None,
        }
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// herd wrote `text` and the file is now `version`.
    pub fn wrote(&mut self, version: DiskVersion, text: SharedText, byte_order_mark: bool) {
        self.expected = Some(version);
        self.known = Known::Ours(text, byte_order_mark);
    }

    /// The engine merged the operator's version `version`: it is the one to write over.
    pub fn adopt(&mut self, version: DiskVersion) {
        self.expected = Some(version);
        self.known = match self.reported.take() {
            Some(reported) if reported.version == version => Known::Theirs(reported.text),
            other => {
                self.reported = other;
                Known::Unknown
            }
        };
    }

    /// The version herd accounts for, for the check after an exchange of names.
    pub fn expected(&self) -> Option<DiskVersion> {
        self.expected
    }

    /// Looks at the file: by `stat` alone, or (`read`, after someone wrote it) by its text.
    pub fn look(&mut self, read: bool) -> OnDisk {
        let Ok(metadata) = fs::metadata(&self.target) else {
            return OnDisk::Missing;
        };
        let now = DiskVersion::of(&metadata);
        let reported = self.reported.as_ref().map(|r| r.version);
        if !read && (self.expected == Some(now)) {
            return OnDisk::Expected;
        }
        if !read && reported == Some(now) {
            return OnDisk::Reported;
        }
        let Ok((text, version)) = read_version(&self.target) else {
            return OnDisk::Missing;
        };
        if self.is_known(&text) {
            self.expected = Some(version);
            return OnDisk::Expected;
        }
        if let Some(reported) = &mut self.reported
            && reported.text == text
        {
            reported.version = version;
            return OnDisk::Reported;
        }
        let changed = OperatorVersion { text, version };
        self.reported = Some(changed.clone());
        OnDisk::Changed(changed)
    }

    fn is_known(&self, text: &[u8]) -> bool {
        match &self.known {
            Known::Ours(ours, mark) => {
                let rest = match (mark, text.strip_prefix(BYTE_ORDER_MARK)) {
                    (true, Some(rest)) => rest,
                    (false, _) => text,
                    (true, None) => return false,
                };
                rest.len() == ours.len() && ours.bytes_from(0).eq_by_chunks(rest)
            }
            Known::Theirs(theirs) => theirs.as_slice() == text,
            Known::Unknown => false,
        }
    }
}

/// Compares pieces of bytes with one slice.
trait EqByChunks {
    fn eq_by_chunks(self, whole: &[u8]) -> bool;
}

impl<'a, I: Iterator<Item = &'a [u8]>> EqByChunks for I {
    fn eq_by_chunks(self, whole: &[u8]) -> bool {
        let mut at = 0;
        for piece in self {
            if whole.get(at..at + piece.len()) != Some(piece) {
                return false;
            }
            at += piece.len();
        }
        at == whole.len()
    }
}

/// The file's bytes and the version they are, read from one open file.
fn read_version(path: &Path) -> std::io::Result<(Vec<u8>, DiskVersion)> {
    let mut file = File::open(path)?;
    let mut text = Vec::new();
    file.read_to_end(&mut text)?;
    let version = DiskVersion::of(&file.metadata()?);
    Ok((text, version))
}

/// How long a burst of writes must be quiet before the writer is told (an editor writes in
/// several calls).
const QUIET: Duration = Duration::from_millis(50);
const QUIET_AT_MOST: Duration = Duration::from_millis(300);
/// How often the watcher looks whether it should end.
const LOOK_FOR_END: Duration = Duration::from_millis(500);

/// The inotify thread; dropping it ends the thread within `LOOK_FOR_END`.
pub struct Watcher {
    ending: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.ending.store(true, Ordering::Relaxed);
    }
}

/// Watches `target`'s folder and calls `changed` after writes or renames onto its name
/// (debounced): true when something wrote into the file (herd never does), false when a file
/// was put in its place. `None` without inotify.
pub fn watch(target: &Path, changed: impl Fn(bool) + Send + 'static) -> Option<Watcher> {
    let folder = target.parent()?.to_path_buf();
    let name = target.file_name()?.to_os_string();
    let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)
        .inspect_err(|e| tracing::debug!("no inotify: {e}"))
        .ok()?;
    let events = WatchFlags::CLOSE_WRITE
        | WatchFlags::MODIFY
        | WatchFlags::MOVED_TO
        | WatchFlags::CREATE
        | WatchFlags::ATTRIB;
    inotify::add_watch(&fd, &folder, events)
        .inspect_err(|e| tracing::debug!("cannot watch {}: {e}", folder.display()))
        .ok()?;
    let ending = Arc::new(AtomicBool::new(false));
    let theirs = Arc::clone(&ending);
    crate::run::jobs::spawn_thread("tasks-file-watch", move || {
        let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); 8192];
        let mut pending: Option<Instant> = None;
        let mut written = false;
        while !theirs.load(Ordering::Relaxed) {
            let wait = if pending.is_some() {
                QUIET
            } else {
                LOOK_FOR_END
            };
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            let timeout = Timespec {
                tv_sec: 0,
                tv_nsec: i64::from(wait.subsec_nanos()),
            };
            let ready = poll(&mut fds, Some(&timeout)).unwrap_or(0);
            if ready > 0
                && let Some(wrote) = about_target(&fd, &mut buffer, &name)
            {
                pending.get_or_insert_with(Instant::now);
                written |= wrote;
            }
            if let Some(first) = pending
                && (ready == 0 || first.elapsed() >= QUIET_AT_MOST)
            {
                pending = None;
                changed(std::mem::take(&mut written));
            }
        }
    })
    .inspect_err(|not| tracing::warn!("cannot start the tasks file's watcher: {not}"))
    .ok()?;
    Some(Watcher { ending })
}

/// Reads the waiting events: whether one wrote into `name` (or events were lost); `None` if none
/// is about it.
fn about_target(
    fd: &rustix::fd::OwnedFd,
    buffer: &mut [std::mem::MaybeUninit<u8>],
    name: &std::ffi::OsStr,
) -> Option<bool> {
    use std::os::unix::ffi::OsStrExt;
    let mut reader = inotify::Reader::new(fd, buffer);
    let mut found = None;
    while let Ok(event) = reader.next() {
        let flags = event.events();
        let overflow = flags.contains(ReadFlags::QUEUE_OVERFLOW);
        let named = event
            .file_name()
            .is_some_and(|n| n.to_bytes() == name.as_bytes());
        if overflow || named {
            let wrote = overflow || flags.intersects(ReadFlags::MODIFY | ReadFlags::CLOSE_WRITE);
            found = Some(found.unwrap_or(false) || wrote);
        }
    }
    found
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
