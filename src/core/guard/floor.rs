//! The floor: requests no policy passes automatically, each with a reason a person understands.
//! Judges every simple command of a parsed line (wrappers and `bash -c "…"` unwrapped) and file
//! requests by path: a refusal (dangerous) or a doubt (the guard cannot tell: ask).

use super::credentials::credential_findings;
use super::destructive::{check_find, check_git, check_recursive_owner, check_rm};
use super::finding::Finding;
use super::interpreters::{check_interpreter, mentions_download};
use super::paths::{GuardContext, Place};
use super::programs::{
    DISK_TOOLS, DOWNLOADERS, INTERPRETERS, POWER, PRIVILEGE, SENDERS, SHELLS, base_name,
    is_fork_bomb, is_raw_device, program, unwrap,
};
use super::request::{Request, RequestKind};
use super::shell::{self, Script, SimpleCommand, Word};

/// Floor findings for a request.
pub fn check(request: &Request, ctx: &GuardContext) -> Vec<Finding> {
    match &request.kind {
        RequestKind::Shell { command } => check_command_line(command, ctx),
        RequestKind::Edit { path } | RequestKind::Write { path } => {
            let mut out = credential_findings(path, ctx);
            if path.contains('$') || path.contains('`') {
                out.push(Finding::Doubt(format!(
                    "the path {path} is only known when it runs"
                )));
            } else if matches!(
                ctx.place(path),
                Place::Outside | Place::Root | Place::TheFolder
            ) {
                out.push(Finding::Refuse(format!(
                    "it changes {} outside the task's folder {}",
                    ctx.absolute(path),
                    ctx.task_dir
                )));
            }
            out
        }
        RequestKind::Read { path } => credential_findings(path, ctx),
        RequestKind::Fetch { .. } => Vec::new(),
        // What herd could read of it: a credential named anywhere in it is still refused.
        RequestKind::Unread { what } => credential_words(what, ctx),
        // A tool whose input names a credential file is treated as reading it.
        RequestKind::Tool { input, .. } => credential_words(input, ctx),
    }
}

/// The first credential file any word of a text names, as a finding.
fn credential_words(text: &str, ctx: &GuardContext) -> Vec<Finding> {
    text.split(|c: char| c.is_whitespace() || "\"',{}[]=:".contains(c))
        .filter(|w| !w.is_empty())
        .flat_map(|w| credential_findings(w, ctx))
        .take(1)
        .collect()
}

/// Findings for one command line.
pub fn check_command_line(text: &str, ctx: &GuardContext) -> Vec<Finding> {
    if is_fork_bomb(text) {
        return vec![Finding::Refuse(
            "it is a fork bomb (a function that starts copies of itself until the machine stops)"
                .into(),
        )];
    }
    match shell::parse(text) {
        Ok(script) => check_script(&script, ctx, 0),
        Err(e) => vec![Finding::Doubt(format!(
            "herd cannot read this command line ({e})"
        ))],
    }
}

/// Files a downloader command writes (`-o F`, `-O F`, `> F`, or the URL's last segment), as
/// absolute paths.
fn downloaded_files(words: &[Word], command: &SimpleCommand, ctx: &GuardContext) -> Vec<String> {
    let mut files = Vec::new();
    let url_name = || {
        words
            .iter()
            .find(|w| w.text.contains("://"))
            .and_then(|w| w.text.rsplit('/').next())
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    };
    let is_wget = program(words) == Some("wget");
    let mut named_output = false;
    for (i, w) in words.iter().enumerate() {
        let t = w.text.as_str();
        let next = words.get(i + 1).map(|n| n.text.clone());
        // Short options cluster (`-sSLo FILE`, `-sO`): the last letter takes the value.
        let short = t.starts_with('-') && !t.starts_with("--") && t.len() > 1;
        let file = match t {
            "--output" if !is_wget => next,
            "--output-document" if is_wget => next,
            "--remote-name" => url_name(),
            _ if short && !is_wget && t.ends_with('o') => next,
            _ if short && is_wget && t.ends_with('O') => next,
            _ if short && !is_wget && t.contains('O') => url_name(),
            _ => t
                .strip_prefix("--output-document=")
                .or_else(|| t.strip_prefix("--output="))
                .map(str::to_string),
        };
        if let Some(file) = file.filter(|f| f != "-") {
            named_output = true;
            files.push(ctx.absolute(&file));
        }
    }
    if is_wget
        && !named_output
        && let Some(name) = url_name()
    {
        files.push(ctx.absolute(&name));
    }
    for r in command.redirects.iter().filter(|r| r.writes()) {
        files.push(ctx.absolute(&r.target.text));
    }
    files
}

fn check_script(script: &Script, ctx: &GuardContext, depth: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    // Files downloaded earlier in the line: running one is running remote code.
    let mut fetched: Vec<String> = Vec::new();
    for pipeline in &script.pipelines {
        let mut downloaded = false;
        for command in &pipeline.commands {
            let unwrapped = unwrap(command);
            let name = program(&unwrapped);
            let runs_fetched = unwrapped.first().is_some_and(|w| {
                let runs_directly =
                    w.text.contains('/') && fetched.contains(&ctx.absolute(&w.text));
                // The script an interpreter runs is its first operand.
                let interpreted = name.is_some_and(|n| INTERPRETERS.contains(&n))
                    && unwrapped[1..]
                        .iter()
                        .find(|a| !a.text.starts_with('-'))
                        .is_some_and(|a| fetched.contains(&ctx.absolute(&a.text)));
                runs_directly || interpreted
            });
            if runs_fetched {
                out.push(Finding::Refuse(
                    "it runs a script it just downloaded (remote code runs unseen)".into(),
                ));
            }
            if name.is_some_and(|n| DOWNLOADERS.contains(&n)) {
                fetched.extend(downloaded_files(&unwrapped, command, ctx));
            }
            if downloaded && name.is_some_and(|n| INTERPRETERS.contains(&n)) {
                out.push(Finding::Refuse(
                    "it pipes a download into a program that runs it (remote code runs unseen)"
                        .into(),
                ));
            }
            if name.is_some_and(|n| DOWNLOADERS.contains(&n)) {
                downloaded = true;
            }
            if name.is_some_and(|n| SENDERS.contains(&n))
                && reads_credentials_upstream(pipeline, command, ctx)
            {
                out.push(Finding::Refuse(
                    "it sends credentials (keys, tokens) over the network".into(),
                ));
            }
        }
    }
    // `cd DIR` moves later relative paths (kept for the rest of the line: stricter, never looser).
    let mut here = ctx.clone();
    for pipeline in &script.pipelines {
        for command in &pipeline.commands {
            check_simple(command, &here, depth, &mut out);
            let words = unwrap(command);
            if let Some(name) = program(&words)
                && matches!(name, "cd" | "pushd")
            {
                let target = words[1..]
                    .iter()
                    .find(|w| !w.text.starts_with('-') || w.text == "-");
                match target {
                    Some(w) if w.dynamic || w.text == "-" => out.push(Finding::Doubt(format!(
                        "it changes to a folder only known when it runs ({})",
                        w.text
                    ))),
                    Some(w) => here.shell_dir = Some(here.absolute(&w.text)),
                    None => here.shell_dir = Some(here.home.clone()),
                }
            }
        }
    }
    out.dedup();
    out
}

fn reads_credentials_upstream(
    pipeline: &shell::Pipeline,
    sender: &SimpleCommand,
    ctx: &GuardContext,
) -> bool {
    pipeline
        .commands
        .iter()
        .take_while(|c| *c != sender)
        .chain(std::iter::once(sender))
        .any(|c| {
            c.words
                .iter()
                .chain(c.redirects.iter().map(|r| &r.target))
                .any(|w| !credential_findings(&w.text, ctx).is_empty())
        })
}

fn check_simple(command: &SimpleCommand, ctx: &GuardContext, depth: usize, out: &mut Vec<Finding>) {
    let words = unwrap(command);
    check_inner_and_redirects(command, ctx, depth, out);
    let Some(first) = words.first() else {
        return;
    };
    if first.dynamic {
        out.push(Finding::Doubt(format!(
            "the program to run ({}) is only known when it runs",
            first.text
        )));
    }
    let name = base_name(&first.text);
    let args = &words[1..];
    for word in args.iter().chain(&command.assignments) {
        out.extend(credential_findings(&word.text, ctx));
    }
    if let Some(n) = command.words.first().map(|w| base_name(&w.text))
        && PRIVILEGE.contains(&n)
    {
        out.push(Finding::Refuse(format!(
            "it runs as another user (`{n}`): an agent must not take root or other users' rights"
        )));
    }
    if PRIVILEGE.contains(&name) {
        out.push(Finding::Refuse(format!(
            "it runs as another user (`{name}`): an agent must not take root or other users' rights"
        )));
        // Judge what it would run too.
        let inner = SimpleCommand {
            words: args
                .iter()
                .skip_while(|w| w.text.starts_with('-'))
                .cloned()
                .collect(),
            ..SimpleCommand::default()
        };
        check_simple(&inner, ctx, depth, out);
        return;
    }
    check_program(name, args, command, ctx, depth, out);
}

/// The scripts inside the command's words (`$(…)`, `<(…)`), and its redirections onto a raw
/// device or touching a credential file.
fn check_inner_and_redirects(
    command: &SimpleCommand,
    ctx: &GuardContext,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    for word in command
        .words
        .iter()
        .chain(&command.assignments)
        .chain(command.redirects.iter().map(|r| &r.target))
    {
        for inner in &word.inner {
            out.extend(check_script(inner, ctx, depth + 1));
        }
    }
    for redirect in &command.redirects {
        let target = &redirect.target.text;
        if redirect.writes() && is_raw_device(target) {
            out.push(Finding::Refuse(format!(
                "it writes straight onto the device {target}"
            )));
        }
        out.extend(credential_findings(target, ctx));
    }
}

/// What the program `name` does with `args`.
fn check_program(
    name: &str,
    args: &[Word],
    command: &SimpleCommand,
    ctx: &GuardContext,
    depth: usize,
    out: &mut Vec<Finding>,
) {
    match name {
        "rm" | "rmdir" | "unlink" | "shred" => check_rm(name, args, ctx, out),
        "find" => check_find(args, ctx, out),
        "git" => check_git(args, out),
        "dd" => {
            if let Some(of) = args.iter().find_map(|w| w.text.strip_prefix("of="))
                && is_raw_device(of)
            {
                out.push(Finding::Refuse(format!(
                    "it writes raw bytes onto the device {of}"
                )));
            }
        }
        "chmod" | "chown" | "chgrp" => check_recursive_owner(name, args, ctx, out),
        n => {
            if let Some(finding) = machine_or_secrets(n, args) {
                out.push(finding);
            } else if SHELLS.contains(&n) || INTERPRETERS.contains(&n) {
                // `sh < <(curl …)`: the download comes in by a redirection.
                if command
                    .redirects
                    .iter()
                    .any(|r| mentions_download(&r.target))
                {
                    out.push(Finding::Refuse(format!(
                        "it feeds code downloaded from the network to `{n}` (remote code runs unseen)"
                    )));
                }
                check_interpreter(n, args, ctx, depth, &check_script, out);
            }
        }
    }
}

/// The refusal of a program that stops the machine, signals every process, rewrites disks, or
/// reads a keychain or password store.
fn machine_or_secrets(name: &str, args: &[Word]) -> Option<Finding> {
    let refuse = |why: &str| Some(Finding::Refuse(why.into()));
    match name {
        "kill" if args.iter().any(|w| w.text == "-1") => {
            refuse("it signals every process of the user (`kill -1`)")
        }
        "init" | "telinit" if args.iter().any(|w| w.text == "0" || w.text == "6") => {
            refuse("it shuts the machine down or reboots it")
        }
        "systemctl" | "loginctl"
            if args.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "poweroff" | "reboot" | "halt" | "suspend" | "hibernate" | "kexec"
                )
            }) =>
        {
            refuse("it shuts the machine down or reboots it")
        }
        "security"
            if args.iter().any(|w| {
                w.text.starts_with("find-") && w.text.ends_with("-password")
                    || w.text == "dump-keychain"
                    || w.text == "export"
            }) =>
        {
            refuse("it reads secrets from the keychain")
        }
        "secret-tool" | "pass" | "gopass" | "keyring" | "op" | "bw"
            if args.first().is_some_and(|w| {
                matches!(
                    w.text.as_str(),
                    "lookup" | "show" | "get" | "read" | "search"
                )
            }) =>
        {
            refuse("it reads secrets from a password store")
        }
        n if POWER.contains(&n) => refuse("it shuts the machine down or reboots it"),
        n if n.starts_with("mkfs") || DISK_TOOLS.contains(&n) => Some(Finding::Refuse(format!(
            "`{n}` rewrites disks or file systems"
        ))),
        _ => None,
    }
}
