//! The completion signal file an agent writes at `$HERD_SIGNAL_FILE`, written atomically so herd
//! never reads half a file.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

use super::structured::{Signal, status_name};

/// The file's content: the step's `text` as given, else the JSON object (`session_id` when the
/// step names none).
pub(super) fn content(signal: &Signal, session_id: &str) -> String {
    if let Some(text) = &signal.text {
        return text.clone();
    }
    let mut fields = Map::new();
    if let Some(status) = signal.status {
        fields.insert("status".into(), json!(status_name(status)));
    }
    if let Some(result) = &signal.result {
        fields.insert("result".into(), json!(result));
    }
    if let Some(questions) = &signal.questions {
        fields.insert("questions".into(), json!(questions));
    }
    if let Some(error) = &signal.error {
        fields.insert("error".into(), json!(error));
    }
    let session_id = signal.session_id.as_deref().unwrap_or(session_id);
    if !session_id.is_empty() {
        fields.insert("session_id".into(), json!(session_id));
    }
    Value::Object(fields).to_string()
}

/// Writes `content` to a temporary file beside `path`, then renames it over `path`.
pub(super) fn write_atomically(path: &Path, content: &str) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temporary).and_then(|mut file| {
        file.write_all(content.as_bytes())?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
    if renamed.is_err() {
        // The temporary file is useless now; the original error is what matters.
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::super::structured::SignalStatus;
    use super::*;

    fn signal(status: SignalStatus) -> Signal {
        Signal {
            status: Some(status),
            result: None,
            questions: None,
            error: None,
            session_id: None,
            text: None,
        }
    }

    #[test]
    fn content_has_the_status_fields_and_the_session() {
        let done = Signal {
            result: Some("fixed \"it\"\nall".into()),
            ..signal(SignalStatus::Done)
        };
        let parsed: Value = serde_json::from_str(&content(&done, "sim-t1-1")).expect("json");
        assert_eq!(
            parsed,
            json!({"status": "done", "result": "fixed \"it\"\nall", "session_id": "sim-t1-1"})
        );
        let questions = Signal {
            questions: Some(vec!["A?".into(), "B?".into()]),
            session_id: Some("other".into()),
            ..signal(SignalStatus::Questions)
        };
        assert_eq!(
            content(&questions, "sim-t1-1"),
            r#"{"status":"questions","questions":["A?","B?"],"session_id":"other"}"#
        );
        let error = Signal {
            error: Some("boom".into()),
            session_id: Some(String::new()),
            ..signal(SignalStatus::Error)
        };
        assert_eq!(
            content(&error, "sim-t1-1"),
            r#"{"status":"error","error":"boom"}"#
        );
    }

    #[test]
    fn text_is_written_as_given() {
        let broken = Signal {
            text: Some("not json {".into()),
            status: None,
            ..signal(SignalStatus::Done)
        };
        assert_eq!(content(&broken, "s"), "not json {");
    }

    #[test]
    fn writing_replaces_the_file_and_leaves_no_temporary_file() {
        let folder = tempfile::tempdir().expect("temp dir");
        let path = folder.path().join("signal.json");
        std::fs::write(&path, "old").expect("write");
        write_atomically(&path, "{\"status\":\"done\"}").expect("written");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\"status\":\"done\"}"
        );
        let names: Vec<_> = std::fs::read_dir(folder.path())
            .expect("list")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("signal.json")]);
        let missing = folder.path().join("no/such/dir/signal.json");
        assert!(write_atomically(&missing, "x").is_err());
    }
}
