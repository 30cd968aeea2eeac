//! The files of an attempt that runs on a host, reached through its launcher: the shell code
//! that prepares the attempt there (its folder for the signal file and the agent's log, the
//! task's worktree, `git status` before), reads its signal file and the new bytes of the agent's
//! log while it runs, and gathers its end (`git status` after, the Claude transcript, the
//! worktree's removal, the attempt's files cleared); and how herd reads back what that code
//! printed.
//!
//! Everything comes back in frames (read by `core::remote_frames`) that cannot be confused with
//! anything else the host prints (a login banner, a git message): a header line
//! `herd-frame KIND LENGTH [NUMBER]`, then exactly LENGTH bytes, then a newline. A body is
//! copied into a private temporary folder first, so the length is that of what is sent, even
//! when the file grows meanwhile. The last frame is `end`: without it the host did not finish
//! (lost, timed out). Pure: text in, text out.

use super::shell_words::quote;

/// Where an attempt's files live on the host, under its `$HOME`.
pub fn run_dir_under_home(file_tag: &str, task_id: &str) -> String {
    format!(".herd/runs/{file_tag}/{task_id}")
}

/// Every script starts with this: a private temporary folder removed on exit, `frame KIND FILE
/// [NUMBER]` that sends a file's bytes, and `say KIND TEXT...` that sends a text (their own
/// variables start with `_`: a shell function shares the script's).
const PREAMBLE: &str = r#"umask 077
t=$(mktemp -d 2>/dev/null) || { t="${TMPDIR:-/tmp}/herd.$$"; mkdir "$t" || exit 125; }
trap 'rm -rf "$t"' EXIT
frame() { _n=$(wc -c < "$2" | tr -d ' '); printf 'herd-frame %s %s%s\n' "$1" "$_n" "${3:+ $3}"; cat "$2"; printf '\n'; }
say() { _k=$1; shift; printf '%s' "$*" > "$t/say"; frame "$_k" "$t/say"; }
"#;

/// What to prepare on the host before an attempt's agent starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePrepare<'a> {
    /// The task's folder on the host.
    pub cwd: &'a str,
    /// The attempt's folder under `$HOME` ([`run_dir_under_home`]).
    pub run_dir: &'a str,
    /// File names in that folder cleared first (a signal file, a log of an earlier run).
    pub clear: &'a [String],
    /// The stamp file (in that folder) whose time says when the attempt started.
    pub stamp: &'a str,
    /// `Some(task_id)`: the attempt runs in the task's worktree, made if it is not there yet.
    pub worktree: Option<&'a str>,
    pub host: &'a str,
}

/// Makes the attempt's folder, clears its files, stamps the start, makes the worktree, and
/// prints frames `run-dir`, `cwd` (the folder the agent runs in), `git-status` (when the folder
/// is a repository), `worktree-error` (the task cannot run), `end`.
pub fn prepare_script(p: &RemotePrepare<'_>) -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(&format!(
        "cwd={}\nrun=\"${{HOME:-/tmp}}\"/{}\nmkdir -p \"$run\" || exit 125\n",
        quote(p.cwd),
        quote(p.run_dir)
    ));
    for name in p.clear {
        s.push_str(&format!("rm -f \"$run\"/{}\n", quote(name)));
    }
    s.push_str(&format!(": > \"$run\"/{}\n", quote(p.stamp)));
    s.push_str("say run-dir \"$run\"\n");
    if let Some(task_id) = p.worktree {
        let host = sanitize(p.host);
        let shown = sanitize(p.cwd);
        s.push_str(&format!(
            r#"top=$(git -C "$cwd" rev-parse --show-toplevel 2>/dev/null) || {{ say worktree-error '"worktree": true needs a git repository, and {shown} is not in one on host {host}'; say end; exit 0; }}
wt="$top/.herd/worktrees/"{id}
if [ ! -e "$wt/.git" ]; then
  ex=$(git -C "$top" rev-parse --git-path info/exclude 2>/dev/null) && {{
    case "$ex" in /*) ;; *) ex="$top/$ex" ;; esac
    mkdir -p "$(dirname "$ex")" && {{ grep -qx '/.herd/' "$ex" 2>/dev/null || printf '\n/.herd/\n' >> "$ex"; }}
  }}
  git -C "$top" worktree add -B {branch} "$wt" > "$t/out" 2>&1 || {{ say worktree-error "git worktree add -B "{branch}" $wt failed on host {host}: $(tail -n 3 "$t/out")"; say end; exit 0; }}
fi
cwd=$wt
"#,
            id = quote(task_id),
            branch = quote(&format!("herd/{task_id}")),
        ));
    }
    s.push_str("say cwd \"$cwd\"\n");
    s.push_str(GIT_STATUS);
    s.push_str("say end ok\n");
    s
}

const GIT_STATUS: &str = "git -C \"$cwd\" status --porcelain=v1 --untracked-files=all > \"$t/git\" 2>/dev/null && frame git-status \"$t/git\"\n";

/// What is left of text put inside a double-quoted or single-quoted shell message.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if matches!(c, '"' | '\'' | '\\' | '$' | '`') || c.is_control() {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// What one read of a running attempt's files looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRead<'a> {
    /// The signal file (absolute, on the host).
    pub signal: Option<&'a str>,
    /// The agent's log (absolute, on the host) and how much of it was read already.
    pub log: Option<(&'a str, u64)>,
    /// A larger signal file is not sent, only its size.
    pub signal_max: u64,
    /// The most of the log sent in one read.
    pub log_max: u64,
    /// Without a known log: the Codex rollouts to look for.
    pub rollouts: Option<RolloutSearch<'a>>,
}

/// Where a Codex session's rollout is looked for on the host: `<home>/sessions/**/rollout-
/// *.jsonl` written since the attempt started (its stamp file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RolloutSearch<'a> {
    /// `CODEX_HOME` of the attempt, when it set one (else the host's, else `~/.codex`).
    pub codex_home: Option<&'a str>,
    /// The attempt's stamp file (absolute).
    pub stamp: &'a str,
    /// The task's folder, also sent back resolved (`cwd-real`): Codex names the resolved one.
    pub cwd: &'a str,
}

/// The most of a rollout's first line (`session_meta`) sent to learn its folder.
const ROLLOUT_META_BYTES: u64 = 64 * 1024;

/// Prints the task's folder resolved (`cwd-real`) and a `rollout` frame per candidate: its
/// path, a newline, its first line.
fn rollout_search(search: &RolloutSearch<'_>) -> String {
    let home = match search.codex_home {
        Some(home) => quote(home),
        None => "\"${CODEX_HOME:-${HOME:-/tmp}/.codex}\"".into(),
    };
    format!(
        r#"say cwd-real "$(cd {cwd} 2>/dev/null && pwd -P)"
find {home}/sessions -name 'rollout-*.jsonl' -type f -newer {stamp} 2>/dev/null | while IFS= read -r f; do
  {{ printf '%s\n' "$f"; head -c {ROLLOUT_META_BYTES} "$f" | head -n 1; }} > "$t/cand" && frame rollout "$t/cand"
done
"#,
        stamp = quote(search.stamp),
        cwd = quote(search.cwd),
    )
}

/// Prints the signal file (`signal`, or `signal-large` with its size in the body) and the log's
/// bytes from the offset (`log`, the offset they start at as the number; from 0 again when the
/// file was replaced by a shorter one), then `end`.
pub fn read_script(r: &RemoteRead<'_>) -> String {
    let mut s = String::from(PREAMBLE);
    if let Some(signal) = r.signal {
        s.push_str(&format!(
            r#"s={path}
if [ -f "$s" ]; then
  n=$(wc -c < "$s" | tr -d ' ')
  if [ "$n" -gt {max} ]; then say signal-large "$n"
  elif head -c {max} "$s" > "$t/sig" 2>/dev/null; then frame signal "$t/sig"; fi
fi
"#,
            path = quote(signal),
            max = r.signal_max,
        ));
    }
    if let Some((log, offset)) = r.log {
        s.push_str(&format!(
            r#"l={path}
off={offset}
if [ -f "$l" ]; then
  n=$(wc -c < "$l" | tr -d ' ')
  [ "$n" -lt "$off" ] && off=0
  if [ "$n" -gt "$off" ]; then tail -c +$((off + 1)) "$l" | head -c {max} > "$t/log" && frame log "$t/log" "$off"; fi
fi
"#,
            path = quote(log),
            max = r.log_max,
        ));
    }
    if let (None, Some(search)) = (r.log, &r.rollouts) {
        s.push_str(&rollout_search(search));
    }
    s.push_str("say end ok\n");
    s
}

/// Like [`read_script`] every `every_sec` seconds until the connection goes, on one run of the
/// launcher: the signal file only when it changed, the log's new bytes, then a `tick` frame
/// that closes each round (and ends the script once nobody reads it).
pub fn follow_script(r: &RemoteRead<'_>, every_sec: u32) -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(": > \"$t/prev\"\n");
    if let Some((_, offset)) = r.log {
        s.push_str(&format!("off={offset}\n"));
    }
    s.push_str("while :; do\n");
    if let Some(signal) = r.signal {
        s.push_str(&format!(
            r#"s={path}
if [ -f "$s" ]; then
  n=$(wc -c < "$s" | tr -d ' ')
  if [ "$n" -gt {max} ]; then printf 'large %s' "$n" > "$t/sig"; else head -c {max} "$s" > "$t/sig" 2>/dev/null; fi
  if ! cmp -s "$t/sig" "$t/prev"; then
    cp "$t/sig" "$t/prev"
    if [ "$n" -gt {max} ]; then say signal-large "$n"; else frame signal "$t/sig"; fi
  fi
fi
"#,
            path = quote(signal),
            max = r.signal_max,
        ));
    }
    if let Some((log, _)) = r.log {
        s.push_str(&format!(
            r#"l={path}
if [ -f "$l" ]; then
  n=$(wc -c < "$l" | tr -d ' ')
  [ "$n" -lt "$off" ] && off=0
  if [ "$n" -gt "$off" ]; then
    tail -c +$((off + 1)) "$l" | head -c {max} > "$t/log" && frame log "$t/log" "$off"
    off=$((off + $(wc -c < "$t/log" | tr -d ' ')))
  fi
fi
"#,
            path = quote(log),
            max = r.log_max,
        ));
    }
    if let (None, Some(search)) = (r.log, &r.rollouts) {
        s.push_str(&rollout_search(search));
    }
    s.push_str(&format!("say tick ok || exit 0\nsleep {every_sec}\ndone\n"));
    s
}

/// Where a Claude session's transcript is looked for on the host (as `run::transcripts::find`
/// does here): `<root>/projects/<folder>/<session>.jsonl`, or the one transcript of the task's
/// folder written since the attempt started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTranscript<'a> {
    /// `CLAUDE_CONFIG_DIR` of the attempt, when it set one (else the host's, else
    /// `~/.claude`).
    pub config_dir: Option<&'a str>,
    /// The project folder's name for the task's folder as given.
    pub project: String,
    /// The session id, when known (a plain name: letters, digits, `-`, `_`).
    pub session: Option<&'a str>,
    /// The most sent: the transcript's last bytes.
    pub max_bytes: u64,
}

/// What to do on the host once an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEnd<'a> {
    /// The folder the agent ran in.
    pub cwd: &'a str,
    /// `git status` of the folder after a failure.
    pub git_status: bool,
    pub transcript: Option<RemoteTranscript<'a>>,
    /// Remove the worktree (`cwd`) when it is clean (the task completed).
    pub finish_worktree: bool,
    /// The attempt's folder under `$HOME`, and the files in it to remove (copied back already).
    pub run_dir: &'a str,
    pub remove: &'a [String],
    /// Files of the attempt's folder sent back (their last bytes, up to `fetch_max`), then
    /// removed (the ACP client's log).
    pub fetch: &'a [String],
    pub fetch_max: u64,
    /// The stamp file (in the attempt's folder) that says when the attempt started.
    pub stamp: &'a str,
}

/// Prints `git-status`, `transcript` (its last bytes) and `transcript-path`,
/// `worktree-removed`, `worktree-dirty` (its `git status`) or `worktree-error`, a
/// `fetched-name` and `fetched` pair per file sent back, then `end`.
pub fn end_script(e: &RemoteEnd<'_>) -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(&format!(
        "cwd={}\nrun=\"${{HOME:-/tmp}}\"/{}\nstamp=\"$run\"/{}\n",
        quote(e.cwd),
        quote(e.run_dir),
        quote(e.stamp)
    ));
    if e.git_status {
        s.push_str(GIT_STATUS);
    }
    if let Some(tr) = &e.transcript {
        let root = match tr.config_dir {
            Some(dir) => quote(dir),
            None => "\"${CLAUDE_CONFIG_DIR:-${HOME:-/tmp}/.claude}\"".into(),
        };
        s.push_str(&format!(
            "root={root}/projects\np1={}\np2=$(cd \"$cwd\" 2>/dev/null && pwd -P | sed 's/[^A-Za-z0-9]/-/g')\nf=\n",
            quote(&tr.project)
        ));
        match tr.session.filter(|id| is_plain_name(id)) {
            Some(id) => s.push_str(&format!(
                r#"for c in "$root/$p1/{id}.jsonl" "$root/$p2/{id}.jsonl" "$root"/*/{id}.jsonl; do
  [ -f "$c" ] && {{ f=$c; break; }}
done
"#
            )),
            None => s.push_str(
                r#"for d in "$root/$p1" "$root/$p2"; do
  for c in "$d"/*.jsonl; do
    [ -f "$c" ] && [ -n "$(find "$c" -prune -newer "$stamp" 2>/dev/null)" ] && echo "$c"
  done
done | sort -u > "$t/found"
[ "$(wc -l < "$t/found" | tr -d ' ')" = 1 ] && f=$(cat "$t/found")
"#,
            ),
        }
        s.push_str(&format!(
            "if [ -n \"$f\" ]; then tail -c {} \"$f\" > \"$t/tr\" && frame transcript \"$t/tr\" && say transcript-path \"$f\"; fi\n",
            tr.max_bytes
        ));
    }
    if e.finish_worktree {
        s.push_str(
            r#"if git -C "$cwd" status --porcelain=v1 --untracked-files=all > "$t/wt" 2> "$t/err"; then
  if [ -s "$t/wt" ]; then frame worktree-dirty "$t/wt"
  elif git -C "$cwd" worktree remove "$cwd" > "$t/err" 2>&1; then say worktree-removed "$cwd"
  else say worktree-error "git worktree remove $cwd failed: $(tail -n 3 "$t/err")"; fi
else say worktree-error "git status failed: $(tail -n 3 "$t/err")"; fi
"#,
        );
    }
    for name in e.fetch {
        let name = quote(name);
        s.push_str(&format!(
            "if [ -f \"$run\"/{name} ]; then tail -c {max} \"$run\"/{name} > \"$t/file\" && say fetched-name {name} && frame fetched \"$t/file\"; fi\n",
            max = e.fetch_max
        ));
    }
    let removed = e.remove.iter().chain(e.fetch).map(String::as_str);
    for name in removed.chain([e.stamp]) {
        s.push_str(&format!("rm -f \"$run\"/{}\n", quote(name)));
    }
    // The task's folder goes once empty (its parent may be another task's to fill now).
    s.push_str("rmdir \"$run\" 2>/dev/null\n");
    s.push_str("say end ok\n");
    s
}

fn is_plain_name(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
#[path = "remote_files_tests.rs"]
mod tests;
