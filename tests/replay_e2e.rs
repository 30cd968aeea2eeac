//! End to end: `herd replay` on recordings the real binary made of a simulator batch. `--print`
//! gives the screen the live run ended on (the `.log` bytes fed through herd's own screen) and,
//! with `--at`, the screen an independent reading of the cast gives; a task folder means its
//! latest attempt; damaged recordings (cut short, invalid UTF-8, escape garbage) and recordings
//! in asciinema's own styles (v2, v3) replay with a clear message, never a panic; seeking gives
//! the screen of playing through; and the interactive player runs in a pseudo-terminal.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::{Duration, Instant};

use herd::core::screen::Screen;
use herd::replay::seek::{Index, IndexOptions, Playhead};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::Value;

mod common;
use common::{describe, herd};

/// Tasks of the example batch recorded here: every kind of ending, none that waits seconds.
const TASKS: &[&str] = &[
    "docs-merge-001",
    "fix-issue-142",
    "codex-approval-007",
    "always-allow-003",
    "flaky-network-005",
    "echo-trap-006",
    "needs-login-008",
    "out-of-quota-009",
    "prompt-loop-011",
    "crashes-013",
    "no-marker-014",
];

/// The simulator batch, recorded once for all tests: its runs folder.
fn runs() -> &'static Path {
    static RUNS: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, runs) = RUNS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let tasks = dir.path().join("tasks.json");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks.example.json");
        std::fs::copy(example, &tasks).unwrap();
        let mut run = herd();
        run.args(["run", "--headless", "--tasks"]).arg(&tasks);
        for task in TASKS {
            run.args(["--only", task]);
        }
        let out = run.output().unwrap();
        assert!(out.status.code().is_some(), "{}", describe(&out));
        let runs = dir.path().join("runs");
        (dir, runs)
    });
    runs
}

fn casts() -> Vec<PathBuf> {
    let mut casts: Vec<PathBuf> = std::fs::read_dir(runs())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .flat_map(|task| std::fs::read_dir(task).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cast"))
        .collect();
    casts.sort();
    assert!(casts.len() > TASKS.len(), "{casts:?}");
    casts
}

/// `herd replay ARGS --print`: (stdout without the final newline, stderr); fails on a non-zero
/// exit.
fn print(path: &Path, extra: &[&str]) -> (String, String) {
    let out = herd()
        .arg("replay")
        .arg(path)
        .arg("--print")
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stdout = stdout.strip_suffix('\n').unwrap_or(&stdout).to_string();
    (stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn header(cast: &str) -> Value {
    serde_json::from_str(cast.lines().next().unwrap()).unwrap()
}

/// An independent reading of a cast: every output and resize event at or before `at` fed to
/// herd's live screen.
fn expected_screen(cast: &str, at: Option<f64>) -> String {
    let head = header(cast);
    let rows = head["height"].as_u64().unwrap() as u16;
    let cols = head["width"].as_u64().unwrap() as u16;
    let mut screen = Screen::new(rows, cols);
    for line in cast.lines().skip(1) {
        let Ok(Value::Array(event)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let time = event[0].as_f64().unwrap();
        if at.is_some_and(|at| time > at) {
            break;
        }
        let data = event[2].as_str().unwrap();
        match event[1].as_str().unwrap() {
            "o" => {
                screen.feed(data.as_bytes(), 0);
            }
            "r" => {
                let (c, r) = data.split_once('x').unwrap();
                screen.resize(r.parse().unwrap(), c.parse().unwrap());
            }
            _ => {}
        }
    }
    screen.text()
}

#[test]
fn print_gives_the_screen_the_live_run_ended_on() {
    for cast in casts() {
        let text = std::fs::read_to_string(&cast).unwrap();
        let head = header(&text);
        let (rows, cols) = (
            head["height"].as_u64().unwrap(),
            head["width"].as_u64().unwrap(),
        );
        let mut live = Screen::new(rows as u16, cols as u16);
        live.feed(&std::fs::read(cast.with_extension("log")).unwrap(), 0);
        let (printed, stderr) = print(&cast, &[]);
        assert_eq!(printed, live.text(), "{}", cast.display());
        assert!(stderr.is_empty(), "{}: {stderr}", cast.display());
    }
}

#[test]
fn print_at_a_time_gives_the_screen_then() {
    for cast in casts() {
        let text = std::fs::read_to_string(&cast).unwrap();
        let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let duration = last[0].as_f64().unwrap();
        for at in [0.0, duration / 3.0, duration / 2.0, duration * 0.9] {
            let at = (at * 1000.0).round() / 1000.0;
            let (printed, _) = print(&cast, &["--at", &at.to_string()]);
            assert_eq!(
                printed,
                expected_screen(&text, Some(at)),
                "{} at {at}",
                cast.display()
            );
        }
    }
}

#[test]
fn a_task_folder_means_its_latest_attempt() {
    let folder = runs().join("flaky-network-005");
    assert!(folder.join("attempt_2.cast").exists());
    let (latest, _) = print(&folder.join("attempt_2.cast"), &[]);
    let (first, _) = print(&folder.join("attempt_1.cast"), &[]);
    assert_ne!(latest, first);
    assert_eq!(print(&folder, &[]).0, latest);
    let empty = tempfile::tempdir().unwrap();
    let out = herd()
        .arg("replay")
        .arg(empty.path())
        .arg("--print")
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no attempt_<n>.cast"),
        "{}",
        describe(&out)
    );
}

#[test]
fn a_recording_cut_short_plays_up_to_the_cut() {
    let cast = runs().join("fix-issue-142/attempt_1.cast");
    let text = std::fs::read_to_string(&cast).unwrap();
    // Cut in the middle of the line holding the dialog's first drawing.
    let at = text.find("proceed").unwrap();
    let line_start = text[..at].rfind('\n').unwrap() + 1;
    let cut = line_start + 20;
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.cast");
    std::fs::write(&short, &text.as_bytes()[..cut]).unwrap();
    let (printed, stderr) = print(&short, &[]);
    assert_eq!(printed, expected_screen(&text[..line_start], None));
    let line = text[..line_start].lines().count() + 1;
    assert!(
        stderr.contains(&format!("short.cast:line {line}: cut short")),
        "{stderr}"
    );
}

#[test]
fn invalid_utf8_and_escape_garbage_replay_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.cast");
    let mut bytes = b"{\"version\": 2, \"width\": 40, \"height\": 6}\n".to_vec();
    bytes.extend_from_slice(b"[0.1, \"o\", \"before \xff\xfe bytes\\r\\n\"]\n");
    let garbage = [
        "\\u001b[99999999999;99999999999H\\u001b[0;0r\\u001b[?1049h\\u001b[9999L",
        "\\u001b]0;unterminated title",
        "\\u001bP+q\\u001b[6n",
        "\\u001b[38;2;999;999;999;1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18;19;20;21;22;23;24;25;26;27;28;29;30;31;32;33;34mX",
        "\\u001b[?1049l\\u001bc\\u0000\\u0007\\u0008\\u007f\\u009b\\u001b[2J\\u001b[Hafter",
    ];
    for (i, g) in garbage.iter().enumerate() {
        bytes.extend_from_slice(format!("[0.{}, \"o\", \"{g}\"]\n", i + 2).as_bytes());
    }
    bytes.extend_from_slice(b"[0.9, \"r\", \"not a size\"]\n[1.0, \"o\", \" end\"]\n");
    std::fs::write(&path, &bytes).unwrap();
    let (printed, stderr) = print(&path, &[]);
    assert_eq!(printed, "after end");
    assert!(stderr.contains("line 2: invalid UTF-8"), "{stderr}");
    let (early, _) = print(&path, &["--at", "0.1"]);
    // vt100 draws no replacement character, live or replayed.
    assert_eq!(early, "before  bytes");
    // Random bytes as output events: never a panic.
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut random = b"{\"version\": 2, \"width\": 30, \"height\": 5}\n".to_vec();
    for i in 0..300 {
        let data: String = (0..40)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from_u32(match x % 4 {
                    0 => 0x1b,
                    1 => (x >> 8) as u32 % 0x20,
                    2 => 0x20 + (x >> 8) as u32 % 0x60,
                    _ => 0x80 + (x >> 8) as u32 % 0x3000,
                })
                .unwrap_or('?')
            })
            .collect();
        random.extend_from_slice(
            serde_json::json!([f64::from(i) / 100.0, "o", data])
                .to_string()
                .as_bytes(),
        );
        random.push(b'\n');
    }
    std::fs::write(&path, &random).unwrap();
    print(&path, &[]);
    print(&path, &["--at", "1.5"]);
}

#[test]
fn files_that_are_no_recording_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content, message) in [
        ("empty.cast", "", "the recording is empty"),
        ("text.cast", "hello\n", "not an asciicast recording"),
        (
            "v1.cast",
            "{\"version\": 1, \"width\": 80, \"height\": 24, \"stdout\": []}\n",
            "version 1 is not supported",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let out = herd()
            .arg("replay")
            .arg(&path)
            .arg("--print")
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    // A path that does not exist is named as such, with or without --print and a terminal.
    let missing = dir.path().join("runs/nonexistent");
    for extra in [&["--print"][..], &[][..]] {
        let out = herd()
            .arg("replay")
            .arg(&missing)
            .args(extra)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no such recording"), "{extra:?}: {stderr}");
    }
}

#[test]
fn asciinema_recordings_replay_in_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    // As `asciinema rec` 2.x writes them: absolute times, env, idle_time_limit, a marker.
    let v2 = dir.path().join("v2.cast");
    std::fs::write(
        &v2,
        "{\"version\": 2, \"width\": 50, \"height\": 5, \"timestamp\": 1700000000, \"idle_time_limit\": 2.0, \"env\": {\"SHELL\": \"/bin/bash\", \"TERM\": \"xterm-256color\"}}\n\
         [0.248848, \"o\", \"\\u001b[1;32muser@host\\u001b[0m:~$ \"]\n\
         [1.001376, \"i\", \"l\"]\n[1.001900, \"o\", \"l\"]\n[1.201376, \"i\", \"s\"]\n[1.201800, \"o\", \"s\"]\n\
         [2.0, \"m\", \"listing\"]\n\
         [2.100000, \"i\", \"\\r\"]\n[2.101000, \"o\", \"\\r\\nREADME.md  src\\r\\n\"]\n\
         [9.5, \"r\", \"40x4\"]\n[9.6, \"o\", \"\\u001b[1;32muser@host\\u001b[0m:~$ \"]\n",
    )
    .unwrap();
    // The same session as asciinema 3 writes it: relative times, term object, comments, exit.
    let v3 = dir.path().join("v3.cast");
    std::fs::write(
        &v3,
        "{\"version\": 3, \"term\": {\"cols\": 50, \"rows\": 5, \"type\": \"xterm-256color\"}, \"timestamp\": 1700000000}\n\
         # recorded by hand for herd's tests\n\
         [0.248848, \"o\", \"\\u001b[1;32muser@host\\u001b[0m:~$ \"]\n\
         [0.752528, \"i\", \"l\"]\n[0.000524, \"o\", \"l\"]\n[0.199476, \"i\", \"s\"]\n[0.000424, \"o\", \"s\"]\n\
         [0.7982, \"m\", \"listing\"]\n\
         [0.1, \"i\", \"\\r\"]\n[0.001, \"o\", \"\\r\\nREADME.md  src\\r\\n\"]\n\
         [7.399, \"r\", \"40x4\"]\n[0.1, \"o\", \"\\u001b[1;32muser@host\\u001b[0m:~$ \"]\n[0.5, \"x\", \"0\"]\n",
    )
    .unwrap();
    let end = "user@host:~$ ls\nREADME.md  src\nuser@host:~$";
    assert_eq!(print(&v2, &[]).0, end);
    assert_eq!(print(&v3, &[]).0, end);
    for at in ["1.1", "2.05", "5"] {
        assert_eq!(
            print(&v2, &["--at", at]).0,
            print(&v3, &["--at", at]).0,
            "at {at}"
        );
    }
    assert_eq!(print(&v3, &["--at", "1.1"]).0, "user@host:~$ l");
}

#[test]
fn seeking_from_the_start_from_later_and_from_a_checkpoint_agree() {
    for task in ["docs-merge-001", "fix-issue-142", "prompt-loop-011"] {
        let cast = runs().join(task).join("attempt_1.cast");
        let options = IndexOptions {
            every_bytes: 2 << 10,
            budget_bytes: usize::MAX,
        };
        let index = Arc::new(Index::build_file(&cast, options, &mut |_| {}).unwrap());
        assert!(
            index.checkpoints.len() >= 3,
            "{task}: {}",
            index.checkpoints.len()
        );
        let duration = index.timeline.duration();
        let screen = |p: &Playhead| (p.term().screen().contents_formatted(), p.applied());
        let mut times: Vec<f64> = (0..=12).map(|i| duration * f64::from(i) / 12.0).collect();
        times.extend(index.checkpoints.iter().map(|c| c.time));
        for t in times {
            let mut fresh = Playhead::open(&cast, Arc::clone(&index)).unwrap();
            fresh.seek(t).unwrap();
            let mut from_later = Playhead::open(&cast, Arc::clone(&index)).unwrap();
            from_later.seek(duration).unwrap();
            from_later.seek(t).unwrap();
            let mut from_checkpoint = Playhead::open(&cast, Arc::clone(&index)).unwrap();
            from_checkpoint
                .seek(index.checkpoints[index.checkpoints.len() / 2].time)
                .unwrap();
            from_checkpoint.seek(t).unwrap();
            assert_eq!(screen(&from_later), screen(&fresh), "{task} at {t}");
            assert_eq!(screen(&from_checkpoint), screen(&fresh), "{task} at {t}");
            // And the same as --print.
            let text = herd::replay::term::screen_text(fresh.term().screen());
            let (printed, _) = print(&cast, &["--at", &format!("{t}")]);
            assert_eq!(text, printed, "{task} at {t}");
        }
    }
}

/// The player in a pseudo-terminal, read through vt100 like a person would.
#[test]
fn the_player_plays_seeks_and_quits_in_a_terminal() {
    let (rows, cols) = (50, 140);
    let pty = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
    command.arg("replay");
    command.arg(runs().join("fix-issue-142"));
    command.env("TERM", "xterm-256color");
    let mut child = pty.slave.spawn_command(command).unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let mut writer = pty.master.take_writer().unwrap();
    let (tx, output) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let nz = |n| NonZeroU16::new(n).unwrap();
    let mut parser = vt100::Parser::new(nz(rows), nz(cols), 0);
    let wait_for = |what: &str, parser: &mut vt100::Parser| {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !parser.screen().contents().contains(what) {
            assert!(
                Instant::now() < deadline,
                "no {what:?} on the screen:\n{}",
                parser.screen().contents()
            );
            if let Ok(bytes) = output.recv_timeout(Duration::from_millis(100)) {
                parser.process(&bytes);
            }
        }
    };
    // It plays from the start by itself and stops at the verdict.
    wait_for("fix-issue-142 · attempt 1 · 120x40", &mut parser);
    wait_for("V verdict: completed", &mut parser);
    wait_for("TASK_COMPLETE:fix-issue-142", &mut parser);
    let mut press = |keys: &str| {
        writer.write_all(keys.as_bytes()).unwrap();
        writer.flush().unwrap();
    };
    // Home: back to the start, paused.
    press("\x1b[H");
    wait_for("before the first of", &mut parser);
    // n: the prompt marker, with the dialog on screen.
    press("n");
    wait_for("? prompt press_1", &mut parser);
    assert!(
        parser
            .screen()
            .contents()
            .contains("Do you want to proceed?")
    );
    press("q");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the player did not quit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.exit_code(), 0);
    while let Ok(bytes) = output.recv_timeout(Duration::from_millis(200)) {
        parser.process(&bytes);
    }
    // The terminal is given back: the main screen, the cursor shown.
    assert!(!parser.screen().alternate_screen());
    assert!(!parser.screen().hide_cursor());
}
