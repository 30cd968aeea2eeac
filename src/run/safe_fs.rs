//! Opening the files herd writes beside the user's data (the lock file, everything under
//! `runs/`) without following a symbolic link someone planted there, so a link cannot make herd
//! truncate or fill a file elsewhere.
//!
//! Owns only how such files and folders are opened; what goes into them is the caller's. The
//! runs folder itself may be a link the user set up (e.g. to a bigger disk); a task's folder
//! inside it and every file herd writes may not.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SafeFsError {
    #[error(
        "{} is a symbolic link: herd does not follow links where it writes; remove it (or \
         replace it with a real {kind})",
        path.display()
    )]
    Link { path: PathBuf, kind: &'static str },
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        /// In the message itself (not a `source`), so it is printed once.
        cause: io::Error,
    },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SafeFsError + use<> {
    let path = path.to_path_buf();
    move |cause| SafeFsError::Io {
        action,
        path,
        cause,
    }
}

/// `O_NOFOLLOW`: opening a symbolic link fails (`ELOOP`) instead of opening its target.
fn no_follow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// Opens `path` with `options`, never through a symbolic link.
pub fn open_no_follow(options: &mut OpenOptions, path: &Path) -> Result<File, SafeFsError> {
    options
        .custom_flags(no_follow())
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() => SafeFsError::Link {
                path: path.to_path_buf(),
                kind: "file",
            },
            _ => SafeFsError::Io {
                action: "open",
                path: path.to_path_buf(),
                cause: source,
            },
        })
}

/// Creates (or truncates) `path` for writing, never through a symbolic link.
pub fn create_file(path: &Path) -> Result<File, SafeFsError> {
    open_no_follow(
        OpenOptions::new().write(true).create(true).truncate(true),
        path,
    )
}

/// Opens `path` for appending (created if missing), never through a symbolic link.
pub fn append_file(path: &Path) -> Result<File, SafeFsError> {
    open_no_follow(OpenOptions::new().append(true).create(true), path)
}

/// Creates the folder `dir` (and its parents) and checks that `dir` itself is a real folder,
/// not a link to one elsewhere.
pub fn create_real_dir(dir: &Path) -> Result<(), SafeFsError> {
    if let Ok(meta) = fs::symlink_metadata(dir)
        && meta.file_type().is_symlink()
    {
        return Err(SafeFsError::Link {
            path: dir.to_path_buf(),
            kind: "folder",
        });
    }
    fs::create_dir_all(dir).map_err(io_error("create the folder", dir))?;
    let meta = fs::symlink_metadata(dir).map_err(io_error("read", dir))?;
    if meta.file_type().is_symlink() {
        return Err(SafeFsError::Link {
            path: dir.to_path_buf(),
            kind: "folder",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_folders_behind_links_are_refused_and_their_targets_untouched() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("precious");
        fs::write(&target, "keep me").expect("write");
        let link = dir.path().join("attempt_1.log");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        for result in [create_file(&link), append_file(&link)] {
            let error = result.expect_err("a link is refused");
            assert!(matches!(error, SafeFsError::Link { .. }), "{error:?}");
            assert!(
                error
                    .to_string()
                    .contains("attempt_1.log is a symbolic link")
            );
        }
        assert_eq!(fs::read_to_string(&target).expect("read"), "keep me");

        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).expect("mkdir");
        let task_dir = dir.path().join("runs").join("t1");
        fs::create_dir_all(task_dir.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(&elsewhere, &task_dir).expect("symlink");
        let error = create_real_dir(&task_dir).expect_err("a linked folder is refused");
        assert!(
            error.to_string().contains("t1 is a symbolic link"),
            "{error}"
        );

        let real = dir.path().join("runs").join("t2");
        create_real_dir(&real).expect("a real folder is made");
        create_file(&real.join("a.log")).expect("a real file is created");
    }
}
