//! Finding and reading the transcript Claude Code kept of an attempt's session, within a size
//! bound. Never fails loudly: a transcript is extra evidence, so anything amiss is `None`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::core::facts::transcript::{self, TranscriptFacts, project_dir_name};

/// The most of a transcript [`read`] reads: its last 64 MiB.
pub const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The transcript of a Claude session that ran in `cwd`: by session id when known (an id that is
/// not a plain file name counts as unknown), else the one `.jsonl` of the cwd's project folder
/// written since `since` (none when several were). Roots: the attempt's `CLAUDE_CONFIG_DIR`,
/// the process's, `<HOME>/.claude`.
pub fn find(
    env: &BTreeMap<String, String>,
    cwd: &Path,
    session_id: Option<&str>,
    since: SystemTime,
) -> Option<PathBuf> {
    let root = config_root(env, |key| std::env::var(key).ok())?;
    find_in(&root, cwd, session_id, since)
}

/// Reads and parses it; None if unreadable. Reads at most the last 64 MiB of a larger file.
pub fn read(path: &Path) -> Option<TranscriptFacts> {
    read_tail(path, MAX_READ_BYTES)
}

/// The first existing config root, `process_env` standing in for the process's environment.
fn config_root(
    env: &BTreeMap<String, String>,
    process_env: impl Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    let set = |value: Option<String>| value.filter(|v| !v.is_empty());
    let from_env = |key: &str| set(env.get(key).cloned());
    let home = from_env("HOME").or_else(|| set(process_env("HOME")));
    [
        from_env("CLAUDE_CONFIG_DIR").map(PathBuf::from),
        set(process_env("CLAUDE_CONFIG_DIR")).map(PathBuf::from),
        home.map(|h| Path::new(&h).join(".claude")),
    ]
    .into_iter()
    .flatten()
    .find(|root| root.is_dir())
}

fn find_in(
    root: &Path,
    cwd: &Path,
    session_id: Option<&str>,
    since: SystemTime,
) -> Option<PathBuf> {
    let projects = root.join("projects");
    let folders = project_folders(&projects, cwd);
    match session_id.filter(|id| is_plain_name(id)) {
        Some(id) => by_session_id(&projects, &folders, id),
        // Without an id, only a single candidate: another task's session is never guessed.
        None => {
            let mut candidates: Vec<PathBuf> = folders
                .iter()
                .flat_map(|folder| written_since(folder, since))
                .collect();
            candidates.sort();
            candidates.dedup();
            match candidates.as_slice() {
                [only] => Some(only.clone()),
                _ => None,
            }
        }
    }
}

/// The project folders Claude Code may have used for `cwd`: as given, then resolved.
fn project_folders(projects: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut folders = vec![projects.join(project_dir_name(&cwd.to_string_lossy()))];
    if let Ok(real) = cwd.canonicalize() {
        let folder = projects.join(project_dir_name(&real.to_string_lossy()));
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    folders
}

/// Letters, digits, `-` and `_` only: safe to join into a path.
fn is_plain_name(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `<id>.jsonl` in the cwd's project folder, else in any (Claude shortens long names).
fn by_session_id(projects: &Path, folders: &[PathBuf], id: &str) -> Option<PathBuf> {
    let file = format!("{id}.jsonl");
    if let Some(found) = folders
        .iter()
        .map(|folder| folder.join(&file))
        .find(|path| path.is_file())
    {
        return Some(found);
    }
    let mut others: Vec<PathBuf> = std::fs::read_dir(projects)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    others.sort();
    others
        .into_iter()
        .map(|folder| folder.join(&file))
        .find(|path| path.is_file())
}

/// The `.jsonl` files in `folder` modified at or after `since`.
fn written_since(folder: &Path, since: SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter(|entry| {
            entry.metadata().is_ok_and(|meta| {
                meta.is_file() && meta.modified().is_ok_and(|modified| modified >= since)
            })
        })
        .map(|entry| entry.path())
        .collect()
}

/// Parses at most the last `limit` bytes of `path`, whole records only.
fn read_tail(path: &Path, limit: u64) -> Option<TranscriptFacts> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let cut = len > limit;
    if cut {
        // One byte more, to see whether the window starts on a line start.
        file.seek(SeekFrom::Start(len - limit - 1)).ok()?;
    }
    let mut bytes = Vec::new();
    file.take(limit + u64::from(cut))
        .read_to_end(&mut bytes)
        .ok()?;
    if cut {
        let whole_lines_from = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..whole_lines_from);
    }
    Some(transcript::parse(&String::from_utf8_lossy(&bytes)))
}

#[cfg(test)]
mod tests;
