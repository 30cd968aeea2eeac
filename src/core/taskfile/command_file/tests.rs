use super::*;
use proptest::prelude::*;

fn args(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

fn expanded(text: &str, values: &[&str]) -> String {
    expand(text, &args(values)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Front matter
// ---------------------------------------------------------------------------------------------

#[test]
fn front_matter_is_cut_and_text_without_it_is_kept() {
    let cases: &[(&str, &str)] = &[
        (
            "---\ndescription: Fix an issue\nallowed-tools: Bash(git:*)\n---\nFix $1\n",
            "Fix $1\n",
        ),
        ("---\n---\nbody", "body"),
        ("---\r\ndescription: x\r\n---\r\nbody\r\n", "body\r\n"),
        ("\u{feff}---\ndescription: x\n---\nbody", "body"),
        // The closing line may end the file.
        ("---\ndescription: x\n---", ""),
        // No front matter: as is.
        ("Fix the bug\n---\nmore", "Fix the bug\n---\nmore"),
        ("", ""),
        ("plain", "plain"),
        // `---` must be the whole first line.
        (
            "--- \ndescription: x\n---\nbody",
            "--- \ndescription: x\n---\nbody",
        ),
        ("----\nx\n---\nbody", "----\nx\n---\nbody"),
        // Unclosed: the prompt is not lost.
        ("---\ndescription: x\nbody", "---\ndescription: x\nbody"),
        // Only the first block goes; a later `---` is the prompt's own.
        ("---\na: 1\n---\ntext\n---\nmore", "text\n---\nmore"),
        // A closing line with trailing text is not a closing line.
        ("---\na: 1\n--- x\n---\nbody", "body"),
    ];
    for (text, want) in cases {
        assert_eq!(strip_front_matter(text), *want, "for {text:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Placeholders
// ---------------------------------------------------------------------------------------------

#[test]
fn placeholders_are_filled() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("Fix $ARGUMENTS now", &["issue 12"], "Fix issue 12 now"),
        ("Fix $ARGUMENTS", &["a", "b", "c"], "Fix a, b, c"),
        ("Fix [$ARGUMENTS]", &[], "Fix []"),
        ("$1 then $2", &["one", "two"], "one then two"),
        ("$2$1", &["a", "b"], "ba"),
        ("$1 and $1", &["x"], "x and x"),
        (
            "$10|$1|$2",
            &["1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"],
            "ten|1|2",
        ),
        // All digits are taken: `$12` is the twelfth argument, not `$1` then `2`.
        (
            "$12",
            &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"],
            "l",
        ),
        ("$1 of $ARGUMENTS", &["a", "b"], "a of a, b"),
        ("$1x", &["a"], "ax"),
        ("($1)", &["a"], "(a)"),
        ("$ARGUMENTSX", &["a"], "aX"),
        ("x$ARGUMENTS", &["a"], "xa"),
        ("-$1-", &["a"], "-a-"),
        ("\n$1", &["a"], "\na"),
        // Unused positions are fine.
        ("only $1", &["a", "b", "c"], "only a"),
    ];
    for (text, values, want) in cases {
        assert_eq!(
            expanded(text, values),
            *want,
            "for {text:?} with {values:?}"
        );
    }
}

#[test]
fn other_dollars_pass_through() {
    let cases: &[&str] = &[
        "echo $HOME",
        "$",
        "cost: $",
        "$$",
        "$0",
        "$x",
        "US$5",
        "a$1",
        "_$2",
        "9$1",
        "$ 1",
        "$arguments",
        "$ARGUMENT",
        "$01",
        "price $-1",
        "$\n1",
    ];
    for text in cases {
        assert_eq!(expanded(text, &[]), *text, "no args: {text:?}");
        // With a placeholder elsewhere, the rest still passes through.
        let with = format!("{text} $1");
        assert_eq!(expanded(&with, &["A"]), format!("{text} A"), "{with:?}");
    }
}

#[test]
fn double_dollar_before_a_position_keeps_one_dollar() {
    // One pass: the first `$` is literal, the second starts `$1`.
    assert_eq!(expanded("$$1", &["a"]), "$a");
}

#[test]
fn arguments_pass_through_untouched() {
    let big = "x".repeat(10 * 1024);
    let values: &[&str] = &[
        "it's \"quoted\"",
        "back\\slash \\n \\$1",
        "line one\nline two\r\n",
        "tab\tand  spaces ",
        "ünïcödé — 日本語 🦀",
        "; rm -rf / && `id` $(whoami) | > <",
        "{braces} {{double}}",
        "",
        &big,
    ];
    for value in values {
        assert_eq!(expanded("[$1]", &[value]), format!("[{value}]"));
        assert_eq!(expanded("[$ARGUMENTS]", &[value]), format!("[{value}]"));
    }
}

#[test]
fn substituted_text_is_never_scanned_again() {
    assert_eq!(expanded("$1 $2", &["$2", "$1"]), "$2 $1");
    assert_eq!(expanded("$1", &["$ARGUMENTS"]), "$ARGUMENTS");
    assert_eq!(
        expanded("$ARGUMENTS", &["$1", "$ARGUMENTS"]),
        "$1, $ARGUMENTS"
    );
    // A value that would glue with the following text into a placeholder does not.
    assert_eq!(expanded("$1ARGUMENTS $2", &["$", "b"]), "$ARGUMENTS b");
    assert_eq!(expanded("$1 $2", &["$", "1"]), "$ 1");
}

#[test]
fn missing_positions_are_an_error_naming_each_one() {
    let err = expand("$1 $3 $5 $3", &args(&["a", "b"])).unwrap_err();
    assert_eq!(
        err,
        CommandFileError::MissingArguments {
            positions: vec![3, 5],
            given: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "prompt_file uses $3 and $5 but \"args\" has 2 values; add the missing values to \"args\""
    );

    let cases: &[(&str, &[&str], &str)] = &[
        (
            "$1",
            &[],
            "prompt_file uses $1 but \"args\" has no values; add the missing values to \"args\"",
        ),
        (
            "$2",
            &["a"],
            "prompt_file uses $2 but \"args\" has 1 value; add the missing values to \"args\"",
        ),
        (
            "$4 $2 $3",
            &["a"],
            "prompt_file uses $2, $3 and $4 but \"args\" has 1 value; add the missing values to \
             \"args\"",
        ),
    ];
    for (text, values, want) in cases {
        let err = expand(text, &args(values)).unwrap_err();
        assert_eq!(err.to_string(), *want, "for {text:?}");
    }
}

#[test]
fn unreferenced_arguments_are_appended() {
    assert_eq!(
        expanded("Review the code.", &["src/main.rs", "be strict"]),
        "Review the code.\n\nARGUMENTS: src/main.rs, be strict"
    );
    assert_eq!(expanded("$HOME only", &["a"]), "$HOME only\n\nARGUMENTS: a");
    // No arguments: nothing appended.
    assert_eq!(expanded("Review the code.", &[]), "Review the code.");
    // Referenced, even only by `$ARGUMENTS` or one position: nothing appended.
    assert_eq!(expanded("Do $ARGUMENTS", &["a", "b"]), "Do a, b");
    assert_eq!(expanded("Do $2", &["a", "b"]), "Do b");
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/// A piece of a generated command file, with what it must expand to.
#[derive(Debug, Clone)]
enum Gen {
    Literal(String),
    Position(usize),
    All,
}

/// Literal text: no `$` at all, or a `$` form that is never a placeholder. It neither starts
/// with a digit nor ends in `$` or a word character, so it cannot glue with a neighbouring piece
/// into another placeholder, nor turn the `$N` after it into a price like `US$5`.
fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        "([^$0-9A-Za-z_]|[^$0-9][^$]{0,10}[^$0-9A-Za-z_])?",
        Just("$HOME ".to_string()),
        Just("$ ".to_string()),
        Just("$0 ".to_string()),
        Just("$x ".to_string()),
        Just("US$5 ".to_string()),
        Just("$$ ".to_string()),
        Just("$arguments ".to_string()),
    ]
}

fn document() -> impl Strategy<Value = (Vec<Gen>, Vec<String>)> {
    prop::collection::vec(any::<String>(), 0..5).prop_flat_map(|args| {
        let n = args.len();
        let piece = if n == 0 {
            prop_oneof![literal().prop_map(Gen::Literal), Just(Gen::All)].boxed()
        } else {
            prop_oneof![
                3 => literal().prop_map(Gen::Literal),
                1 => (1..=n).prop_map(Gen::Position),
                1 => Just(Gen::All),
            ]
            .boxed()
        };
        (prop::collection::vec(piece, 0..12), Just(args))
    })
}

proptest! {
    #[test]
    fn arguments_never_change_text_outside_placeholders((doc, args) in document()) {
        let text: String = doc
            .iter()
            .map(|g| match g {
                Gen::Literal(s) => s.clone(),
                Gen::Position(n) => format!("${n}"),
                Gen::All => "$ARGUMENTS".to_string(),
            })
            .collect();
        let mut want: String = doc
            .iter()
            .map(|g| match g {
                Gen::Literal(s) => s.clone(),
                Gen::Position(n) => args[n - 1].clone(),
                Gen::All => args.join(", "),
            })
            .collect();
        let placeholders = doc.iter().any(|g| !matches!(g, Gen::Literal(_)));
        if !placeholders && !args.is_empty() {
            want.push_str(&format!("\n\nARGUMENTS: {}", args.join(", ")));
        }
        prop_assert_eq!(expand(&text, &args).unwrap(), want);
    }

    #[test]
    fn an_argument_holding_placeholders_is_not_expanded_again(
        before in "[^$]{0,8}",
        after in "[^$]{0,8}",
        other in any::<String>(),
    ) {
        let tricky = format!("{before}$1$2$ARGUMENTS{after}");
        let args = vec![tricky.clone(), other.clone()];
        prop_assert_eq!(expand("<$1>", &args).unwrap(), format!("<{tricky}>"));
        prop_assert_eq!(
            expand("$2|$ARGUMENTS", &args).unwrap(),
            format!("{other}|{tricky}, {other}")
        );
    }

    #[test]
    fn text_without_dollars_and_no_args_is_unchanged(text in "[^$]*") {
        prop_assert_eq!(expand(&text, &[]).unwrap(), text);
    }
}
