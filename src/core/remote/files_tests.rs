use super::*;

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
        rollouts: None,
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
        fetch: &[],
        fetch_max: 10,
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

#[test]
fn the_follow_script_sends_the_signal_only_when_it_changed_and_ticks_each_round() {
    let script = follow_script(
        &RemoteRead {
            signal: Some("/h/s.json"),
            log: Some(("/h/a.log", 3)),
            signal_max: 10,
            log_max: 20,
            rollouts: None,
        },
        2,
    );
    assert!(script.contains("off=3\nwhile :; do\n"), "{script}");
    assert!(script.contains("cmp -s \"$t/sig\" \"$t/prev\""), "{script}");
    assert!(
        script.ends_with("say tick ok || exit 0\nsleep 2\ndone\n"),
        "{script}"
    );
}
