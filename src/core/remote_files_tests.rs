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
            complete: true
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
            complete: true,
        }
    );
}

#[test]
fn scripts_quote_what_they_are_given_and_hold_no_unquoted_input() {
    let clear = vec!["attempt_1.signal.json".to_string()];
    let script = prepare_script(&RemotePrepare {
        cwd: "/srv/it's here",
        run_dir: ".herd/runs/ab/t1",
        clear: &clear,
        stamp: "attempt_1.start",
        worktree: Some("t1"),
        host: "box$1",
    });
    assert!(script.contains(r"cwd='/srv/it'\''s here'"), "{script}");
    assert!(
        script.contains("rm -f \"$run\"/attempt_1.signal.json"),
        "{script}"
    );
    assert!(
        script.contains("worktree add -B herd/t1 \"$wt\""),
        "{script}"
    );
    assert!(script.contains("on host box?1"), "{script}");
    assert!(script.ends_with("say end ok\n"));

    let read = read_script(&RemoteRead {
        signal: Some("/h/.herd/runs/ab/t1/attempt_1.signal.json"),
        log: Some(("/h/x y.log", 12)),
        signal_max: 1024,
        log_max: 4096,
    });
    assert!(read.contains("l='/h/x y.log'\noff=12\n"), "{read}");
    assert!(read.contains("-gt 1024"), "{read}");
    assert!(read.contains("head -c 4096"), "{read}");

    let end = end_script(&RemoteEnd {
        cwd: "/w",
        git_status: true,
        transcript: Some(RemoteTranscript {
            config_dir: None,
            project: "-w".into(),
            session: Some("abc-1; rm -rf /"),
            max_bytes: 100,
        }),
        finish_worktree: false,
        run_dir: ".herd/runs/ab/t1",
        remove: &clear,
        stamp: "attempt_1.start",
    });
    assert!(
        !end.contains("rm -rf /"),
        "an odd session id is not used: {end}"
    );
    assert!(
        end.contains("sort -u"),
        "without an id, the one new transcript: {end}"
    );
    assert!(end.contains("rm -f \"$run\"/attempt_1.start"), "{end}");
    assert_eq!(run_dir_under_home("ab", "t1"), ".herd/runs/ab/t1");
}
