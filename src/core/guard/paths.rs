//! Where a path in a request points, judged against the task's folder: `~`, `$HOME`, `..` and
//! relative paths resolved by text, symlinks through facts the shell found out
//! (`GuardContext::resolved`). Touches no file.

use std::collections::BTreeMap;

/// What the guard knows about the task's surroundings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GuardContext {
    /// The task's folder (its worktree when it has one), absolute.
    pub task_dir: String,
    /// The user's home folder, absolute.
    pub home: String,
    /// Real locations of paths, as the shell found them: a symlink inside the folder that points
    /// outside is judged by its target.
    pub resolved: BTreeMap<String, String>,
    /// The folder a command line moved to with `cd` before this point (`None`: the task's).
    pub shell_dir: Option<String>,
}

/// Where a path lies relative to the task's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Strictly inside the folder.
    Inside,
    /// The folder itself.
    TheFolder,
    /// `/`, the home folder, or a parent of the task folder.
    Root,
    Outside,
}

impl GuardContext {
    /// The absolute, normalised form of `path` as the shell in the task's folder would see it.
    pub fn absolute(&self, path: &str) -> String {
        let expanded = if path.starts_with('~') && path != "~" && !path.starts_with("~/") {
            // `~name`: another user's home folder, never inside the task's.
            format!("/home/{}", &path[1..])
        } else if path == "~" {
            self.home.clone()
        } else if let Some(rest) = path.strip_prefix("~/") {
            format!("{}/{rest}", self.home.trim_end_matches('/'))
        } else if path.starts_with('/') {
            path.to_string()
        } else {
            let base = self.shell_dir.as_deref().unwrap_or(&self.task_dir);
            format!("{}/{path}", base.trim_end_matches('/'))
        };
        let lexical = normalise(&expanded);
        self.real(&lexical)
    }

    /// Follows the symlink facts: the longest known prefix is replaced by its real path.
    fn real(&self, lexical: &str) -> String {
        let mut best: Option<(&str, &str)> = None;
        for (from, to) in &self.resolved {
            let from = from.as_str();
            let matches = lexical == from
                || lexical.starts_with(from) && lexical[from.len()..].starts_with('/');
            if matches && best.is_none_or(|(b, _)| from.len() > b.len()) {
                best = Some((from, to.as_str()));
            }
        }
        match best {
            Some((from, to)) => normalise(&format!("{to}{}", &lexical[from.len()..])),
            None => lexical.to_string(),
        }
    }

    /// Where `path` lies.
    pub fn place(&self, path: &str) -> Place {
        let abs = self.absolute(path);
        let dir = self.real(&normalise(&self.task_dir));
        let home = normalise(&self.home);
        if abs == "/" || abs == home || is_within(&dir, &abs) && abs != dir {
            return Place::Root;
        }
        if abs == dir {
            Place::TheFolder
        } else if is_within(&abs, &dir) {
            Place::Inside
        } else {
            Place::Outside
        }
    }
}

/// `path` is `base` or below it.
pub fn is_within(path: &str, base: &str) -> bool {
    let base = base.trim_end_matches('/');
    path == base || base.is_empty() || path.starts_with(base) && path[base.len()..].starts_with('/')
}

/// Removes `.`, `..` and doubled slashes, by text.
pub fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> GuardContext {
        GuardContext {
            task_dir: "/home/dev/proj".into(),
            home: "/home/dev".into(),
            resolved: BTreeMap::from([("/home/dev/proj/link".into(), "/etc".into())]),
            shell_dir: None,
        }
    }

    #[test]
    fn places() {
        let c = ctx();
        assert_eq!(c.place("build"), Place::Inside);
        assert_eq!(c.place("./src/../build"), Place::Inside);
        assert_eq!(c.place("."), Place::TheFolder);
        assert_eq!(c.place("/home/dev/proj/"), Place::TheFolder);
        assert_eq!(c.place(".."), Place::Root);
        assert_eq!(c.place("~"), Place::Root);
        assert_eq!(c.place("/"), Place::Root);
        assert_eq!(c.place("../other"), Place::Outside);
        assert_eq!(c.place("~/other"), Place::Outside);
        assert_eq!(c.place("/tmp/x"), Place::Outside);
        assert_eq!(c.place("link/passwd"), Place::Outside);
        assert_eq!(c.place("/home/dev/projector"), Place::Outside);
    }
}
