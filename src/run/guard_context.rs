//! The shell's half of the guard: the task's folder, its real location and the user's home.

use std::collections::BTreeMap;
use std::path::Path;

use crate::core::approval::GuardSetup;
use crate::core::guard::{GuardContext, Rule, RuleSet};
use crate::core::task::TaskSpec;

/// The task's rules, then its profile's (rules that do not compile were reported already).
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
    // Top-level symlinks leading out of the folder are judged by their target.
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
