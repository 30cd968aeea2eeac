//! Times said the way a person reads them: spans (`2 h 9 min`), clock times in the operator's
//! zone (`15:00`, `Mon 15:00`) and waits (`15:00 (in 2 h 9 min)`). Now and the zone are passed in.

use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The moment a view is made and the operator's zone, read once by the shell.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalNow {
    pub now: Timestamp,
    pub zone: TimeZone,
}

/// A span in the largest units that matter: `8 s`, `4 min 5 s`, `2 h 9 min`, `3 d 4 h`.
pub fn span(d: Duration) -> String {
    let secs = d.as_secs();
    let (days, hours, mins, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    let parts: Vec<String> = if days > 0 {
        vec![format!("{days} d"), format!("{hours} h")]
    } else if hours > 0 {
        vec![format!("{hours} h"), format!("{mins} min")]
    } else if mins >= 10 {
        vec![format!("{mins} min")]
    } else if mins > 0 {
        vec![format!("{mins} min"), format!("{s} s")]
    } else {
        vec![format!("{s} s")]
    };
    let kept: Vec<String> = parts
        .iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || !p.starts_with("0 "))
        .map(|(_, p)| p.clone())
        .collect();
    kept.join(" ")
}

/// `at` in `zone`: `15:00` the same day, `Mon 15:00` within the week, else `2026-12-01 15:00`.
pub fn clock_time(at: Timestamp, zone: &TimeZone, now: Timestamp) -> String {
    let at = at.to_zoned(zone.clone());
    let today = now.to_zoned(zone.clone()).date();
    let days_apart = (at.date() - today).get_days().abs();
    if at.date() == today {
        at.strftime("%H:%M").to_string()
    } else if days_apart < 7 {
        at.strftime("%a %H:%M").to_string()
    } else {
        at.strftime("%Y-%m-%d %H:%M").to_string()
    }
}

/// `15:00 (in 2 h 9 min)` or, for a moment already past, `15:00 (2 h 9 min ago)`.
pub fn clock_time_from_now(at: Timestamp, zone: &TimeZone, now: Timestamp) -> String {
    format!("{} ({})", clock_time(at, zone, now), from_now(at, now))
}

/// `in 2 h 9 min`, or `30 min ago` for a moment already past.
pub fn from_now(at: Timestamp, now: Timestamp) -> String {
    let signed = at.duration_since(now);
    let apart = span(signed.unsigned_abs());
    if signed.is_negative() {
        format!("{apart} ago")
    } else {
        format!("in {apart}")
    }
}

/// A wait under this is counted in seconds; a longer one is said as the clock time it ends.
pub const COUNTDOWN_UNDER: Duration = Duration::from_secs(60);

/// When a retry comes, for the status bar: `7s` under a minute, else its clock time.
pub fn countdown(remaining: Duration, now: Timestamp, zone: &TimeZone) -> String {
    if remaining < COUNTDOWN_UNDER {
        return format!("{}s", remaining.as_secs_f64().ceil() as u64);
    }
    clock_time(after(now, remaining), zone, now)
}

/// When a retry comes, for the queue's note: `retry 7s`, or `at 15:00 (in 2 h 9 min)` (clock
/// time first, so a narrow queue still shows it).
pub fn retry_note(remaining: Duration, now: Timestamp, zone: &TimeZone) -> String {
    if remaining < COUNTDOWN_UNDER {
        return format!("retry {}", countdown(remaining, now, zone));
    }
    format!(
        "at {}",
        clock_time_from_now(after(now, remaining), zone, now)
    )
}

fn after(now: Timestamp, wait: Duration) -> Timestamp {
    jiff::SignedDuration::try_from(wait)
        .ok()
        .and_then(|wait| now.checked_add(wait).ok())
        .unwrap_or(Timestamp::MAX)
}

/// A local time of day with its date for tables: `2026-11-29 01:04:06`.
pub fn local_date_time(at: Timestamp, zone: &TimeZone) -> String {
    at.to_zoned(zone.clone())
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// An ISO time with the zone's offset, for JSON: `2026-11-29T02:04:06+01:00`.
pub fn local_iso(at: Timestamp, zone: &TimeZone) -> String {
    at.to_zoned(zone.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").expect("zone")
    }

    #[test]
    fn spans_keep_the_units_that_matter() {
        let table = [
            (0, "0 s"),
            (8, "8 s"),
            (60, "1 min"),
            (245, "4 min 5 s"),
            (1800, "30 min"),
            (1845, "30 min"),
            (3600, "1 h"),
            (7740, "2 h 9 min"),
            (54_569, "15 h 9 min"),
            (86_400, "1 d"),
            (273_600, "3 d 4 h"),
        ];
        for (secs, want) in table {
            assert_eq!(span(Duration::from_secs(secs)), want, "{secs} s");
        }
    }

    #[test]
    fn clock_times_name_the_day_only_when_it_differs() {
        let now = at("2026-11-29T11:51:00Z"); // 12:51 in Berlin
        let zone = berlin();
        let table = [
            ("2026-11-29T14:00:00Z", "15:00"),
            ("2026-11-29T23:30:00Z", "Mon 00:30"),
            ("2026-11-28T20:00:00Z", "Sat 21:00"),
            ("2026-12-10T14:00:00Z", "2026-12-10 15:00"),
        ];
        for (when, want) in table {
            assert_eq!(clock_time(at(when), &zone, now), want, "{when}");
        }
    }

    #[test]
    fn a_wait_says_the_clock_time_and_how_far_it_is() {
        let now = at("2026-11-29T11:51:00Z");
        let zone = berlin();
        assert_eq!(
            clock_time_from_now(at("2026-11-29T14:00:00Z"), &zone, now),
            "15:00 (in 2 h 9 min)"
        );
        assert_eq!(
            clock_time_from_now(at("2026-11-29T11:21:00Z"), &zone, now),
            "12:21 (30 min ago)"
        );
        // The same moment in UTC reads as a UTC clock.
        assert_eq!(
            clock_time_from_now(at("2026-11-29T14:00:00Z"), &TimeZone::UTC, now),
            "14:00 (in 2 h 9 min)"
        );
    }

    #[test]
    fn retries_count_seconds_then_say_the_clock_time() {
        let now = at("2026-11-29T01:04:00Z");
        let zone = berlin();
        let table = [
            (7, "7s", "retry 7s"),
            (59, "59s", "retry 59s"),
            (60, "02:05", "at 02:05 (in 1 min)"),
            (54_569, "17:13", "at 17:13 (in 15 h 9 min)"),
            (90_000, "Mon 03:04", "at Mon 03:04 (in 1 d 1 h)"),
        ];
        for (secs, short, full) in table {
            let wait = Duration::from_secs(secs);
            assert_eq!(countdown(wait, now, &zone), short, "{secs} s");
            assert_eq!(retry_note(wait, now, &zone), full, "{secs} s");
        }
    }

    #[test]
    fn table_and_json_times_are_local() {
        let when = at("2026-11-29T01:04:06Z");
        assert_eq!(local_date_time(when, &berlin()), "2026-11-29 02:04:06");
        assert_eq!(local_iso(when, &berlin()), "2026-11-29T02:04:06+01:00");
        assert_eq!(local_iso(when, &TimeZone::UTC), "2026-11-29T01:04:06+00:00");
    }
}
