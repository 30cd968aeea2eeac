use super::*;

fn frame(kind: &str, body: &[u8], number: Option<u64>) -> Vec<u8> {
    let mut out = format!("herd-frame {kind} {}", body.len()).into_bytes();
    if let Some(n) = number {
        out.extend(format!(" {n}").bytes());
    }
    out.push(b'\n');
    out.extend_from_slice(body);
    out.push(b'\n');
    out
}

#[test]
fn frames_are_read_by_length_whatever_their_bodies_hold() {
    // A body that looks like a header, binary bytes, a banner before the first frame.
    let tricky = b"herd-frame end 0\n\x00\xff\nherd-frame signal 3\n";
    let mut out = b"Welcome to box1\nherd-frame-ish noise\n".to_vec();
    out.extend(frame("log", tricky, Some(42)));
    out.extend(frame("signal", b"{}", None));
    out.extend(frame("end", b"ok", None));
    let (frames, ended) = parse_frames(&out);
    assert!(ended);
    assert_eq!(
        frames,
        vec![
            Frame {
                kind: "log".into(),
                number: Some(42),
                body: tricky.to_vec()
            },
            Frame {
                kind: "signal".into(),
                number: None,
                body: b"{}".to_vec()
            },
        ]
    );
}

#[test]
fn output_cut_anywhere_is_never_complete_and_never_misread() {
    let mut out = frame("log", b"line one\nline two\n", Some(0));
    out.extend(frame("signal", b"{\"status\":\"done\"}", None));
    out.extend(frame("end", b"ok", None));
    let whole = parse_read(&out);
    assert!(whole.complete);
    // Up to the end frame's last byte (its closing newline is not needed).
    for cut in 0..out.len() - 1 {
        let part = parse_read(&out[..cut]);
        assert!(!part.complete, "cut at {cut}");
        if let Some((_, bytes)) = &part.log {
            assert_eq!(bytes, b"line one\nline two\n", "cut at {cut}");
        }
        if let Some(signal) = &part.signal {
            assert_eq!(
                signal,
                &Ok(b"{\"status\":\"done\"}".to_vec()),
                "cut at {cut}"
            );
        }
    }
}

#[test]
fn a_read_gives_the_signal_file_its_size_when_too_large_and_the_log_offset() {
    let mut out = frame("signal-large", b"2097152", None);
    out.extend(frame("log", b"abc", Some(7)));
    out.extend(frame("end", b"ok", None));
    assert_eq!(
        parse_read(&out),
        ReadBack {
            signal: Some(Err(2_097_152)),
            log: Some((7, b"abc".to_vec())),
            complete: true,
            ..ReadBack::default()
        }
    );
    assert_eq!(
        parse_read(b"ssh: connect to host x: Connection refused\n"),
        ReadBack::default()
    );
}

#[test]
fn prepare_reads_ready_refused_or_unfinished() {
    let mut out = frame("run-dir", b"/root/.herd/runs/ab/t1", None);
    out.extend(frame("cwd", b"/srv/repo/.herd/worktrees/t1", None));
    out.extend(frame("git-status", b" M a.txt\n?? new dir/b.txt\n", None));
    out.extend(frame("end", b"ok", None));
    assert_eq!(
        parse_prepare(&out),
        Prepared::Ready {
            run_dir: "/root/.herd/runs/ab/t1".into(),
            cwd: "/srv/repo/.herd/worktrees/t1".into(),
            git_before: Some(["a.txt".to_string(), "new dir/b.txt".to_string()].into()),
        }
    );
    let mut refused = frame("run-dir", b"/r", None);
    refused.extend(frame("worktree-error", b"not a repository", None));
    refused.extend(frame("end", b"", None));
    assert_eq!(
        parse_prepare(&refused),
        Prepared::Refused {
            problem: "not a repository".into()
        }
    );
    let cut = frame("run-dir", b"/r", None);
    assert_eq!(parse_prepare(&cut), Prepared::Unfinished);
}

#[test]
fn the_end_gives_git_facts_the_transcript_and_the_worktree() {
    let mut out = frame("git-status", b"?? made.txt\n", None);
    out.extend(frame("transcript", b"{\"type\":\"user\"}\n", None));
    out.extend(frame(
        "transcript-path",
        b"/root/.claude/projects/-w/s.jsonl",
        None,
    ));
    out.extend(frame("worktree-dirty", b" M a.txt\n", None));
    out.extend(frame("fetched-name", b"attempt_1.acp.jsonl", None));
    out.extend(frame("fetched", b"{\"jsonrpc\":\"2.0\"}\n", None));
    out.extend(frame(
        "fetched",
        b"a body without its name is not taken",
        None,
    ));
    out.extend(frame("end", b"ok", None));
    assert_eq!(
        parse_end(&out),
        EndBack {
            git_after: Some(["made.txt".to_string()].into()),
            transcript: Some((
                "/root/.claude/projects/-w/s.jsonl".into(),
                b"{\"type\":\"user\"}\n".to_vec()
            )),
            worktree: Some(WorktreeEnd::KeptDirty {
                files: vec!["a.txt".into()]
            }),
            fetched: vec![(
                "attempt_1.acp.jsonl".into(),
                b"{\"jsonrpc\":\"2.0\"}\n".to_vec()
            )],
            complete: true,
        }
    );
}

#[test]
fn a_followed_stream_cut_anywhere_gives_the_same_rounds() {
    let mut out = b"banner\n".to_vec();
    out.extend(frame("signal", b"{\"status\":\"done\"}", None));
    out.extend(frame("log", b"a\nb\n", Some(0)));
    out.extend(frame("tick", b"ok", None));
    out.extend(frame("log", b"c\n", Some(4)));
    out.extend(frame("tick", b"ok", None));
    let want = vec![
        ReadBack {
            signal: Some(Ok(b"{\"status\":\"done\"}".to_vec())),
            log: Some((0, b"a\nb\n".to_vec())),
            complete: true,
            ..ReadBack::default()
        },
        ReadBack {
            signal: None,
            log: Some((4, b"c\n".to_vec())),
            complete: true,
            ..ReadBack::default()
        },
    ];
    for cut in 0..out.len() {
        let mut reader = FollowReader::default();
        let mut rounds = reader.feed(&out[..cut]);
        rounds.extend(reader.feed(&out[cut..]));
        assert_eq!(rounds, want, "cut at {cut}");
    }
    let mut reader = FollowReader::default();
    let rounds: Vec<ReadBack> = out.iter().flat_map(|b| reader.feed(&[*b])).collect();
    assert_eq!(rounds, want, "byte by byte");
}

#[test]
fn the_rollout_of_the_tasks_folder_is_chosen_only_when_it_is_the_one() {
    let meta =
        |cwd: &str| format!(r#"{{"type":"session_meta","payload":{{"id":"s","cwd":"{cwd}"}}}}"#);
    let mut out = frame("cwd-real", b"/real/w", None);
    out.extend(frame(
        "rollout",
        format!("/h/a.jsonl\n{}", meta("/other")).as_bytes(),
        None,
    ));
    out.extend(frame(
        "rollout",
        format!("/h/b.jsonl\n{}", meta("/real/w")).as_bytes(),
        None,
    ));
    out.extend(frame("rollout", b"/h/c.jsonl\nnot json", None));
    out.extend(frame("end", b"ok", None));
    let back = parse_read(&out);
    assert_eq!(back.cwd_real.as_deref(), Some("/real/w"));
    assert_eq!(back.rollouts.len(), 3);
    assert_eq!(
        choose_rollout(&back.rollouts, &["/w", "/real/w"]),
        Some("/h/b.jsonl".to_string())
    );
    assert_eq!(
        choose_rollout(&back.rollouts, &["/w"]),
        None,
        "none names it"
    );
    let mut two = back.rollouts.clone();
    two.push(("/h/d.jsonl".into(), meta("/real/w")));
    assert_eq!(
        choose_rollout(&two, &["/real/w"]),
        None,
        "another session's file is never taken"
    );
}
