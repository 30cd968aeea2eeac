use super::*;

fn words(script: &Script) -> Vec<Vec<String>> {
    script
        .all_commands()
        .iter()
        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
        .collect()
}

#[test]
fn lists_pipes_and_quotes() {
    let s = parse("a 'b c' \"d $HOME\" && e | f; g").expect("parses");
    assert_eq!(s.pipelines.len(), 3);
    assert_eq!(s.pipelines[1].commands.len(), 2);
    assert_eq!(words(&s)[0], ["a", "b c", "d ~"]);
}

#[test]
fn substitutions_are_parsed_as_commands() {
    let s = parse("echo $(rm -rf x) `ls -l` <(cat y)").expect("parses");
    let all = words(&s);
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(all[1], ["rm", "-rf", "x"]);
    assert!(s.pipelines[0].commands[0].words[1].dynamic);
}

#[test]
fn redirections_and_heredocs() {
    let s = parse("cat <<'EOF' > out 2>&1\nbody $(not run)\nEOF\nls").expect("parses");
    let c = &s.pipelines[0].commands[0];
    assert_eq!(c.redirects.len(), 3);
    assert_eq!(c.redirects[1].target.text, "out");
    assert!(c.redirects[1].writes());
    assert_eq!(words(&s)[1], ["ls"]);
}

#[test]
fn what_it_cannot_follow_is_an_error() {
    for text in [
        "echo 'x",
        "a (b",
        "a)",
        "case x in y) z;; esac",
        "f() { x; }",
        "cat <<EOF\nx",
    ] {
        assert!(parse(text).is_err(), "{text}");
    }
}
