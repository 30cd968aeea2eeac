//! What the guard needs to know about where a task runs, found out on the disk: the task's
//! folder as the shell sees it and its real location, and the user's home.
//!
//! The pure guard (`core::guard`) never touches the file system; this is the shell's half.

use std::collections::BTreeMap;
use std::path::Path;

use crate::core::approval::GuardSetup;
use crate::core::guard::{GuardContext, Rule, RuleSet};
use crate::core::task::TaskSpec;

/// The task's rules first, then its profile's; rules that do not compile were reported by
/// validation and are left out here.
pub fn task_rules(task: &TaskSpec, profile_rules: &RuleSet) -> RuleSet {
    let compile = |list: &[String]| -> Vec<Rule> {
        list.iter().filter_map(|r| Rule::parse(r).ok()).collect()
    };
    let mut rules = RuleSet {
        allow: compile(&task.permission_rules.allow),
        ask: compile(&task.permission_rules.ask),
        deny: compile(&task.permission_rules.deny),
    };
    rules.extend(profile_rules);
    rules
}

/// The guard's context for a task running in `cwd`.
pub fn context_for(cwd: &Path) -> GuardContext {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".into());
    let lexical = cwd.display().to_string();
    let mut resolved = BTreeMap::new();
    // A task folder reached through a symlink: paths written either way are inside.
    if let Ok(real) = std::fs::canonicalize(cwd) {
        let real = real.display().to_string();
        if real != lexical {
            resolved.insert(lexical.clone(), real);
        }
    }
    // Symlinks at the top of the folder that lead out of it are judged by their target
    // (`rm -rf data/` where `data -> /srv/data`). One directory read per attempt.
    if let Ok(entries) = std::fs::read_dir(cwd) {
        for entry in entries.flatten().take(10_000) {
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            if is_link && let Ok(real) = std::fs::canonicalize(entry.path()) {
                resolved.insert(
                    entry.path().display().to_string(),
                    real.display().to_string(),
                );
            }
        }
    }
    GuardContext {
        task_dir: lexical,
        home,
        resolved,
        shell_dir: None,
    }
}

pub fn guard_setup(task: &TaskSpec, profile_rules: &RuleSet, cwd: &Path) -> GuardSetup {
    GuardSetup {
        rules: task_rules(task, profile_rules),
        context: context_for(cwd),
    }
}
