//! Turns matched pieces (numbers, am/pm, offsets, units) into `jiff` values; out-of-range input
//! gives `None`, never a panic.

use jiff::Zoned;
use jiff::civil;
use jiff::tz::Offset;
use jiff::tz::TimeZone;
use regex::Captures;

pub(super) fn num(caps: &Captures<'_>, name: &str) -> Option<i32> {
    caps.name(name)?.as_str().parse().ok()
}

/// The clock time in `h`, `mi`, `s`, `ampm`; 12am is midnight and 12pm noon.
pub(super) fn clock(caps: &Captures<'_>) -> Option<civil::Time> {
    let h = num(caps, "h")?;
    let mi = num(caps, "mi").unwrap_or(0);
    let s = num(caps, "s").unwrap_or(0);
    let hour = match caps.name("ampm").map(|m| m.as_str().to_ascii_lowercase()) {
        None => h,
        Some(_) if !(1..=12).contains(&h) => return None,
        Some(ampm) if ampm.starts_with('a') => h % 12,
        Some(_) => h % 12 + 12,
    };
    civil::Time::new(
        i8::try_from(hour).ok()?,
        i8::try_from(mi).ok()?,
        i8::try_from(s).ok()?,
        0,
    )
    .ok()
}

pub(super) fn civil_datetime(
    y: i32,
    mo: i32,
    d: i32,
    h: i32,
    mi: i32,
    s: i32,
) -> Option<civil::DateTime> {
    let date = civil::Date::new(
        i16::try_from(y).ok()?,
        i8::try_from(mo).ok()?,
        i8::try_from(d).ok()?,
    )
    .ok()?;
    let time = civil::Time::new(
        i8::try_from(h).ok()?,
        i8::try_from(mi).ok()?,
        i8::try_from(s).ok()?,
        0,
    )
    .ok()?;
    Some(date.to_datetime(time))
}

pub(super) fn month_number(name: &str) -> Option<i32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == lower)
        .and_then(|i| i32::try_from(i + 1).ok())
}

/// `Z`, `+03:00` or `-0500`.
pub(super) fn parse_offset(text: &str) -> Option<Offset> {
    if text.eq_ignore_ascii_case("z") {
        return Some(Offset::UTC);
    }
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let h: i32 = digits.get(0..2)?.parse().ok()?;
    let m: i32 = digits.get(2..4)?.parse().ok()?;
    if h > 25 || m > 59 {
        return None;
    }
    Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()
}

pub(super) fn fixed_zone(offset: Offset) -> TimeZone {
    TimeZone::fixed(offset)
}

/// `dt` read in `zone` by jiff's "compatible" rule (a skipped time moves forward, a repeated one
/// takes the first).
pub(super) fn in_zone(dt: civil::DateTime, zone: &TimeZone) -> Option<Zoned> {
    zone.to_ambiguous_zoned(dt).compatible().ok()
}

pub(super) fn duration_ms(n: &str, unit: &str) -> Option<f64> {
    let n: f64 = n.parse().ok()?;
    let unit = unit.to_ascii_lowercase();
    let scale = match unit.as_str() {
        "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1.0,
        u if u.starts_with('s') => 1_000.0,
        u if u.starts_with('m') => 60_000.0,
        u if u.starts_with('h') => 3_600_000.0,
        u if u.starts_with('d') => 86_400_000.0,
        _ => return None,
    };
    Some(n * scale)
}
