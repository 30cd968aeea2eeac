//! `herd acp install <id>` against a local HTTP server that serves small archives, with a
//! registry of the test's own (`HERD_ACP_REGISTRY`) and a data folder of its own
//! (`XDG_DATA_HOME`): the right digest installs and `acp:<id>` runs the copy, a wrong one
//! refuses and leaves nothing behind, none refuses and prints the digest to pin, a digest in
//! the registry is enough, a zip unpacks as a tar.gz does, and `herd profiles` downloads
//! nothing.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use sha2::{Digest, Sha256};

/// Serves `files` (path → bytes) on loopback; counts the requests. The thread ends with the
/// test process.
fn serve(files: Vec<(String, Vec<u8>)>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(100) {
            let Ok(mut stream) = stream else { continue };
            counted.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
            let found = files.iter().find(|(p, _)| *p == path);
            let (status, body) = match found {
                Some((_, body)) => ("200 OK", body.clone()),
                None => ("404 Not Found", b"no such file".to_vec()),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    (base, count)
}

/// The agent's files packed with `tar -czf` (or `zip -r`): `bin/fake-agent`, a script.
fn archive(dir: &Path, name: &str) -> Vec<u8> {
    let tree = dir.join(format!("tree-{name}"));
    std::fs::create_dir_all(tree.join("bin")).unwrap();
    std::fs::write(tree.join("bin/fake-agent"), "#!/bin/sh\necho fake agent\n").unwrap();
    let out = dir.join(name);
    let status = if name.ends_with(".zip") {
        Command::new("zip")
            .args(["-qr"])
            .arg(&out)
            .arg("bin")
            .current_dir(&tree)
            .status()
    } else {
        Command::new("tar")
            .arg("-czf")
            .arg(&out)
            .args(["-C"])
            .arg(&tree)
            .arg("bin")
            .status()
    };
    assert!(status.unwrap().success(), "packing {name}");
    std::fs::read(out).unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}-{}", std::env::consts::ARCH)
}

fn agent(id: &str, url: &str, sha256: Option<&str>) -> serde_json::Value {
    let mut target = json!({"archive": url, "cmd": "./bin/fake-agent", "args": ["acp"]});
    if let Some(digest) = sha256 {
        target["sha256"] = json!(digest);
    }
    json!({"id": id, "name": id, "version": "1.0.0", "description": "a test agent",
        "distribution": {"binary": {platform(): target}}})
}

struct Herd {
    registry: PathBuf,
    data: PathBuf,
}

impl Herd {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_herd"))
            .args(args)
            .env("HERD_ACP_REGISTRY", &self.registry)
            .env("XDG_DATA_HOME", &self.data)
            // The server is on loopback: no proxy of the machine's in between.
            .env("no_proxy", "127.0.0.1")
            .env("NO_PROXY", "127.0.0.1")
            .output()
            .unwrap()
    }

    /// What is under the data folder's `acp/`, as relative paths.
    fn left(&self) -> Vec<String> {
        let root = self.data.join("herd/acp");
        let mut left = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                left.push(path.strip_prefix(&root).unwrap().display().to_string());
                if path.is_dir() {
                    stack.push(path);
                }
            }
        }
        left
    }
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_binary_agent_installs_only_with_the_right_digest() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-install-")
        .tempdir()
        .unwrap();
    let tgz = archive(dir.path(), "agent.tar.gz");
    let zip = archive(dir.path(), "agent.zip");
    let (tgz_sum, zip_sum) = (sha256(&tgz), sha256(&zip));
    let (base, requests) = serve(vec![
        ("/agent.tar.gz".into(), tgz),
        ("/agent.zip".into(), zip),
    ]);
    let registry = json!({"version": "1.0.0", "agents": [
        agent("fake-bin", &format!("{base}/agent.tar.gz"), None),
        agent("fake-pinned", &format!("{base}/agent.tar.gz"), Some(&tgz_sum)),
        agent("fake-zip", &format!("{base}/agent.zip"), None),
    ]});
    let herd = Herd {
        registry: dir.path().join("registry.json"),
        data: dir.path().join("data"),
    };
    std::fs::write(&herd.registry, registry.to_string()).unwrap();

    // Listing profiles downloads nothing; an agent not installed runs from PATH.
    let listed = herd.run(&["profiles", "acp:fake-bin"]);
    assert!(
        said(&listed).contains(r#"["fake-agent", "acp"]"#),
        "{}",
        said(&listed)
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0);

    // No digest: refused, the computed one printed, nothing left.
    let out = herd.run(&["acp", "install", "fake-bin"]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(
        said(&out).contains(&format!("--sha256 {tgz_sum}")),
        "{}",
        said(&out)
    );
    assert_eq!(herd.left(), Vec::<String>::new());

    // A wrong digest: refused, nothing left.
    let wrong = "0".repeat(64);
    let out = herd.run(&["acp", "install", "fake-bin", "--sha256", &wrong]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(said(&out).contains("not the expected"), "{}", said(&out));
    assert_eq!(herd.left(), Vec::<String>::new());

    // The right one: installed, and `acp:fake-bin` runs the copy.
    let out = herd.run(&["acp", "install", "fake-bin", "--sha256", &tgz_sum]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let installed = herd.data.join("herd/acp/fake-bin/1.0.0/bin/fake-agent");
    let ran = Command::new(&installed).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "fake agent\n");
    let listed = said(&herd.run(&["profiles", "acp:fake-bin"]));
    assert!(
        listed.contains(&format!(r#"["{}", "acp"]"#, installed.display())),
        "{listed}"
    );

    // The registry's own digest is enough; a zip unpacks like a tar.gz.
    let out = herd.run(&["acp", "install", "fake-pinned"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let out = herd.run(&["acp", "install", "fake-zip", "--sha256", &zip_sum]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(
        herd.data
            .join("herd/acp/fake-zip/1.0.0/bin/fake-agent")
            .is_file()
    );
    assert!(
        herd.left().iter().all(|p| !p.contains(".install-")),
        "{:?}",
        herd.left()
    );
}
