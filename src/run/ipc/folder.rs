//! Where herd's sockets live: this user's private folder (`$XDG_RUNTIME_DIR/herd` or
//! `/tmp/herd-<uid>`) and attempts' folders in it, made and checked one way.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What is wrong with a folder herd's sockets were to live in, and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("cannot make the private folder {}: {source}", path.display())]
    Make { path: PathBuf, source: io::Error },
    #[error(
        "{} {wrong}: it must be a folder of yours that only you can enter (mode 0700); remove \
         it or set XDG_RUNTIME_DIR to a private folder",
        path.display()
    )]
    NotPrivate { path: PathBuf, wrong: String },
}

impl From<FolderError> for io::Error {
    fn from(error: FolderError) -> io::Error {
        let kind = match &error {
            FolderError::Make { source, .. } => source.kind(),
            _ => io::ErrorKind::PermissionDenied,
        };
        io::Error::new(kind, error)
    }
}

/// The private folder of this user's herds, made when missing.
pub fn private_folder() -> Result<PathBuf, FolderError> {
    let uid = rustix::process::getuid().as_raw();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(runtime) if owned_by(&runtime, uid) => runtime.join("herd"),
        _ => std::env::temp_dir().join(format!("herd-{uid}")),
    };
    make_private(&dir, uid)?;
    Ok(dir)
}

/// A new folder in the private folder (`<prefix>XXXXXX`), removed when dropped.
pub fn private_subfolder(prefix: &str) -> Result<tempfile::TempDir, FolderError> {
    let parent = private_folder()?;
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir_in(&parent)
        .map_err(|source| FolderError::Make {
            path: parent.join(prefix),
            source,
        })?;
    check_private(dir.path(), rustix::process::getuid().as_raw())?;
    Ok(dir)
}

fn owned_by(dir: &Path, uid: u32) -> bool {
    fs::metadata(dir).is_ok_and(|meta| meta.is_dir() && meta.uid() == uid)
}

/// Makes `dir` 0700 when missing (never narrowed afterwards, so a herd starting meanwhile never
/// sees it open); refuses one that is not a folder, is another user's or is open to others.
pub(super) fn make_private(dir: &Path, uid: u32) -> Result<(), FolderError> {
    let make = |source| FolderError::Make {
        path: dir.to_path_buf(),
        source,
    };
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        // The umask may have taken more than the others' bits away.
        Ok(()) => fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(make)?,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(make(error)),
    }
    check_private(dir, uid)
}

/// Whether `dir` is a folder of user `uid` that nobody else may enter or write.
fn check_private(dir: &Path, uid: u32) -> Result<(), FolderError> {
    let path = dir.to_path_buf();
    let meta = fs::symlink_metadata(dir).map_err(|source| FolderError::Make {
        path: path.clone(),
        source,
    })?;
    let wrong = if !meta.is_dir() {
        "is not a folder".to_string()
    } else if meta.uid() != uid {
        format!("belongs to user {}", meta.uid())
    } else if meta.mode() & 0o077 != 0 {
        format!("is open to others (mode {:04o})", meta.mode() & 0o777)
    } else {
        return Ok(());
    };
    Err(FolderError::NotPrivate { path, wrong })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uid() -> u32 {
        rustix::process::getuid().as_raw()
    }

    #[test]
    fn a_folder_others_can_enter_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let private = dir.path().join("herd");
        make_private(&private, uid()).expect("made");
        let mode = fs::metadata(&private).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::set_permissions(&private, fs::Permissions::from_mode(0o755)).expect("chmod");
        let error = make_private(&private, uid()).expect_err("open to others");
        let error: io::Error = error.into();
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        assert!(error.to_string().contains("0700"), "{error}");
        assert!(error.to_string().contains("mode 0755"), "{error}");
    }

    #[test]
    fn a_folder_of_another_user_or_a_file_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let private = dir.path().join("herd");
        make_private(&private, uid()).expect("made");
        let error = make_private(&private, uid().wrapping_add(1)).expect_err("not ours");
        let owner = format!("belongs to user {}", uid());
        assert!(error.to_string().contains(&owner), "{error}");
        let file = dir.path().join("file");
        fs::write(&file, "").expect("write");
        let error = make_private(&file, uid()).expect_err("a file");
        assert!(error.to_string().contains("is not a folder"), "{error}");
        assert!(error.to_string().contains("XDG_RUNTIME_DIR"), "{error}");
    }

    /// Herds started at the same moment all make or find the folder: none of them sees it open
    /// to others while another is making it.
    #[test]
    fn herds_starting_together_all_take_the_new_folder() {
        for round in 0..50 {
            let dir = tempfile::tempdir().expect("tempdir");
            let private = dir.path().join("herd");
            let start = std::sync::Barrier::new(8);
            let refused: Vec<FolderError> = std::thread::scope(|scope| {
                let herds: Vec<_> = (0..8)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            make_private(&private, uid())
                        })
                    })
                    .collect();
                herds
                    .into_iter()
                    .filter_map(|herd| herd.join().expect("joined").err())
                    .collect()
            });
            assert!(refused.is_empty(), "round {round}: {refused:?}");
            let mode = fs::metadata(&private).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o700);
        }
    }
}
