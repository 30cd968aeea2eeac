//! End to end: background runs through the real binary. `herd run --detach` starts the batch
//! with no terminal and returns; `herd attach` in a pseudo-terminal shows the dashboard with the
//! simulator's waiting prompt; Ctrl-\ detaches and the batch runs on; a second terminal (of
//! another size) attaches, answers the prompt with the dashboard's key, the next task's prompt
//! is answered through the control API by its id (`herd ctl prompts.answer`) while that terminal
//! watches, and the batch finishes with every state right in the tasks file, the background herd
//! gone. A hung-up attach terminal, and `q` → `d` in one of two attached terminals, leave the
//! batch running (the other terminal stays attached, and the dashboard follows its window's new
//! size); `q` → `s` stops it (the task back to retryable). An attach from another user
//! (`nobody`) is refused by the folder and, with the folder opened, by the holder's peer check.
//! `herd message` answers the questions of a task that needs input through the background
//! herd's control socket, and the session is resumed at once. Each test has its own rendezvous folder (`XDG_RUNTIME_DIR`).

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

mod common;
use common::dashboard::{Dashboard, Launch};
use common::{describe, herd};

const TASKS: &str = r#"{
  "run_id": "background",
  "tasks": [
    {
      "task_id": "ask-first",
      "agent": "sim",
      "timeout_sec": 300,
      "inputs": { "scenario": "permission" },
      "prompt_template": "Delete the build folder. When complete, print exactly: TASK_COMPLETE:{task_id}"
    },
    {
      "task_id": "ask-api",
      "agent": "sim",
      "timeout_sec": 300,
      "inputs": { "scenario": "permission" },
      "prompt_template": "Delete the cache folder. When complete, print exactly: TASK_COMPLETE:{task_id}"
    },
    {
      "task_id": "quick",
      "agent": "sim",
      "inputs": { "scenario": "success" },
      "prompt_template": "Say hello. When complete, print exactly: TASK_COMPLETE:{task_id}"
    }
  ]
}
"#;

const PROMPT: &str = "⚠ ask-first: [1/Enter] Yes";

/// A batch in a temporary folder with its own rendezvous folder.
struct Batch {
    dir: tempfile::TempDir,
    runtime: tempfile::TempDir,
}

impl Batch {
    fn new() -> Batch {
        Batch::with_tasks(TASKS)
    }

    fn with_tasks(tasks: &str) -> Batch {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("tasks.json"), tasks).expect("write tasks");
        let runtime = tempfile::tempdir().expect("runtime dir");
        Batch { dir, runtime }
    }

    fn tasks(&self) -> PathBuf {
        self.dir.path().join("tasks.json")
    }

    fn runtime(&self) -> &str {
        self.runtime.path().to_str().expect("utf-8 path")
    }

    fn herd(&self, args: &[&str]) -> std::process::Output {
        herd()
            .args(args)
            .current_dir(self.dir.path())
            .env("XDG_RUNTIME_DIR", self.runtime())
            .output()
            .expect("herd runs")
    }

    /// `herd run --detach --concurrency 1`: returns once the dashboard is up. One agent at a
    /// time: the tasks wait in the file's order.
    fn detach(&self) -> String {
        self.detach_with(1)
    }

    /// `herd run --detach --concurrency N`: returns once the dashboard is up.
    fn detach_with(&self, concurrency: u16) -> String {
        let concurrency = concurrency.to_string();
        let out = self.herd(&[
            "run",
            "--detach",
            "--tasks",
            "tasks.json",
            "--concurrency",
            &concurrency,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `herd ctl --tasks tasks.json METHOD PARAMS`: its exit code and stdout as JSON.
    fn ctl(&self, method: &str, params: &serde_json::Value) -> (i32, serde_json::Value) {
        let out = self.herd(&["ctl", "--tasks", "tasks.json", method, &params.to_string()]);
        let code = out.status.code().unwrap_or(-1);
        let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (code, json)
    }

    /// The id of the prompt `task` waits on, through the control API.
    fn prompt_id_of(&self, task: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let (code, listed) = self.ctl("prompts.list", &serde_json::json!({}));
            assert_eq!(code, 0, "prompts.list: {listed}");
            let found = listed["prompts"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["task_id"] == task)
                .and_then(|p| p["prompt_id"].as_str().map(str::to_string));
            if let Some(id) = found {
                return id;
            }
            assert!(Instant::now() < deadline, "no prompt of {task}: {listed}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn status(&self) -> String {
        let out = self.herd(&["status", "--tasks", "tasks.json"]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `herd attach --tasks tasks.json` in a terminal of `rows` x `cols`.
    fn attach(&self, rows: u16, cols: u16) -> Dashboard {
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
        command.args(["attach", "--tasks", "tasks.json"]);
        command.cwd(self.dir.path());
        let env = [("XDG_RUNTIME_DIR", self.runtime())];
        Dashboard::spawn(
            command,
            &Launch {
                rows,
                cols,
                args: &[],
                env: &env,
            },
        )
    }

    /// The rendezvous folder's files: the registration and the attach socket.
    fn rendezvous_files(&self) -> Vec<PathBuf> {
        let folder = self.runtime.path().join("herd");
        std::fs::read_dir(&folder)
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    }

    fn task_status(&self, id: &str) -> String {
        self.task(id)["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Task `id` as the tasks file has it now.
    fn task(&self, id: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.tasks()).expect("tasks file");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
        common::task(&doc, id).clone()
    }

    /// Waits until task `id` is `status`.
    fn wait_for_status(&self, id: &str, status: &str) {
        let deadline = Instant::now() + WAIT;
        while self.task_status(id) != status {
            assert!(
                Instant::now() < deadline,
                "{id} is not {status}: {:#}\n{}",
                self.task(id),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the background herd is gone: its registration and socket removed.
    fn wait_until_gone(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.rendezvous_files().is_empty() {
            assert!(
                Instant::now() < deadline,
                "the background herd is still there: {:?}\n{}",
                self.rendezvous_files(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("runs/background.log")).unwrap_or_default()
    }

    /// The pid of the background dashboard, from `herd status`.
    fn pid(&self) -> u32 {
        self.try_pid()
            .unwrap_or_else(|| panic!("no pid in:\n{}", self.status()))
    }

    fn try_pid(&self) -> Option<u32> {
        let out = self.herd(&["status", "--tasks", "tasks.json"]);
        let status = String::from_utf8_lossy(&out.stdout).into_owned();
        let pid = status.split("pid ").nth(1)?.split(',').next()?;
        pid.parse().ok()
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // Only when a check failed before the batch ended: do not leave it running.
        if !self.rendezvous_files().is_empty()
            && let Some(pid) = self.try_pid()
        {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
        }
    }
}

const WAIT: Duration = Duration::from_secs(30);

/// Whether any thread of process `pid` still runs (or is still exiting). The leader of a killed
/// process turns zombie before its other threads are done, and its files (sockets included)
/// close only with the last of them: a process is gone when only a zombie leader is left.
fn runs(pid: u32) -> bool {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    threads.flatten().any(|thread| {
        std::fs::read_to_string(thread.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X")
        }) || thread.file_name().to_str() != Some(&pid.to_string())
    })
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let (_, rest) = stat.rsplit_once(')').expect("comm");
    rest.split_whitespace()
        .nth(1)
        .and_then(|ppid| ppid.parse().ok())
        .expect("ppid")
}

impl Batch {
    /// Detaches a run, then kills its holder and its dashboard with SIGKILL (nothing cleans up);
    /// the dashboard's pid.
    fn detach_then_kill_9(&self) -> u32 {
        self.detach();
        let dashboard = self.pid();
        let holder = parent_of(dashboard);
        let killed = std::process::Command::new("kill")
            .args(["-9", &holder.to_string(), &dashboard.to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let deadline = Instant::now() + WAIT;
        while runs(holder) || runs(dashboard) {
            assert!(Instant::now() < deadline, "still running after kill -9");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            self.rendezvous_files().len(),
            3,
            "the leftovers a kill -9 leaves"
        );
        dashboard
    }
}

impl Batch {
    /// A shell in a terminal of `rows` x `cols` that prints `before` lines, then runs
    /// `herd attach --tasks tasks.json`, then prints `PROMPT>` as the shell's next prompt would.
    fn attach_from_a_shell(&self, rows: u16, cols: u16, before: usize) -> Dashboard {
        let mut command = CommandBuilder::new("sh");
        let script = format!(
            "for i in $(seq 1 {before}); do echo \"earlier output $i\"; done; \
             \"$0\" attach --tasks tasks.json; printf 'PROMPT>'; sleep 30"
        );
        command.args(["-c", &script, env!("CARGO_BIN_EXE_herd")]);
        command.cwd(self.dir.path());
        let env = [("XDG_RUNTIME_DIR", self.runtime())];
        Dashboard::spawn(
            command,
            &Launch {
                rows,
                cols,
                args: &[],
                env: &env,
            },
        )
    }
}

/// The row the shell's next prompt is on, once it is there.
fn prompt_row(terminal: &mut Dashboard) -> u16 {
    terminal.wait_for("PROMPT>", WAIT);
    let (row, _) = terminal.screen().cursor_position();
    let text = terminal.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.get(usize::from(row)).map(|l| l.trim_end()),
        Some("PROMPT>"),
        "the prompt is alone on the cursor's row {row}:\n{text}"
    );
    row
}

#[test]
fn after_the_batch_ends_or_is_stopped_the_prompt_lands_below_the_summary() {
    for stop in [false, true] {
        let tasks = if stop {
            TASKS.to_string()
        } else {
            TASKS.replace("\"permission\"", "\"success\"")
        };
        let batch = Batch::with_tasks(&tasks);
        batch.detach();
        let mut terminal = batch.attach_from_a_shell(40, 120, 3);
        if stop {
            terminal.wait_for(PROMPT, WAIT);
            terminal.press("q");
            terminal.wait_for("Detach this terminal, or stop the batch?", WAIT);
            terminal.press("s");
        }
        let row = prompt_row(&mut terminal);
        let text = terminal.text();
        let lines: Vec<&str> = text.lines().collect();
        let above = lines[..usize::from(row)].join("\n");
        for needed in [
            "earlier output 1",
            "earlier output 3",
            "STATUS",
            "ask-first",
            "3 tasks:",
        ] {
            assert!(
                above.contains(needed),
                "{needed:?} above the prompt (stop: {stop}):\n{text}"
            );
        }
        assert!(
            lines[..usize::from(row)]
                .last()
                .is_some_and(|l| l.contains("herd: the background batch ended")),
            "the last word just above the prompt (stop: {stop}):\n{text}"
        );
        batch.wait_until_gone();
    }
}

#[test]
fn after_a_detach_the_prompt_lands_below_the_shells_own_output() {
    let batch = Batch::new();
    batch.detach();
    let mut terminal = batch.attach_from_a_shell(40, 120, 3);
    terminal.wait_for(PROMPT, WAIT);
    terminal.press("\x1c");
    // The dashboard's screen is gone; the shell's lines, then the client's word, then the prompt.
    assert_eq!(prompt_row(&mut terminal), 4, "{}", terminal.text());
    let text = terminal.text();
    assert!(text.starts_with("earlier output 1"), "{text}");
    assert!(
        text.lines()
            .nth(3)
            .is_some_and(|l| l.starts_with("herd: detached")),
        "{text}"
    );
    let (code, stopped) = batch.ctl("batch.stop", &serde_json::json!({}));
    assert_eq!(code, 0, "{stopped}");
    batch.wait_until_gone();
}

#[test]
fn of_two_detaches_at_once_one_starts_and_the_other_tells_its_own_caller() {
    let batch = Batch::new();
    let start = || {
        herd()
            .args([
                "run",
                "--detach",
                "--tasks",
                "tasks.json",
                "--concurrency",
                "1",
            ])
            .current_dir(batch.dir.path())
            .env("XDG_RUNTIME_DIR", batch.runtime())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("herd runs")
    };
    let (first, second) = (start(), start());
    let outs = [
        first.wait_with_output().expect("first"),
        second.wait_with_output().expect("second"),
    ];
    let codes: Vec<Option<i32>> = outs.iter().map(|out| out.status.code()).collect();
    let said = || {
        outs.iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    assert!(
        codes.contains(&Some(0)) && codes.contains(&Some(2)),
        "{codes:?}\n{}",
        said()
    );
    let loser = outs
        .iter()
        .find(|out| out.status.code() == Some(2))
        .expect("a loser");
    let told = String::from_utf8_lossy(&loser.stderr);
    assert!(
        told.contains("a herd already runs tasks.json"),
        "{}",
        said()
    );
    assert!(
        told.contains("herd attach --tasks tasks.json"),
        "{}",
        said()
    );
    assert!(loser.stdout.is_empty(), "{}", said());
    let pid = batch.pid();
    assert!(
        told.contains(&format!("pid {pid}")),
        "the winner named: {}",
        said()
    );
    let log = batch.log();
    assert!(
        !log.contains("herd hold:") && !log.contains("exited with 2"),
        "the loser wrote into the winner's log:\n{log}"
    );
    let (code, stopped) = batch.ctl("batch.stop", &serde_json::json!({}));
    assert_eq!(code, 0, "{stopped}");
    batch.wait_until_gone();
}

#[test]
fn the_leftovers_of_a_killed_background_herd_are_noticed_and_cleared() {
    let batch = Batch::new();
    let gone = |pid: u32| format!("the herd that ran this file (pid {pid}, in the background");

    // herd status: no herd runs, the dead one is named, its files are gone.
    let first = batch.detach_then_kill_9();
    let status = batch.status();
    assert!(status.contains("No herd runs this file now"), "{status}");
    assert!(status.contains(&gone(first)), "{status}");
    assert!(
        status.contains("leftover rendezvous files were removed"),
        "{status}"
    );
    assert_eq!(batch.rendezvous_files(), Vec::<PathBuf>::new());
    assert!(
        !batch.status().contains("pid "),
        "said once: nothing is left"
    );

    // herd attach: says the herd is gone and how to start it again.
    let second = batch.detach_then_kill_9();
    let attach = batch.herd(&["attach", "--tasks", "tasks.json"]);
    assert_eq!(attach.status.code(), Some(1), "{}", describe(&attach));
    let said = String::from_utf8_lossy(&attach.stderr);
    assert!(said.contains(&gone(second)), "{said}");
    assert!(
        said.contains("start it again with `herd run --detach --tasks tasks.json`"),
        "{said}"
    );
    assert_eq!(batch.rendezvous_files(), Vec::<PathBuf>::new());

    // herd run --detach: says so and starts a new herd, which retries the interrupted task.
    let third = batch.detach_then_kill_9();
    let out = batch.herd(&[
        "run",
        "--detach",
        "--tasks",
        "tasks.json",
        "--concurrency",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&gone(third)),
        "{}",
        describe(&out)
    );
    let now = batch.pid();
    assert!(runs(now) && now != third);
    let (code, stopped) = batch.ctl("batch.stop", &serde_json::json!({}));
    assert_eq!(code, 0, "{stopped}");
    batch.wait_until_gone();
}

#[test]
fn a_background_batch_is_attached_detached_and_answered_from_a_second_terminal() {
    let batch = Batch::new();
    let started = batch.detach();
    assert!(
        started.contains("herd attach --tasks tasks.json") && started.contains("kill "),
        "how to attach and stop it:\n{started}"
    );
    let status = batch.status();
    assert!(
        status.contains("A herd runs this file now: pid")
            && status.contains("in the background")
            && status.contains("See it: herd attach --tasks tasks.json")
            && status.contains("Control it: herd ctl --tasks tasks.json"),
        "{status}"
    );

    let mut first = batch.attach(40, 120);
    first.wait_for(PROMPT, WAIT);
    // The background flag is the dashboard's own: the agent does not inherit it.
    let agents = common::agents_under(batch.dir.path());
    assert!(!agents.is_empty(), "the waiting agent is found");
    for agent in &agents {
        let pid = agent.split(':').next().expect("pid");
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ);
        assert!(
            environ
                .split('\0')
                .all(|kv| !kv.starts_with("HERD_BACKGROUND=")),
            "{agent} has HERD_BACKGROUND"
        );
    }
    first.wait_for("Ctrl-\\ detach", WAIT);
    assert!(
        first.screen().alternate_screen(),
        "the dashboard is on the alternate screen"
    );
    first.press("\x1c");
    assert_eq!(first.wait_for_exit(WAIT), 0, "{}", first.text());
    assert!(
        !first.screen().alternate_screen(),
        "the terminal is given back"
    );
    assert!(
        first.text().contains("herd: detached; the batch runs on"),
        "{}",
        first.text()
    );
    assert_eq!(
        batch.task_status("ask-first"),
        "running",
        "the batch runs on"
    );

    // Another terminal, of another size: the dashboard takes it.
    let mut second = batch.attach(30, 100);
    second.wait_for(PROMPT, WAIT);
    second.wait_until(
        "the dashboard laid out for the second terminal's 30 rows",
        WAIT,
        |s| {
            s.rows(0, 100)
                .nth(29)
                .is_some_and(|row| row.contains("detach/stop"))
        },
    );
    second.press("1");
    second.wait_until_text("ask-first done, ask-api waiting", WAIT, |text| {
        text.contains("✔ ask-first") && text.contains("⚠ ask-api")
    });
    assert_eq!(batch.task_status("ask-first"), "completed");

    // The next prompt answered through the control API by its id, the terminal watching.
    let id = batch.prompt_id_of("ask-api");
    let answer = serde_json::json!({"prompt_id": id, "answer": "approve"});
    let (code, result) = batch.ctl("prompts.answer", &answer);
    assert_eq!(code, 0, "prompts.answer: {result}");
    assert_eq!(second.wait_for_exit(WAIT), 0, "{}", second.text());
    assert!(
        second
            .text()
            .contains("herd: the background batch ended (exit 0)"),
        "the client is told the batch ended:\n{}",
        second.text()
    );
    batch.wait_until_gone();
    for task in ["ask-first", "ask-api", "quick"] {
        assert_eq!(batch.task_status(task), "completed", "{task}");
    }
    assert!(batch.status().contains("No herd runs this file now."));
}

#[test]
fn a_closed_terminal_and_q_then_d_leave_the_batch_running_and_q_then_s_stops_it() {
    let batch = Batch::new();
    batch.detach();
    let again = batch.herd(&["run", "--detach", "--tasks", "tasks.json"]);
    assert_eq!(again.status.code(), Some(2), "{}", describe(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("in the background, since")
            && String::from_utf8_lossy(&again.stderr)
                .contains("see it with `herd attach --tasks tasks.json`"),
        "{}",
        describe(&again)
    );

    let mut hung_up = batch.attach(40, 120);
    hung_up.wait_for(PROMPT, WAIT);
    let pid = hung_up.pid().expect("pid");
    // What the kernel sends when the terminal closes.
    let killed = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    hung_up.wait_for_exit(WAIT);
    assert!(
        batch.status().contains("in the background"),
        "the batch runs on"
    );

    // Two terminals at once: `d` detaches the one it was typed in, the other stays.
    let mut leaving = batch.attach(40, 120);
    leaving.wait_for(PROMPT, WAIT);
    let mut stopping = batch.attach(40, 120);
    stopping.wait_for(PROMPT, WAIT);
    leaving.press("q");
    leaving.wait_for("Detach this terminal, or stop the batch?", WAIT);
    stopping.wait_for("Detach this terminal, or stop the batch?", WAIT);
    leaving.press("d");
    assert_eq!(leaving.wait_for_exit(WAIT), 0, "{}", leaving.text());
    assert!(
        leaving.text().contains("herd: detached"),
        "{}",
        leaving.text()
    );
    stopping.wait_until_text("the question gone from the other terminal", WAIT, |text| {
        !text.contains("Detach this terminal") && text.contains(PROMPT)
    });
    assert_eq!(batch.task_status("ask-first"), "running");
    assert!(
        batch.status().contains("in the background"),
        "the batch runs on"
    );

    // The window of the remaining terminal is resized: the dashboard follows it.
    stopping.resize(30, 100);
    stopping.wait_until("the dashboard laid out for 30 rows", WAIT, |s| {
        s.rows(0, 100)
            .nth(29)
            .is_some_and(|row| row.contains("detach/stop"))
    });
    stopping.press("q");
    stopping.wait_for("Detach this terminal, or stop the batch?", WAIT);
    stopping.press("s");
    assert_eq!(stopping.wait_for_exit(WAIT), 0, "{}", stopping.text());
    assert!(
        stopping
            .text()
            .contains("herd: the background batch ended (exit 130)"),
        "{}",
        stopping.text()
    );
    batch.wait_until_gone();
    assert_eq!(batch.task_status("ask-first"), "retryable");
}

/// `herd attach --socket <socket>` as `nobody`, in a terminal, run from `bin` (a copy nobody may
/// run); what it printed and its exit code.
fn attach_as_nobody(bin: &Path, socket: &Path) -> (String, u32) {
    let mut command = CommandBuilder::new("runuser");
    command.args(["-u", "nobody", "--"]);
    command.arg(bin);
    command.args(["attach", "--socket"]);
    command.arg(socket);
    command.cwd("/");
    let mut client = Dashboard::spawn(command, &Launch::size(24, 100));
    let code = client.wait_for_exit(WAIT);
    (client.text(), code)
}

#[test]
fn an_attach_from_another_user_is_refused() {
    if !common::can_run_as_another_user("an_attach_from_another_user_is_refused") {
        return;
    }
    // The build folder may be closed to others (a clone kept in a 0700 folder).
    let (_bin_dir, bin) = common::herd_for_any_user();
    let batch = Batch::new();
    batch.detach();
    let folder = batch.runtime.path().join("herd");
    let socket = batch
        .rendezvous_files()
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".attach.sock"))
        .expect("the attach socket");

    // As made: nobody cannot even reach the socket.
    let (text, code) = attach_as_nobody(&bin, &socket);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Permission denied"), "{text}");

    // With the folders and the socket opened to everyone, the holder's peer check refuses.
    let open = |path: &Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };
    open(batch.runtime.path(), 0o711);
    open(&folder, 0o711);
    open(&socket, 0o666);
    let (text, code) = attach_as_nobody(&bin, &socket);
    open(&socket, 0o600);
    open(&folder, 0o700);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("belongs to another user"), "{text}");
    assert!(
        batch.log().contains("refused an attach from user"),
        "{}",
        batch.log()
    );
    assert_eq!(
        batch.task_status("ask-first"),
        "running",
        "the batch runs on"
    );

    // Stopped as `herd run --detach` says: kill <pid>.
    let pid = batch.pid();
    let killed = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status()
        .expect("kill");
    assert!(killed.success());
    batch.wait_until_gone();
    assert_eq!(batch.task_status("ask-first"), "retryable");
}

#[test]
fn a_tasks_file_with_problems_is_reported_by_detach_and_nothing_runs() {
    let batch = Batch::new();
    std::fs::write(
        batch.tasks(),
        r#"{"tasks": [{"task_id": "a", "agent": "sim", "prompt_template": "x"},]}"#,
    )
    .expect("write tasks");
    let out = batch.herd(&["run", "--detach", "--tasks", "tasks.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tasks.json:1:") && stderr.contains("ended at once (exit 2)"),
        "{}",
        describe(&out)
    );
    assert!(
        batch.rendezvous_files().is_empty(),
        "{:?}",
        batch.rendezvous_files()
    );

    let out = batch.herd(&["attach", "--tasks", "tasks.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "no herd runs tasks.json: start one in the background with \
             `herd run --detach --tasks tasks.json`"
        ),
        "{}",
        describe(&out)
    );
}

#[test]
fn attach_without_tasks_takes_the_only_background_herd() {
    let batch = Batch::new();
    let out = batch.herd(&["attach"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no background herd of yours runs"),
        "{}",
        describe(&out)
    );
    batch.detach();
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
    command.arg("attach");
    command.cwd("/");
    let env = [("XDG_RUNTIME_DIR", batch.runtime())];
    let launch = Launch {
        rows: 40,
        cols: 120,
        args: &[],
        env: &env,
    };
    let mut client = Dashboard::spawn(command, &launch);
    client.wait_for(PROMPT, WAIT);
    client.press("q");
    client.wait_for("Detach this terminal, or stop the batch?", WAIT);
    client.press("s");
    assert_eq!(client.wait_for_exit(WAIT), 0, "{}", client.text());
    batch.wait_until_gone();
}

/// A task whose agent asks two questions (in its signal file) and one that waits at a permission
/// dialog, so the background batch is still running when the questions are answered.
const ASKING: &str = r#"{
  "tasks": [
    {
      "task_id": "asks",
      "agent": "sim",
      "completion": "signal_file",
      "inputs": { "scenario": "signal_questions" },
      "prompt_template": "Add a migration for the new column."
    },
    {
      "task_id": "holds",
      "agent": "sim",
      "timeout_sec": 300,
      "inputs": { "scenario": "permission" },
      "prompt_template": "Delete the build folder."
    }
  ]
}
"#;

#[test]
fn herd_message_answers_a_background_tasks_questions_through_its_control_socket() {
    let batch = Batch::with_tasks(ASKING);
    batch.detach_with(2);
    batch.wait_for_status("asks", "needs_input");
    let asked = batch.task("asks");
    assert_eq!(
        asked["result"]["questions"][0], "Which database should I use?",
        "{asked:#}"
    );

    let answer = "1. Postgres\n2. yes, drop it";
    let out = batch.herd(&["message", "--tasks", "tasks.json", "asks", answer]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("resuming session sim-asks-1") && said.contains("through the herd"),
        "{}",
        describe(&out)
    );
    // Delivered at once, by the running herd: the session is resumed with the answers.
    batch.wait_for_status("asks", "completed");
    let facts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(batch.dir.path().join("runs/asks/attempt_2.json"))
            .expect("the second attempt's facts"),
    )
    .expect("json");
    assert_eq!(facts["resumed_session"], "sim-asks-1", "{facts:#}");
    assert!(
        facts["argv"]
            .as_array()
            .expect("argv")
            .iter()
            .any(|arg| arg.as_str().is_some_and(|arg| arg.starts_with(answer))),
        "the answers are the resumed session's message: {facts:#}"
    );
    assert_eq!(
        batch.task("asks")["resume_message"],
        serde_json::Value::Null
    );

    // A task that cannot take a message now is refused by the running herd, nothing changed.
    let out = batch.herd(&["message", "--tasks", "tasks.json", "nobody-here", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nobody-here"),
        "{}",
        describe(&out)
    );

    // The batch goes on and ends as usual.
    let id = batch.prompt_id_of("holds");
    let (code, result) = batch.ctl(
        "prompts.answer",
        &serde_json::json!({"prompt_id": id, "answer": "approve"}),
    );
    assert_eq!(code, 0, "prompts.answer: {result}");
    batch.wait_until_gone();
    assert_eq!(batch.task_status("holds"), "completed");
    assert_eq!(batch.task_status("asks"), "completed");
}
