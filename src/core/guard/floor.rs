//! The floor: requests no policy passes automatically, each with a reason a person understands.
//!
//! Judges every simple command of a parsed command line (after unwrapping `sudo`, `env`,
//! `nohup`, `timeout`, `xargs`, `bash -c "…"` and the like) and file requests by their path.
//! A finding is either a refusal (dangerous) or a doubt (the guard cannot tell: ask).

use super::paths::{GuardContext, Place};
use super::request::{Request, RequestKind};
use super::shell::{self, Script, SimpleCommand, Word};

/// What the floor found wrong with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Dangerous: never answered automatically.
    Refuse(String),
    /// Cannot be judged (unparsable, dynamic): the operator decides.
    Doubt(String),
}

/// Programs that fetch from the network.
const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "http",
    "https",
    "aria2c",
    "lwp-download",
    "invoke-webrequest",
    "iwr",
];
/// Programs that run code they are given.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "pwsh",
    "powershell",
    "source",
    ".",
    "eval",
    "exec",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];
/// Programs that send data over the network.
const SENDERS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "scp", "sftp", "rsync", "ssh", "telnet",
    "ftp", "http", "https",
];
const PRIVILEGE: &[&str] = &["sudo", "su", "doas", "pkexec", "runas", "run0"];
const DISK_TOOLS: &[&str] = &[
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "wipefs",
    "mkswap",
    "blkdiscard",
    "mke2fs",
    "diskutil",
    "format",
    "shred",
];
const POWER: &[&str] = &["shutdown", "reboot", "halt", "poweroff"];

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
        RequestKind::Fetch { .. } | RequestKind::Unknown => Vec::new(),
        RequestKind::Tool { input, .. } => {
            // A tool whose input names a credential file is treated as reading it.
            input
                .split(|c: char| c.is_whitespace() || "\"',{}[]=".contains(c))
                .filter(|w| !w.is_empty())
                .flat_map(|w| credential_findings(w, ctx))
                .take(1)
                .collect()
        }
    }
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

/// `name(){ name|name& };name` and the like: a function that pipes into or backgrounds itself.
fn is_fork_bomb(text: &str) -> bool {
    static DEFINITION: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"([A-Za-z_:][A-Za-z0-9_:-]*)\s*\(\s*\)\s*\{").ok()
    });
    let Some(definition) = DEFINITION.as_ref() else {
        return false;
    };
    definition.captures_iter(text).any(|caps| {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            return false;
        };
        let name = name.as_str();
        let body: String = text[whole.end()..]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        body.contains(&format!("{name}|{name}")) || body.contains(&format!("{name}&"))
    })
}

pub(super) fn check_script(script: &Script, ctx: &GuardContext, depth: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    for pipeline in &script.pipelines {
        let mut downloaded = false;
        for command in &pipeline.commands {
            let unwrapped = unwrap(command);
            let name = program(&unwrapped);
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
    for pipeline in &script.pipelines {
        for command in &pipeline.commands {
            check_simple(command, ctx, depth, &mut out);
        }
    }
    out.dedup();
    out
}

/// The words of a command with privilege-free wrappers (`env`, `nohup`, `timeout`, `nice`,
/// `xargs`, `command`, `exec`, `time`, `stdbuf`) taken off.
pub fn unwrap(command: &SimpleCommand) -> Vec<Word> {
    let mut words: &[Word] = &command.words;
    loop {
        let Some(first) = words.first() else {
            return Vec::new();
        };
        let name = base_name(&first.text);
        let skip_options = |rest: &[Word], takes_value: &[&str]| -> usize {
            let mut i = 0;
            while i < rest.len() {
                let t = &rest[i].text;
                if t == "--" {
                    return i + 1;
                }
                if t.starts_with('-') && t.len() > 1 {
                    i += if takes_value.contains(&t.as_str()) {
                        2
                    } else {
                        1
                    };
                } else {
                    break;
                }
            }
            i
        };
        let rest = &words[1..];
        let skip = match name {
            "env" => {
                let mut i = skip_options(rest, &["-u", "-C", "-S"]);
                while i < rest.len() && rest[i].text.contains('=') {
                    i += 1;
                }
                i
            }
            "nohup" | "command" | "builtin" | "exec" | "time" | "chronic" => {
                skip_options(rest, &[])
            }
            "nice" | "ionice" | "stdbuf" | "caffeinate" => skip_options(rest, &["-n", "-c"]),
            "timeout" | "gtimeout" => {
                let i = skip_options(rest, &["-s", "-k", "--signal", "--kill-after"]);
                i + 1
            }
            "xargs" => skip_options(rest, &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"]),
            _ => return words.to_vec(),
        };
        words = rest.get(skip.min(rest.len())..).unwrap_or_default();
    }
}

fn base_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

fn program(words: &[Word]) -> Option<&str> {
    words.first().map(|w| base_name(&w.text))
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
        "kill" if args.iter().any(|w| w.text == "-1") => {
            out.push(Finding::Refuse(
                "it signals every process of the user (`kill -1`)".into(),
            ));
        }
        "init" | "telinit" if args.iter().any(|w| w.text == "0" || w.text == "6") => {
            out.push(Finding::Refuse(
                "it shuts the machine down or reboots it".into(),
            ));
        }
        "systemctl" | "loginctl"
            if args.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "poweroff" | "reboot" | "halt" | "suspend" | "hibernate" | "kexec"
                )
            }) =>
        {
            out.push(Finding::Refuse(
                "it shuts the machine down or reboots it".into(),
            ));
        }
        "security"
            if args.iter().any(|w| {
                w.text.starts_with("find-") && w.text.ends_with("-password")
                    || w.text == "dump-keychain"
                    || w.text == "export"
            }) =>
        {
            out.push(Finding::Refuse("it reads secrets from the keychain".into()));
        }
        "secret-tool" | "pass" | "gopass" | "keyring" | "op" | "bw"
            if args.first().is_some_and(|w| {
                matches!(
                    w.text.as_str(),
                    "lookup" | "show" | "get" | "read" | "search"
                )
            }) =>
        {
            out.push(Finding::Refuse(
                "it reads secrets from a password store".into(),
            ));
        }
        n if POWER.contains(&n) => {
            out.push(Finding::Refuse(
                "it shuts the machine down or reboots it".into(),
            ));
        }
        n if n.starts_with("mkfs") || DISK_TOOLS.contains(&n) => {
            out.push(Finding::Refuse(format!(
                "`{n}` rewrites disks or file systems"
            )));
        }
        n if SHELLS.contains(&n) || INTERPRETERS.contains(&n) => {
            check_interpreter(n, args, ctx, depth, out);
        }
        _ => {}
    }
}

fn is_raw_device(path: &str) -> bool {
    path.starts_with("/dev/")
        && !matches!(
            path,
            "/dev/null"
                | "/dev/zero"
                | "/dev/stdout"
                | "/dev/stderr"
                | "/dev/stdin"
                | "/dev/tty"
                | "/dev/random"
                | "/dev/urandom"
        )
        && !path.starts_with("/dev/fd/")
        && !path.starts_with("/dev/pts/")
}

fn mentions_download(word: &Word) -> bool {
    word.inner.iter().any(|script| {
        script
            .all_commands()
            .iter()
            .any(|c| program(&unwrap(c)).is_some_and(|n| DOWNLOADERS.contains(&n)))
    })
}

fn check_interpreter(
    name: &str,
    args: &[Word],
    ctx: &GuardContext,
    depth: usize,
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
                Ok(script) => out.extend(check_script(&script, ctx, depth + 1)),
                Err(e) => out.push(Finding::Doubt(format!(
                    "herd cannot read the command `{name} -c` runs ({e})"
                ))),
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

fn check_rm(name: &str, args: &[Word], ctx: &GuardContext, out: &mut Vec<Finding>) {
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

/// A destructive operation on `target`: refused outside the folder, of the folder itself, of
/// `~` or `/`; doubted when the target is only known at run time.
fn judge_destructive_target(what: &str, target: &Word, ctx: &GuardContext, out: &mut Vec<Finding>) {
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

fn check_find(args: &[Word], ctx: &GuardContext, out: &mut Vec<Finding>) {
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

fn check_git(args: &[Word], out: &mut Vec<Finding>) {
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

fn check_recursive_owner(name: &str, args: &[Word], ctx: &GuardContext, out: &mut Vec<Finding>) {
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

/// A refusal when `text` names a credential store.
pub fn credential_findings(text: &str, ctx: &GuardContext) -> Vec<Finding> {
    // `--key=PATH`, `name=PATH` and curl's `@PATH` name the file too.
    let text = text
        .split_once('=')
        .map_or(text, |(k, v)| {
            let is_key =
                k.starts_with('-') || k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if is_key { v } else { text }
        })
        .trim_start_matches('@');
    if text.is_empty() {
        return Vec::new();
    }
    let abs = ctx.absolute(text);
    let home = ctx.home.trim_end_matches('/');
    const HOME_STORES: &[&str] = &[
        ".ssh",
        ".aws",
        ".config/gcloud",
        ".gnupg",
        ".netrc",
        ".git-credentials",
        ".docker/config.json",
        ".kube/config",
        ".azure",
        ".pypirc",
        ".npmrc",
        ".config/gh/hosts.yml",
        "Library/Keychains",
        ".password-store",
        ".local/share/keyrings",
        ".terraform.d/credentials.tfrc.json",
    ];
    let file = abs.rsplit('/').next().unwrap_or_default();
    let named = HOME_STORES.iter().find(|store| {
        let p = format!("{home}/{store}");
        abs == p || abs.starts_with(&format!("{p}/"))
    });
    let by_name = file.starts_with("id_rsa")
        || file.starts_with("id_ed25519")
        || file.starts_with("id_ecdsa")
        || file.starts_with("id_dsa")
        || file.ends_with(".pem")
        || file.ends_with(".keychain")
        || file.ends_with(".keychain-db")
        || file == ".netrc"
        || abs == "/etc/shadow";
    if let Some(store) = named {
        vec![Finding::Refuse(format!(
            "it touches the credential store ~/{store} (keys and tokens)"
        ))]
    } else if by_name {
        vec![Finding::Refuse(format!(
            "it touches {file}, a private key or credential file"
        ))]
    } else {
        Vec::new()
    }
}
