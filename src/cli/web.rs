//! `herd web`: starts the web view of the herd that runs a tasks file (or says where it runs),
//! through its control socket, and prints its sign-in address with a QR code.

use color_eyre::eyre::Result;
use serde_json::{Value, json};

use super::args::WebArgs;
use super::inputs::EXIT_CANNOT_GO_ON;
use crate::run::console::note;
use crate::serve::control::client::Client;

pub(super) fn web(args: &WebArgs) -> Result<i32> {
    Ok(match start(&args.tasks, args.addr.as_deref()) {
        Ok((started, text)) => {
            if !started {
                note("herd: the web view runs already (its address is unchanged)");
            }
            note(&text);
            0
        }
        Err(why) => {
            note(&format!("herd: {why}"));
            EXIT_CANNOT_GO_ON
        }
    })
}

/// Asks the herd running `tasks` for its web view: whether this started it, and what to print.
pub(super) fn start(tasks: &std::path::Path, addr: Option<&str>) -> Result<(bool, String), String> {
    let mut client = Client::for_tasks(tasks).map_err(|e| e.to_string())?;
    let params = addr.map_or(json!({}), |addr| json!({ "addr": addr }));
    let answer = client
        .call("web.start", &params)
        .map_err(|e| e.to_string())?
        .map_err(|error| error["message"].as_str().unwrap_or("refused").to_string())?;
    let text = |key: &str| answer[key].as_str().unwrap_or_default().to_string();
    let said = crate::serve::web::announcement(
        &text("url"),
        &text("login_url"),
        answer["local"] != Value::Bool(false),
    );
    Ok((answer["started"] != Value::Bool(false), said))
}
