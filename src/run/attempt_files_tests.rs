use super::*;
use std::sync::{Arc, Mutex};

fn collect() -> (
    Arc<Mutex<Vec<FilesReport>>>,
    impl Fn(FilesReport) -> bool + Send + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (seen, move |r| {
        sink.lock().unwrap().push(r);
        true
    })
}

fn wait_for(seen: &Mutex<Vec<FilesReport>>, n: usize) -> Vec<FilesReport> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if seen.lock().unwrap().len() >= n {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    seen.lock().unwrap().clone()
}

#[test]
fn only_changes_are_handed_over_and_the_last_read_hands_over_whatever_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let signal = dir.path().join("s.json");
    let log = dir.path().join("a.log");
    let tail = AgentLogTail::new(
        crate::core::profile::AgentLogKind::ClaudeDebug,
        Some(log.clone()),
        &Default::default(),
        dir.path(),
        std::time::SystemTime::now(),
    );
    let (seen, post) = collect();
    let source = FileSource::Local {
        signal: Some(signal.clone()),
        log: Some(tail),
    };
    let watch = FileWatch::start("t".into(), source, Duration::from_millis(20), post).unwrap();
    std::fs::write(&signal, "{half").unwrap();
    std::fs::write(&log, "one\n").unwrap();
    let got = wait_for(&seen, 2);
    assert!(
        got.contains(&FilesReport::Signal(SignalText::Text("{half".into()))),
        "{got:?}"
    );
    assert!(
        got.contains(&FilesReport::AgentLog(b"one\n".to_vec())),
        "{got:?}"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "nothing changed, nothing handed over"
    );
    assert!(watch.ask_last());
    let got = wait_for(&seen, 3);
    assert_eq!(
        got[2],
        FilesReport::Last {
            signal: Some(SignalText::Text("{half".into())),
            log: Vec::new(),
            trouble: None
        },
        "the last read hands over the unchanged text again"
    );
    std::fs::write(&signal, vec![b' '; SIGNAL_MAX_BYTES as usize + 1]).unwrap();
    let (seen, post) = collect();
    let source = FileSource::Local {
        signal: Some(signal),
        log: None,
    };
    let watch = FileWatch::start("t".into(), source, Duration::from_secs(60), post).unwrap();
    assert!(watch.ask_last());
    assert_eq!(
        wait_for(&seen, 1)[0],
        FilesReport::Last {
            signal: Some(SignalText::TooLarge(SIGNAL_MAX_BYTES + 1)),
            log: Vec::new(),
            trouble: None
        }
    );
}
