//! `herd policy check`: what herd would do with one permission request under a task's policy
//! (or rules given on the command line), and why. For people writing rules.

use std::path::{Path, PathBuf};

use color_eyre::eyre::Result;

use super::args::{PolicyArgs, PolicyCheckArgs, PolicyCommand};
use super::inputs::{EXIT_INVALID, loaded};
use crate::core::approval::ONCE_RULE;
use crate::core::guard::{self, Decision, Policy, Request, RuleSet};
use crate::core::taskfile::TaskFile;
use crate::run::guard_context::{context_for, task_rules};
use crate::run::inputs::load_profiles;

pub(super) fn policy(args: &PolicyArgs) -> Result<i32> {
    match &args.command {
        PolicyCommand::Check(check) => Ok(policy_check(check)),
    }
}

fn policy_check(args: &PolicyCheckArgs) -> i32 {
    let request = match (&args.shell, &args.request) {
        (Some(command), _) => Request::from_parts("shell", command),
        (None, Some(text)) => Request::parse_or_shell(text),
        (None, None) => {
            eprintln!("herd policy check: give a request, e.g. 'Bash(rm -rf build)'");
            return EXIT_INVALID;
        }
    };
    let parsed = RuleSet::parse(&args.allow, &args.ask, &args.deny)
        .map_err(|errors| errors.iter().map(ToString::to_string).collect());
    let Some(mut rules) = loaded(parsed) else {
        return EXIT_INVALID;
    };
    let mut switch = args.auto.then(|| "--auto".to_string());
    let mut cwd = args.cwd.clone();
    if let (Some(path), Some(task_id)) = (&args.tasks, &args.task) {
        let Some(found) = loaded(task_policy(path, task_id, args.profiles.as_deref())) else {
            return EXIT_INVALID;
        };
        rules.extend(&found.rules);
        if switch.is_none() {
            switch = found.switch;
        }
        cwd = cwd.or(Some(found.cwd));
    }
    let cwd = cwd
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
    let context = context_for(&cwd);
    let policy = Policy {
        rules,
        allow_unless_refused: switch,
    };
    let decision = guard::decide(&request, &policy, &context);
    println!("request:  {request}");
    println!("folder:   {}", context.task_dir);
    println!("decision: {}", decision.name());
    match &decision {
        Decision::Allow { rule } => println!("why:      allowed by {rule}"),
        Decision::Ask { reason } => println!("why:      {reason}; the operator decides"),
        Decision::Refuse { reason } => println!(
            "why:      {reason}\n          never answered automatically; the operator may still approve it by hand"
        ),
    }
    exit_code(&decision)
}

/// Exit status of `herd policy check`: scripts can test the decision without reading the text.
const EXIT_ALLOW: i32 = 0;
const EXIT_ASK: i32 = 1;
const EXIT_REFUSE: i32 = 3;

fn exit_code(decision: &Decision) -> i32 {
    match decision {
        Decision::Allow { .. } => EXIT_ALLOW,
        Decision::Ask { .. } => EXIT_ASK,
        Decision::Refuse { .. } => EXIT_REFUSE,
    }
}

struct TaskPolicy {
    rules: RuleSet,
    switch: Option<String>,
    cwd: PathBuf,
}

fn task_policy(
    path: &Path,
    task_id: &str,
    profiles: Option<&Path>,
) -> Result<TaskPolicy, Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![format!(
            "{}: cannot read the tasks file: {e}",
            path.display()
        )]
    })?;
    let file = TaskFile::parse(&text).map_err(|errors| {
        errors
            .iter()
            .map(|p| crate::run::store::format_problem(path, p))
            .collect::<Vec<_>>()
    })?;
    let Some(task) = file.tasks().iter().find(|t| t.task_id == task_id) else {
        return Err(vec![format!("{}: no task {task_id:?}", path.display())]);
    };
    let profiles = load_profiles(profiles)?;
    let profile_rules = profiles
        .get(&task.agent)
        .map(|p| p.rules.clone())
        .unwrap_or_default();
    let base = path.parent().unwrap_or(Path::new("."));
    let switch_name = format!("auto_{ONCE_RULE}");
    Ok(TaskPolicy {
        rules: task_rules(task, &profile_rules),
        switch: (task.policy_for(ONCE_RULE) == Some(true)).then_some(switch_name),
        cwd: crate::run::launch::task_cwd(task, base),
    })
}
