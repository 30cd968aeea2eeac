//! Table tests of `extract` on recorded-looking output of each tool.

use super::*;

fn rows(text: &str) -> Vec<String> {
    text.lines().map(String::from).collect()
}

fn texts(output: &str) -> Vec<String> {
    extract(&rows(output), MAX_LINES)
        .into_iter()
        .map(|l| l.text)
        .collect()
}

#[test]
fn extracts_rustc_diagnostic_with_location_and_labels() {
    let output = r#"   Compiling demo v0.1.0 (/tmp/demo)
warning: unused variable: `y`
 --> src/main.rs:3:9
  |
3 |     let y = 1;
  |         ^ help: if this is intentional, prefix it with an underscore: `_y`

error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
4 |     let x: u32 = "a";
  |            ---   ^^^ expected `u32`, found `&str`
  |            |
  |            expected due to this

For more information about this error, try `rustc --explain E0308`.
error: could not compile `demo` (bin "demo") due to 1 previous error; 1 warning emitted"#;
    let lines = extract(&rows(output), MAX_LINES);
    let first = &lines[0];
    assert_eq!(
        first.text,
        "error[E0308]: mismatched types --> src/main.rs:4:18; expected `u32`, found `&str`"
    );
    assert_eq!(first.file.as_deref(), Some("src/main.rs"));
    assert_eq!(first.line, Some(4));
    assert_eq!(first.category, Category::Build);
    assert!(lines.iter().all(|l| !l.text.contains("unused variable")));
    let last = lines.last().map(|l| l.score);
    assert!(last < Some(first.score));
}

#[test]
fn extracts_rustc_help_lines() {
    let output = "error[E0425]: cannot find value `cnt` in this scope\n --> src/lib.rs:7:5\n  |\n7 |     cnt + 1\n  |     ^^^ help: a local variable with a similar name exists: `count`\n";
    assert_eq!(
        texts(output),
        [
            "error[E0425]: cannot find value `cnt` in this scope --> src/lib.rs:7:5; help: a local variable with a similar name exists: `count`"
        ]
    );
}

#[test]
fn extracts_rust_panic_with_message() {
    let output = "---- tests::adds stdout ----\nthread 'tests::adds' panicked at src/lib.rs:10:9:\nassertion `left == right` failed\n  left: 3\n right: 4\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
    let lines = extract(&rows(output), MAX_LINES);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0].text,
        "thread 'tests::adds' panicked at src/lib.rs:10:9: assertion `left == right` failed left: 3 right: 4"
    );
    assert_eq!(lines[0].line, Some(10));
    assert!(lines[0].score >= 80);
}

#[test]
fn extracts_pytest_failure() {
    let output = r#"============================= FAILURES =============================
____________________________ test_y ____________________________

    def test_y():
>       assert add(1, 1) == 3
E       assert 2 == 3
E        +  where 2 = add(1, 1)

tests/test_x.py:12: AssertionError
===================== short test summary info ======================
FAILED tests/test_x.py::test_y - assert 2 == 3
==================== 1 failed, 3 passed in 0.05s ==================="#;
    let lines = extract(&rows(output), MAX_LINES);
    let got: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        got,
        [
            "tests/test_x.py:12: AssertionError: assert 2 == 3; +  where 2 = add(1, 1)",
            "FAILED tests/test_x.py::test_y - assert 2 == 3",
        ]
    );
    assert_eq!(lines[0].category, Category::Assertion);
    assert_eq!(lines[0].line, Some(12));
    assert_eq!(lines[1].file.as_deref(), Some("tests/test_x.py"));
    assert_eq!(lines[1].line, None);
}

#[test]
fn extracts_python_traceback_with_frame_location() {
    let output = "Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\n    print(x)\nNameError: name 'x' is not defined\n";
    let lines = extract(&rows(output), MAX_LINES);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0].text,
        "NameError: name 'x' is not defined at /app/x.py:3"
    );
    assert_eq!(lines[0].file.as_deref(), Some("/app/x.py"));
    assert_eq!(lines[0].category, Category::Runtime);

    let output =
        "  File \"x.py\", line 3\n    print(\"a\"\n         ^\nSyntaxError: '(' was never closed\n";
    let lines = extract(&rows(output), MAX_LINES);
    assert_eq!(lines[0].text, "SyntaxError: '(' was never closed at x.py:3");
    assert_eq!(lines[0].category, Category::Syntax);

    let output = "Traceback (most recent call last):\n  File \"run.py\", line 1, in <module>\n    import pandas\nModuleNotFoundError: No module named 'pandas'\n";
    assert_eq!(lines_of(output)[0].category, Category::Dependency);
}

fn lines_of(output: &str) -> Vec<ErrorLine> {
    extract(&rows(output), MAX_LINES)
}

#[test]
fn extracts_npm_error_run_as_one_line() {
    let output = r#"npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR!
npm ERR! While resolving: app@1.0.0
npm ERR! Found: react@18.2.0
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^17.0.0" from react-old@1.0.0
npm ERR!
npm ERR! Fix the upstream dependency conflict, or retry
npm ERR! this command with --force or --legacy-peer-deps
npm ERR!
npm ERR! A complete log of this run can be found in:
npm ERR!     /home/u/.npm/_logs/2024-01-01T00_00_00_000Z-debug-0.log"#;
    let lines = lines_of(output);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0]
            .text
            .starts_with("npm ERR! code ERESOLVE; ERESOLVE unable")
    );
    assert!(!lines[0].text.contains("_logs"));
    assert_eq!(lines[0].category, Category::Dependency);

    let lines = lines_of(
        "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found\n",
    );
    assert_eq!(lines[0].category, Category::Dependency);
}

#[test]
fn extracts_node_exception_with_first_user_frame() {
    let output = r#"/home/u/app.js:3
  console.log(x.y.map(f));
                  ^

TypeError: Cannot read properties of undefined (reading 'map')
    at Object.<anonymous> (/home/u/app.js:3:19)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)

Node.js v18.19.0"#;
    let lines = lines_of(output);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0].text,
        "TypeError: Cannot read properties of undefined (reading 'map') at /home/u/app.js:3"
    );
    assert_eq!(lines[0].category, Category::Runtime);

    let output = "Error: Cannot find module 'express'\nRequire stack:\n- /srv/index.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1134:15)\n    at Object.<anonymous> (/srv/index.js:1:17)\n";
    let lines = lines_of(output);
    assert_eq!(
        lines[0].text,
        "Error: Cannot find module 'express' at /srv/index.js:1"
    );
    assert_eq!(lines[0].category, Category::Dependency);
}

#[test]
fn extracts_gcc_go_and_make() {
    let output = "main.c: In function 'main':\nmain.c:3:5: error: expected ';' before 'return'\n    3 |     return 0\n      |     ^~~~~~\nmake: *** [Makefile:3: all] Error 1\n";
    let lines = lines_of(output);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].file.as_deref(), Some("main.c"));
    assert_eq!(lines[0].category, Category::Syntax);
    assert_eq!(lines[1].file.as_deref(), Some("Makefile"));
    assert!(lines[0].score > lines[1].score);

    let lines = lines_of("# example.com/demo\n./main.go:5:2: undefined: x\n");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].file.as_deref(), Some("./main.go"));
    assert_eq!(lines[0].line, Some(5));
}

#[test]
fn extracts_agent_cli_errors_from_tui_boxes() {
    let output = "╭──────────────────────────╮\n│ > fix the build          │\n╰──────────────────────────╯\n  ⎿  Invalid API key · Please run /login\n● API Error: Repeated 529 Overloaded errors\n\u{1b}[31m401 Unauthorized\u{1b}[0m\nYou've hit your usage limit. Upgrade to Pro or try again later.\nQuota exceeded\nAll tests passed, 0 failed\n";
    let lines = lines_of(output);
    let got: Vec<(&str, Category)> = lines
        .iter()
        .map(|l| (l.text.as_str(), l.category))
        .collect();
    assert_eq!(
        got,
        [
            ("Invalid API key · Please run /login", Category::Auth),
            ("API Error: Repeated 529 Overloaded errors", Category::Quota),
            ("401 Unauthorized", Category::Auth),
            (
                "You've hit your usage limit. Upgrade to Pro or try again later.",
                Category::Quota
            ),
            ("Quota exceeded", Category::Quota),
        ]
    );
}

#[test]
fn extract_keeps_the_best_lines_in_output_order_and_dedups() {
    let output = "error\nfailed\nerror\n./main.go:5:2: undefined: x\nfailed\nmain.c:3:5: error: expected ';' before 'return'\n";
    let lines = lines_of(output);
    assert_eq!(lines.len(), 4);
    let kept = extract(&rows(output), 2);
    let got: Vec<&str> = kept.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        got,
        [
            "./main.go:5:2: undefined: x",
            "main.c:3:5: error: expected ';' before 'return'"
        ]
    );
    assert!(extract(&rows(output), 0).is_empty());
}
