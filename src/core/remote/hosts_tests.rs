use super::*;

const TEXT: &str = r#"
[profiles.x]
command = ["x"]

[hosts.box1]
ssh = "dev@box1"
port = 2222
identity = "/keys/id"
ssh_options = ["StrictHostKeyChecking=accept-new"]
max_agents = 3
env = { ANTHROPIC_API_KEY = "sk-secret" }
workdir = "/srv/work"
groups = ["fleet"]

[hosts.box2]
ssh = "box2"
groups = ["fleet"]

[hosts.ctr]
exec = ["docker", "exec", "-i", "{tty}", "agent-box"]

[hosts.pod]
exec = ["kubectl", "exec", "-i", "{tty}", "agents-0", "-n", "ci", "-c", "agent", "--"]
"#;

#[test]
fn parses_hosts_beside_profiles() {
    let set = HostSet::parse(TEXT).unwrap();
    let box1 = set.get("box1").unwrap();
    assert_eq!(
        box1.launcher,
        Launcher::Ssh(SshTarget {
            destination: "dev@box1".into(),
            port: Some(2222),
            identity: Some("/keys/id".into()),
            options: vec!["StrictHostKeyChecking=accept-new".into()],
            config: None,
        })
    );
    assert_eq!(box1.max_agents, Some(3));
    assert_eq!(box1.workdir.as_deref(), Some("/srv/work"));
    assert_eq!(box1.out_of_rotation_sec, DEFAULT_OUT_OF_ROTATION_SEC);
    assert_eq!(set.get("ctr").unwrap().program(), "docker");
    assert_eq!(set.get("pod").unwrap().program(), "kubectl");
    assert_eq!(set.group_names().into_iter().collect::<Vec<_>>(), ["fleet"]);
    match set.target("fleet") {
        Some(Target::Group(members)) => {
            let names: Vec<&str> = members.iter().map(|h| h.name.as_str()).collect();
            assert_eq!(names, ["box1", "box2"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(set.target("ctr"), Some(Target::Host(_))));
    assert!(set.target("nope").is_none());
    assert!(
        set.unknown_target_message("nope")
            .contains("use one of box1, box2, ctr, pod, fleet")
    );
    assert!(
        HostSet::parse("[profiles.x]\ncommand = [\"x\"]\n")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn problems_are_located_and_all_reported() {
    let cases = [
        ("[hosts.a]\nport = 1\n", "give \"ssh\""),
        ("[hosts.a]\nssh = \"x\"\nexec = [\"d\"]\n", "not both"),
        (
            "[hosts.a]\nssh = \"-oProxyCommand=x\"\n",
            "must be user@host",
        ),
        (
            "[hosts.a]\nexec = []\n",
            "must start with the launcher program",
        ),
        (
            "[hosts.a]\nexec = [\"docker\"]\nport = 2\n",
            "apply to \"ssh\" hosts only",
        ),
        (
            "[hosts.a]\nssh = \"x\"\nmax_agents = 0\n",
            "max_agents must be from 1",
        ),
        (
            "[hosts.a]\nssh = \"x\"\nenv = { \"A B\" = \"1\" }\n",
            "not a valid variable name",
        ),
        (
            "[hosts.a]\nssh = \"x\"\nsurprise = 1\n",
            "unknown field `surprise`",
        ),
        (
            "[hosts.a]\nssh = \"x\"\ngroups = [\"b\"]\n[hosts.b]\nssh = \"y\"\n",
            "both a host and a group",
        ),
        ("[hosts.\"a b\"]\nssh = \"x\"\n", "letters, digits"),
        ("[hosts.a\nssh = 1", ""),
    ];
    for (text, want) in cases {
        let errors = HostSet::parse(text).unwrap_err();
        let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(all.iter().any(|e| e.contains(want)), "{text:?}: {all:?}");
        assert!(
            errors.iter().all(|e| e.location.is_some()),
            "{text:?}: {all:?}"
        );
    }
    let two = HostSet::parse("[hosts.a]\nport = 1\n[hosts.b]\nexec = []\n").unwrap_err();
    assert_eq!(two.len(), 2);
}

#[test]
fn ssh_argv_has_batch_mode_keepalives_and_the_script_as_one_word() {
    let set = HostSet::parse(TEXT).unwrap();
    let argv = launcher_argv(
        set.get("box1").unwrap(),
        true,
        Some("/runs/t/a.ssh.log"),
        "echo 'hi'",
    );
    assert_eq!(
        argv,
        [
            "ssh",
            "-tt",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-p",
            "2222",
            "-i",
            "/keys/id",
            "-E",
            "/runs/t/a.ssh.log",
            "--",
            "dev@box1",
            r"sh -c 'echo '\''hi'\'''"
        ]
    );
    let argv = launcher_argv(set.get("box2").unwrap(), false, None, "true");
    assert_eq!(argv[1], "-T");
    assert_eq!(argv[argv.len() - 2..], ["box2", "sh -c true"]);
    // Secrets of the host's env are never part of an argv.
    assert!(!argv.iter().any(|a| a.contains("sk-secret")));
}

#[test]
fn exec_templates_place_the_tty_flag_and_append_the_shell() {
    let set = HostSet::parse(TEXT).unwrap();
    let docker = set.get("ctr").unwrap();
    assert_eq!(
        launcher_argv(docker, true, None, "run it"),
        [
            "docker",
            "exec",
            "-i",
            "-t",
            "agent-box",
            "sh",
            "-c",
            "run it"
        ]
    );
    assert_eq!(
        launcher_argv(docker, false, Some("/ignored.log"), "run it"),
        ["docker", "exec", "-i", "agent-box", "sh", "-c", "run it"]
    );
    let pod = set.get("pod").unwrap();
    assert_eq!(
        launcher_argv(pod, true, None, "x"),
        [
            "kubectl", "exec", "-i", "-t", "agents-0", "-n", "ci", "-c", "agent", "--", "sh", "-c",
            "x"
        ]
    );
    assert_eq!(
        launcher_argv(pod, false, None, "x"),
        [
            "kubectl", "exec", "-i", "agents-0", "-n", "ci", "-c", "agent", "--", "sh", "-c", "x"
        ]
    );
}
