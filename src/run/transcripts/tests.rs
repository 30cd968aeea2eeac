use super::*;
use std::time::Duration;

/// A fake Claude config root with a `projects/` folder, and a cwd to look up.
struct Setup {
    dir: tempfile::TempDir,
    cwd: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work/my repo");
        std::fs::create_dir_all(&cwd).unwrap();
        Setup { dir, cwd }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("cfg")
    }

    /// The cwd's project folder under the root.
    fn project(&self) -> PathBuf {
        self.root()
            .join("projects")
            .join(project_dir_name(&self.cwd.to_string_lossy()))
    }

    /// Writes `<folder>/<name>` with `modified` as its modification time.
    fn write(&self, folder: &Path, name: &str, modified: SystemTime) -> PathBuf {
        std::fs::create_dir_all(folder).unwrap();
        let path = folder.join(name);
        std::fs::write(&path, "{\"type\":\"user\",\"sessionId\":\"s\"}\n").unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        path
    }

    fn env(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(
            "CLAUDE_CONFIG_DIR".to_string(),
            self.root().display().to_string(),
        )])
    }
}

fn at(seconds: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + seconds)
}

// ---------------------------------------------------------------------------------------------
// Finding
// ---------------------------------------------------------------------------------------------

#[test]
fn by_session_id_in_the_cwds_project_or_any_other() {
    let s = Setup::new();
    let here = s.write(&s.project(), "abc-123.jsonl", at(10));
    let newer = s.write(&s.project(), "zzz.jsonl", at(20));
    let elsewhere = s.write(&s.root().join("projects/-other"), "def_456.jsonl", at(10));
    assert_eq!(find(&s.env(), &s.cwd, Some("abc-123"), at(0)), Some(here));
    // The id wins over a newer file.
    assert_ne!(
        find(&s.env(), &s.cwd, Some("abc-123"), at(0)).as_ref(),
        Some(&newer)
    );
    assert_eq!(
        find(&s.env(), &s.cwd, Some("def_456"), at(0)),
        Some(elsewhere)
    );
    // A known id whose file is missing is not replaced by another session's file.
    assert_eq!(find(&s.env(), &s.cwd, Some("missing"), at(0)), None);
}

#[test]
fn without_an_id_the_one_written_since_the_start() {
    let s = Setup::new();
    s.write(&s.project(), "old.jsonl", at(5));
    let mid = s.write(&s.project(), "mid.jsonl", at(20));
    let new = s.write(&s.project(), "new.jsonl", at(30));
    s.write(&s.project(), "newest.txt", at(40));
    s.write(&s.project(), "newest.jsonl.bak", at(40));
    std::fs::create_dir_all(s.project().join("dir.jsonl")).unwrap();
    // Another project's newer session is not this cwd's.
    s.write(&s.root().join("projects/-other"), "other.jsonl", at(50));

    // "At or after".
    assert_eq!(find(&s.env(), &s.cwd, None, at(30)), Some(new));
    assert_eq!(find(&s.env(), &s.cwd, None, at(31)), None);
    // Two sessions written since the start (another task's agent in the same folder): neither
    // is taken for this attempt's.
    assert_eq!(find(&s.env(), &s.cwd, None, at(10)), None);

    std::fs::remove_file(s.project().join("new.jsonl")).unwrap();
    assert_eq!(find(&s.env(), &s.cwd, None, at(10)), Some(mid));
}

#[test]
fn missing_things_give_none() {
    let s = Setup::new();
    // No root at all.
    let nowhere = BTreeMap::from([
        (
            "CLAUDE_CONFIG_DIR".to_string(),
            "/nonexistent/cfg".to_string(),
        ),
        ("HOME".to_string(), "/nonexistent/home".to_string()),
    ]);
    assert_eq!(find_root_only(&nowhere), None);
    // A root without projects/.
    std::fs::create_dir_all(s.root()).unwrap();
    assert_eq!(find(&s.env(), &s.cwd, None, at(0)), None);
    assert_eq!(find(&s.env(), &s.cwd, Some("abc"), at(0)), None);
    // A project folder without transcripts.
    std::fs::create_dir_all(s.project()).unwrap();
    assert_eq!(find(&s.env(), &s.cwd, None, at(0)), None);
}

/// The root lookup alone, with an empty process environment.
fn find_root_only(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    config_root(env, |_| None)
}

#[test]
fn an_unsafe_session_id_is_never_joined_into_a_path() {
    let s = Setup::new();
    // `../../secret` from the project folder would reach this file.
    let outside = s.write(&s.root(), "secret.jsonl", at(10));
    std::fs::create_dir_all(s.project()).unwrap();
    for id in [
        "../../secret",
        "../secret",
        "/etc/passwd",
        "a/b",
        "a.b",
        "",
        " abc",
    ] {
        assert_eq!(find(&s.env(), &s.cwd, Some(id), at(0)), None, "for {id:?}");
    }
    assert!(outside.is_file());
    // Ignored as if unknown: the newest session of the cwd is found.
    let mine = s.write(&s.project(), "mine.jsonl", at(20));
    assert_eq!(
        find(&s.env(), &s.cwd, Some("../../secret"), at(0)),
        Some(mine)
    );
}

#[test]
fn plain_names() {
    for (id, want) in [
        ("47d9da07-52f5-48cb-9771-37d3e0179011", true),
        ("abc_DEF-123", true),
        ("", false),
        ("..", false),
        ("a.jsonl", false),
        ("a\0b", false),
        ("ü", false),
    ] {
        assert_eq!(is_plain_name(id), want, "for {id:?}");
    }
}

#[test]
fn roots_in_order_first_that_exists() {
    let dir = tempfile::tempdir().unwrap();
    let mk = |name: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    let attempt_cfg = mk("attempt-cfg");
    let process_cfg = mk("process-cfg");
    let attempt_home = mk("attempt-home");
    let process_home = mk("process-home");
    std::fs::create_dir_all(attempt_home.join(".claude")).unwrap();
    std::fs::create_dir_all(process_home.join(".claude")).unwrap();
    let s = |p: &Path| p.display().to_string();
    let process = |cfg: Option<&Path>| {
        let cfg = cfg.map(s);
        let home = s(&process_home);
        move |key: &str| match key {
            "CLAUDE_CONFIG_DIR" => cfg.clone(),
            "HOME" => Some(home.clone()),
            _ => None,
        }
    };
    let env = |pairs: &[(&str, &Path)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), s(v))).collect()
    };

    // The attempt's CLAUDE_CONFIG_DIR first.
    let both = env(&[("CLAUDE_CONFIG_DIR", &attempt_cfg), ("HOME", &attempt_home)]);
    assert_eq!(
        config_root(&both, process(Some(&process_cfg))),
        Some(attempt_cfg.clone())
    );
    // Then the process's.
    let home_only = env(&[("HOME", &attempt_home)]);
    assert_eq!(
        config_root(&home_only, process(Some(&process_cfg))),
        Some(process_cfg.clone())
    );
    // A root that does not exist is skipped.
    let missing = env(&[("CLAUDE_CONFIG_DIR", &dir.path().join("nope"))]);
    assert_eq!(
        config_root(&missing, process(Some(&process_cfg))),
        Some(process_cfg)
    );
    // Then ~/.claude, HOME from the attempt's environment before the process's.
    assert_eq!(
        config_root(&home_only, process(None)),
        Some(attempt_home.join(".claude"))
    );
    assert_eq!(
        config_root(&BTreeMap::new(), process(None)),
        Some(process_home.join(".claude"))
    );
    // Empty values count as unset.
    let empty = BTreeMap::from([("CLAUDE_CONFIG_DIR".to_string(), String::new())]);
    assert_eq!(
        config_root(&empty, process(None)),
        Some(process_home.join(".claude"))
    );
}

#[test]
fn a_symlinked_cwd_also_finds_the_resolved_paths_project() {
    let s = Setup::new();
    let link = s.dir.path().join("link");
    std::os::unix::fs::symlink(&s.cwd, &link).unwrap();
    let real = s.cwd.canonicalize().unwrap();
    let project = s
        .root()
        .join("projects")
        .join(project_dir_name(&real.to_string_lossy()));
    let path = s.write(&project, "sess.jsonl", at(10));
    assert_eq!(find(&s.env(), &link, None, at(0)), Some(path.clone()));
    assert_eq!(find(&s.env(), &link, Some("sess"), at(0)), Some(path));
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

fn record(n: usize) -> String {
    format!("{{\"type\":\"user\",\"sessionId\":\"s{n}\"}}\n")
}

#[test]
fn read_parses_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, format!("{}{}garbage\n", record(1), record(2))).unwrap();
    let facts = read(&path).unwrap();
    assert_eq!(facts.records, 2);
    assert_eq!(facts.bad_lines, 1);
    assert_eq!(facts.session_id.as_deref(), Some("s1"));
    assert_eq!(read(&dir.path().join("missing.jsonl")), None);
    assert_eq!(read(dir.path()), None);
}

#[test]
fn a_large_file_is_read_from_its_tail_in_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let text: String = (0..10).map(record).collect();
    std::fs::write(&path, &text).unwrap();
    let line = record(0).len() as u64;

    // The window starts mid-line: the partial line is dropped, not counted as bad.
    let facts = read_tail(&path, 3 * line + 5).unwrap();
    assert_eq!((facts.records, facts.bad_lines), (3, 0));
    assert_eq!(facts.session_id.as_deref(), Some("s7"));

    // The window starts exactly on a line start: that line is kept.
    let facts = read_tail(&path, 3 * line).unwrap();
    assert_eq!((facts.records, facts.bad_lines), (3, 0));
    assert_eq!(facts.session_id.as_deref(), Some("s7"));

    // Small enough: all of it.
    let facts = read_tail(&path, text.len() as u64).unwrap();
    assert_eq!((facts.records, facts.bad_lines), (10, 0));
    assert_eq!(facts.session_id.as_deref(), Some("s0"));
}
