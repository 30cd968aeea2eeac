//! The regular expressions behind `parse_reset`, compiled once; no logic lives here.

use std::sync::LazyLock;

use regex::Regex;

pub(super) const CLOCK: &str =
    r"(?P<h>\d{1,2})(?::(?P<mi>\d{2}))?(?::(?P<s>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?";
const UNIT: &str =
    r"(?:milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)";

// Constants, every one compiled by the tests: a failure is a bug, never a runtime condition.
#[allow(clippy::expect_used)]
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("static reset-time pattern")
}

pub(super) static UNIX: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)(?:limit reached\s*\||reset[-_]?(?:s[-_]?)?(?:at|time)?["']?\s*[:=]\s*["']?)(?P<n>\d{10}(?:\d{3})?)\b"#,
    )
});
pub(super) static HTTP_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)retry-after\s*:\s*(?P<d>[a-z]{3}, \d{1,2} [a-z]{3} \d{4} \d{2}:\d{2}:\d{2}) (?P<z>GMT|UTC|[+-]\d{4})",
    )
});
pub(super) static ISO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?(?P<off>\s?Z\b|[+-]\d{2}:?\d{2}\b)?",
    )
});
pub(super) static MONTH_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?(?:\s+(?P<y>\d{{4}}))?,?\s+(?:at\s+)?{CLOCK}\b"
    ))
});
pub(super) static CLOCK_TIME: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"(?i)\b{CLOCK}\b")));
pub(super) static RETRY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)retry[-_]?after(?P<ms>[-_]?ms)?(?:[-_]?s(?:ec(?:ond)?s?)?)?["']?\s*[:=]\s*["']?(?P<n>\d+(?:\.\d+)?)"#,
    )
});
pub(super) static IN_DURATION: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(?:retry(?:ing)?|try(?:ing)?\s+again|resets?|available(?:\s+again)?)\s+in\s+(?P<dur>\d+(?:\.\d+)?\s*{UNIT}(?:(?:\s*,\s*|\s+and\s+|\s*)\d+(?:\.\d+)?\s*{UNIT})*)\b"
    ))
});
pub(super) static DURATION_PART: LazyLock<Regex> =
    LazyLock::new(|| re(&format!(r"(?i)(?P<n>\d+(?:\.\d+)?)\s*(?P<u>{UNIT})")));
pub(super) static KEYWORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)reset|try again|retry|available|until|wait"));
pub(super) static TOMORROW_BEFORE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\btomorrow\b"));
pub(super) static SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:\s*(?P<t1>(?i:tomorrow)))?(?:\s*\(\s*(?P<zp>[A-Za-z][\w+\-]*(?:/[\w+\-]+)*)\s*\)|\s+(?P<zb>UTC|GMT)\b)?(?:\s*(?P<t2>(?i:tomorrow)))?",
    )
});
