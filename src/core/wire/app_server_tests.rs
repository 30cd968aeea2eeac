use super::*;

#[test]
fn approval_requests_are_read_exactly() {
    let table = [
        (
            json!({"id": 0, "method": COMMAND_APPROVAL, "params": {"threadId": "t", "turnId": "u",
                "itemId": "call_1", "startedAtMs": 1, "command": "touch x", "cwd": "/w",
                "reason": "Create the marker file"}}),
            ServerMessage::CommandApproval {
                id: json!(0),
                item_id: "call_1".into(),
                request: Request {
                    workdir: Some("/w".into()),
                    ..Request::new(RequestKind::Shell {
                        command: "touch x".into(),
                    })
                },
                reason: Some("Create the marker file".into()),
            },
        ),
        // No command to read: never approved by herd.
        (
            json!({"id": "a", "method": COMMAND_APPROVAL, "params": {"itemId": "c"}}),
            ServerMessage::CommandApproval {
                id: json!("a"),
                item_id: "c".into(),
                request: Request::unread("a command's approval that names no command"),
                reason: None,
            },
        ),
        (
            json!({"id": 3, "method": FILE_CHANGE_APPROVAL, "params": {"itemId": "call_2",
                "threadId": "t", "turnId": "u", "startedAtMs": 1}}),
            ServerMessage::FileChangeApproval {
                id: json!(3),
                item_id: "call_2".into(),
            },
        ),
        (
            json!({"id": 4, "method": "item/permissions/requestApproval", "params": {}}),
            ServerMessage::OtherQuestion {
                id: json!(4),
                method: "item/permissions/requestApproval".into(),
            },
        ),
        // Requests the TUI's client machinery answers are not questions for a person.
        (
            json!({"id": 5, "method": "account/chatgptAuthTokens/refresh", "params": {}}),
            ServerMessage::Other,
        ),
        (
            json!({"id": 6, "method": "item/tool/call", "params": {}}),
            ServerMessage::Other,
        ),
        (
            json!({"method": "serverRequest/resolved", "params": {"requestId": 3, "threadId": "t"}}),
            ServerMessage::Resolved { id: json!(3) },
        ),
        (
            json!({"method": "item/agentMessage/delta", "params": {"delta": "hi"}}),
            ServerMessage::Other,
        ),
        // herd's own responses are not the server's requests.
        (json!({"id": 1, "result": {}}), ServerMessage::Other),
    ];
    for (message, expected) in table {
        assert_eq!(read(&message), expected, "{message}");
    }
}

#[test]
fn a_command_approval_that_asks_for_more_than_its_command_is_unread() {
    let more = [
        json!({"itemId": "c", "command": "curl x.io", "networkApprovalContext": {"host": "x.io", "protocol": "https"}}),
        json!({"itemId": "c", "command": "ls", "kind": "writeStdin"}),
        json!({"itemId": "c", "command": "ls", "kind": "humanCommand"}),
        json!({"itemId": "c", "command": "ls", "additionalPermissions": {"fileSystem": {"write": ["/"]}}}),
    ];
    for params in more {
        let message = json!({"id": 9, "method": COMMAND_APPROVAL, "params": params});
        let ServerMessage::CommandApproval { request, .. } = read(&message) else {
            panic!("{message}");
        };
        assert!(!request.is_read(), "{message} read as {request}");
    }
}

#[test]
fn a_file_change_names_each_file_as_an_edit_or_a_write() {
    let message = json!({"method": "item/started", "params": {"threadId": "t", "turnId": "u",
        "startedAtMs": 1, "item": {"type": "fileChange", "id": "call_2", "status": "inProgress",
        "changes": [
            {"path": "/w/new.txt", "kind": {"type": "add"}, "diff": "+hi\n"},
            {"path": "/w/a.rs", "kind": {"type": "update", "move_path": null}, "diff": "@@"},
            {"path": "/w/b.rs", "kind": {"type": "update", "move_path": "/w/c.rs"}, "diff": ""},
            {"path": "/w/old.rs", "kind": {"type": "delete"}, "diff": ""}]}}});
    let ServerMessage::FileChangeStarted { item_id, changes } = read(&message) else {
        panic!("not read as a file change: {message}");
    };
    assert_eq!(item_id, "call_2");
    let kinds: Vec<RequestKind> = changes.into_iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::Write {
                path: "/w/new.txt".into()
            },
            RequestKind::Edit {
                path: "/w/a.rs".into()
            },
            RequestKind::Edit {
                path: "/w/c.rs".into()
            },
            RequestKind::Edit {
                path: "/w/old.rs".into()
            },
        ]
    );
    let command = json!({"method": "item/started", "params": {"item": {"type":
        "commandExecution", "id": "c", "command": "ls"}}});
    assert_eq!(read(&command), ServerMessage::Other);
}

#[test]
fn error_classes_map_to_failures() {
    let table = [
        (json!("unauthorized"), Some(FailureType::Auth)),
        (json!("usageLimitExceeded"), Some(FailureType::Quota)),
        (json!("rateLimitExceeded"), Some(FailureType::Quota)),
        (json!("serverOverloaded"), Some(FailureType::Process)),
        (json!("internalServerError"), Some(FailureType::Process)),
        (json!("contextWindowExceeded"), None),
        (json!("other"), None),
        (
            json!({"responseTooManyFailedAttempts": {"httpStatusCode": 401}}),
            Some(FailureType::Auth),
        ),
        (
            json!({"httpConnectionFailed": {"httpStatusCode": 429}}),
            Some(FailureType::Quota),
        ),
        (
            json!({"responseStreamConnectionFailed": {"httpStatusCode": 503}}),
            Some(FailureType::Process),
        ),
        (
            json!({"responseStreamDisconnected": {"httpStatusCode": null}}),
            None,
        ),
        (json!(null), None),
    ];
    for (info, failure) in table {
        assert_eq!(failure_of(&info), failure, "{info}");
    }
}

#[test]
fn only_final_errors_fail_the_turn() {
    let error = |will_retry: bool| {
        json!({"method": "error", "params": {"threadId": "t", "turnId": "u", "willRetry":
            will_retry, "error": {"message": "unexpected status 401 Unauthorized",
            "codexErrorInfo": "unauthorized"}}})
    };
    assert_eq!(read(&error(true)), ServerMessage::Other);
    assert_eq!(
        read(&error(false)),
        ServerMessage::Failed {
            class: Some(FailureType::Auth),
            evidence: "app server error unauthorized: unexpected status 401 Unauthorized".into(),
        }
    );
    let turn = |status: &str| {
        json!({"method": "turn/completed", "params": {"threadId": "t", "turn": {"id": "u",
            "items": [], "status": status, "error": {"message": "Quota exceeded",
            "codexErrorInfo": {"responseTooManyFailedAttempts": {"httpStatusCode": 429}}}}}})
    };
    assert_eq!(read(&turn("completed")), ServerMessage::Other);
    assert_eq!(
        read(&turn("failed")),
        ServerMessage::Failed {
            class: Some(FailureType::Quota),
            evidence: "app server error responseTooManyFailedAttempts: Quota exceeded".into(),
        }
    );
}

#[test]
fn answers_are_in_the_servers_words() {
    assert_eq!(
        answer(&json!(7), Answer::Accept),
        json!({"id": 7, "result": {"decision": "accept"}})
    );
    assert_eq!(
        answer(&json!("x"), Answer::Decline),
        json!({"id": "x", "result": {"decision": "decline"}})
    );
}

#[test]
fn herd_subscribes_to_every_thread_once() {
    let mut client = Subscriber::new();
    let first = client.start("1.0");
    assert_eq!(first["method"], "initialize");
    assert_eq!(first["params"]["clientInfo"]["name"], "herd");
    assert!(!client.initialized());
    // A thread started before the answer to initialize is found by the list.
    let sent = client.on_message(&json!({"id": first["id"], "result": {"userAgent": "x"}}));
    assert!(client.initialized());
    assert_eq!(sent[0], json!({"method": "initialized"}));
    assert_eq!(sent[1]["method"], "thread/loaded/list");
    let list = client.on_message(&json!({"id": sent[1]["id"], "result": {"data": ["t1"]}}));
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["method"], "thread/resume");
    assert_eq!(list[0]["params"]["threadId"], "t1");
    // Its own `thread/started`, seen too, does not subscribe twice; a new thread does.
    let started = |id: &str| json!({"method": "thread/started", "params": {"thread": {"id": id}}});
    assert!(client.on_message(&started("t1")).is_empty());
    let again = client.on_message(&started("t2"));
    assert_eq!(again.len(), 1);
    assert_eq!(again[0]["params"]["threadId"], "t2");
    // Every request of herd's has an id of its own.
    let ids = [&first, &sent[1], &list[0], &again[0]].map(|m| m["id"].as_u64().unwrap());
    let distinct: std::collections::BTreeSet<u64> = ids.into_iter().collect();
    assert_eq!(distinct.len(), 4);
    // Other messages need nothing from herd.
    assert!(
        client
            .on_message(&json!({"method": "turn/started", "params": {}}))
            .is_empty()
    );
}

#[test]
fn a_thread_not_resumable_yet_is_tried_again_on_its_next_notification() {
    let mut client = Subscriber::new();
    let first = client.start("1.0");
    client.on_message(&json!({"id": first["id"], "result": {}}));
    let started = json!({"method": "thread/started", "params": {"thread": {"id": "t1"}}});
    let resume = client.on_message(&started);
    assert_eq!(resume.len(), 1);
    let status = json!({"method": "thread/status/changed", "params": {"threadId": "t1",
        "status": {"type": "active"}}});
    // While the first try waits for its answer, nothing more is sent.
    assert!(client.on_message(&status).is_empty());
    let refused = json!({"id": resume[0]["id"], "error": {"code": -32600,
        "message": "no rollout found for thread id t1"}});
    assert!(client.on_message(&refused).is_empty());
    let again = client.on_message(&status);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0]["method"], "thread/resume");
    assert_ne!(again[0]["id"], resume[0]["id"]);
    // Subscribed: no more tries.
    client.on_message(&json!({"id": again[0]["id"], "result": {"thread": {"id": "t1"}}}));
    assert!(client.on_message(&status).is_empty());
    // An ephemeral thread (Codex naming the thread) is never resumed.
    let side = json!({"method": "thread/started", "params": {"thread": {"id": "t2",
        "ephemeral": true}}});
    assert!(client.on_message(&side).is_empty());
    let side_status = json!({"method": "thread/status/changed", "params": {"threadId": "t2"}});
    assert!(client.on_message(&side_status).is_empty());
}
