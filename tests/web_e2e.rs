//! End to end through the real binary and the built-in simulator: the web view of a headless
//! run (`herd run --web`). In a real browser (the system's Chromium, driven by Playwright from
//! `tests/web/browser.mjs`): sign in with the printed address, see the waiting prompts, approve
//! one and watch its agent go on in the pane, then, phone-sized, answer the other through the
//! one-time link its `notify` event carried; both answers recorded `"by": "web"`. Over plain
//! HTTP: every way in that is not the operator's is refused, with nothing answered and the
//! refusal in the run's log.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::{herd, task, wait_for};

/// A prompt written as people write one: no word of a marker.
const PROMPT: &str = "Create the marker file, then run the tests.";

fn ask_task(id: &str, scenario: &str) -> Value {
    json!({
        "task_id": id, "agent": "sim", "max_retries": 0, "timeout_sec": 120,
        "permission_wait_sec": 120,
        "inputs": {"scenario": scenario},
        "prompt_template": PROMPT
    })
}

/// A headless run with its web view on a free port, its `notify` events in `notify.jsonl`.
struct WebRun {
    dir: tempfile::TempDir,
    child: Child,
    url: String,
    login_url: String,
}

/// A test's folder: the tasks file of `tasks` and a private runtime folder for the rendezvous;
/// `herd` run in it.
fn batch_folder(tasks: &[Value]) -> (tempfile::TempDir, PathBuf, impl Fn() -> Command + use<>) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("xdg");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let file = dir.path().join("tasks.json");
    std::fs::write(&file, json!({ "tasks": tasks }).to_string()).unwrap();
    let here = dir.path().to_path_buf();
    let herd_in = move || {
        let mut command = herd();
        command.env("XDG_RUNTIME_DIR", &runtime).current_dir(&here);
        command
    };
    (dir, file, herd_in)
}

impl WebRun {
    fn start(tasks: &[Value]) -> WebRun {
        let (dir, file, herd_in) = batch_folder(tasks);
        let mut child = herd_in()
            .args(["run", "--headless", "--web", "127.0.0.1:0", "--tasks"])
            .arg(&file)
            .args(["--notify", "cat >> notify.jsonl; echo >> notify.jsonl"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut url = None;
        let mut login_url = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix("herd: web view at ") {
                url = Some(rest.trim().to_string());
            } else if line.trim_start().starts_with("http://") && line.contains("#token=") {
                login_url = Some(line.trim().to_string());
                break;
            }
        }
        // The rest of stderr is drained so the run never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        WebRun {
            dir,
            child,
            url: url.expect("the web view's address is printed"),
            login_url: login_url.expect("the sign-in address is printed"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn token(&self) -> &str {
        self.login_url.split("#token=").nth(1).unwrap()
    }

    fn host(&self) -> &str {
        self.url.strip_prefix("http://").unwrap()
    }

    fn doc(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("tasks.json")).unwrap()).unwrap()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.path("runs/herd.log")).unwrap_or_default()
    }

    /// The `prompt_waiting` event of `task`, once its command ran.
    fn waiting_event(&self, task: &str) -> Value {
        wait_for(&format!("the prompt_waiting event of {task}"), || {
            let text = std::fs::read_to_string(self.path("notify.jsonl")).ok()?;
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|e| e["event"] == "prompt_waiting" && e["task_id"] == task)
        })
    }

    /// The one-time link of `task`'s waiting prompt for `answer`.
    fn link(&self, task: &str, answer: &str) -> String {
        let event = self.waiting_event(task);
        let actions = event["actions"]
            .as_array()
            .expect("the event carries links");
        let action = actions.iter().find(|a| a["answer"] == answer).unwrap();
        action["url"].as_str().unwrap().to_string()
    }

    fn request(&self, request: &Request) -> Reply {
        http(self.host(), request)
    }

    /// Signs in with the token; the cookie and the CSRF token.
    fn sign_in(&self) -> (String, String) {
        let body = json!({"token": self.token()}).to_string();
        let reply = self.request(&Request::post("/api/login", &body));
        assert_eq!(reply.status, 200, "{reply:?}");
        let cookie = reply.header("set-cookie").unwrap();
        assert!(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
            "{cookie}"
        );
        let cookie = cookie.split(';').next().unwrap().to_string();
        (cookie, reply.json()["csrf"].as_str().unwrap().to_string())
    }

    fn wait_until_done(&mut self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the run did not end: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.doc()
    }
}

impl Drop for WebRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP request as a client writes it.
#[derive(Debug, Clone, Default)]
struct Request {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Request {
    fn get(path: &str) -> Request {
        Request {
            method: "GET",
            path: path.to_string(),
            ..Request::default()
        }
    }

    fn post(path: &str, body: &str) -> Request {
        Request {
            method: "POST",
            path: path.to_string(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    fn with(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// One HTTP/1.1 exchange with the web view at `host`, the connection closed after it.
fn http(host: &str, request: &Request) -> Reply {
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut text = format!(
        "{} {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        request.method,
        request.path,
        request.body.len()
    );
    for (name, value) in &request.headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(&request.body);
    stream.write_all(text.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// The path of a link's URL.
fn path_of(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    rest[rest.find('/').unwrap()..].to_string()
}

/// Where the screenshots go: `HERD_WEB_SHOTS`, else the target folder's `web-shots`.
fn shots_dir() -> PathBuf {
    let dir = std::env::var_os("HERD_WEB_SHOTS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/web-shots"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_operator_answers_from_the_browser_and_from_a_one_time_link_on_a_phone() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/goes_on.toml");
    let scenario = scenario.to_str().unwrap();
    let mut run = WebRun::start(&[ask_task("one", scenario), ask_task("two", scenario)]);
    let link = run.link("two", "approve");
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web");
    assert!(
        web.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed in tests/web: scripts/test installs it (npm ci)"
    );
    let args = json!({
        "login_url": run.login_url, "link_url": link, "first": "one/1/1",
        "shots": shots_dir(),
    });
    let out = Command::new("node")
        .arg(web.join("browser.mjs"))
        .arg(args.to_string())
        .current_dir(&web)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::describe(&out));
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["prompts"], json!(["one/1/1", "two/1/1"]), "{seen}");
    // The token left the address bar once it was used.
    assert!(
        !seen["url_after_sign_in"]
            .as_str()
            .unwrap()
            .contains("token"),
        "{seen}"
    );
    assert!(
        seen["pane_after_approve"]
            .as_str()
            .unwrap()
            .contains("Approved: creating"),
        "{seen}"
    );
    assert_eq!(seen["answer_note"], "one/1/1 answered: approve", "{seen}");
    assert_eq!(seen["phone_overflows"], false, "{seen}");
    assert_eq!(seen["link_heading"], "Approve?", "{seen}");
    assert!(
        seen["link_answered"]
            .as_str()
            .unwrap()
            .contains("two/1/1 answered: approve")
    );
    let doc = run.wait_until_done();
    for id in ["one", "two"] {
        let task = task(&doc, id);
        assert_eq!(task["status"], "completed", "{task}");
        assert_eq!(task["result"]["approvals"][0]["by"], "web", "{task}");
    }
}

#[test]
fn every_way_in_that_is_not_the_operators_is_refused_and_recorded() {
    let mut run = WebRun::start(&[
        ask_task("ask", "permission"),
        ask_task("gone", "permission"),
    ]);
    let link = path_of(&run.link("ask", "approve"));
    let gone_link = path_of(&run.link("gone", "approve"));
    let answer = json!({"prompt_id": "ask/1/1", "answer": "approve"}).to_string();
    let origin = format!("http://{}", run.host());

    // No token: no page data, no events, no pane, no answer.
    for path in ["/api/state", "/api/events", "/api/screen/ask"] {
        assert_eq!(run.request(&Request::get(path)).status, 401, "{path}");
    }
    let no_session = run.request(&Request::post("/api/answer", &answer));
    assert_eq!(no_session.status, 401, "{no_session:?}");

    // A wrong token, then too many of them: even the right one is refused for a while.
    let wrong = json!({"token": "0123456789abcdef0123456789abcdef"}).to_string();
    let refused = run.request(&Request::post("/api/login", &wrong));
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(refused.header("set-cookie").is_none());

    // Signed in, but a change without the CSRF header, with another's, or from another origin.
    let (cookie, csrf) = run.sign_in();
    let as_operator = |r: Request| r.with("cookie", &cookie);
    let no_csrf = run.request(&as_operator(Request::post("/api/answer", &answer)));
    assert_eq!(no_csrf.status, 403, "{no_csrf:?}");
    let wrong_csrf = as_operator(Request::post("/api/answer", &answer)).with("x-herd-csrf", "00");
    assert_eq!(run.request(&wrong_csrf).status, 403);
    // A cross-site POST: a page of another site posting with the operator's cookie.
    let cross_site = as_operator(Request::post("/api/answer", &answer))
        .with("x-herd-csrf", &csrf)
        .with("origin", "http://evil.example");
    assert_eq!(run.request(&cross_site).status, 403);
    let cross_referer = as_operator(Request::post("/api/answer", &answer))
        .with("x-herd-csrf", &csrf)
        .with("referer", "http://evil.example/page");
    assert_eq!(run.request(&cross_referer).status, 403);
    // A login from another origin.
    let body = json!({"token": run.token()}).to_string();
    let foreign_login = Request::post("/api/login", &body).with("origin", "http://evil.example");
    assert_eq!(run.request(&foreign_login).status, 403);
    // Failed logins past the limit: refused even with the right token.
    for _ in 0..5 {
        run.request(&Request::post("/api/login", &wrong));
    }
    let limited = run.request(&Request::post("/api/login", &body));
    assert_eq!(limited.status, 429, "{limited:?}");
    // A one-time link posted from another origin.
    let foreign_link = Request::post(&link, "").with("origin", "http://evil.example");
    assert_eq!(run.request(&foreign_link).status, 403);
    // A forged link: the answer edited, the signature kept.
    let forged = link.replacen(".approve.", ".approve_always.", 1);
    assert_eq!(run.request(&Request::post(&forged, "")).status, 403);

    // Nothing was answered: both prompts still wait.
    let state = run.request(&as_operator(Request::get("/api/state")));
    let waiting: Vec<String> = state.json()["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["prompt_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(waiting, ["ask/1/1", "gone/1/1"], "{state:?}");

    // The link works once: a GET only shows it, the POST answers, a replay is refused.
    let shown = run.request(&Request::get(&link));
    assert_eq!(shown.status, 200);
    assert!(
        shown.body.contains("Bash(touch created_by_agent.txt)"),
        "{}",
        shown.body
    );
    let taken = run.request(&Request::post(&link, "").with("origin", &origin));
    assert_eq!(taken.status, 200, "{}", taken.body);
    assert!(
        taken.body.contains("ask/1/1 answered: approve"),
        "{}",
        taken.body
    );
    let replayed = run.request(&Request::post(&link, ""));
    assert_eq!(replayed.status, 410, "{}", replayed.body);
    assert!(replayed.body.contains("used already"), "{}", replayed.body);

    // A link for a prompt that is gone: its prompt answered another way (the API's), its link
    // lands nowhere.
    let by_page = as_operator(Request::post(
        "/api/answer",
        &answer.replace("ask/", "gone/"),
    ))
    .with("x-herd-csrf", &csrf)
    .with("origin", &origin);
    assert_eq!(run.request(&by_page).status, 200);
    let gone = run.request(&Request::post(&gone_link, ""));
    assert_eq!(gone.status, 410, "{}", gone.body);
    assert!(
        gone.body.contains("no prompt gone/1/1 waits"),
        "{}",
        gone.body
    );

    let doc = run.wait_until_done();
    let log = run.log();
    for id in ["ask", "gone"] {
        let approvals = &task(&doc, id)["result"]["approvals"];
        assert_eq!(approvals.as_array().map(Vec::len), Some(1), "{approvals}");
        assert_eq!(approvals[0]["by"], "web", "{approvals}");
    }
    for refusal in [
        "refused a read of the batch: no session",
        "refused an answer: no session",
        "wrong token",
        "refused an answer: missing or wrong CSRF token",
        "refused an answer: the request comes from another origin",
        "refused a login: the request comes from another origin",
        "refused a one-time link: the request comes from another origin",
        "refused a one-time link: the link is not one of this web view's",
        "refused a one-time link: the link was used already",
        "refused a one-time link: no prompt gone/1/1 waits",
        "too many failed logins",
    ] {
        assert!(log.contains(refusal), "{refusal:?} not in the log:\n{log}");
    }
    // No secret in the log: neither the token nor a link's signature.
    let token = body.split('"').nth(3).unwrap().to_string();
    assert!(!log.contains(&token), "the token is in the log");
    let signature = link.rsplit('.').next().unwrap();
    assert!(!log.contains(signature), "a link's signature is in the log");
}

#[test]
fn herd_web_starts_the_view_of_a_run_already_going_and_then_says_where_it_runs() {
    let (_dir, file, herd_in) = batch_folder(&[ask_task("ask", "permission")]);
    let mut run = herd_in()
        .args(["run", "--headless", "--tasks"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let web = |addr: &str| {
        wait_for("herd web to reach the run", || {
            let out = herd_in()
                .args(["web", "--tasks"])
                .arg(&file)
                .arg(addr)
                .output()
                .unwrap();
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stderr).into_owned())
        })
    };
    let first = web("127.0.0.1:0");
    assert!(!first.contains("runs already"), "{first}");
    let login = first
        .lines()
        .find(|l| l.contains("#token="))
        .unwrap()
        .trim()
        .to_string();
    let second = web("127.0.0.1:0");
    assert!(second.contains("runs already"), "{second}");
    assert!(
        second.contains(&login),
        "the same address and token: {second}"
    );
    let host = login
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let token = login.split("#token=").nth(1).unwrap();
    let body = json!({"token": token}).to_string();
    assert_eq!(http(host, &Request::post("/api/login", &body)).status, 200);
    let _ = run.kill();
    let _ = run.wait();
}
