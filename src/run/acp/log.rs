//! `attempt_<n>.acp.jsonl`: every JSON-RPC message both ways, the agent's stderr, stray lines,
//! herd's answers and the outcome, one JSON object a line with the time (`t`) and direction
//! (`dir`). Private like every recording; a log that cannot be written is dropped with one note.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

pub(super) struct AcpLog {
    out: Option<BufWriter<File>>,
    started: Instant,
}

impl AcpLog {
    pub(super) fn open(path: Option<&Path>, started: Instant) -> AcpLog {
        let out = path
            .and_then(|p| crate::run::safe_fs::create_file(p).ok())
            .map(BufWriter::new);
        AcpLog { out, started }
    }

    pub(super) fn record(&mut self, dir: &str, body: Value) {
        let Some(out) = &mut self.out else {
            return;
        };
        let t = (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let mut line = json!({"t": t, "dir": dir});
        if let (Some(line), Value::Object(body)) = (line.as_object_mut(), body) {
            line.extend(body);
        }
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            self.out = None;
        }
    }
}
