//! The floor's judgement of programs that destroy or rewrite (`rm`, `find -delete`, force
//! pushes, recursive `chmod`/`chown`).

use super::finding::Finding;
use super::paths::{GuardContext, Place};
use super::programs::base_name;
use super::shell::Word;

pub(super) fn check_rm(name: &str, args: &[Word], ctx: &GuardContext, out: &mut Vec<Finding>) {
    let mut recursive = name == "rmdir";
    let mut force = name == "shred";
    let mut targets = Vec::new();
    let mut options_done = false;
    for word in args {
        let t = word.text.as_str();
        if !options_done && t == "--" {
            options_done = true;
        } else if !options_done && t.starts_with("--") {
            recursive |= t == "--recursive";
            force |= t == "--force";
        } else if !options_done && t.starts_with('-') && t.len() > 1 {
            recursive |= t.contains(['r', 'R']);
            force |= t.contains('f');
        } else {
            targets.push(word);
        }
    }
    if !(recursive || force) {
        return;
    }
    let what = match (recursive, force) {
        (true, true) => "a forced recursive delete",
        (true, false) => "a recursive delete",
        _ => "a forced delete",
    };
    for target in targets {
        judge_destructive_target(what, target, ctx, out);
    }
}

/// A destructive operation on `target`: refused outside the folder, of the folder, `~` or `/`;
/// doubted when known only at run time.
pub(super) fn judge_destructive_target(
    what: &str,
    target: &Word,
    ctx: &GuardContext,
    out: &mut Vec<Finding>,
) {
    let text = &target.text;
    if target.dynamic {
        out.push(Finding::Doubt(format!(
            "{what} of {text}, a path only known when it runs"
        )));
        return;
    }
    // A glob's fixed part decides where it reaches (`/*` is `/`, `build/*` is inside).
    let fixed = if target.glob {
        let cut = text.find(['*', '?', '[']).unwrap_or(text.len());
        let head = &text[..cut];
        match head.rfind('/') {
            Some(slash) => head[..=slash].to_string(),
            None => ".".to_string(),
        }
    } else {
        text.clone()
    };
    match ctx.place(&fixed) {
        Place::Inside => {}
        Place::TheFolder => out.push(Finding::Refuse(format!(
            "{what} of the whole task folder ({text})"
        ))),
        Place::Root => out.push(Finding::Refuse(format!(
            "{what} of {text}, which holds the home folder or the whole system"
        ))),
        Place::Outside => out.push(Finding::Refuse(format!(
            "{what} of {} outside the task's folder",
            ctx.absolute(&fixed)
        ))),
    }
}

pub(super) fn check_find(args: &[Word], ctx: &GuardContext, out: &mut Vec<Finding>) {
    let starts: Vec<&Word> = args
        .iter()
        .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
        .collect();
    let deletes = args.iter().enumerate().any(|(i, w)| {
        w.text == "-delete"
            || matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && args.get(i + 1).is_some_and(|n| {
                    matches!(base_name(&n.text), "rm" | "shred" | "unlink" | "rmdir")
                })
    });
    if !deletes {
        return;
    }
    let dot = Word {
        text: ".".into(),
        ..Word::default()
    };
    let starts = if starts.is_empty() {
        vec![&dot]
    } else {
        starts
    };
    for start in starts {
        // `find . -delete` inside the folder deletes what matches in it: fine.
        if ctx.place(&start.text) == Place::TheFolder && !start.dynamic {
            continue;
        }
        judge_destructive_target("`find` deleting files", start, ctx, out);
    }
}

pub(super) fn check_git(args: &[Word], out: &mut Vec<Finding>) {
    // Skip global options (`-C dir`, `-c k=v`, `--git-dir=…`).
    let mut i = 0;
    while i < args.len() && args[i].text.starts_with('-') {
        i += if matches!(args[i].text.as_str(), "-C" | "-c") {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(i) else {
        return;
    };
    let rest = &args[i + 1..];
    if sub.text == "push" {
        let forced = rest.iter().any(|w| {
            let t = w.text.as_str();
            t == "-f"
                || t.starts_with("--force")
                || t == "--mirror"
                || t == "--delete"
                || t == "-d"
                || t == "--prune"
                || t.starts_with('-') && !t.starts_with("--") && t.contains('f')
        });
        let positional: Vec<&Word> = rest.iter().filter(|w| !w.text.starts_with('-')).collect();
        let plus_refspec = positional.iter().skip(1).any(|w| w.text.starts_with('+'));
        let delete_refspec = positional.iter().skip(1).any(|w| w.text.starts_with(':'));
        if forced || plus_refspec || delete_refspec {
            out.push(Finding::Refuse(
                "it force-pushes or deletes on a remote, rewriting history others rely on".into(),
            ));
        }
    }
}

pub(super) fn check_recursive_owner(
    name: &str,
    args: &[Word],
    ctx: &GuardContext,
    out: &mut Vec<Finding>,
) {
    let recursive = args.iter().any(|w| {
        w.text == "--recursive"
            || w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('R')
    });
    if !recursive {
        return;
    }
    // The first operand is the mode or owner.
    let operands: Vec<&Word> = args
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .skip(1)
        .collect();
    for target in operands {
        judge_destructive_target(&format!("a recursive `{name}`"), target, ctx, out);
    }
}
