//! `herd ctl`: one call to the control socket of the herd that runs a tasks file, its result as
//! JSON; `watch` prints events until the run ends. The short verbs (`list`, `answer`, `herd
//! stop`) print a table or a line on a terminal and JSON into a pipe.

use std::io::{IsTerminal, Write};

use color_eyre::eyre::Result;
use serde_json::{Value, json};

use super::args::{CtlArgs, StopArgs};
use super::inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID};
use crate::serve::control::client::{Client, ClientError};

/// The herd answered with an error.
const EXIT_ERROR_ANSWER: i32 = 1;

/// What `herd ctl` was asked to do.
enum Request {
    Watch,
    /// `tasks.list` with these parameters.
    List {
        params: Value,
    },
    /// A call whose result is printed as JSON, or, with `said` on a terminal, as its message.
    Call {
        method: String,
        params: Value,
        said: bool,
    },
}

pub(super) fn ctl(args: &CtlArgs) -> Result<i32> {
    let request = match request(args) {
        Ok(request) => request,
        Err(problem) => {
            eprintln!("herd: {problem}");
            return Ok(EXIT_INVALID);
        }
    };
    let Ok(limit) = std::time::Duration::try_from_secs_f64(args.timeout) else {
        eprintln!("herd: --timeout takes a number of seconds, 0 or more (0 waits for ever)");
        return Ok(EXIT_INVALID);
    };
    let client = match (&args.socket, &args.tasks) {
        (Some(socket), _) => Client::connect(socket),
        (None, Some(tasks)) => Client::for_tasks(tasks),
        (None, None) => {
            eprintln!("herd: --tasks FILE names the run to talk to");
            return Ok(EXIT_INVALID);
        }
    };
    let client = client.map(|client| client.with_answer_limit(Some(limit)));
    let outcome = client.and_then(|mut client| match &request {
        Request::Watch => watch(&mut client),
        Request::List { params } => list(&mut client, params),
        Request::Call {
            method,
            params,
            said,
        } => call(&mut client, method, params, *said),
    });
    Ok(exit_code(outcome))
}

/// `herd stop --tasks FILE`: `batch.stop`, as a first Ctrl-C.
pub(super) fn stop(args: &StopArgs) -> Result<i32> {
    let outcome = Client::for_tasks(&args.tasks)
        .and_then(|mut client| call(&mut client, "batch.stop", &json!({}), true));
    Ok(exit_code(outcome))
}

fn exit_code(outcome: Result<i32, ClientError>) -> i32 {
    outcome.unwrap_or_else(|error| {
        eprintln!("herd: {error}");
        EXIT_CANNOT_GO_ON
    })
}

/// The request the arguments make; what is wrong with them otherwise.
fn request(args: &CtlArgs) -> Result<Request, String> {
    let method = args.method.as_str();
    if method == "answer" {
        let (Some(prompt_id), Some(option)) = (&args.params, &args.option) else {
            return Err(
                "usage: herd ctl answer PROMPT_ID OPTION (approve, approve_always or \
                        deny); `herd ctl list` shows the ids of waiting prompts"
                    .into(),
            );
        };
        return Ok(Request::Call {
            method: "prompts.answer".into(),
            params: json!({ "prompt_id": prompt_id, "answer": option }),
            said: true,
        });
    }
    if let Some(extra) = &args.option {
        return Err(format!(
            "{method} takes one JSON object of parameters; {extra:?} is extra"
        ));
    }
    let params = json_params(args.params.as_deref())?;
    Ok(match method {
        "watch" => Request::Watch,
        "list" => Request::List { params },
        method => Request::Call {
            method: method.to_string(),
            params,
            said: false,
        },
    })
}

fn json_params(text: Option<&str>) -> Result<Value, String> {
    match text.map(serde_json::from_str) {
        None => Ok(Value::Object(Default::default())),
        Some(Ok(value @ Value::Object(_))) => Ok(value),
        Some(Ok(_)) => {
            Err("the parameters must be a JSON object, such as '{\"task_id\": \"a\"}'".into())
        }
        Some(Err(error)) => Err(format!("the parameters are not JSON: {error}")),
    }
}

/// `method`'s result (its message, when `said` on a terminal) on stdout, or the error on stderr.
fn call(client: &mut Client, method: &str, params: &Value, said: bool) -> Result<i32, ClientError> {
    let to_person = said && std::io::stdout().is_terminal();
    match client.call(method, params)? {
        Ok(result) if to_person => {
            println!("{}", result["message"].as_str().unwrap_or("done"));
            Ok(0)
        }
        Ok(result) => {
            println!("{}", pretty(&result));
            Ok(0)
        }
        Err(error) if to_person => {
            let message = error["message"].as_str().map(str::to_string);
            eprintln!("herd: {}", message.unwrap_or_else(|| error.to_string()));
            Ok(EXIT_ERROR_ANSWER)
        }
        Err(error) => {
            eprintln!("{}", pretty(&error));
            Ok(EXIT_ERROR_ANSWER)
        }
    }
}

/// `list`: `tasks.list` as a table on a terminal, its JSON into a pipe.
fn list(client: &mut Client, params: &Value) -> Result<i32, ClientError> {
    if !std::io::stdout().is_terminal() {
        return call(client, "tasks.list", params, false);
    }
    match client.call("tasks.list", params)? {
        Ok(result) => {
            let rows = result["tasks"].as_array().map_or(&[][..], Vec::as_slice);
            print!("{}", task_table(rows));
            Ok(0)
        }
        Err(error) => {
            eprintln!("{}", pretty(&error));
            Ok(EXIT_ERROR_ANSWER)
        }
    }
}

/// The tasks' rows as a table, with the id of the prompt each waits on (for `herd ctl answer`).
fn task_table(rows: &[Value]) -> String {
    let header = ["TASK", "STATUS", "ATTEMPTS", "NOW"].map(str::to_string);
    let lines: Vec<[String; 4]> = std::iter::once(header)
        .chain(rows.iter().map(|row| {
            let text = |key: &str| row[key].as_str().unwrap_or("").to_string();
            [
                text("task_id"),
                text("status"),
                row["attempts"].as_u64().unwrap_or(0).to_string(),
                live_state(&row["live"]),
            ]
        }))
        .collect();
    let width = |column: usize| {
        lines
            .iter()
            .map(|line| line[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    let mut table = String::new();
    for [task, status, attempts, now] in &lines {
        let line = format!(
            "{task:<w0$}  {status:<w1$}  {attempts:>w2$}  {now}",
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        table.push_str(line.trim_end());
        table.push('\n');
    }
    table
}

/// A row's `live`: `-` when nothing runs, else the attempt and its state.
fn live_state(live: &Value) -> String {
    let Some(attempt) = live["attempt"].as_u64() else {
        return "-".to_string();
    };
    match (live["state"].as_str(), live["prompt_id"].as_str()) {
        (Some("waiting_for_operator"), Some(id)) => {
            format!("attempt {attempt} waits for you: prompt {id}")
        }
        (Some(state), _) => format!("attempt {attempt} {}", state.replace('_', " ")),
        (None, _) => format!("attempt {attempt}"),
    }
}

fn watch(client: &mut Client) -> Result<i32, ClientError> {
    if let Err(error) = client.call("events.subscribe", &Value::Object(Default::default()))? {
        eprintln!("{}", pretty(&error));
        return Ok(EXIT_ERROR_ANSWER);
    }
    let mut out = std::io::stdout();
    // Until the run ends (it closes the connection).
    while let Some(message) = client.next_message()? {
        if let Some(event) = message
            .get("params")
            .filter(|_| message.get("method").is_some())
        {
            let written = writeln!(out, "{event}").and_then(|()| out.flush());
            if written.is_err() {
                break;
            }
        }
    }
    Ok(0)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_each_task_and_the_prompt_it_waits_on() {
        let rows = [
            json!({"task_id": "fix-1", "status": "running", "attempts": 1,
                   "live": {"attempt": 1, "state": "waiting_for_operator", "prompt_id": "fix-1/1/2"}}),
            json!({"task_id": "docs", "status": "completed", "attempts": 2, "live": null}),
            json!({"task_id": "t", "status": "running", "attempts": 12,
                   "live": {"attempt": 12, "state": "running", "prompt_id": null}}),
        ];
        assert_eq!(
            task_table(&rows),
            "TASK   STATUS     ATTEMPTS  NOW\n\
             fix-1  running           1  attempt 1 waits for you: prompt fix-1/1/2\n\
             docs   completed         2  -\n\
             t      running          12  attempt 12 running\n"
        );
    }

    #[test]
    fn answer_needs_a_prompt_id_and_an_option_and_methods_one_json_object() {
        let args = |method: &str, params: Option<&str>, option: Option<&str>| CtlArgs {
            tasks: Some("tasks.json".into()),
            socket: None,
            method: method.into(),
            params: params.map(str::to_string),
            option: option.map(str::to_string),
            timeout: 30.0,
        };
        let Ok(Request::Call {
            method,
            params,
            said,
        }) = request(&args("answer", Some("a/1/1"), Some("deny")))
        else {
            panic!("answer is a call");
        };
        assert_eq!(method, "prompts.answer");
        assert_eq!(params, json!({"prompt_id": "a/1/1", "answer": "deny"}));
        assert!(said);
        let missing = request(&args("answer", Some("a/1/1"), None)).err();
        assert!(missing.is_some_and(|p| p.starts_with("usage: herd ctl answer")));
        assert!(matches!(
            request(&args("list", Some(r#"{"status": ["failed"]}"#), None)),
            Ok(Request::List { params }) if params["status"][0] == "failed"
        ));
        assert!(request(&args("tasks.get", Some("{}"), Some("x"))).is_err());
        assert!(request(&args("tasks.get", Some("[1]"), None)).is_err());
    }
}
