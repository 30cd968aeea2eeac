//! Writing one version of the tasks file atomically: the new text in a file beside it, synced,
//! renamed over it, the folder synced; a reader only ever sees a whole version.
//!
//! A writer that writes again and again keeps a `WriteAhead`, so a write costs little more than
//! the bytes that changed: a spare file holding the version before last is written from the
//! first differing byte and exchanged with the file (`RENAME_EXCHANGE`). A spare is overwritten
//! only under a write lease (nobody else has it open, so `less` or `tail -f` keep their version)
//! and never over someone else's version: after the exchange the swapped-out version must be
//! the one herd accounts for, else the names go back (`Written::NotOurs`). Otherwise a fresh
//! file made beforehand (`prepare`) is renamed over the file, and the replaced version is held
//! open until `prepare`, so its space is freed between writes.

use std::fs::{self, File, Permissions};
use std::io::{self, IoSlice, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{CWD, RenameFlags, renameat_with};
use tempfile::{NamedTempFile, TempPath};

use super::lease::{self, Lease};
use super::watch::DiskVersion;
use super::{Snapshot, StoreError, io_error};
use crate::core::taskfile::splice::SharedText;

const BYTE_ORDER_MARK: &[u8] = "\u{feff}".as_bytes();

/// What a writer keeps between two writes of the same file.
#[derive(Debug, Default)]
pub struct WriteAhead {
    /// An empty temporary file beside the file, with the permissions set on it.
    temp: Option<(NamedTempFile, Permissions)>,
    /// The version the last fresh-file write put in place, held open so its space is freed in
    /// `prepare`, not inside a rename.
    in_place: Option<File>,
    /// A replaced version, closed by `prepare`.
    replaced: Option<File>,
    /// The spare and what it holds, once a write made one.
    spare: Option<Spare>,
    /// The text the file holds, when this writer wrote it.
    in_file: Option<SharedText>,
    /// Names cannot be exchanged or leases had here: every write makes a fresh file.
    fresh_only: bool,
}

/// A file beside the tasks file that is not the tasks file: the version before the last write.
#[derive(Debug)]
struct Spare {
    /// Open for writing, on the file named `path`.
    file: File,
    /// Named like a temporary file, so one left by a killed herd is removed by the next.
    path: TempPath,
    /// Its text, when known (`None`: written in full).
    holds: Option<SharedText>,
}

impl Spare {
    fn new(temp: NamedTempFile) -> Spare {
        let (file, path) = temp.into_parts();
        Spare {
            file,
            path,
            holds: None,
        }
    }
}

/// What a write came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The text is on disk; the file is now this version.
    Done(DiskVersion),
    /// The file was not the version the write was to replace: nothing was written.
    NotOurs,
}

impl WriteAhead {
    /// The file's content is unknown to this writer (a merge): a spare of it is written in full.
    pub fn forget_text(&mut self) {
        self.in_file = None;
    }

    /// Between writes: frees the replaced version and makes the next temporary file, if needed.
    /// A failure is left for the write to meet.
    pub fn prepare(&mut self, snapshot: &Snapshot) {
        drop(self.replaced.take());
        // With a spare, a fresh file is needed only when it is busy: made then.
        if self.temp.is_none() && (self.spare.is_none() || self.fresh_only) {
            self.temp = snapshot.new_temp().ok();
        }
    }
}

impl Snapshot {
    /// Writes the text atomically (see the module header).
    pub fn write(&self) -> Result<(), StoreError> {
        self.write_with(&mut WriteAhead::default(), None).map(drop)
    }

    /// `write`, keeping in `ahead` what the next write can use; with `over`, only over that
    /// version.
    pub fn write_with(
        &self,
        ahead: &mut WriteAhead,
        over: Option<DiskVersion>,
    ) -> Result<Written, StoreError> {
        if !ahead.fresh_only
            && let Some(written) = self.write_through_spare(ahead, over)?
        {
            self.sync_folder()?;
            return Ok(written);
        }
        let written = self.write_fresh(ahead, over)?;
        self.sync_folder()?;
        Ok(written)
    }

    /// Writes into the spare and swaps it with the file; `None`, file untouched, for a fresh file.
    fn write_through_spare(
        &self,
        ahead: &mut WriteAhead,
        over: Option<DiskVersion>,
    ) -> Result<Option<Written>, StoreError> {
        let path = self.path.as_path();
        let mut spare = match ahead.spare.take() {
            Some(spare) => spare,
            None => match ahead.temp.take() {
                Some((temp, _)) => Spare::new(temp),
                None => Spare::new(self.new_temp()?.0),
            },
        };
        let file = &spare.file;
        // Another name for the same file (a user's hard link) would show what is written.
        if file.metadata().map_err(io_error("read", path))?.nlink() != 1 {
            return Ok(None);
        }
        match lease::take(file) {
            Lease::Held => {}
            Lease::Busy => {
                ahead.spare = Some(spare);
                return Ok(None);
            }
            Lease::Unavailable(error) => {
                tracing::debug!("no lease on the spare of {}: {error}", path.display());
                ahead.fresh_only = true;
                return Ok(None);
            }
        }
        let written = self.overwrite(&mut spare);
        let released = lease::release(&spare.file);
        written.and(released).map_err(io_error("write", path))?;
        let file = &spare.file;
        let current = file
            .metadata()
            .map_err(io_error("read", path))?
            .permissions();
        let permissions = self.permissions_or(&current)?;
        if current != permissions {
            file.set_permissions(permissions)
                .map_err(io_error("set permissions for", path))?;
        }
        match renameat_with(CWD, &*spare.path, CWD, &self.target, RenameFlags::EXCHANGE) {
            Ok(()) => {}
            Err(error) if is_not_supported(error) => {
                tracing::debug!("cannot exchange names beside {}: {error}", path.display());
                ahead.fresh_only = true;
                return Ok(None);
            }
            // No file to exchange with (the operator removed it): a fresh file this time.
            Err(rustix::io::Errno::NOENT) => {
                ahead.spare = Some(spare);
                return Ok(None);
            }
            Err(error) => return Err(io_error("replace", path)(error.into())),
        }
        if !self.swapped_out(&spare, over)? {
            ahead.spare = Some(spare);
            return Ok(Some(Written::NotOurs));
        }
        let now = DiskVersion::of(&spare.file.metadata().map_err(io_error("read", path))?);
        let previous = ahead.in_file.take();
        // The spare's name is on the file's old version now: opened again by its name.
        ahead.in_file = Some(self.text.clone());
        // A version that cannot be opened for writing (read-only) is no spare.
        if let Ok(file) = File::options().read(true).write(true).open(&spare.path) {
            spare.file = file;
            spare.holds = previous;
            ahead.spare = Some(spare);
        }
        // A fresh file held open is the spare now: closed, or the next lease would fail.
        ahead.replaced = ahead.in_place.take();
        Ok(Some(Written::Done(now)))
    }

    /// True when the version swapped out is `over` (or there is none to check); otherwise the
    /// names are exchanged back, theirs is the file again, and false.
    fn swapped_out(&self, spare: &Spare, over: Option<DiskVersion>) -> Result<bool, StoreError> {
        let Some(over) = over else {
            return Ok(true);
        };
        let metadata = fs::symlink_metadata(&*spare.path).map_err(io_error("read", &self.path))?;
        if DiskVersion::of(&metadata).same_content(&over) {
            return Ok(true);
        }
        renameat_with(CWD, &*spare.path, CWD, &self.target, RenameFlags::EXCHANGE)
            .map_err(|e| io_error("replace", &self.path)(e.into()))?;
        Ok(false)
    }

    /// Writes into `spare` from the first differing byte, cuts the rest, and syncs.
    fn overwrite(&self, spare: &mut Spare) -> io::Result<()> {
        let mark = if self.byte_order_mark {
            BYTE_ORDER_MARK
        } else {
            &[]
        };
        let (from, rest) = match &spare.holds {
            Some(held) => {
                let same = held.common_prefix_len(&self.text);
                (mark.len() + same, self.text.bytes_from(same))
            }
            None => (0, self.text.bytes_from(0)),
        };
        // Whatever fails from here on, the spare's text is not known any more.
        spare.holds = None;
        let file = &mut spare.file;
        file.seek(SeekFrom::Start(from as u64))?;
        if from == 0 {
            file.write_all(mark)?;
        }
        write_pieces(file, rest)?;
        file.set_len((mark.len() + self.text.len()) as u64)?;
        file.sync_data()
    }

    /// Writes the text into a new file and renames it over the file (when it is `over`).
    fn write_fresh(
        &self,
        ahead: &mut WriteAhead,
        over: Option<DiskVersion>,
    ) -> Result<Written, StoreError> {
        let path = self.path.as_path();
        let (mut temp, made_with) = match ahead.temp.take() {
            Some(made) => made,
            None => self.new_temp()?,
        };
        // The user may have changed them since the temporary file was made.
        let permissions = self.permissions_or(&made_with)?;
        if permissions != made_with {
            temp.as_file()
                .set_permissions(permissions)
                .map_err(io_error("set permissions for", path))?;
        }
        if self.byte_order_mark {
            temp.write_all(BYTE_ORDER_MARK)
                .map_err(io_error("write", path))?;
        }
        write_pieces(temp.as_file_mut(), self.text.bytes_from(0))
            .map_err(io_error("write", path))?;
        // The data and the length; the rename is made durable by syncing the folder.
        temp.as_file()
            .sync_data()
            .map_err(io_error("write", path))?;
        if let Some(over) = over {
            let now = fs::metadata(&self.target).map_err(io_error("read", path))?;
            if !DiskVersion::of(&now).same_content(&over) {
                // Its text is written: of no use for the next write, which makes another.
                return Ok(Written::NotOurs);
            }
        }
        let in_place = temp
            .persist(&self.target)
            .map_err(|e| io_error("replace", path)(e.error))?;
        let now = DiskVersion::of(&in_place.metadata().map_err(io_error("read", path))?);
        ahead.replaced = ahead.in_place.replace(in_place);
        ahead.in_file = Some(self.text.clone());
        Ok(Written::Done(now))
    }

    /// Makes the last rename durable, where the platform can open a folder.
    fn sync_folder(&self) -> Result<(), StoreError> {
        if let Ok(folder) = File::open(self.folder()) {
            folder
                .sync_all()
                .map_err(io_error("sync the folder of", &self.path))?;
        }
        Ok(())
    }

    fn folder(&self) -> &Path {
        self.target.parent().unwrap_or(Path::new("."))
    }

    /// The file's permissions, or `otherwise` when it is gone (this write makes it again).
    fn permissions_or(&self, otherwise: &Permissions) -> Result<Permissions, StoreError> {
        match fs::metadata(&self.target) {
            Ok(metadata) => Ok(metadata.permissions()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(otherwise.clone()),
            Err(error) => Err(io_error("read", &self.path)(error)),
        }
    }

    /// An empty temporary file beside the file (`.<name>.XXXXXX.tmp`) with its permissions.
    fn new_temp(&self) -> Result<(NamedTempFile, Permissions), StoreError> {
        let path = self.path.as_path();
        let name = self
            .target
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(self.folder())
            .map_err(io_error("create a temporary file beside", path))?;
        let made = temp
            .as_file()
            .metadata()
            .map_err(io_error("create a temporary file beside", path))?
            .permissions();
        let permissions = self.permissions_or(&made)?;
        temp.as_file()
            .set_permissions(permissions.clone())
            .map_err(io_error("set permissions for", path))?;
        Ok((temp, permissions))
    }
}

/// `renameat2` cannot exchange names here (an old kernel, a file system without it).
fn is_not_supported(error: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    [Errno::INVAL, Errno::NOSYS, Errno::NOTSUP, Errno::OPNOTSUPP].contains(&error)
}

/// Writes `pieces` one after the other, in as few system calls as the kernel allows.
pub(super) fn write_pieces<'a>(
    file: &mut File,
    pieces: impl Iterator<Item = &'a [u8]>,
) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = pieces.map(IoSlice::new).collect();
    let mut left = slices.as_mut_slice();
    // Empty pieces would make a write of nothing look like the end.
    IoSlice::advance_slices(&mut left, 0);
    while !left.is_empty() {
        // At most `IOV_MAX` (1024 on Linux) slices a call; more is an error, not a short write.
        let some = left.len().min(1024);
        match file.write_vectored(&left[..some]) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(written) => IoSlice::advance_slices(&mut left, written),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "atomic_write_tests.rs"]
mod tests;
