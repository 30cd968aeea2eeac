//! The floor's judgement of programs that run code: downloads piped to a shell, `bash -c '…'`,
//! `eval`/`source` of run-time text, and inline code by its literals.

use super::credentials::credential_findings;
use super::finding::Finding;
use super::paths::GuardContext;
use super::programs::{DOWNLOADERS, SHELLS, is_fork_bomb, program, unwrap};
use super::shell::{self, Script, Word};

/// The floor's own check for a command line found inside another, handed in (no import cycle).
pub(super) type JudgeScript<'a> = &'a dyn Fn(&Script, &GuardContext, usize) -> Vec<Finding>;

pub(super) fn mentions_download(word: &Word) -> bool {
    word.inner.iter().any(|script| {
        script
            .all_commands()
            .iter()
            .any(|c| program(&unwrap(c)).is_some_and(|n| DOWNLOADERS.contains(&n)))
    })
}

pub(super) fn check_interpreter(
    name: &str,
    args: &[Word],
    ctx: &GuardContext,
    depth: usize,
    judge: JudgeScript<'_>,
    out: &mut Vec<Finding>,
) {
    if args.iter().any(mentions_download) {
        out.push(Finding::Refuse(format!(
            "it runs code downloaded from the network with `{name}` (remote code runs unseen)"
        )));
        return;
    }
    // `bash -c "…"`, `sh -lc '…'`: the string is a command line of its own.
    let is_shell = SHELLS.contains(&name);
    let mut i = 0;
    while i < args.len() {
        let t = &args[i].text;
        if is_shell && t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            let Some(code) = args.get(i + 1) else {
                out.push(Finding::Doubt(format!("`{name} -c` with nothing to run")));
                return;
            };
            if code.dynamic {
                out.push(Finding::Doubt(format!(
                    "`{name} -c` runs text that is only known when it runs"
                )));
                return;
            }
            if is_fork_bomb(&code.text) {
                out.push(Finding::Refuse("it is a fork bomb".into()));
                return;
            }
            match shell::parse_at(&code.text, depth + 1) {
                Ok(script) => out.extend(judge(&script, ctx, depth + 1)),
                Err(e) => out.push(Finding::Doubt(format!(
                    "herd cannot read the command `{name} -c` runs ({e})"
                ))),
            }
            return;
        }
        // Inline code herd does not parse: its text literals are judged.
        if !is_shell && matches!(t.as_str(), "-c" | "-e" | "-E" | "--eval" | "-r") {
            if let Some(code) = args.get(i + 1) {
                check_inline_code(name, &code.text, ctx, depth, judge, out);
            }
            return;
        }
        if !t.starts_with('-') {
            break;
        }
        i += 1;
    }
    if (name == "eval" || name == "source" || name == ".") && args.iter().any(|w| w.dynamic) {
        out.push(Finding::Doubt(format!(
            "`{name}` runs text that is only known when it runs"
        )));
    }
}

/// Calls by which a program's code runs a shell command or deletes a tree.
const SPAWNS: &[&str] = &[
    "system(",
    "popen(",
    "subprocess",
    "spawn",
    "exec(",
    "execSync",
    "child_process",
    "`",
    "Popen",
    "check_output",
    "check_call",
    "Command::new",
    "shell_exec",
];

const TREE_DELETES: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r(",
    "rmSync",
    "removedirs",
    "remove_tree",
];

/// Judges the text literals of inline code: a credential path is refused; with a spawning call
/// each is judged as a command line, with a tree-deleting call as the deleted path.
fn check_inline_code(
    name: &str,
    code: &str,
    ctx: &GuardContext,
    depth: usize,
    judge: JudgeScript<'_>,
    out: &mut Vec<Finding>,
) {
    let literals = string_literals(code);
    for literal in &literals {
        for word in literal.split_whitespace() {
            out.extend(credential_findings(word, ctx));
        }
    }
    if SPAWNS.iter().any(|s| code.contains(s)) {
        for literal in &literals {
            if let Ok(script) = shell::parse_at(literal, depth + 1) {
                out.extend(
                    judge(&script, ctx, depth + 1)
                        .into_iter()
                        .filter(|f| matches!(f, Finding::Refuse(_))),
                );
            }
        }
    }
    if TREE_DELETES.iter().any(|s| code.contains(s)) {
        for literal in literals.iter().filter(|l| l.starts_with(['/', '~', '.'])) {
            let target = Word {
                text: literal.clone(),
                ..Word::default()
            };
            super::destructive::judge_destructive_target(
                &format!("a recursive delete from `{name}` code"),
                &target,
                ctx,
                out,
            );
        }
    }
}

/// The contents of the '…' and "…" literals in a piece of code (escapes kept as written).
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '"' {
            let mut literal = String::new();
            let mut escaped = false;
            for d in chars.by_ref() {
                if escaped {
                    literal.push(d);
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == c {
                    break;
                } else {
                    literal.push(d);
                }
            }
            out.push(literal);
        }
    }
    out
}
