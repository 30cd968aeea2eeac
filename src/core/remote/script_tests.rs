use super::*;

#[test]
fn quoting_keeps_every_byte() {
    let cases = [
        ("plain", "plain"),
        ("/a/b-c_d.e", "/a/b-c_d.e"),
        ("", "''"),
        ("two words", "'two words'"),
        ("it's", r"'it'\''s'"),
        ("$HOME `x` \"q\" \\", r#"'$HOME `x` "q" \'"#),
        ("line\nbreak", "'line\nbreak'"),
    ];
    for (text, want) in cases {
        assert_eq!(quote(text), want, "{text:?}");
    }
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_launch_script_sets_cookie_env_and_folder_then_reports_the_exit() {
    let argv = vec!["herd".to_string(), "sim".into(), "it's ok".into()];
    let env = env(&[
        ("API_KEY", "s3cr'et"),
        ("bad name", "x"),
        ("HERD_TASK_ID", "t1"),
    ]);
    let script = launch_script(&RemoteLaunch {
        argv: &argv,
        cwd: "/srv/my repo",
        env: &env,
        cookie: "abc.1.ff.t1",
        host: "box1",
    });
    assert_eq!(
        script,
        "rm -f \"$0\"\n\
         export HERD_ATTEMPT_ID=abc.1.ff.t1\n\
         export API_KEY='s3cr'\\''et'\n\
         export HERD_TASK_ID=t1\n\
         cd '/srv/my repo' || { echo \"herd: cannot enter /srv/my repo on host box1\" >&2; exit 126; }\n\
         herd sim 'it'\\''s ok'\n\
         code=$?\n\
         printf '\\033]777;herd-exit;%d\\007' \"$code\"\n\
         exit \"$code\"\n"
    );
    assert_eq!(
        upload_command("abc.1.ff.t1"),
        "umask 077 && mkdir -p \"${HOME:-/tmp}/.herd/run\" && cat > \"${HOME:-/tmp}/.herd/run/abc.1.ff.t1.sh\""
    );
    assert_eq!(
        run_command("abc.1.ff.t1"),
        "exec sh \"${HOME:-/tmp}/.herd/run/abc.1.ff.t1.sh\""
    );
}

#[test]
fn the_trailer_is_found_whole_or_split_at_any_byte() {
    let stream = b"output\r\nTASK_COMPLETE:t\r\n\x1b[0m\x1b]777;herd-exit;3\x07";
    for cut in 0..stream.len() {
        let mut carry = Vec::new();
        let first = scan_trailer(&mut carry, &stream[..cut]);
        let second = scan_trailer(&mut carry, &stream[cut..]);
        assert_eq!(first.or(second), Some(3), "cut at {cut}");
        assert!(carry.len() <= TRAILER_MAX, "cut at {cut}: {carry:?}");
    }
    let mut carry = Vec::new();
    assert_eq!(
        scan_trailer(&mut carry, b"\x1b]777;herd-exit;x\x07 plain"),
        None
    );
    assert_eq!(
        scan_trailer(&mut carry, b"\x1b]777;herd-exit;0\x07"),
        Some(0)
    );
}

#[test]
fn sweep_output_is_read_with_the_strongest_signal() {
    let out = "ended 10 TERM tag.1.n.t1 sleep 100 \n\
               ended 11 TERM tag.1.n.t1 sh -c trap '' TERM\n\
               ended 11 KILL tag.1.n.t1 \n\
               garbage\n\
               sweep done\n";
    let ended = parse_sweep(out).unwrap();
    assert_eq!(
        ended,
        [
            RemoteEnded {
                pid: 10,
                signal: "TERM",
                cookie: "tag.1.n.t1".into(),
                command: "sleep 100".into()
            },
            RemoteEnded {
                pid: 11,
                signal: "KILL",
                cookie: "tag.1.n.t1".into(),
                command: "sh -c trap '' TERM".into()
            },
        ]
    );
    assert_eq!(parse_sweep("ended 1 TERM c x\n"), None);
    assert_eq!(parse_sweep("sweep done\n"), Some(vec![]));
    let script = sweep_script(SweepScope::File("0123abcd"), 2);
    assert!(
        script.contains("grep -E '^HERD_ATTEMPT_ID=0123abcd[.]'"),
        "{script}"
    );
    let script = sweep_script(SweepScope::Attempt("0123abcd.1.ff.t-1"), 2);
    assert!(
        script.contains("grep -x -F HERD_ATTEMPT_ID=0123abcd.1.ff.t-1"),
        "{script}"
    );
}

#[test]
fn probe_facts_are_read() {
    let facts = parse_probe(
        "herd-probe=1\r\nprogram.claude=/usr/bin/claude\nprogram.codex=\nnode=v20.11.1\nuname=Linux x86_64\n",
    );
    assert!(facts.ran);
    assert_eq!(facts.programs["claude"], "/usr/bin/claude");
    assert_eq!(facts.programs["codex"], "");
    assert_eq!(facts.node.as_deref(), Some("v20.11.1"));
    assert_eq!(facts.system.as_deref(), Some("Linux x86_64"));
    assert!(!parse_probe("").ran);
    assert!(probe_script(&["claude"]).contains("command -v claude"));
}

#[test]
fn the_launcher_end_tells_the_host_from_the_agent() {
    let upload = format!(
        "ssh: connect to host 127.0.0.1 port 1: Connection refused\n{UPLOAD_FAILED} (exit 255)\n"
    );
    let cases = [
        // (exit, trailer, ended by herd, log) -> end
        (Some(255), None, false, upload.as_str(), "unreachable"),
        (Some(0), Some(0), false, "", "agent"),
        (Some(255), Some(255), false, "", "agent"),
        (Some(3), Some(3), false, "", "agent"),
        (None, None, true, "", "agent"),
        (
            Some(255),
            None,
            false,
            "Timeout, server not responding\n",
            "lost",
        ),
        (Some(255), None, false, "", "lost"),
        (Some(1), None, false, "", "agent"),
    ];
    for (exit, trailer, by_herd, log, want) in cases {
        let got = match launcher_end(exit, trailer, by_herd, log) {
            LauncherEnd::Agent => "agent",
            LauncherEnd::Unreachable { reason } => {
                assert!(reason.contains("Connection refused"), "{reason}");
                "unreachable"
            }
            LauncherEnd::Lost { .. } => "lost",
        };
        assert_eq!(got, want, "{exit:?} {trailer:?} {by_herd} {log:?}");
    }
}
