use proptest::prelude::*;

use super::*;

const UTC: TimeZone = TimeZone::UTC;

fn at(text: &str, now: Timestamp, local: TimeZone) -> Option<Timestamp> {
    parse_reset(text, now, local).map(|r| r.at.timestamp())
}

/// An instant written in RFC 3339.
fn ts(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

/// A fixed local zone `hours` from UTC.
fn off(hours: i8) -> TimeZone {
    TimeZone::fixed(jiff::tz::offset(hours))
}

#[test]
fn every_form_from_the_issue() {
    let now = ts("2026-11-21T00:12:40Z");
    #[rustfmt::skip]
    let cases: &[(&str, TimeZone, Timestamp)] = &[
        ("Claude AI usage limit reached|1763700000", UTC, ts("2025-11-21T04:40:00Z")),
        ("Claude AI usage limit reached|1763700000000", UTC, ts("2025-11-21T04:40:00Z")),
        // 03:12:40 in Moscow now, so 3:30am is today.
        ("resets 3:30am (Europe/Moscow)", UTC, ts("2026-11-21T00:30:00Z")),
        ("5-hour limit reached ∙ resets 9pm", off(2), ts("2026-11-21T19:00:00Z")),
        ("You've hit your usage limit. try again at 3:04 PM.", UTC, ts("2026-11-21T15:04:00Z")),
        ("try again at Nov 22nd, 2026 3:04 PM", off(-5), ts("2026-11-22T20:04:00Z")),
        (r#"{"error":{"type":"rate_limit_error","retry_after": 30}}"#, UTC, ts("2026-11-21T00:13:10Z")),
        ("Retry-After: 120", UTC, ts("2026-11-21T00:14:40Z")),
        ("retry_after_ms=1500", UTC, ts("2026-11-21T00:12:41.5Z")),
        ("Please try again in 2 hours 5 minutes.", UTC, ts("2026-11-21T02:17:40Z")),
        ("Rate limited, retry in 6m0s", UTC, ts("2026-11-21T00:18:40Z")),
        ("✻ Session limit reached · Retrying in 6s (3:12am) · attempt 5/10", UTC, ts("2026-11-21T03:12:00Z")),
        ("limit resets at 15:04", off(1), ts("2026-11-21T14:04:00Z")),
        ("quota resets at 2026-11-22 15:04", off(1), ts("2026-11-22T14:04:00Z")),
        (r#"{"resets_at":"2026-11-22T15:04:05+03:00"}"#, UTC, ts("2026-11-22T12:04:05Z")),
        (r#"{"reset_at":"2026-11-22T15:04:05Z"}"#, off(9), ts("2026-11-22T15:04:05Z")),
        ("anthropic-ratelimit-unified-reset: 1763700000", UTC, ts("2025-11-21T04:40:00Z")),
        ("Retry-After: Sun, 22 Nov 2026 07:28:00 GMT", UTC, ts("2026-11-22T07:28:00Z")),
        ("resets 9pm (America/New_York)", UTC, ts("2026-11-21T02:00:00Z")),
        ("resets 3pm (UTC)", off(5), ts("2026-11-21T15:00:00Z")),
        ("resets 3pm UTC", off(5), ts("2026-11-21T15:00:00Z")),
        ("try again at Nov 22nd 3:04 PM", UTC, ts("2026-11-22T15:04:00Z")),
    ];
    for (text, local, want) in cases {
        assert_eq!(at(text, now, local.clone()), Some(*want), "{text}");
    }
}

#[test]
fn clock_times_around_midnight_and_noon() {
    #[rustfmt::skip]
    let cases: &[(&str, Timestamp, Timestamp)] = &[
        ("resets 12am", ts("2026-11-21T23:30:00Z"), ts("2026-11-22T00:00:00Z")),
        ("resets 12:30am", ts("2026-11-21T23:30:00Z"), ts("2026-11-22T00:30:00Z")),
        ("resets 12pm", ts("2026-11-21T11:59:00Z"), ts("2026-11-21T12:00:00Z")),
        ("resets 12pm", ts("2026-11-21T12:00:00Z"), ts("2026-11-22T12:00:00Z")),
        ("resets 11:59pm", ts("2026-11-21T23:59:30Z"), ts("2026-11-22T23:59:00Z")),
        ("resets 0:05", ts("2026-11-21T23:59:00Z"), ts("2026-11-22T00:05:00Z")),
        ("resets 1am", ts("2026-12-31T23:00:00Z"), ts("2027-01-01T01:00:00Z")),
        // The year rolls over for a month name without a year.
        ("try again at Jan 1st 12:00 AM", ts("2026-12-31T23:00:00Z"), ts("2027-01-01T00:00:00Z")),
    ];
    for (text, now, want) in cases {
        assert_eq!(at(text, *now, UTC), Some(*want), "{text} at {now}");
    }
}

#[test]
fn explicit_tomorrow_skips_today() {
    let now = ts("2026-11-21T08:00:00Z");
    #[rustfmt::skip]
    let cases: &[(&str, Timestamp)] = &[
        ("resets tomorrow at 9am", ts("2026-11-22T09:00:00Z")),
        ("resets 9am tomorrow", ts("2026-11-22T09:00:00Z")),
        ("resets 9am (Europe/Moscow) tomorrow", ts("2026-11-22T06:00:00Z")),
        ("resets tomorrow 7am", ts("2026-11-22T07:00:00Z")),
    ];
    for (text, want) in cases {
        assert_eq!(at(text, now, UTC), Some(*want), "{text}");
    }
}

#[test]
fn named_zones_follow_daylight_saving() {
    #[rustfmt::skip]
    let cases: &[(&str, Timestamp, Timestamp)] = &[
        // Berlin is +01:00 in winter and +02:00 in summer.
        ("resets 3:30am (Europe/Berlin)", ts("2026-01-15T00:00:00Z"), ts("2026-01-15T02:30:00Z")),
        ("resets 3:30am (Europe/Berlin)", ts("2026-07-15T00:00:00Z"), ts("2026-07-15T01:30:00Z")),
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST; the missing 2:30 moves forward an hour.
        ("resets 2:30am (Europe/Berlin)", ts("2026-03-29T00:30:00Z"), ts("2026-03-29T01:30:00Z")),
        // 2026-10-25: 02:00-03:00 happens twice; the first (CEST) one counts.
        ("resets 2:30am (Europe/Berlin)", ts("2026-10-24T23:00:00Z"), ts("2026-10-25T00:30:00Z")),
        // The day after a change uses the new offset.
        ("resets 9am (Europe/Berlin) tomorrow", ts("2026-03-28T12:00:00Z"), ts("2026-03-29T07:00:00Z")),
        ("resets 9pm (America/New_York)", ts("2026-07-01T12:00:00Z"), ts("2026-07-02T01:00:00Z")),
    ];
    for (text, now, want) in cases {
        let got = parse_reset(text, *now, UTC);
        assert_eq!(
            got.as_ref().map(|r| r.at.timestamp()),
            Some(*want),
            "{text} at {now}"
        );
        // The instant keeps the zone's offset for display.
        let offset = got.map(|r| r.at.offset());
        assert_ne!(offset, Some(jiff::tz::Offset::UTC), "{text}");
    }
}

#[test]
fn unknown_zone_reads_as_local_and_says_so() {
    let now = ts("2026-11-21T00:00:00Z");
    let got = parse_reset("resets 3:30am (Mars/Olympus)", now, off(3));
    let got = got.expect("a reset");
    assert_eq!(got.at.timestamp(), ts("2026-11-21T00:30:00Z"));
    assert!(
        got.evidence.contains("unknown time zone Mars/Olympus"),
        "{}",
        got.evidence
    );
}

#[test]
fn precedence_and_evidence() {
    let now = ts("2026-11-21T00:12:40Z");
    let capture = "✻ Session limit reached · Retrying in 6s (3:12am) · attempt 5/10";
    let got = parse_reset(capture, now, UTC).expect("a reset");
    assert_eq!(got.evidence, "Retrying in 6s (3:12am)");

    // An exact instant beats a clock time, which beats a duration.
    let mixed = "usage limit reached|1763700000\nresets 9pm\nretry_after: 30";
    assert_eq!(at(mixed, now, UTC), Some(ts("2025-11-21T04:40:00Z")));
    // Within a rank the last (newest) line wins.
    let screen = "Retrying in 6s (3:12am) · attempt 5/10\nRetrying in 10s (3:13am) · attempt 6/10";
    assert_eq!(at(screen, now, UTC), Some(ts("2026-11-21T03:13:00Z")));
}

#[test]
fn text_without_a_reset_time() {
    let now = ts("2026-11-21T00:12:40Z");
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
        let now = Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH);
        let local = jiff::tz::Offset::from_seconds(off).map_or(TimeZone::UTC, TimeZone::fixed);
        let _ = parse_reset(&text, now, local);
    }

    #[test]
    fn clock_times_land_within_a_day(
        text in r"(resets|try again at|Retrying in [0-9]{1,3}s \() (1[0-2]|[1-9])(:[0-5][0-9])? ?(am|pm|AM|PM)( \((Europe/Berlin|UTC|Asia/Tokyo|Bad/Zone)\))?",
        secs in 0i64..4_000_000_000,
    ) {
        let now = Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH);
        let got = parse_reset(&text, now, off(2));
        let at = got.map(|r| r.at.timestamp());
        prop_assert!(at.is_some(), "{}", text);
        let at = at.unwrap_or(now);
        prop_assert!(at > now && at <= now + jiff::SignedDuration::from_hours(25), "{} at {} -> {}", text, now, at);
    }
}
