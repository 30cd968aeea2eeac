//! What a command runs, as the floor sees it: wrappers taken off, the program's name and kind
//! (downloaders, interpreters, senders, privilege, disks, power), shapes such as a fork bomb.
//! Judges nothing itself.

use super::shell::{SimpleCommand, Word};

/// Programs that fetch from the network.
pub(super) const DOWNLOADERS: &[&str] = &[
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
pub(super) const INTERPRETERS: &[&str] = &[
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
pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];
/// Programs that send data over the network.
pub(super) const SENDERS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "scp", "sftp", "rsync", "ssh", "telnet",
    "ftp", "http", "https",
];
pub(super) const PRIVILEGE: &[&str] = &["sudo", "su", "doas", "pkexec", "runas", "run0"];
pub(super) const DISK_TOOLS: &[&str] = &[
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
pub(super) const POWER: &[&str] = &["shutdown", "reboot", "halt", "poweroff"];

/// `name(){ name|name& };name` and the like: a function that pipes into or backgrounds itself.
pub(super) fn is_fork_bomb(text: &str) -> bool {
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

/// The words of a command with privilege-free wrappers (`env`, `nohup`, `timeout`, …) taken off.
pub(super) fn unwrap(command: &SimpleCommand) -> Vec<Word> {
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

pub(super) fn base_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

pub(super) fn program(words: &[Word]) -> Option<&str> {
    words.first().map(|w| base_name(&w.text))
}

/// A device file whose bytes are a disk (not `/dev/null`, a tty or a stream).
pub(super) fn is_raw_device(path: &str) -> bool {
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
