//! What an attempt changed in its task's folder, as facts: where it started (commit, branch,
//! uncommitted changes), the files it changed with their added and removed line counts, and a
//! summary in words (`3 files +120 −14`). Also how those facts read in `attempt_<n>.json` and in
//! a task's `result.changes`, how a unified diff's lines are told apart for colour, and the
//! message of the commit `"on_complete": "commit"` makes.
//!
//! Pure: no git, no files. Reading a repository is `run::changes`'s.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How one file changed between the attempt's start and its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    /// A file that became a symbolic link, or the other way round.
    TypeChanged,
}

impl FileStatus {
    /// The one letter `git status --short` uses for it.
    pub fn letter(self) -> char {
        match self {
            FileStatus::Added => 'A',
            FileStatus::Deleted => 'D',
            FileStatus::Modified => 'M',
            FileStatus::TypeChanged => 'T',
        }
    }
}

/// One changed file. A binary file has no line counts (both 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Relative to the repository's top folder, with `/` separators.
    pub path: String,
    pub status: FileStatus,
    pub added: u64,
    pub removed: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub binary: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Where an attempt started: the folder's commit (`None` in a repository without one) and
/// branch (`None` on a detached head), and whether it had uncommitted changes then.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StartPoint {
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub dirty: bool,
}

/// What an attempt changed in a folder that is a git repository (or inside one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepoChanges {
    pub start: StartPoint,
    /// The branch at the attempt's end.
    pub branch: Option<String>,
    pub files: Vec<FileChange>,
}

impl RepoChanges {
    /// Lines added over all files.
    pub fn added(&self) -> u64 {
        self.files.iter().map(|f| f.added).sum()
    }

    /// Lines removed over all files.
    pub fn removed(&self) -> u64 {
        self.files.iter().map(|f| f.removed).sum()
    }

    /// `3 files +120 −14`, `1 file +2 −0`, `no changes`; binary files are counted as files and
    /// named once more at the end (`2 files +3 −1, 1 binary`).
    pub fn summary(&self) -> String {
        let count = self.files.len();
        if count == 0 {
            return "no changes".into();
        }
        let noun = if count == 1 { "file" } else { "files" };
        let mut words = format!("{count} {noun} +{} −{}", self.added(), self.removed());
        let binary = self.files.iter().filter(|f| f.binary).count();
        if binary > 0 {
            words.push_str(&format!(", {binary} binary"));
        }
        words
    }

    /// One line per file for `herd diff --stat`: status letter, counts, path.
    pub fn stat_lines(&self) -> Vec<String> {
        let width = self
            .files
            .iter()
            .map(|f| counts_of(f).chars().count())
            .max()
            .unwrap_or(0);
        self.files
            .iter()
            .map(|f| {
                let counts = counts_of(f);
                let pad = width - counts.chars().count();
                format!(
                    "{} {counts}{} {}",
                    f.status.letter(),
                    " ".repeat(pad),
                    f.path
                )
            })
            .collect()
    }
}

fn counts_of(file: &FileChange) -> String {
    if file.binary {
        "binary".into()
    } else {
        format!("+{} −{}", file.added, file.removed)
    }
}

/// What an attempt changed: facts about a repository, that its folder is not in one, or that
/// they were not read at all and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "ChangesRecord", try_from = "ChangesRecord")]
pub enum Changes {
    NotARepository,
    InRepository(RepoChanges),
    /// Not read: `why` says in a few words (`remote host`: an attempt on another host).
    NotRecorded {
        why: String,
    },
}

impl Changes {
    /// The changes of an attempt on another host, which herd does not read there.
    pub fn on_remote_host() -> Changes {
        Changes::NotRecorded {
            why: "remote host".into(),
        }
    }

    /// The summary in words: [`RepoChanges::summary`], `not a repository`, or `not recorded
    /// (remote host)`.
    pub fn summary(&self) -> String {
        match self {
            Changes::NotARepository => "not a repository".into(),
            Changes::InRepository(repo) => repo.summary(),
            Changes::NotRecorded { why } => format!("not recorded ({why})"),
        }
    }

    /// The changed files: none outside a repository or when not recorded.
    pub fn files(&self) -> &[FileChange] {
        match self {
            Changes::InRepository(repo) => &repo.files,
            Changes::NotARepository | Changes::NotRecorded { .. } => &[],
        }
    }

    /// As it is written in `attempt_<n>.json` and `result.changes`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({"summary": self.summary()}))
    }

    /// The changes recorded in `value` (a `result.changes` or an attempt file's `changes`).
    pub fn from_json(value: &Value) -> Option<Changes> {
        serde_json::from_value(value.clone()).ok()
    }
}

/// The written form of [`Changes`]: the facts, their totals and their summary, so that a reader
/// of the JSON (a script, `jq`) needs no arithmetic.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ChangesRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    repository: Option<bool>,
    /// `false` when they were not read (`why` says why); absent when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recorded: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start: Option<StartPoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    files: Option<Vec<FileChange>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    added: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    removed: Option<u64>,
    #[serde(default)]
    summary: String,
}

impl From<Changes> for ChangesRecord {
    fn from(changes: Changes) -> Self {
        let summary = changes.summary();
        let record = ChangesRecord {
            repository: None,
            recorded: None,
            why: None,
            start: None,
            branch: None,
            files: None,
            added: None,
            removed: None,
            summary,
        };
        match changes {
            Changes::NotARepository => ChangesRecord {
                repository: Some(false),
                ..record
            },
            Changes::NotRecorded { why } => ChangesRecord {
                recorded: Some(false),
                why: Some(why),
                ..record
            },
            Changes::InRepository(repo) => ChangesRecord {
                repository: Some(true),
                added: Some(repo.added()),
                removed: Some(repo.removed()),
                start: Some(repo.start),
                branch: repo.branch,
                files: Some(repo.files),
                ..record
            },
        }
    }
}

impl TryFrom<ChangesRecord> for Changes {
    type Error = &'static str;

    fn try_from(record: ChangesRecord) -> Result<Self, Self::Error> {
        match (record.recorded, record.repository) {
            (Some(false), _) => Ok(Changes::NotRecorded {
                why: record.why.unwrap_or_default(),
            }),
            (_, Some(true)) => Ok(Changes::InRepository(RepoChanges {
                start: record.start.unwrap_or_default(),
                branch: record.branch,
                files: record.files.unwrap_or_default(),
            })),
            (_, Some(false)) => Ok(Changes::NotARepository),
            (_, None) => Err("changes say neither \"repository\" nor \"recorded\": false"),
        }
    }
}

/// What one line of a unified diff is, for colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLine {
    /// `diff --git`, `index`, `---`, `+++`, `new file mode`, ...: the start of a file.
    FileHeader,
    /// `@@ -1,3 +1,4 @@`
    Hunk,
    Added,
    Removed,
    Context,
}

/// Which kind of line `line` is, knowing whether it is inside a hunk (after an `@@` line of the
/// same file), where `---` and `+++` are a removed and an added line.
pub fn classify_diff_line(line: &str, in_hunk: bool) -> DiffLine {
    if line.starts_with("diff --git ") {
        DiffLine::FileHeader
    } else if line.starts_with("@@") {
        DiffLine::Hunk
    } else if !in_hunk {
        DiffLine::FileHeader
    } else if line.starts_with('+') {
        DiffLine::Added
    } else if line.starts_with('-') {
        DiffLine::Removed
    } else {
        DiffLine::Context
    }
}

/// Every line of `text` with its kind, in order.
pub fn classify_diff(text: &str) -> Vec<(DiffLine, &str)> {
    let mut in_hunk = false;
    text.lines()
        .map(|line| {
            let kind = classify_diff_line(line, in_hunk);
            in_hunk = match kind {
                DiffLine::FileHeader => false,
                DiffLine::Hunk => true,
                _ => in_hunk,
            };
            (kind, line)
        })
        .collect()
}

/// How many of the agent's last output lines go into a commit message when it gave no result.
pub const SUMMARY_LINES: usize = 10;

/// The message of the commit `"on_complete": "commit"` makes: the task id as its subject, then
/// the agent's own summary: its final result text, else its last lines before the marker
/// (`output_tail`, the marker line and what follows left out), blank lines trimmed.
pub fn commit_message(task_id: &str, result_text: Option<&str>, output_tail: &[String]) -> String {
    let body = match result_text.map(str::trim).filter(|t| !t.is_empty()) {
        Some(text) => text.to_string(),
        None => last_lines(output_tail),
    };
    if body.is_empty() {
        format!("herd: {task_id}\n")
    } else {
        format!("herd: {task_id}\n\n{body}\n")
    }
}

fn last_lines(lines: &[String]) -> String {
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end())
        .skip_while(|l| l.is_empty())
        .collect();
    let end = kept
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    let start = end.saturating_sub(SUMMARY_LINES);
    kept[start..end].join("\n")
}

/// The lines of `output` before the last line holding `marker` (a prompt echoed on screen may
/// name the marker earlier), or all of them when the marker is not there.
pub fn lines_before_marker(output: &str, marker: &str) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let end = lines
        .iter()
        .rposition(|line| !marker.is_empty() && line.contains(marker))
        .unwrap_or(lines.len());
    lines[..end].iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
