use super::*;
use serde_json::json;

fn wait(task: &str, rule: &str, since_ms: u64) -> WaitFact {
    WaitFact {
        task_id: task.into(),
        attempt: 1,
        rule: rule.into(),
        since: Duration::from_millis(since_ms),
        request: Some("Bash(npm test)".into()),
        decision: Some("ask"),
        reason: Some("no rule allows Bash(npm test)".into()),
        prompt: "Do you want to proceed? 1. Yes 2. No".into(),
        prompt_id: Some(format!("{task}/1/1")),
        answers: vec!["approve", "deny"],
    }
}

fn end(task: &str, status: TaskStatus) -> EndFact {
    EndFact {
        task_id: task.into(),
        attempt: 2,
        status,
        failure: (status == TaskStatus::Failed).then_some(FailureType::Process),
        evidence: (status == TaskStatus::Failed).then(|| "exit code 3".to_string()),
        why: None,
        questions: if status == TaskStatus::NeedsInput {
            vec!["Which database?".into(), "Drop the old table?".into()]
        } else {
            Vec::new()
        },
        changes: None,
    }
}

fn counts() -> BatchEnd {
    BatchEnd {
        counts: BTreeMap::from([("completed".to_string(), 2), ("failed".to_string(), 1)]),
        exit_code: 1,
    }
}

/// The kind and task of each event, for the table.
fn kinds(events: &[NotifyEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            NotifyEvent::PromptWaiting { task_id, rule, .. } => format!("wait {task_id} {rule}"),
            NotifyEvent::NeedsInput { task_id, .. } => format!("input {task_id}"),
            NotifyEvent::TaskFailed { task_id, .. } => format!("failed {task_id}"),
            NotifyEvent::BatchEnded { .. } => "end".to_string(),
        })
        .collect()
}

/// One turn of the table: what, the waits, the ends, the batch's end, what is told.
type Step = (
    &'static str,
    Vec<WaitFact>,
    Vec<EndFact>,
    Option<BatchEnd>,
    Vec<&'static str>,
);

#[test]
fn each_wait_is_told_once_and_a_wait_that_comes_back_is_new() {
    // Turn by turn: the waits on screen, the ends and the batch's end; what is told.
    let a = wait("a", "press_1", 100);
    let a_again = wait("a", "press_1", 900);
    let b = wait("b", "press_1", 100);
    let b_other_rule = wait("b", "press_p", 100);
    let table: Vec<Step> = vec![
        ("nothing waits", vec![], vec![], None, vec![]),
        (
            "a prompt appears",
            vec![a.clone()],
            vec![],
            None,
            vec!["wait a press_1"],
        ),
        ("it stays", vec![a.clone()], vec![], None, vec![]),
        ("still there", vec![a.clone()], vec![], None, vec![]),
        (
            "a second task waits too",
            vec![a.clone(), b.clone()],
            vec![],
            None,
            vec!["wait b press_1"],
        ),
        ("a is answered", vec![b.clone()], vec![], None, vec![]),
        (
            "a's prompt comes back: a new wait",
            vec![a_again.clone(), b.clone()],
            vec![],
            None,
            vec!["wait a press_1"],
        ),
        (
            "another rule of the same task is another wait",
            vec![a_again.clone(), b.clone(), b_other_rule.clone()],
            vec![],
            None,
            vec!["wait b press_p"],
        ),
        (
            "ends: completed and retryable are not told",
            vec![],
            vec![
                end("c", TaskStatus::Completed),
                end("d", TaskStatus::Retryable),
                end("e", TaskStatus::Failed),
                end("f", TaskStatus::NeedsInput),
                end("g", TaskStatus::Cancelled),
            ],
            None,
            vec!["failed e", "input f"],
        ),
        (
            "the batch ends",
            vec![],
            vec![],
            Some(counts()),
            vec!["end"],
        ),
        ("it stays ended", vec![], vec![], Some(counts()), vec![]),
        ("a retry starts work again", vec![], vec![], None, vec![]),
        (
            "and it ends again",
            vec![],
            vec![],
            Some(counts()),
            vec!["end"],
        ),
    ];
    let mut notifications = Notifications::default();
    for (what, waits, ends, batch_end, told) in table {
        let events = notifications.observe(Turn {
            waits: &waits,
            ends: &ends,
            batch_end,
        });
        assert_eq!(kinds(&events), told, "{what}");
    }
}

#[test]
fn a_new_attempt_of_the_same_task_is_a_new_wait() {
    let mut notifications = Notifications::default();
    let first = wait("a", "press_1", 100);
    let second = WaitFact {
        attempt: 2,
        ..first.clone()
    };
    let told = |n: &mut Notifications, w: &WaitFact| {
        n.observe(Turn {
            waits: std::slice::from_ref(w),
            ..Turn::default()
        })
        .len()
    };
    assert_eq!(told(&mut notifications, &first), 1);
    assert_eq!(told(&mut notifications, &second), 1);
    assert_eq!(told(&mut notifications, &second), 0);
}

#[test]
fn the_payloads_carry_the_request_the_reason_the_verdict_and_the_counts() {
    let mut notifications = Notifications::default();
    let events = notifications.observe(Turn {
        waits: &[wait("fix-042", "press_1", 5)],
        ends: &[
            end("e", TaskStatus::Failed),
            end("f", TaskStatus::NeedsInput),
        ],
        batch_end: Some(counts()),
    });
    let payloads: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(
        payloads,
        vec![
            json!({
                "event": "prompt_waiting",
                "task_id": "fix-042",
                "attempt": 1,
                "waits_for": "permission",
                "rule": "press_1",
                "request": "Bash(npm test)",
                "decision": "ask",
                "reason": "no rule allows Bash(npm test)",
                "prompt": "Do you want to proceed? 1. Yes 2. No",
                "prompt_id": "fix-042/1/1",
                "answers": ["approve", "deny"],
                "message": "herd: fix-042 waits for you: Bash(npm test) (no rule allows Bash(npm test))",
            }),
            json!({
                "event": "task_failed",
                "task_id": "e",
                "attempt": 2,
                "failure_type": "failed_process",
                "evidence": "exit code 3",
                "why": "exit code 3",
                "message": "herd: e failed (failed_process): exit code 3",
            }),
            json!({
                "event": "needs_input",
                "task_id": "f",
                "attempt": 2,
                "waits_for": "answers",
                "questions": ["Which database?", "Drop the old table?"],
                "message": "herd: f needs your input: Which database? (+1 more)",
            }),
            json!({
                "event": "batch_ended",
                "counts": {"completed": 2, "failed": 1},
                "exit_code": 1,
                "message": "herd: the batch ended: 2 completed, 1 failed",
            }),
        ]
    );
}

#[test]
fn a_prompt_herd_could_not_read_still_says_what_waits() {
    let unread = WaitFact {
        request: None,
        decision: None,
        reason: None,
        ..wait("a", "press_1", 1)
    };
    let events = Notifications::default().observe(Turn {
        waits: &[unread],
        ..Turn::default()
    });
    let payload = serde_json::to_value(&events[0]).expect("serializes");
    assert_eq!(payload["request"], Value::Null);
    assert_eq!(payload["message"], "herd: a waits for you: a prompt");
}

#[test]
fn the_notify_value_must_be_an_argv_of_strings() {
    let table = [
        (json!(["sh", "-c", "cat >> /tmp/events"]), None),
        (json!(["notify-send"]), None),
        (json!(null), None),
        (json!([]), Some("\"notify\" is empty")),
        (json!(["", "x"]), Some("must start with the program")),
        (json!(["sh", 3]), Some("must list strings only")),
        (
            json!("curl -d @- ntfy.sh/x"),
            Some("must be a command as a list"),
        ),
        (json!({"cmd": "x"}), Some("must be a command as a list")),
    ];
    for (value, wanted) in table {
        let problem = command_problem(&value);
        match wanted {
            None => assert_eq!(problem, None, "{value}"),
            Some(text) => assert!(
                problem.as_deref().is_some_and(|p| p.contains(text)),
                "{value}: {problem:?}"
            ),
        }
    }
    assert_eq!(
        command(Some(&json!(["sh", "-c", "x"]))),
        Some(vec!["sh".to_string(), "-c".into(), "x".into()])
    );
    assert_eq!(command(Some(&json!(null))), None);
    assert_eq!(command(Some(&json!([1]))), None);
    assert_eq!(command(None), None);
}

#[test]
fn a_failure_is_told_by_the_event_that_decided_it() {
    let mut notifications = Notifications::default();
    let why =
        "waited 30 min for an answer to Bash(touch x); nobody answered (timeout after 1800 s)";
    let ends = [EndFact {
        failure: Some(FailureType::Timeout),
        evidence: Some("timeout after 1800 s".into()),
        why: Some(why.into()),
        ..end("t", TaskStatus::Failed)
    }];
    let events = notifications.observe(Turn {
        ends: &ends,
        ..Turn::default()
    });
    let payload = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(payload["evidence"], "timeout after 1800 s");
    assert_eq!(payload["why"], why);
    assert_eq!(
        payload["message"],
        format!("herd: t failed (failed_timeout): {why}")
    );
}

#[test]
fn an_ended_task_tells_what_it_changed_when_herd_recorded_it() {
    let mut notifications = Notifications::default();
    let ends = [
        EndFact {
            changes: Some("3 files +120 −14".into()),
            ..end("t", TaskStatus::Failed)
        },
        end("u", TaskStatus::Failed),
    ];
    let events = notifications.observe(Turn {
        ends: &ends,
        ..Turn::default()
    });
    let payloads: Vec<serde_json::Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(payloads[0]["changes"], "3 files +120 −14");
    assert!(
        payloads[1].get("changes").is_none(),
        "left out when unknown"
    );
}

#[test]
fn a_wait_is_new_until_it_is_told() {
    let mut notifications = Notifications::default();
    let first = wait("a", "press_1", 100);
    assert!(notifications.is_new(&first));
    notifications.observe(Turn {
        waits: std::slice::from_ref(&first),
        ..Turn::default()
    });
    assert!(!notifications.is_new(&first));
    assert!(notifications.is_new(&WaitFact {
        attempt: 2,
        ..first.clone()
    }));
}
