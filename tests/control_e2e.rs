//! End to end through the real binary, against the built-in simulator: the control socket of a
//! headless run and of the dashboard, through `herd ctl`. A prompt waiting for the operator is
//! answered by its id (recorded as the API's answer), a stale id is refused and lands nowhere,
//! a task added mid-run is written into the file and run, an invalid one is refused with its
//! problems, a call from another user is refused, and `herd ctl` without a running herd says how
//! to start one. The short verbs `herd ctl list`, `herd ctl answer` and `herd stop` print JSON
//! into a pipe.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::dashboard::{Dashboard, Launch};
use common::{describe, herd, task, wait_for};

const PROMPT: &str = "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}";

/// A test's folder: the tasks file and a private runtime folder for the rendezvous (so the
/// tests never share one, nor touch the user's).
struct Setup {
    dir: tempfile::TempDir,
    tasks: PathBuf,
    runtime: PathBuf,
}

impl Setup {
    fn new(tasks: Value) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("xdg");
        std::fs::create_dir(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.path().join("tasks.json");
        std::fs::write(&path, serde_json::to_string_pretty(&tasks).unwrap()).unwrap();
        Setup {
            dir,
            tasks: path,
            runtime,
        }
    }

    fn herd(&self) -> Command {
        let mut command = herd();
        command
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .current_dir(self.dir.path());
        command
    }

    fn start_headless(&self) -> Child {
        self.herd()
            .args(["run", "--headless", "--tasks"])
            .arg(&self.tasks)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn ctl(&self, method: &str, params: Value) -> Output {
        self.herd()
            .args(["ctl", "--tasks"])
            .arg(&self.tasks)
            .arg(method)
            .arg(params.to_string())
            .output()
            .unwrap()
    }

    /// The result of a call that must succeed.
    fn ok(&self, method: &str, params: Value) -> Value {
        let out = self.ctl(method, params);
        assert_eq!(out.status.code(), Some(0), "{method}: {}", describe(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The error object of a call that must fail.
    fn error(&self, method: &str, params: Value) -> Value {
        let out = self.ctl(method, params);
        assert_eq!(out.status.code(), Some(1), "{method}: {}", describe(&out));
        serde_json::from_slice(&out.stderr).unwrap()
    }

    /// The first prompt `prompts.list` shows, once one waits.
    fn wait_for_prompt(&self) -> Value {
        wait_for("a prompt waiting", || {
            let out = self.ctl("prompts.list", json!({}));
            let result: Value = serde_json::from_slice(&out.stdout).ok()?;
            result["prompts"].get(0).cloned()
        })
    }

    fn doc(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.tasks).unwrap()).unwrap()
    }

    /// The rendezvous folder's entries.
    fn rendezvous(&self) -> Vec<String> {
        match std::fs::read_dir(self.runtime.join("herd")) {
            Ok(entries) => entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn wait_exit(child: Child) -> Output {
    let pid = child.id();
    let started = Instant::now();
    let mut child = child;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!(
                "herd {pid} did not end: {}",
                describe(&child.wait_with_output().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn ask_task(id: &str) -> Value {
    json!({
        "task_id": id, "agent": "sim", "max_retries": 0, "timeout_sec": 60,
        "permission_wait_sec": 60,
        "inputs": {"scenario": "permission"},
        "prompt_template": PROMPT
    })
}

#[test]
fn a_prompt_is_answered_by_id_a_stale_id_refused_and_a_task_added_mid_run() {
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let herd_run = setup.start_headless();
    let prompt = setup.wait_for_prompt();
    assert_eq!(prompt["prompt_id"], "ask/1/1", "{prompt}");
    assert_eq!(prompt["task_id"], "ask");
    assert_eq!(prompt["request"], "Bash(touch created_by_agent.txt)");
    assert_eq!(prompt["guard"]["decision"], "ask");
    assert_eq!(prompt["options"], json!(["approve", "deny"]));

    // Every event from here on, as `herd ctl watch` prints them.
    let watch = setup
        .herd()
        .args(["ctl", "--tasks"])
        .arg(&setup.tasks)
        .arg("watch")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Subscribed before anything it must see happens (its call is logged once it is).
    wait_for("the watcher subscribed", || {
        let log = std::fs::read_to_string(setup.dir.path().join("runs/herd.log")).ok()?;
        log.contains("control call events.subscribe").then_some(())
    });

    let hello = setup.ok("hello", json!({}));
    assert_eq!(hello["mode"], "headless");
    assert_eq!(hello["pid"], json!(herd_run.id()));
    assert!(
        hello["started_at"].as_str().unwrap().ends_with('Z'),
        "{hello}"
    );
    let real = std::fs::canonicalize(&setup.tasks).unwrap();
    assert_eq!(hello["tasks"], json!(real), "{hello}");
    let got = setup.ok("tasks.get", json!({"task_id": "ask"}));
    assert_eq!(
        got["task"]["live"]["state"], "waiting_for_operator",
        "{got}"
    );
    assert_eq!(got["task"]["prompt"]["prompt_id"], "ask/1/1", "{got}");
    let screen = setup.ok("panes.screen", json!({"task_id": "ask"}));
    assert!(
        screen["text"].as_str().unwrap().contains("Bash"),
        "{screen}"
    );
    assert_eq!(
        setup.error("tasks.get", json!({"task_id": "nope"}))["code"],
        -32001
    );

    // A task added while the prompt waits: invalid ones refused with their problems, a valid
    // one written into the file and started.
    let invalid = setup.error(
        "tasks.add",
        json!({"task": {"task_id": "bad", "agent": "nope", "prompt_template": "x"}}),
    );
    assert_eq!(invalid["code"], -32004, "{invalid}");
    let problems = invalid["data"]["problems"].to_string();
    assert!(problems.contains("agent \\\"nope\\\""), "{invalid}");
    let twice = setup.error("tasks.add", json!({"task": ask_task("ask")}));
    assert_eq!(twice["code"], -32004, "{twice}");
    let added = setup.ok(
        "tasks.add",
        json!({"task": {"task_id": "new", "agent": "sim", "timeout_sec": 60,
                        "inputs": {"scenario": "success"}, "prompt_template": PROMPT}}),
    );
    assert_eq!(added, json!({"task_id": "new"}));
    wait_for("the added task in the file", || {
        let doc = setup.doc();
        let ids: Vec<Value> = doc["tasks"]
            .as_array()?
            .iter()
            .map(|t| t["task_id"].clone())
            .collect();
        (ids == [json!("ask"), json!("new")]).then_some(())
    });

    // A stale id (never given, or answered already) lands nowhere.
    let stale = setup.error(
        "prompts.answer",
        json!({"prompt_id": "ask/1/2", "answer": "approve"}),
    );
    assert_eq!(stale["code"], -32003, "{stale}");
    let not_offered = setup.error(
        "prompts.answer",
        json!({"prompt_id": "ask/1/1", "answer": "approve_always"}),
    );
    assert_eq!(not_offered["code"], -32002, "{not_offered}");
    let answered = setup.ok(
        "prompts.answer",
        json!({"prompt_id": "ask/1/1", "answer": "approve"}),
    );
    assert_eq!(answered["done"], true, "{answered}");
    let again = setup.error(
        "prompts.answer",
        json!({"prompt_id": "ask/1/1", "answer": "deny"}),
    );
    assert_eq!(again["code"], -32003, "{again}");

    let out = wait_exit(herd_run);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc = setup.doc();
    assert_eq!(task(&doc, "ask")["status"], "completed", "{doc}");
    assert_eq!(task(&doc, "new")["status"], "completed", "{doc}");
    let approvals = &task(&doc, "ask")["result"]["approvals"];
    assert_eq!(approvals.as_array().map(Vec::len), Some(1), "{doc}");
    assert_eq!(approvals[0]["by"], "api", "{doc}");
    assert_eq!(approvals[0]["request"], "Bash(touch created_by_agent.txt)");

    // The watcher saw the answer, the added task's run and the end, then the run closed it.
    let watched = wait_exit(watch);
    assert_eq!(watched.status.code(), Some(0), "{}", describe(&watched));
    let events: Vec<Value> = String::from_utf8_lossy(&watched.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (s("event"), s("task_id"))
        })
        .collect();
    for want in [
        ("answered", "ask"),
        ("started", "new"),
        ("finished", "new"),
        ("finished", "ask"),
        ("batch_done", ""),
    ] {
        assert!(
            kinds.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {kinds:?}"
        );
    }
    let finished = events
        .iter()
        .find(|e| e["event"] == "finished" && e["task_id"] == "ask")
        .unwrap();
    assert_eq!(finished["status"], "completed", "{finished}");

    // Every call is in herd's log with the caller's pid; the socket and registration are gone.
    let log = std::fs::read_to_string(setup.dir.path().join("runs/herd.log")).unwrap();
    let calls = log.lines().filter(|l| l.contains("control call")).count();
    assert!(calls >= 12, "{log}");
    assert!(
        log.lines()
            .all(|l| !l.contains("control call") || l.contains("pid=")),
        "{log}"
    );
    assert_eq!(setup.rendezvous(), Vec::<String>::new());
}

#[test]
fn a_call_from_another_user_is_refused() {
    if !common::can_run_as_another_user("a_call_from_another_user_is_refused") {
        return;
    }
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let (_bin_dir, bin) = common::herd_for_any_user();
    let herd_run = setup.start_headless();
    setup.wait_for_prompt();
    let socket = setup
        .rendezvous()
        .into_iter()
        .find(|name| name.ends_with(".sock"))
        .map(|name| setup.runtime.join("herd").join(name))
        .unwrap();
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let folder_mode = std::fs::metadata(socket.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(folder_mode & 0o777, 0o700);
    let as_nobody = || {
        Command::new("setpriv")
            .args(["--reuid", "nobody", "--regid", "nogroup", "--clear-groups"])
            .arg(&bin)
            .args(["ctl", "--socket"])
            .arg(&socket)
            .arg("prompts.answer")
            .arg(json!({"prompt_id": "ask/1/1", "answer": "approve"}).to_string())
            .output()
            .unwrap()
    };
    // The folder keeps others out.
    let out = as_nobody();
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot reach the control socket"),
        "{}",
        describe(&out)
    );
    // Even with the folder and the socket opened to everyone, herd answers only its own user.
    for dir in [
        setup.dir.path(),
        setup.runtime.as_path(),
        socket.parent().unwrap(),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = as_nobody();
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("closed the connection without answering"),
        "{}",
        describe(&out)
    );
    // herd's own client will not use a folder open to others: closed again first.
    for dir in [setup.runtime.as_path(), socket.parent().unwrap()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // The prompt still waits, unanswered; its own user answers it.
    assert_eq!(setup.wait_for_prompt()["prompt_id"], "ask/1/1");
    setup.ok(
        "prompts.answer",
        json!({"prompt_id": "ask/1/1", "answer": "deny"}),
    );
    let out = wait_exit(herd_run);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let log = std::fs::read_to_string(setup.dir.path().join("runs/herd.log")).unwrap();
    assert!(
        log.contains("refused a connection of another user") && log.contains("uid=65534"),
        "{log}"
    );
    let doc = setup.doc();
    assert_eq!(
        task(&doc, "ask")["result"]["approvals"][0]["by"],
        "api",
        "{doc}"
    );
}

#[test]
fn ctl_without_a_running_herd_says_how_to_start_one() {
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let out = setup.ctl("tasks.list", json!({}));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no herd runs"), "{stderr}");
    assert!(stderr.contains("herd run --tasks"), "{stderr}");
    let out = setup
        .herd()
        .args(["ctl", "--tasks", "missing.json", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no tasks file missing.json"),
        "{}",
        describe(&out)
    );
    // Bad parameters are the caller's: said before any connection.
    let out = setup
        .herd()
        .args(["ctl", "--tasks"])
        .arg(&setup.tasks)
        .args(["hello", "[1]"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn ctl_help_lists_every_method() {
    let out = herd().args(["ctl", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for (method, _, _) in herd::serve::control::protocol::METHODS {
        assert!(help.contains(method), "{method} in {help}");
    }
    assert!(help.contains("watch"), "{help}");
}

#[test]
fn the_dashboard_serves_the_socket_too() {
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let runtime = setup.runtime.display().to_string();
    let env = [("XDG_RUNTIME_DIR", runtime.as_str())];
    let mut dash = Dashboard::start(
        &setup.tasks,
        Launch {
            rows: 30,
            cols: 120,
            args: &[],
            env: &env,
        },
    );
    let prompt = setup.wait_for_prompt();
    assert_eq!(prompt["prompt_id"], "ask/1/1");
    assert_eq!(setup.ok("hello", json!({}))["mode"], "dashboard");
    setup.ok(
        "prompts.answer",
        json!({"prompt_id": "ask/1/1", "answer": "approve"}),
    );
    wait_for("the task completed", || {
        (task(&setup.doc(), "ask")["status"] == "completed").then_some(())
    });
    let stopped = setup.ok("batch.stop", json!({}));
    assert_eq!(stopped["done"], true, "{stopped}");
    assert_eq!(dash.wait_for_exit(Duration::from_secs(30)), 0);
    let doc = setup.doc();
    assert_eq!(
        task(&doc, "ask")["result"]["approvals"][0]["by"],
        "api",
        "{doc}"
    );
    assert_eq!(setup.rendezvous(), Vec::<String>::new());
}

#[test]
fn requests_on_one_connection_are_answered_in_order_one_line_each() {
    use std::io::{BufRead, BufReader, Write};
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let herd_run = setup.start_headless();
    setup.wait_for_prompt();
    let socket = setup
        .rendezvous()
        .into_iter()
        .find(|name| name.ends_with(".sock"))
        .map(|name| setup.runtime.join("herd").join(name))
        .unwrap();
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    // Four lines in one write: a request, a line that is not JSON, a notification (no answer)
    // and a second request.
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "hello"}).to_string(),
        "{not json".to_string(),
        json!({"jsonrpc": "2.0", "method": "hello"}).to_string(),
        json!({"jsonrpc": "2.0", "id": "two", "method": "tasks.get", "params": {"task_id": "ask"}})
            .to_string(),
    ];
    stream
        .write_all(format!("{}\n", lines.join("\n")).as_bytes())
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut read = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    let first = read();
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["result"]["mode"], "headless", "{first}");
    let second = read();
    assert_eq!(
        (&second["id"], &second["error"]["code"]),
        (&Value::Null, &json!(-32700)),
        "{second}"
    );
    let third = read();
    assert_eq!(third["id"], "two", "{third}");
    assert_eq!(
        third["result"]["task"]["prompt"]["prompt_id"], "ask/1/1",
        "{third}"
    );
    stream
        .write_all(
            format!(
                "{}\n",
                json!({"jsonrpc": "2.0", "id": 3, "method": "batch.stop"})
            )
            .as_bytes(),
        )
        .unwrap();
    assert_eq!(read()["result"]["done"], true);
    let out = wait_exit(herd_run);
    assert_eq!(
        task(&setup.doc(), "ask")["status"],
        "retryable",
        "{}",
        describe(&out)
    );
}

#[test]
fn a_line_that_is_not_utf8_or_too_long_is_answered_and_the_connection_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let herd_run = setup.start_headless();
    setup.wait_for_prompt();
    let socket = setup
        .rendezvous()
        .into_iter()
        .find(|name| name.ends_with(".sock"))
        .map(|name| setup.runtime.join("herd").join(name))
        .unwrap();
    let stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut read = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line)
            .unwrap_or_else(|e| panic!("not a JSON answer ({e}): {line:?}"))
    };
    // Written from another thread: the server answers the long line before reading its end.
    let mut writer = stream.try_clone().unwrap();
    let sent = std::thread::spawn(move || {
        writer.write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"\xff\xfe\"}\n")?;
        let mut long = vec![b' '; 5 << 20];
        long.push(b'\n');
        writer.write_all(&long)?;
        writer.write_all(
            format!(
                "{}\n",
                json!({"jsonrpc": "2.0", "id": 3, "method": "hello"})
            )
            .as_bytes(),
        )
    });
    let not_utf8 = read();
    assert_eq!(
        (&not_utf8["id"], &not_utf8["error"]["code"]),
        (&Value::Null, &json!(-32700)),
        "{not_utf8}"
    );
    assert!(
        not_utf8["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not UTF-8"),
        "{not_utf8}"
    );
    let too_long = read();
    assert_eq!(too_long["error"]["code"], -32600, "{too_long}");
    assert!(
        too_long["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4194304 bytes"),
        "{too_long}"
    );
    let hello = read();
    assert_eq!(hello["id"], 3, "{hello}");
    assert_eq!(hello["result"]["mode"], "headless", "{hello}");
    sent.join().unwrap().unwrap();
    let mut stop = stream.try_clone().unwrap();
    stop.write_all(
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 4, "method": "batch.stop"})
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(read()["result"]["done"], true);
    wait_exit(herd_run);
}

#[test]
fn herd_ctl_gives_up_on_a_herd_that_does_not_answer_and_says_so() {
    // A socket that accepts and never answers: a hung herd.
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hung.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let _held = std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(60));
        drop(held);
    });
    let asked = Instant::now();
    let out = herd()
        .args(["ctl", "--timeout", "0.5", "--socket"])
        .arg(&socket)
        .arg("hello")
        .output()
        .unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("did not answer hello within 0.5s"), "{said}");
    assert!(said.contains("herd status"), "{said}");
    // A timeout that is not a number of seconds is a bad argument.
    let out = herd()
        .args(["ctl", "--timeout", "-1", "--socket"])
        .arg(&socket)
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn a_task_added_through_the_socket_survives_an_edit_saved_from_the_version_before_it() {
    let setup = Setup::new(json!({"tasks": [ask_task("ask")]}));
    let herd_run = setup.start_headless();
    setup.wait_for_prompt();
    // The operator opens the file in an editor now...
    let before = std::fs::read_to_string(&setup.tasks).unwrap();
    // ...a script adds a task meanwhile...
    let added = setup.ok(
        "tasks.add",
        json!({"task": {"task_id": "new", "agent": "sim", "enabled": false,
                        "inputs": {"scenario": "success"},
                        "prompt_template": PROMPT}}),
    );
    assert_eq!(added, json!({"task_id": "new"}));
    wait_for("the added task in the file", || {
        let doc = setup.doc();
        doc["tasks"]
            .as_array()?
            .iter()
            .any(|t| t["task_id"] == "new")
            .then_some(())
    });
    // ...and the operator saves their edit of the version they opened, which lacks it.
    let mut theirs: Value = serde_json::from_str(&before).unwrap();
    theirs["tasks"][0]["priority"] = json!(7);
    std::fs::write(&setup.tasks, serde_json::to_string_pretty(&theirs).unwrap()).unwrap();
    wait_for("their edit and herd's task, both in the file", || {
        let text = std::fs::read_to_string(&setup.tasks).ok()?;
        let doc: Value = serde_json::from_str(&text).ok()?;
        let ids: Vec<Value> = doc["tasks"]
            .as_array()?
            .iter()
            .map(|t| t["task_id"].clone())
            .collect();
        (ids == [json!("ask"), json!("new")] && task(&doc, "ask")["priority"] == 7).then_some(())
    });
    setup.ok(
        "prompts.answer",
        json!({"prompt_id": "ask/1/1", "answer": "approve"}),
    );
    let out = wait_exit(herd_run);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc = setup.doc();
    assert_eq!(task(&doc, "ask")["status"], "completed", "{doc}");
    assert_eq!(task(&doc, "ask")["priority"], 7, "{doc}");
    assert_eq!(task(&doc, "new")["enabled"], false, "{doc}");
    let log = std::fs::read_to_string(setup.dir.path().join("runs/herd.log")).unwrap();
    assert!(log.contains("1 task added by herd kept"), "{log}");
}

#[test]
fn the_short_verbs_list_answer_and_stop_speak_json_into_a_pipe() {
    let slow = json!({
        "task_id": "slow", "agent": "sim", "max_retries": 0, "timeout_sec": 60,
        "inputs": {"scenario": "hang"}, "prompt_template": PROMPT
    });
    let setup = Setup::new(json!({"tasks": [ask_task("ask"), slow]}));
    let herd_run = setup.start_headless();
    setup.wait_for_prompt();
    let short = |args: &[&str]| {
        let out = setup.herd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or_else(|e| {
            panic!("{args:?} prints JSON into a pipe ({e}): {}", describe(&out))
        })
    };
    let listed = short(&["ctl", "--tasks", "tasks.json", "list"]);
    let rows = listed["tasks"].as_array().expect("rows");
    let ask = rows.iter().find(|r| r["task_id"] == "ask").expect("ask");
    assert_eq!(ask["live"]["prompt_id"], "ask/1/1", "{listed:#}");

    let answered = short(&[
        "ctl",
        "--tasks",
        "tasks.json",
        "answer",
        "ask/1/1",
        "approve",
    ]);
    assert_eq!(answered["done"], true, "{answered:#}");
    wait_for("ask completed", || {
        (task(&setup.doc(), "ask")["status"] == "completed").then_some(())
    });
    let bad = setup
        .herd()
        .args(["ctl", "--tasks", "tasks.json", "answer", "ask/1/1"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", describe(&bad));

    let stopped = short(&["stop", "--tasks", "tasks.json"]);
    assert_eq!(stopped["done"], true, "{stopped:#}");
    let out = wait_exit(herd_run);
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert_eq!(task(&setup.doc(), "slow")["status"], "retryable");
    assert_eq!(
        task(&setup.doc(), "ask")["result"]["approvals"][0]["by"],
        "api"
    );
}
