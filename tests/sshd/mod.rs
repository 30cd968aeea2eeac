//! A real OpenSSH server on 127.0.0.1 for the ssh end-to-end tests: a throwaway host key and
//! client key in a temp folder, `sshd -D` on a free port per "host", nothing read from or written
//! to `~/.ssh` (the client runs with `-F /dev/null` and no known-hosts file). `stop` kills the
//! server and every connection it serves, as a host that goes away.

#![allow(dead_code, clippy::unwrap_used)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const SSHD: &str = "/usr/sbin/sshd";

/// The keys shared by the hosts of one test.
pub(crate) struct Keys {
    pub dir: PathBuf,
    pub client_key: PathBuf,
}

impl Keys {
    /// `None` (with a loud message) where no sshd can run.
    pub(crate) fn new(dir: &Path) -> Option<Keys> {
        if !Path::new(SSHD).is_file() {
            eprintln!(
                "\n==== SKIPPED: {SSHD} is missing; install openssh-server (.ci/run does) ====\n"
            );
            return None;
        }
        let keys = dir.join("keys");
        std::fs::create_dir_all(&keys).unwrap();
        for name in ["host_key", "client_key"] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(keys.join(name))
                .status()
                .unwrap();
            assert!(status.success(), "ssh-keygen {name}");
        }
        std::fs::copy(keys.join("client_key.pub"), keys.join("authorized_keys")).unwrap();
        // sshd refuses to start without its privilege-separation folder.
        let _ = std::fs::create_dir_all("/run/sshd");
        Some(Keys {
            dir: keys,
            client_key: dir.join("keys/client_key"),
        })
    }
}

pub(crate) struct Sshd {
    pub name: String,
    pub port: u16,
    config: PathBuf,
    child: Option<Child>,
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Sshd {
    /// Starts a server for host `name`; `None` (with a loud message) when it cannot run.
    pub(crate) fn start(keys: &Keys, name: &str) -> Option<Sshd> {
        let port = free_port();
        let config = keys.dir.join(format!("sshd_{name}.conf"));
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {k}/host_key\n\
                 AuthorizedKeysFile {k}/authorized_keys\nStrictModes no\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PermitRootLogin yes\nPidFile none\nPrintMotd no\nLogLevel ERROR\n\
                 MaxSessions 50\nMaxStartups 100\n",
                k = keys.dir.display()
            ),
        )
        .unwrap();
        let mut sshd = Sshd {
            name: name.to_string(),
            port,
            config,
            child: None,
        };
        if !sshd.restart() {
            return None;
        }
        Some(sshd)
    }

    /// Starts (again) on the same port.
    pub(crate) fn restart(&mut self) -> bool {
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                let out = self.child.take().unwrap().wait_with_output().unwrap();
                eprintln!(
                    "\n==== SKIPPED: sshd cannot run here ({status}): {} ====\n",
                    String::from_utf8_lossy(&out.stderr)
                );
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "\n==== SKIPPED: sshd did not listen on {} within 20 s ====\n",
            self.port
        );
        false
    }

    /// Kills the server and every process serving its connections: clients see the
    /// connection drop, as when a host goes away.
    pub(crate) fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let mut pids = vec![child.id()];
        pids.extend(descendants(child.id()).into_iter().filter(|p| is_sshd(*p)));
        for pid in pids {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        let _ = child.wait();
    }

    /// The `[hosts.NAME]` table that reaches this server.
    pub(crate) fn host_entry(&self, keys: &Keys, extra: &str) -> String {
        let out = Command::new("id").arg("-un").output().unwrap();
        let user = String::from_utf8_lossy(&out.stdout).trim().to_string();
        format!(
            "[hosts.{name}]\nssh = \"{user}@127.0.0.1\"\nport = {port}\nidentity = \"{key}\"\n\
             ssh_config = \"/dev/null\"\n\
             ssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\"]\n{extra}\n",
            name = self.name,
            port = self.port,
            key = keys.client_key.display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

fn ppid_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn is_sshd(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("sshd"))
}

/// Every live descendant of `root`.
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, ppid_of(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    found.remove(0);
    found
}
