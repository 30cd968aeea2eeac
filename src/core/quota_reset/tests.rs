use proptest::prelude::*;
use time::macros::{datetime, offset};

use super::*;

const UTC: UtcOffset = UtcOffset::UTC;

fn at(text: &str, now: OffsetDateTime, local: UtcOffset) -> Option<OffsetDateTime> {
    parse_reset(text, now, local).map(|r| r.at)
}

#[test]
fn every_form_from_the_issue() {
    let now = datetime!(2026-11-21 00:12:40 UTC);
    #[rustfmt::skip]
    let cases: &[(&str, UtcOffset, OffsetDateTime)] = &[
        ("Claude AI usage limit reached|1763700000", UTC, datetime!(2025-11-21 04:40 UTC)),
        ("Claude AI usage limit reached|1763700000000", UTC, datetime!(2025-11-21 04:40 UTC)),
        // 03:12:40 in Moscow now, so 3:30am is today.
        ("resets 3:30am (Europe/Moscow)", UTC, datetime!(2026-11-21 00:30 UTC)),
        ("5-hour limit reached ∙ resets 9pm", offset!(+2), datetime!(2026-11-21 19:00 UTC)),
        ("You've hit your usage limit. try again at 3:04 PM.", UTC, datetime!(2026-11-21 15:04 UTC)),
        ("try again at Nov 22nd, 2026 3:04 PM", offset!(-5), datetime!(2026-11-22 20:04 UTC)),
        (r#"{"error":{"type":"rate_limit_error","retry_after": 30}}"#, UTC, datetime!(2026-11-21 00:13:10 UTC)),
        ("Retry-After: 120", UTC, datetime!(2026-11-21 00:14:40 UTC)),
        ("retry_after_ms=1500", UTC, datetime!(2026-11-21 00:12:41.5 UTC)),
        ("Please try again in 2 hours 5 minutes.", UTC, datetime!(2026-11-21 02:17:40 UTC)),
        ("Rate limited, retry in 6m0s", UTC, datetime!(2026-11-21 00:18:40 UTC)),
        ("✻ Session limit reached · Retrying in 6s (3:12am) · attempt 5/10", UTC, datetime!(2026-11-21 03:12 UTC)),
        ("limit resets at 15:04", offset!(+1), datetime!(2026-11-21 14:04 UTC)),
        ("quota resets at 2026-11-22 15:04", offset!(+1), datetime!(2026-11-22 14:04 UTC)),
        (r#"{"resets_at":"2026-11-22T15:04:05+03:00"}"#, UTC, datetime!(2026-11-22 12:04:05 UTC)),
        (r#"{"reset_at":"2026-11-22T15:04:05Z"}"#, offset!(+9), datetime!(2026-11-22 15:04:05 UTC)),
        ("anthropic-ratelimit-unified-reset: 1763700000", UTC, datetime!(2025-11-21 04:40 UTC)),
        ("Retry-After: Sun, 22 Nov 2026 07:28:00 GMT", UTC, datetime!(2026-11-22 07:28 UTC)),
        ("resets 9pm (America/New_York)", UTC, datetime!(2026-11-21 02:00 UTC)),
        ("resets 3pm (UTC)", offset!(+5), datetime!(2026-11-21 15:00 UTC)),
        ("resets 3pm UTC", offset!(+5), datetime!(2026-11-21 15:00 UTC)),
        ("try again at Nov 22nd 3:04 PM", UTC, datetime!(2026-11-22 15:04 UTC)),
    ];
    for (text, local, want) in cases {
        assert_eq!(at(text, now, *local), Some(*want), "{text}");
    }
}

#[test]
fn clock_times_around_midnight_and_noon() {
    #[rustfmt::skip]
    let cases: &[(&str, OffsetDateTime, OffsetDateTime)] = &[
        ("resets 12am", datetime!(2026-11-21 23:30 UTC), datetime!(2026-11-22 00:00 UTC)),
        ("resets 12:30am", datetime!(2026-11-21 23:30 UTC), datetime!(2026-11-22 00:30 UTC)),
        ("resets 12pm", datetime!(2026-11-21 11:59 UTC), datetime!(2026-11-21 12:00 UTC)),
        ("resets 12pm", datetime!(2026-11-21 12:00 UTC), datetime!(2026-11-22 12:00 UTC)),
        ("resets 11:59pm", datetime!(2026-11-21 23:59:30 UTC), datetime!(2026-11-22 23:59 UTC)),
        ("resets 0:05", datetime!(2026-11-21 23:59 UTC), datetime!(2026-11-22 00:05 UTC)),
        ("resets 1am", datetime!(2026-12-31 23:00 UTC), datetime!(2027-01-01 01:00 UTC)),
        // The year rolls over for a month name without a year.
        ("try again at Jan 1st 12:00 AM", datetime!(2026-12-31 23:00 UTC), datetime!(2027-01-01 00:00 UTC)),
    ];
    for (text, now, want) in cases {
        assert_eq!(at(text, *now, UTC), Some(*want), "{text} at {now}");
    }
}

#[test]
fn explicit_tomorrow_skips_today() {
    let now = datetime!(2026-11-21 08:00 UTC);
    #[rustfmt::skip]
    let cases: &[(&str, OffsetDateTime)] = &[
        ("resets tomorrow at 9am", datetime!(2026-11-22 09:00 UTC)),
        ("resets 9am tomorrow", datetime!(2026-11-22 09:00 UTC)),
        ("resets 9am (Europe/Moscow) tomorrow", datetime!(2026-11-22 06:00 UTC)),
        ("resets tomorrow 7am", datetime!(2026-11-22 07:00 UTC)),
    ];
    for (text, want) in cases {
        assert_eq!(at(text, now, UTC), Some(*want), "{text}");
    }
}

#[test]
fn named_zones_follow_daylight_saving() {
    #[rustfmt::skip]
    let cases: &[(&str, OffsetDateTime, OffsetDateTime)] = &[
        // Berlin is +01:00 in winter and +02:00 in summer.
        ("resets 3:30am (Europe/Berlin)", datetime!(2026-01-15 00:00 UTC), datetime!(2026-01-15 02:30 UTC)),
        ("resets 3:30am (Europe/Berlin)", datetime!(2026-07-15 00:00 UTC), datetime!(2026-07-15 01:30 UTC)),
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST; the missing 2:30 moves forward an hour.
        ("resets 2:30am (Europe/Berlin)", datetime!(2026-03-29 00:30 UTC), datetime!(2026-03-29 01:30 UTC)),
        // 2026-10-25: 02:00-03:00 happens twice; the first (CEST) one counts.
        ("resets 2:30am (Europe/Berlin)", datetime!(2026-10-24 23:00 UTC), datetime!(2026-10-25 00:30 UTC)),
        // The day after a change uses the new offset.
        ("resets 9am (Europe/Berlin) tomorrow", datetime!(2026-03-28 12:00 UTC), datetime!(2026-03-29 07:00 UTC)),
        ("resets 9pm (America/New_York)", datetime!(2026-07-01 12:00 UTC), datetime!(2026-07-02 01:00 UTC)),
    ];
    for (text, now, want) in cases {
        let got = parse_reset(text, *now, UTC);
        assert_eq!(got.as_ref().map(|r| r.at), Some(*want), "{text} at {now}");
        // The instant keeps the zone's offset for display.
        let offset = got.map(|r| r.at.offset());
        assert_ne!(offset, Some(UTC), "{text}");
    }
}

#[test]
fn unknown_zone_reads_as_local_and_says_so() {
    let now = datetime!(2026-11-21 00:00 UTC);
    let got = parse_reset("resets 3:30am (Mars/Olympus)", now, offset!(+3));
    let got = got.expect("a reset");
    assert_eq!(got.at, datetime!(2026-11-21 00:30 UTC));
    assert!(
        got.evidence.contains("unknown time zone Mars/Olympus"),
        "{}",
        got.evidence
    );
}

#[test]
fn precedence_and_evidence() {
    let now = datetime!(2026-11-21 00:12:40 UTC);
    let capture = "✻ Session limit reached · Retrying in 6s (3:12am) · attempt 5/10";
    let got = parse_reset(capture, now, UTC).expect("a reset");
    assert_eq!(got.evidence, "Retrying in 6s (3:12am)");

    // An exact instant beats a clock time, which beats a duration.
    let mixed = "usage limit reached|1763700000\nresets 9pm\nretry_after: 30";
    assert_eq!(at(mixed, now, UTC), Some(datetime!(2025-11-21 04:40 UTC)));
    // Within a rank the last (newest) line wins.
    let screen = "Retrying in 6s (3:12am) · attempt 5/10\nRetrying in 10s (3:13am) · attempt 6/10";
    assert_eq!(at(screen, now, UTC), Some(datetime!(2026-11-21 03:13 UTC)));
}

#[test]
fn text_without_a_reset_time() {
    let now = datetime!(2026-11-21 00:12:40 UTC);
    for text in [
        "",
        "■ Quota exceeded. Check your plan and billing details.",
        "Usage limit reached for gemini-3.5-flash-lite.",
        "API Error: Request rejected (429) · Rate limited",
        "2026-11-21T00:12:40.123Z  WARN codex_core::client: stream error 429",
        "attempt 5/10 at 15 percent",
        "resets 13pm",
        "resets 25:00",
        "try again at Feb 30th, 2026 3:04 PM",
    ] {
        assert_eq!(parse_reset(text, now, UTC), None, "{text}");
    }
}

proptest! {
    #[test]
    fn never_panics(text in ".{0,200}", secs in -1_000_000_000_000i64..1_000_000_000_000, off in -86_399i32..86_400) {
        let now = OffsetDateTime::from_unix_timestamp(secs).unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let local = UtcOffset::from_whole_seconds(off).unwrap_or(UtcOffset::UTC);
        let _ = parse_reset(&text, now, local);
    }

    #[test]
    fn clock_times_land_within_a_day(
        text in r"(resets|try again at|Retrying in [0-9]{1,3}s \() (1[0-2]|[1-9])(:[0-5][0-9])? ?(am|pm|AM|PM)( \((Europe/Berlin|UTC|Asia/Tokyo|Bad/Zone)\))?",
        secs in 0i64..4_000_000_000,
    ) {
        let now = OffsetDateTime::from_unix_timestamp(secs).unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let got = parse_reset(&text, now, offset!(+2));
        let at = got.map(|r| r.at);
        prop_assert!(at.is_some(), "{}", text);
        let at = at.unwrap_or(now);
        prop_assert!(at > now && at <= now + Duration::hours(25), "{} at {} -> {}", text, now, at);
    }
}
