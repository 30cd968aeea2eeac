//! What the shell code of `core::remote::files` printed on a host, read back: its frames (a
//! header `herd-frame KIND LENGTH [NUMBER]`, LENGTH bytes, a newline; `end` says the script
//! finished) and what they mean for an attempt's preparation, its reads and its end. Pure.

use std::collections::BTreeSet;

/// One frame of a script's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: String,
    pub number: Option<u64>,
    pub body: Vec<u8>,
}

impl Frame {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The frames of a script's output, and whether it got to its `end` frame; anything between
/// frames is skipped, a frame cut short ends the reading.
pub fn parse_frames(output: &[u8]) -> (Vec<Frame>, bool) {
    let (frames, ended, _) = scan(output);
    (frames, ended)
}

/// The whole frames at the start of `output`, whether `end` came, and the bytes they took.
fn scan(output: &[u8]) -> (Vec<Frame>, bool, usize) {
    const HEADER: &[u8] = b"herd-frame ";
    let mut frames = Vec::new();
    let mut at = 0;
    let mut used = 0;
    while let Some(start) = find_header(&output[at..], HEADER).map(|i| at + i) {
        let Some(eol) = output[start..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&output[start + HEADER.len()..start + eol]);
        let mut words = header.split(' ');
        let (Some(kind), Some(Ok(len))) = (words.next(), words.next().map(str::parse::<usize>))
        else {
            at = start + eol + 1;
            used = at;
            continue;
        };
        let number = words.next().and_then(|n| n.parse().ok());
        let body_at = start + eol + 1;
        let Some(body) = output.get(body_at..body_at + len) else {
            break;
        };
        at = body_at + len;
        used = at;
        if kind == "end" {
            return (frames, true, used);
        }
        frames.push(Frame {
            kind: kind.to_string(),
            number,
            body: body.to_vec(),
        });
    }
    (frames, false, used)
}

/// A header at the start of `bytes` or of one of its lines.
fn find_header(bytes: &[u8], header: &[u8]) -> Option<usize> {
    if bytes.starts_with(header) {
        return Some(0);
    }
    bytes
        .windows(header.len() + 1)
        .position(|w| w[0] == b'\n' && &w[1..] == header)
        .map(|i| i + 1)
}

/// The paths a `git status --porcelain=v1` output lists.
fn status_files(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.get(3..))
        .map(str::to_string)
        .collect()
}

/// What the prepare script found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    Ready {
        /// The attempt's folder on the host (absolute).
        run_dir: String,
        /// The folder the agent runs in (the worktree, for a worktree task).
        cwd: String,
        /// `git status` of that folder; `None` outside a repository.
        git_before: Option<BTreeSet<String>>,
    },
    /// The task cannot run there (its configuration).
    Refused { problem: String },
    /// The script did not finish (the host was lost or timed out).
    Unfinished,
}

pub fn parse_prepare(output: &[u8]) -> Prepared {
    let (frames, ended) = parse_frames(output);
    let get = |kind: &str| frames.iter().find(|f| f.kind == kind).map(Frame::text);
    if let Some(problem) = get("worktree-error") {
        return Prepared::Refused { problem };
    }
    match (ended, get("run-dir"), get("cwd")) {
        (true, Some(run_dir), Some(cwd)) => Prepared::Ready {
            run_dir,
            cwd,
            git_before: get("git-status").map(|s| status_files(&s)),
        },
        _ => Prepared::Unfinished,
    }
}

/// What one read of the running attempt's files found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadBack {
    /// The signal file's bytes, or `Err(size)` when it is too large to be one.
    pub signal: Option<Result<Vec<u8>, u64>>,
    /// The log's new bytes and the offset they start at.
    pub log: Option<(u64, Vec<u8>)>,
    /// Codex rollouts written since the attempt started: path, first line.
    pub rollouts: Vec<(String, String)>,
    /// The task's folder with its links resolved (sent with the rollouts).
    pub cwd_real: Option<String>,
    /// The script got to its end (the host answered).
    pub complete: bool,
}

pub fn parse_read(output: &[u8]) -> ReadBack {
    let (frames, complete) = parse_frames(output);
    let mut back = ReadBack {
        complete,
        ..ReadBack::default()
    };
    for frame in frames {
        back.take(frame);
    }
    back
}

impl ReadBack {
    fn take(&mut self, frame: Frame) {
        match frame.kind.as_str() {
            "signal" => self.signal = Some(Ok(frame.body)),
            "signal-large" => {
                self.signal = Some(Err(frame.text().trim().parse().unwrap_or(u64::MAX)));
            }
            "log" => self.log = Some((frame.number.unwrap_or(0), frame.body)),
            "cwd-real" => self.cwd_real = Some(frame.text()).filter(|c| !c.is_empty()),
            "rollout" => {
                let text = frame.text();
                let (path, first) = text.split_once('\n').unwrap_or((text.as_str(), ""));
                self.rollouts
                    .push((path.to_string(), first.trim_end().to_string()));
            }
            _ => {}
        }
    }
}

/// A worktree after its task completed, as the host's `git` left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorktreeEnd {
    Removed,
    KeptDirty { files: Vec<String> },
    Failed { error: String },
}

/// What the end script found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndBack {
    pub git_after: Option<BTreeSet<String>>,
    /// The transcript's path on the host and its (last) bytes.
    pub transcript: Option<(String, Vec<u8>)>,
    pub worktree: Option<WorktreeEnd>,
    /// The files sent back: name, bytes.
    pub fetched: Vec<(String, Vec<u8>)>,
    pub complete: bool,
}

pub fn parse_end(output: &[u8]) -> EndBack {
    let (frames, complete) = parse_frames(output);
    let mut back = EndBack {
        complete,
        ..EndBack::default()
    };
    let mut transcript = None;
    let mut name = None;
    for frame in frames {
        match frame.kind.as_str() {
            "git-status" => back.git_after = Some(status_files(&frame.text())),
            "transcript" => transcript = Some(frame.body),
            "transcript-path" => {
                back.transcript = transcript.take().map(|bytes| (frame.text(), bytes));
            }
            "fetched-name" => name = Some(frame.text()),
            "fetched" => {
                if let Some(name) = name.take() {
                    back.fetched.push((name, frame.body));
                }
            }
            "worktree-removed" => back.worktree = Some(WorktreeEnd::Removed),
            "worktree-dirty" => {
                back.worktree = Some(WorktreeEnd::KeptDirty {
                    files: status_files(&frame.text()).into_iter().collect(),
                });
            }
            "worktree-error" => {
                back.worktree = Some(WorktreeEnd::Failed {
                    error: frame.text(),
                });
            }
            _ => {}
        }
    }
    back
}

/// The one rollout among `candidates` whose `session_meta` names one of `folders`; none when
/// several do (another session's file is never taken).
pub fn choose_rollout(candidates: &[(String, String)], folders: &[&str]) -> Option<String> {
    let mut found = candidates.iter().filter(|(_, first)| {
        serde_json::from_str::<serde_json::Value>(first)
            .ok()
            .and_then(|meta| meta["payload"]["cwd"].as_str().map(str::to_string))
            .is_some_and(|cwd| folders.contains(&cwd.as_str()))
    });
    match (found.next(), found.next()) {
        (Some((path, _)), None) => Some(path.clone()),
        _ => None,
    }
}

/// Reads `core::remote::files::follow_script`'s output as it comes, in pieces cut anywhere: one
/// [`ReadBack`] per round.
#[derive(Debug, Default)]
pub struct FollowReader {
    buf: Vec<u8>,
    round: ReadBack,
}

impl FollowReader {
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<ReadBack> {
        self.buf.extend_from_slice(bytes);
        let (frames, _, used) = scan(&self.buf);
        self.buf.drain(..used);
        if used == 0 && self.buf.len() > GARBAGE_MAX {
            // No frame in sight: only a header's beginning is worth keeping.
            let keep = self.buf.len() - 64;
            self.buf.drain(..keep);
        }
        let mut rounds = Vec::new();
        for frame in frames {
            if frame.kind == "tick" {
                let mut round = std::mem::take(&mut self.round);
                round.complete = true;
                rounds.push(round);
            } else {
                self.round.take(frame);
            }
        }
        rounds
    }
}

/// Bytes of output without a frame after which the reader stops keeping them.
const GARBAGE_MAX: usize = 1 << 20;

#[cfg(test)]
#[path = "frames_tests.rs"]
mod tests;
