use super::*;

const BASE: &str = r#"
[profiles.mycli]
command = ["mycli", "--task", "{rendered_prompt}"]
exit_keys = "/exit\r"
ready = '(?m)^❯\s*$'
auth = ['Invalid API key', 'Please run /login']
quota = ['(?i)rate limit exceeded', "You[’']ve hit your usage limit"]
[[profiles.mycli.prompts]]
name = "press_1"
pattern = '(?m)^\s*❯\s*1\. Yes'
send = "1"
"#;

#[test]
fn the_spec_example_compiles() {
    let set = ProfileSet::build(&[BASE], None).unwrap();
    let p = set.get("mycli").unwrap();
    assert_eq!(p.command, ["mycli", "--task", "{rendered_prompt}"]);
    assert_eq!(p.exit_keys.as_deref(), Some("/exit\r"));
    assert_eq!(p.prompts.len(), 1);
    assert!(p.prompts[0].pattern.is_match("  ❯ 1. Yes"));
    assert!(p.quota[1].is_match("You’ve hit your usage limit"));
    assert_eq!(p.idle_sec, DEFAULT_IDLE_SEC);
    assert_eq!(p.origin, ProfileOrigin::BuiltIn);
}

#[test]
fn a_user_file_overrides_fields_and_adds_profiles() {
    let user = r#"
[profiles.mycli]
command = ["/opt/mycli"]
idle_sec = 3

[profiles.other]
command = ["other"]
"#;
    let set = ProfileSet::build(&[BASE], Some(user)).unwrap();
    let p = set.get("mycli").unwrap();
    assert_eq!(p.command, ["/opt/mycli"]);
    assert_eq!(p.idle_sec, 3.0);
    assert_eq!(p.prompts.len(), 1, "fields the user left out stay");
    assert_eq!(p.origin, ProfileOrigin::BuiltInOverridden);
    assert_eq!(set.get("other").unwrap().origin, ProfileOrigin::UserFile);
}

#[test]
fn every_problem_is_reported_with_its_place() {
    let user = "[profiles.bad]\ncommand = []\nauth = ['(unclosed']\n[[profiles.bad.prompts]]\nname = 'press 1'\npattern = 'x'\nsend = ''\n";
    let errors = ProfileSet::build(&[], Some(user)).unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(
            |e| e.starts_with("3:10: profile 'bad': auth[0] is not a valid regular expression")
        ),
        "{text:?}"
    );
    assert!(
        text.iter().any(|e| e.contains("has name \"press 1\"")),
        "{text:?}"
    );
    assert!(text.iter().any(|e| e.contains("sends nothing")), "{text:?}");
}

#[test]
fn accounts_are_read_and_checked() {
    let user = "[profiles.mycli]\n[[profiles.mycli.accounts]]\nname = 'a'\nenv = { KEY = 'x' }\n[[profiles.mycli.accounts]]\nname = 'b'\n";
    let set = ProfileSet::build(&[BASE], Some(user)).unwrap();
    let p = set.get("mycli").unwrap();
    assert_eq!(p.accounts.len(), 2);
    assert_eq!(p.accounts[0].env["KEY"], "x");
    let twice = "[profiles.mycli]\n[[profiles.mycli.accounts]]\nname = 'a'\n[[profiles.mycli.accounts]]\nname = 'a'\n";
    let errors = ProfileSet::build(&[BASE], Some(twice)).unwrap_err();
    assert!(errors[0].to_string().contains("used twice"), "{errors:?}");
}

#[test]
fn toml_syntax_errors_have_a_position() {
    let errors = ProfileSet::build(&[], Some("[profiles.x]\ncommand = [\"a\"\n")).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].location.is_some(), "{errors:?}");
    let errors =
        ProfileSet::build(&[], Some("[profiles.x]\ncommand = [\"a\"]\nbogus = 1\n")).unwrap_err();
    assert!(errors[0].to_string().contains("bogus"), "{errors:?}");
    assert_eq!(errors[0].location.map(|l| l.0), Some(3));
}

#[test]
fn a_profile_may_name_its_notify_command() {
    let user = "[profiles.mycli]\nnotify = [\"sh\", \"-c\", \"cat >> /tmp/x\"]\n";
    let set = ProfileSet::build(&[BASE], Some(user)).unwrap();
    assert_eq!(
        set.get("mycli").unwrap().notify,
        ["sh", "-c", "cat >> /tmp/x"]
    );
    let set = ProfileSet::build(&[BASE], None).unwrap();
    assert!(set.get("mycli").unwrap().notify.is_empty());
    let blank = "[profiles.mycli]\nnotify = [\" \", \"x\"]\n";
    let errors = ProfileSet::build(&[BASE], Some(blank)).unwrap_err();
    assert!(
        errors[0]
            .message
            .contains("notify must start with the program"),
        "{errors:?}"
    );
}
