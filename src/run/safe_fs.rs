//! Opening the files herd writes beside the user's data (the lock file, everything under
//! `runs/`) without following a symbolic link planted there. The runs folder itself may be the
//! user's link; what is in it may not. What goes there is private: files 0600, folders 0700,
//! and one an older herd made open is tightened.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
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

/// The mode of the files herd makes under `runs/`: the owner's alone.
pub const PRIVATE_FILE: u32 = 0o600;
/// The mode of the folders herd makes under `runs/`.
pub const PRIVATE_DIR: u32 = 0o700;
/// Group and other permission bits.
const SHARED_BITS: u32 = 0o077;

/// Opens `path` with `options`, never through a symbolic link; a file it creates is 0600.
pub fn open_no_follow(options: &mut OpenOptions, path: &Path) -> Result<File, SafeFsError> {
    options
        .mode(PRIVATE_FILE)
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

/// Creates (or truncates) `path` for writing, never through a symbolic link; 0600.
pub fn create_file(path: &Path) -> Result<File, SafeFsError> {
    let file = open_no_follow(
        OpenOptions::new().write(true).create(true).truncate(true),
        path,
    )?;
    keep_private(&file, path)?;
    Ok(file)
}

/// Opens `path` for appending (created if missing), never through a symbolic link; 0600.
pub fn append_file(path: &Path) -> Result<File, SafeFsError> {
    let file = open_no_follow(OpenOptions::new().append(true).create(true), path)?;
    keep_private(&file, path)?;
    Ok(file)
}

/// Takes group and other access away from an open file that had them (made by an older herd).
fn keep_private(file: &File, path: &Path) -> Result<(), SafeFsError> {
    let mode = file
        .metadata()
        .map_err(io_error("read", path))?
        .permissions()
        .mode();
    if mode & SHARED_BITS != 0 {
        file.set_permissions(private_mode(mode))
            .map_err(io_error("make private", path))?;
    }
    Ok(())
}

/// `mode` without its group and other bits.
fn private_mode(mode: u32) -> fs::Permissions {
    fs::Permissions::from_mode(mode & 0o7700)
}

/// Takes group and other access from the file or folder at `path` (a link is left alone).
/// Returns whether it had any.
pub fn make_private(path: &Path) -> Result<bool, SafeFsError> {
    let meta = fs::symlink_metadata(path).map_err(io_error("read", path))?;
    let mode = meta.permissions().mode();
    if meta.file_type().is_symlink() || mode & SHARED_BITS == 0 {
        return Ok(false);
    }
    fs::set_permissions(path, private_mode(mode)).map_err(io_error("make private", path))?;
    Ok(true)
}

/// Creates the folder `dir` (0700, with parents) or tightens it; `dir` may be the user's link.
pub fn private_dir(dir: &Path) -> Result<(), SafeFsError> {
    create_dirs(dir)?;
    let mode = fs::metadata(dir)
        .map_err(io_error("read", dir))?
        .permissions()
        .mode();
    if mode & SHARED_BITS != 0 {
        fs::set_permissions(dir, private_mode(mode)).map_err(io_error("make private", dir))?;
    }
    Ok(())
}

/// Creates the folder `dir` (0700) and checks it is a real folder, not a link; tightens it.
pub fn create_real_dir(dir: &Path) -> Result<(), SafeFsError> {
    refuse_link(dir)?;
    create_dirs(dir)?;
    refuse_link(dir)?;
    make_private(dir)?;
    Ok(())
}

fn create_dirs(dir: &Path) -> Result<(), SafeFsError> {
    DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(dir)
        .map_err(io_error("create the folder", dir))
}

/// An error when `dir` is a symbolic link.
fn refuse_link(dir: &Path) -> Result<(), SafeFsError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(SafeFsError::Link {
            path: dir.to_path_buf(),
            kind: "folder",
        }),
        _ => Ok(()),
    }
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

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path)
            .expect("meta")
            .permissions()
            .mode()
            & 0o7777
    }

    #[test]
    fn what_herd_makes_is_private_and_older_files_are_tightened() {
        let dir = tempfile::tempdir().expect("temp dir");
        let runs = dir.path().join("runs");
        let task = runs.join("t1");
        create_real_dir(&task).expect("made");
        assert_eq!((mode(&runs), mode(&task)), (0o700, 0o700));
        let log = task.join("attempt_1.log");
        create_file(&log).expect("created");
        append_file(&runs.join("herd.log")).expect("created");
        assert_eq!((mode(&log), mode(&runs.join("herd.log"))), (0o600, 0o600));

        // As an older herd left them: 0755 folders, 0644 files.
        for (path, old) in [(&runs, 0o755), (&task, 0o755), (&log, 0o644)] {
            fs::set_permissions(path, fs::Permissions::from_mode(old)).expect("chmod");
        }
        fs::set_permissions(runs.join("herd.log"), fs::Permissions::from_mode(0o664))
            .expect("chmod");
        private_dir(&runs).expect("tightened");
        create_real_dir(&task).expect("tightened");
        create_file(&log).expect("reopened");
        append_file(&runs.join("herd.log")).expect("reopened");
        assert_eq!(mode(&runs), 0o700);
        assert_eq!(mode(&task), 0o700);
        assert_eq!(mode(&log), 0o600);
        assert_eq!(mode(&runs.join("herd.log")), 0o600);

        // A link is never followed, so its target keeps its mode.
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "x").expect("write");
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).expect("chmod");
        let link = task.join("linked");
        std::os::unix::fs::symlink(&outside, &link).expect("symlink");
        assert!(!make_private(&link).expect("a link is left alone"));
        assert_eq!(mode(&outside), 0o644);
    }
}
