use proptest::prelude::*;

use super::*;

fn rows(text: &str) -> Vec<String> {
    text.lines().map(String::from).collect()
}

#[test]
fn every_pattern_compiles() {
    for pattern in score::PATTERNS.iter().chain(extract::PATTERNS.iter()) {
        assert!(pattern.is_some());
    }
}

#[test]
fn categorise_table() {
    use Category::*;
    let cases = [
        ("error[E0308]: mismatched types", Build),
        ("error[E0425]: cannot find value `x` in this scope", Build),
        ("error[E0432]: unresolved import `serde_yaml`", Dependency),
        (
            "error: could not compile `demo` (bin \"demo\") due to 1 previous error",
            Build,
        ),
        (
            "error: expected one of `.`, `;`, `?`, `}`, or an operator, found `let`",
            Syntax,
        ),
        ("E       AssertionError: assert 1 == 2", Assertion),
        ("E       assert 1 == 2", Assertion),
        ("FAILED tests/test_x.py::test_y - assert 1 == 2", Assertion),
        (
            "FAILED tests/test_x.py::test_y - NameError: name 'y' is not defined",
            Runtime,
        ),
        ("tests/test_x.py:12: AssertionError", Assertion),
        ("File \"x.py\", line 3, in <module>", Runtime),
        ("NameError: name 'x' is not defined", Runtime),
        ("SyntaxError: invalid syntax", Syntax),
        ("IndentationError: unexpected indent", Syntax),
        ("ModuleNotFoundError: No module named 'pandas'", Dependency),
        ("npm ERR! code ERESOLVE", Dependency),
        (
            "npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd",
            Dependency,
        ),
        (
            "TypeError: Cannot read properties of undefined (reading 'map')",
            Runtime,
        ),
        ("Error: Cannot find module 'express'", Dependency),
        ("main.c:3:5: error: expected ';' before 'return'", Syntax),
        (
            "main.c:4:3: error: implicit declaration of function 'foo'",
            Build,
        ),
        ("main.c:(.text+0x15): undefined reference to `foo'", Build),
        ("./main.go:5:2: undefined: x", Build),
        ("./main.go:4:2: declared and not used: y", Build),
        ("make: *** [Makefile:3: all] Error 1", Build),
        ("thread 'main' panicked at src/main.rs:2:5:", Runtime),
        ("Invalid API key · Please run /login", Auth),
        (
            "API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\"}}",
            Auth,
        ),
        ("401 Unauthorized", Auth),
        ("You've hit your usage limit", Quota),
        ("API Error: Repeated 529 Overloaded errors", Quota),
        (
            "Quota exceeded for quota metric 'Generate Content API requests'",
            Quota,
        ),
        ("Error: 429 Too Many Requests: rate limit reached", Quota),
        ("rate limit", Quota),
        // A line number is not an HTTP status.
        ("main.c:401:5: error: 'x' undeclared", Build),
        ("something went wrong", Unknown),
        ("", Unknown),
    ];
    for (line, want) in cases {
        assert_eq!(categorise(line), want, "{line:?}");
    }
}

#[test]
fn score_table() {
    // (line, lowest acceptable, highest acceptable)
    let cases = [
        ("Error", 0, 15),
        ("failed", 0, 15),
        ("", 0, 0),
        (
            "error: could not compile `demo` (bin \"demo\") due to 1 previous error",
            0,
            15,
        ),
        ("make: *** [Makefile:3: all] Error 1", 0, 39),
        (
            "error[E0308]: mismatched types --> src/main.rs:4:18; expected `u32`, found `&str`",
            90,
            100,
        ),
        ("error[E0308]: mismatched types", 30, 50),
        ("tests/test_x.py:12: AssertionError: assert 1 == 2", 85, 100),
        ("FAILED tests/test_x.py::test_y - assert 1 == 2", 55, 80),
        ("NameError: name 'x' is not defined at x.py:3", 75, 100),
        ("ModuleNotFoundError: No module named 'pandas'", 40, 60),
        ("npm ERR! code ERESOLVE", 25, 45),
        ("main.c:3:5: error: expected ';' before 'return'", 80, 100),
        ("./main.go:5:2: undefined: x", 65, 85),
        ("Invalid API key · Please run /login", 30, 50),
        (
            "help: try using a conversion method: `.to_string()`",
            15,
            45,
        ),
    ];
    for (line, low, high) in cases {
        let got = score(line);
        assert!(
            (low..=high).contains(&got),
            "{line:?} scored {got}, want {low}..={high}"
        );
    }
}

#[test]
fn score_ordering() {
    let ordered = [
        "error[E0308]: mismatched types --> src/main.rs:4:18; expected `u32`, found `&str`",
        "error[E0308]: mismatched types --> src/main.rs:4:18",
        "error[E0308]: mismatched types",
        "error: could not compile `demo` (bin \"demo\") due to 1 previous error",
    ];
    for pair in ordered.windows(2) {
        assert!(score(pair[0]) > score(pair[1]), "{pair:?}");
    }
    assert!(score("E0308") > score("Error"));
    assert!(score("TypeError: x is not a function") > score("Error: failed"));
}

#[test]
fn json_survives_quotes_control_chars_and_huge_lines() {
    let huge = format!("error: {}", "x".repeat(1 << 20));
    let tail = vec![
        "Error: unexpected \"quote\" and \\ backslash".to_string(),
        "\u{1b}[1;31merror\u{1b}[0m: bad \u{0} byte\u{7}\ttab".to_string(),
        huge,
    ];
    let ctx = FailureContext::build(&tail, vec!["src/\"odd\".rs".into(), "a\u{0}b".into()]);
    assert_eq!(ctx.lines.len(), 3);
    assert_eq!(ctx.lines[1].text, "error: bad  byte\ttab");
    assert!(
        ctx.lines
            .iter()
            .all(|l| l.text.chars().count() <= MAX_LINE_CHARS)
    );
    assert!(ctx.lines[2].text.ends_with('…'));
    let json = ctx.to_json();
    let text = serde_json::to_string(&json).unwrap_or_default();
    let back: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(back, json);
    assert_eq!(
        json["lines"][0]["text"],
        "Error: unexpected \"quote\" and \\ backslash"
    );
    assert_eq!(json["lines"][1]["category"], "build");
    assert_eq!(json["changed_files"][1], "ab");
    assert!(json["aggregate_score"].is_u64());
}

#[test]
fn changed_files_only_when_the_errors_are_vague() {
    let files = vec!["src/a.rs".to_string(), "src/b.rs".to_string()];
    let vague = FailureContext::build(&rows("Error: failed\n"), files.clone());
    assert!(vague.aggregate_score < LOW_SCORE);
    assert_eq!(vague.changed_files, files);
    assert!(vague.summary(1000).contains("src/a.rs, src/b.rs"));

    let precise = FailureContext::build(&rows("./main.go:5:2: undefined: x\n"), files);
    assert!(precise.aggregate_score >= LOW_SCORE);
    assert!(precise.changed_files.is_empty());
}

#[test]
fn summary_reads_best_first_and_respects_the_bound() {
    let output = "error: could not compile `demo`\nerror[E0308]: mismatched types\n --> src/main.rs:4:18\n  |\n  |   ^^^ expected `u32`, found `&str`\n";
    let ctx = FailureContext::build(&rows(output), Vec::new());
    let text = ctx.summary(1000);
    assert_eq!(
        text,
        "The previous attempt failed. Errors, most actionable first:\n\
         - error[E0308]: mismatched types --> src/main.rs:4:18; expected `u32`, found `&str`\n\
         - error: could not compile `demo`"
    );
    for max in [0, 1, 10, 60, 100] {
        let short = ctx.summary(max);
        assert!(short.chars().count() <= max, "{max}: {short:?}");
    }
    assert!(ctx.summary(20).ends_with('…'));

    let empty = FailureContext::build(&[], Vec::new());
    assert_eq!(empty.aggregate_score, 0);
    assert_eq!(
        empty.summary(200),
        "The previous attempt failed without a recognisable error message in its output."
    );
}

#[test]
fn summary_lists_many_changed_files_briefly() {
    let files: Vec<String> = (0..30).map(|i| format!("f{i}.rs")).collect();
    let ctx = FailureContext::build(&[], files);
    assert!(ctx.summary(2000).ends_with("f9.rs and 20 more"));
}

proptest! {
    #[test]
    fn never_panics_and_summary_is_bounded(
        tail in proptest::collection::vec(any::<String>(), 0..12),
        seeded in proptest::collection::vec(
            "(error|E   |npm ERR! |File \"|  --> |  \\| \\^\\^|thread 'm' panicked at |at x.js:)[^\n]{0,40}",
            0..8,
        ),
        files in proptest::collection::vec(any::<String>(), 0..4),
        max_chars in 0usize..400,
    ) {
        let mut rows = tail;
        rows.extend(seeded);
        let ctx = FailureContext::build(&rows, files);
        let summary = ctx.summary(max_chars);
        prop_assert!(summary.chars().count() <= max_chars);
        let json = serde_json::to_string(&ctx.to_json());
        prop_assert!(json.is_ok());
        for line in &ctx.lines {
            prop_assert!(line.score <= 100);
            prop_assert!(line.text.chars().count() <= MAX_LINE_CHARS);
            prop_assert!(!line.text.chars().any(|c| c.is_control() && c != '\t'));
        }
    }

    #[test]
    fn score_and_categorise_never_panic(line in any::<String>()) {
        prop_assert!(score(&line) <= 100);
        let _ = categorise(&line);
    }
}

#[test]
fn the_headline_is_the_line_that_says_why() {
    let cargo = FailureContext::build(
        &rows(
            "Running cargo build\n\
             error: could not find `Cargo.toml` in `/tmp/x` or any parent directory\n\
             exit code 101",
        ),
        Vec::new(),
    );
    assert_eq!(
        cargo.headline(),
        Some("error: could not find `Cargo.toml` in `/tmp/x` or any parent directory")
    );
    let panic = FailureContext::build(
        &rows(
            "thread 'main' panicked at src/main.rs:3:5:\n\
             attempt to divide by zero\n\
             note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        ),
        Vec::new(),
    );
    assert!(
        panic
            .headline()
            .is_some_and(|h| h.starts_with("thread 'main' panicked at src/main.rs:3:5")),
        "{:?}",
        panic.lines
    );
    let bare = FailureContext::build(&rows("Error"), Vec::new());
    assert_eq!(bare.headline(), None, "a bare error word says nothing more");
}

#[test]
fn why_failed_puts_the_headline_before_the_evidence() {
    let table: [(Option<&str>, Option<&str>, Option<&str>); 5] = [
        (
            Some("exit code 101"),
            Some("error: no Cargo.toml"),
            Some("error: no Cargo.toml (exit code 101)"),
        ),
        (Some("exit code 101"), None, Some("exit code 101")),
        (None, Some("error: x"), Some("error: x")),
        (
            Some("Invalid API key · run /login"),
            Some("Invalid API key"),
            Some("Invalid API key · run /login"),
        ),
        (None, None, None),
    ];
    for (evidence, headline, expected) in table {
        assert_eq!(
            why_failed(evidence, headline).as_deref(),
            expected,
            "{evidence:?} {headline:?}"
        );
    }
}
