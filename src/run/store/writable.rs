//! Whether herd may write a tasks file back, asked before anything starts: a read-only file or a
//! folder where it cannot be replaced by rename is refused with what to do, rather than failing
//! on the first write with agents running. Changes nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::Access;

/// Why the tasks file cannot be written back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotWritable {
    /// The file has no write permission (its mode, for the message).
    ReadOnlyFile { file: PathBuf, mode: u32 },
    /// The folder holding the file does not let this user create and rename files in it.
    FolderClosed { folder: PathBuf },
}

impl std::fmt::Display for NotWritable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotWritable::ReadOnlyFile { file, mode } => write!(
                f,
                "is read-only (mode {mode:04o}); herd writes every task's status back into it, \
                 so it does not run a file it may not write. Nothing was started. Make it \
                 writable (chmod u+w {}) or run a writable copy",
                file.display()
            ),
            NotWritable::FolderClosed { folder } => write!(
                f,
                "cannot be replaced: herd writes it by putting a new version in place, and the \
                 folder {} does not let you create files in it. Nothing was started. Make the \
                 folder writable or run a copy of the file in a writable folder",
                folder.display()
            ),
        }
    }
}

/// Checks that `target` (the tasks file, symlinks resolved) can be written back.
pub(super) fn check(target: &Path) -> Result<(), NotWritable> {
    // Not writable to anyone: refused even for root, who could write it anyway.
    if let Ok(meta) = std::fs::metadata(target) {
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o222 == 0 || rustix::fs::access(target, Access::WRITE_OK).is_err() {
            return Err(NotWritable::ReadOnlyFile {
                file: target.to_path_buf(),
                mode,
            });
        }
    }
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if rustix::fs::access(folder, Access::WRITE_OK | Access::EXEC_OK).is_err() {
        return Err(NotWritable::FolderClosed {
            folder: folder.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn read_only_files_and_closed_folders_are_told_apart() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("tasks.json");
        fs::write(&file, "{}").expect("write");
        assert_eq!(check(&file), Ok(()));

        chmod(&file, 0o444);
        let refused = check(&file).expect_err("read-only");
        assert_eq!(
            refused,
            NotWritable::ReadOnlyFile {
                file: file.clone(),
                mode: 0o444
            }
        );
        let message = refused.to_string();
        assert!(message.contains("read-only (mode 0444)"), "{message}");
        assert!(
            message.contains(&format!("chmod u+w {}", file.display())),
            "{message}"
        );
        chmod(&file, 0o644);

        let folder = dir.path().join("closed");
        fs::create_dir(&folder).expect("mkdir");
        let inside = folder.join("tasks.json");
        fs::write(&inside, "{}").expect("write");
        chmod(&folder, 0o555);
        let closed = check(&inside);
        chmod(&folder, 0o755);
        // root may write anywhere: the folder's mode does not stop it, so there is nothing to
        // refuse.
        if !rustix::process::geteuid().is_root() {
            assert_eq!(closed, Err(NotWritable::FolderClosed { folder }));
        }
    }
}
