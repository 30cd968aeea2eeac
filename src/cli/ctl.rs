//! `herd ctl`: one call to the control socket of the herd that runs a tasks file, its result
//! printed as JSON; `watch` prints the run's events, one JSON line each, until the run ends.

use std::io::Write;

use color_eyre::eyre::Result;
use serde_json::Value;

use super::args::CtlArgs;
use super::inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID};
use crate::run::control::client::{Client, ClientError};

/// The herd answered with an error.
const EXIT_ERROR_ANSWER: i32 = 1;

pub(super) fn ctl(args: &CtlArgs) -> Result<i32> {
    let params: Value = match args.params.as_deref() {
        None => Value::Object(Default::default()),
        Some(text) => match serde_json::from_str(text) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) => {
                eprintln!(
                    "herd: the parameters must be a JSON object, such as '{{\"task_id\": \"a\"}}'"
                );
                return Ok(EXIT_INVALID);
            }
            Err(error) => {
                eprintln!("herd: the parameters are not JSON: {error}");
                return Ok(EXIT_INVALID);
            }
        },
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
    let outcome = client.and_then(|mut client| match args.method.as_str() {
        "watch" => watch(&mut client),
        method => call(&mut client, method, &params),
    });
    match outcome {
        Ok(code) => Ok(code),
        Err(error) => {
            eprintln!("herd: {error}");
            Ok(EXIT_CANNOT_GO_ON)
        }
    }
}

fn call(client: &mut Client, method: &str, params: &Value) -> Result<i32, ClientError> {
    match client.call(method, params)? {
        Ok(result) => {
            println!("{}", pretty(&result));
            Ok(0)
        }
        Err(error) => {
            eprintln!("{}", pretty(&error));
            Ok(EXIT_ERROR_ANSWER)
        }
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
