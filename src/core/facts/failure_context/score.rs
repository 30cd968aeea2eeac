//! Scoring and categorising one error line, and finding the file and line it points at.
//!
//! Plain text heuristics over one string; no I/O. Score points (summed, clamped to 0–100):
//! - 10: the line names a failure at all (an error word, or a known category);
//! - 25: a file path (`src/main.rs:4:5`, `File "x.py"`, `tests/x.py::test_y`, `a/b.ts`);
//! - 15: a line number;
//! - 20: a specific error type or code (`E0308`, `TypeError`, `ERESOLVE`, `404 Not Found`,
//!   `undefined:`, `No module named`);
//! - 20: expected/got detail (`expected … found`, `assert 1 == 2`, `!=`, `left: … right:`);
//! - 15: a suggested fix (`help:`, `did you mean`, `try`, `consider`, `run /login`, `install`);
//! - 10: some detail (at least three words beyond the error words);
//! - minus 30: a wrapper line that only says something else failed (`could not compile`,
//!   `make: ***`, `aborting due to`, `exit code 1`).
//!
//! So a bare "Error" or "failed" scores 10.
//!
//! Patterns compile lazily to `Option<Regex>`: a broken one matches nothing rather than panic
//! (a test compiles them all).

use std::sync::LazyLock;

use regex::Regex;

use super::Category;

pub(super) type Pattern = LazyLock<Option<Regex>>;

macro_rules! pattern {
    ($name:ident, $re:expr) => {
        pub(super) static $name: Pattern = LazyLock::new(|| Regex::new($re).ok());
    };
}

pub(super) fn is(pattern: &Pattern, text: &str) -> bool {
    pattern.as_ref().is_some_and(|re| re.is_match(text))
}

const SIGNAL: u32 = 10;
const FILE: u32 = 25;
const LINE: u32 = 15;
const ERROR_TYPE: u32 = 20;
const EXPECTED_GOT: u32 = 20;
const FIX: u32 = 15;
const DETAIL: u32 = 10;
const WRAPPER_PENALTY: u32 = 30;

pattern!(
    ERROR_WORD,
    r"(?i)error|fail|fatal|panic|exception|traceback|\bERR!|abort|denied|invalid|cannot|can't|unable|not found|undefined|refused|exceeded|\bunauthori[sz]ed\b"
);
// `path:line[:col]`; the path needs an extension (or is a Makefile), so `localhost:8080` is not
// a location.
pattern!(
    LOCATION,
    r#"(?:^|[\s(\[<'"`])((?:[A-Za-z]:)?(?:[\w.~-]*[/\\])*(?:[\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}|Makefile|makefile|Dockerfile)):(\d+)(?::\d+)?"#
);
pattern!(PYTHON_FRAME, r#"File "([^"]+)", line (\d+)"#);
pattern!(PYTEST_NODE, r"((?:[\w.-]+/)*[\w.-]+\.py)::");
pattern!(
    PATH_ONLY,
    r#"(?:^|[\s(\['"`])((?:[\w.~-]*/)+[\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})\b"#
);
pattern!(
    ERROR_TYPE_NAME,
    r"\b(?:[A-Z][a-z0-9]*)+(?:Error|Exception)\b|\b[A-Z]{1,3}\d{3,5}\b|\b[45]\d\d\s+[A-Z][a-z]+"
);
pattern!(ERRNO_CODE, r"\bE[A-Z]{3,}\b");
pattern!(
    SPECIFIC_PHRASE,
    r"(?i)\bundefined:|undefined reference|mismatched types|cannot find|no such file|not defined|no module named|declared and not used|cannot read propert|unresolved import|is not a function|expected one of|unexpected token|invalid syntax|borrow of moved value|segmentation fault"
);
pattern!(
    EXPECTED_GOT_RE,
    r"(?i)\bexpected\b.{0,200}?\b(?:found|got|but|received|actual|before|after|instead)\b|\bassert(?:ion)?\b.*(?:==|!=|<=|>=|\bnot in\b|\bin\b|\bis\b)|!=|\bleft:.*\bright:|\bexpected:.*\b(?:received|actual|got):|\bgot\b.{0,80}\bwant\b|\bwant\b.{0,80}\bgot\b"
);
pattern!(
    FIX_RE,
    r#"(?i)\bhelp:|\bhint:|\bdid you mean\b|\btry\b|\bconsider\b|\bsuggest|\bto fix\b|\bperhaps\b|\binstall\b|\brun\s+(?:[`'"/]|npm\b|npx\b|cargo\b|pip\b|go\b|make\b|yarn\b|pnpm\b|python\b)"#
);
pattern!(
    WRAPPER,
    r"(?i)could not compile|aborting due to|make(?:\[\d+\])?: \*\*\*|complete log of this run|ld returned \d+ exit status|exit(?:ed)? (?:with )?(?:code|status) \d+|test result: FAILED|error: test failed|some errors have detailed explanations|for more information about this error|process completed with|command failed with exit"
);

pattern!(
    AUTH,
    r"(?i)invalid api key|/login\b|\bunauthori[sz]ed\b|(?:^|[^:\w])401(?:[^:\w]|$)|authentication_error|authentication (?:failed|error|required)|not (?:logged|signed) in|invalid (?:x-api-key|credentials|token|bearer)|oauth token (?:has )?expired|please (?:log|sign) ?in|api key (?:is )?(?:missing|invalid|not (?:set|found))"
);
pattern!(
    QUOTA,
    r"(?i)usage limit|quota|rate[ _-]?limit|too many requests|overloaded|(?:^|[^:\w])(?:429|529)(?:[^:\w]|$)|credit balance|limit reached|resource_exhausted|insufficient_quota"
);
pattern!(
    DEPENDENCY,
    r"(?i)modulenotfounderror|no module named|importerror|cannot find module|eresolve|\bE404\b|npm (?:ERR!|error) (?:code )?404|is not in (?:the|this) (?:npm )?registry|could not resolve dependenc|unable to resolve dependency|peer dep|unresolved import|\bE0432\b|\bE0463\b|can't find crate|no matching package|failed to select a version|cannot find package|no required module provides package|missing go\.sum entry|fatal error: [^:]+\.h(?:pp)?: no such file|no matching distribution|could not find a version that satisfies"
);
pattern!(
    SYNTAX,
    r#"(?i)syntaxerror|indentationerror|taberror|syntax error|parse error|unexpected token|unexpected (?:end of (?:file|input)|eof|indent)|expected one of|unclosed delimiter|mismatched closing delimiter|unterminated|expected ['"`].{1,4}['"`] (?:before|after|at end)|expected expression"#
);
pattern!(
    ASSERTION,
    r"(?i)assertionerror|\bassert(?:ion)?\b|assert_eq|assert_ne|expect\(.*\)\.|expected:.*received:|\bleft:.*\bright:"
);
pattern!(
    RUNTIME,
    r#"(?i)traceback|panicked at|segmentation fault|core dumped|\b(?:type|name|value|key|index|attribute|zerodivision|runtime|reference|range|recursion|os|filenotfound|permission|lookup|overflow|memory|unboundlocal)error\b|exception|null pointer|nil pointer|stack overflow|cannot read propert|is not a function|is not defined|undefined is not|File ".*", line \d+|unhandled|uncaught|\benoent\b|\beacces\b|no such file or directory|killed by signal"#
);
pattern!(
    BUILD,
    r"(?i:error\[E\d+\]|could not compile|make(?:\[\d+\])?: \*\*\*|undefined reference|ld returned|linker|collect2|\bundefined:|cannot find (?:type|value|function|macro|symbol|struct|trait)|build failed|compilation (?:failed|terminated)|\berror TS\d+|cannot use .* as|declared and not used|implicit declaration)|\berror:"
);
pattern!(
    TEST_FAILURE,
    r"(?-i:FAILED)\s+\S+::|\btest .* \.\.\. FAILED|(?i:tests? failed)"
);

/// How actionable `line` is, 0–100 (see the module docs for the points).
pub fn score(line: &str) -> u8 {
    let (file, line_no) = locate(line);
    let mut points = 0;
    if is(&ERROR_WORD, line) || categorise(line) != Category::Unknown {
        points += SIGNAL;
    }
    if file.is_some() {
        points += FILE;
    }
    if line_no.is_some() {
        points += LINE;
    }
    if has_error_type(line) {
        points += ERROR_TYPE;
    }
    if is(&EXPECTED_GOT_RE, line) {
        points += EXPECTED_GOT;
    }
    if is(&FIX_RE, line) {
        points += FIX;
    }
    if detail_words(line) >= 3 {
        points += DETAIL;
    }
    if is(&WRAPPER, line) {
        points = points.saturating_sub(WRAPPER_PENALTY);
    }
    u8::try_from(points.min(100)).unwrap_or(100)
}

/// The kind of failure `line` reports; first match wins, in the order of `Category`'s checks.
pub fn categorise(line: &str) -> Category {
    let rules: [(&Pattern, Category); 8] = [
        (&AUTH, Category::Auth),
        (&QUOTA, Category::Quota),
        (&DEPENDENCY, Category::Dependency),
        (&SYNTAX, Category::Syntax),
        (&ASSERTION, Category::Assertion),
        (&RUNTIME, Category::Runtime),
        (&BUILD, Category::Build),
        (&TEST_FAILURE, Category::Assertion),
    ];
    rules
        .into_iter()
        .find(|(pattern, _)| is(pattern, line))
        .map_or(Category::Unknown, |(_, category)| category)
}

/// The file and line `text` points at, if any.
pub(super) fn locate(text: &str) -> (Option<String>, Option<u32>) {
    let captures = |pattern: &Pattern| {
        pattern
            .as_ref()
            .and_then(|re| re.captures(text))
            .and_then(|c| Some((c.get(1)?.as_str().to_string(), c.get(2))))
            .map(|(file, line)| (file, line.and_then(|l| l.as_str().parse::<u32>().ok())))
    };
    for pattern in [&PYTHON_FRAME, &LOCATION, &PYTEST_NODE, &PATH_ONLY] {
        if let Some((file, line)) = captures(pattern) {
            return (Some(file), line);
        }
    }
    (None, None)
}

fn has_error_type(line: &str) -> bool {
    const NOT_CODES: [&str; 5] = ["ERROR", "ERRORS", "EXIT", "EXITED", "EXPECTED"];
    is(&ERROR_TYPE_NAME, line)
        || is(&SPECIFIC_PHRASE, line)
        || ERRNO_CODE
            .as_ref()
            .is_some_and(|re| re.find_iter(line).any(|m| !NOT_CODES.contains(&m.as_str())))
}

/// Words of three or more letters that are not themselves error words.
fn detail_words(line: &str) -> usize {
    const ERROR_WORDS: [&str; 6] = ["error", "failed", "fail", "failure", "fatal", "exception"];
    line.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3 && !ERROR_WORDS.contains(&w.to_ascii_lowercase().as_str()))
        .count()
}

#[cfg(test)]
pub(super) const PATTERNS: [&Pattern; 19] = [
    &ERROR_WORD,
    &LOCATION,
    &PYTHON_FRAME,
    &PYTEST_NODE,
    &PATH_ONLY,
    &ERROR_TYPE_NAME,
    &ERRNO_CODE,
    &SPECIFIC_PHRASE,
    &EXPECTED_GOT_RE,
    &FIX_RE,
    &WRAPPER,
    &AUTH,
    &QUOTA,
    &DEPENDENCY,
    &SYNTAX,
    &ASSERTION,
    &RUNTIME,
    &BUILD,
    &TEST_FAILURE,
];
