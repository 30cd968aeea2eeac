//! Reads the moment a quota resets out of an agent's error text: `parse_reset(text, now, local)`
//! returns the instant and the text it came from. Reads no clock, zone or file.
//!
//! Precedence when several forms appear (the most specific absolute time wins; within one rank the
//! last match wins, because screens and logs grow downwards so the last line is the newest):
//! 1. exact instants: a unix time (`limit reached|1763700000`, `"resets_at": 1763700000`, seconds
//!    or milliseconds), ISO 8601 with an offset, a `Retry-After` HTTP date;
//! 2. a calendar date with a clock time (`Nov 22nd, 2026 3:04 PM`, `2026-11-22 15:04`);
//! 3. a clock time (`resets 3:30am`, `try again at 3:04 PM`, `(3:12am)`): its next occurrence;
//! 4. a duration (`retry_after: 30`, `Retry-After: 30`, `Retrying in 6s`, `try again in 2 hours`).
//!
//! So `Retrying in 6s (3:12am)` resets at 3:12am: the seconds are the CLI's own back-off, the
//! clock time is the provider's reset. ISO times, dates and clock times count only when a keyword
//! (`reset`, `retry`, `try again`, `available`, `until`, `wait`) precedes them on the same line,
//! so log timestamps are not read as reset times; a zone is named right after the time, as
//! `(Europe/Moscow)` or `UTC`, and an unknown name falls back to `local` with a note.

use jiff::civil;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, Zoned};

mod convert;
mod patterns;
#[cfg(test)]
mod tests;

use convert::{
    civil_datetime, clock, duration_ms, fixed_zone, in_zone, month_number, num, parse_offset,
};
use patterns::{
    CLOCK_TIME, DURATION_PART, HTTP_DATE, IN_DURATION, ISO, KEYWORD, MONTH_NAME, RETRY_AFTER,
    SUFFIX, TOMORROW_BEFORE, UNIX,
};

/// When a quota resets, and the text that said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reset {
    /// In the zone the text named (or the local one), for display.
    pub at: Zoned,
    /// The matched text, plus a note when an unknown zone name was read as local time.
    pub evidence: String,
}

/// How specific a form is; a higher rank wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Duration,
    Clock,
    DateTime,
    Exact,
}

struct Candidate {
    rank: Rank,
    start: usize,
    reset: Reset,
}

/// Finds the reset time in `text`, reading clock times in `local` unless a zone is named.
pub fn parse_reset(text: &str, now: Timestamp, local: TimeZone) -> Option<Reset> {
    let ctx = Context { text, now, local };
    let mut found = Vec::new();
    ctx.unix_times(&mut found);
    ctx.http_dates(&mut found);
    ctx.iso_times(&mut found);
    ctx.month_name_times(&mut found);
    ctx.clock_times(&mut found);
    ctx.durations(&mut found);
    found
        .into_iter()
        .max_by_key(|c| (c.rank, c.start))
        .map(|c| c.reset)
}

/// How far before a time its keyword may stand, in bytes.
const KEYWORD_WINDOW: usize = 48;

struct Context<'a> {
    text: &'a str,
    now: Timestamp,
    local: TimeZone,
}

/// What follows a time: `tomorrow` and a zone name.
struct Suffix {
    end: usize,
    tomorrow: bool,
    zone: TimeZone,
    note: Option<String>,
}

impl Context<'_> {
    /// The start of the keyword that anchors a time starting at `start`, if any.
    fn keyword_before(&self, start: usize) -> Option<usize> {
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let mut from = start.saturating_sub(KEYWORD_WINDOW).max(line_start);
        while !self.text.is_char_boundary(from) {
            from += 1;
        }
        KEYWORD
            .find_iter(&self.text[from..start])
            .last()
            .map(|m| from + m.start())
    }

    fn suffix(&self, end: usize) -> Suffix {
        let rest = &self.text[end..];
        let local = self.local.clone();
        let Some(caps) = SUFFIX.captures(rest) else {
            return Suffix {
                end,
                tomorrow: false,
                zone: local,
                note: None,
            };
        };
        let tomorrow = caps.name("t1").is_some() || caps.name("t2").is_some();
        let name = caps
            .name("zp")
            .or_else(|| caps.name("zb"))
            .map(|m| m.as_str());
        let (zone, note) = match name {
            None => (local, None),
            Some(name) => match TimeZone::get(name) {
                Ok(zone) => (zone, None),
                Err(_) => (
                    local,
                    Some(format!(" [unknown time zone {name}; read as local time]")),
                ),
            },
        };
        let end = end + caps.get(0).map_or(0, |m| m.end());
        Suffix {
            end,
            tomorrow,
            zone,
            note,
        }
    }

    fn push(
        &self,
        found: &mut Vec<Candidate>,
        rank: Rank,
        span: (usize, usize),
        at: Zoned,
        note: Option<String>,
    ) {
        let mut end = span.1;
        // `(3:12am)`: keep the closing parenthesis of an opened one.
        let open = self.text[span.0..end].matches('(').count();
        if open > self.text[span.0..end].matches(')').count() && self.text[end..].starts_with(')') {
            end += 1;
        }
        let mut evidence = self.text[span.0..end].trim().to_string();
        evidence.extend(note);
        found.push(Candidate {
            rank,
            start: span.0,
            reset: Reset { at, evidence },
        });
    }

    fn unix_times(&self, found: &mut Vec<Candidate>) {
        for caps in UNIX.captures_iter(self.text) {
            let (Some(all), Some(n)) = (caps.get(0), caps.name("n")) else {
                continue;
            };
            let Ok(value) = n.as_str().parse::<i64>() else {
                continue;
            };
            let secs = if n.as_str().len() == 13 {
                value / 1000
            } else {
                value
            };
            if let Ok(at) = Timestamp::from_second(secs).map(|t| t.to_zoned(TimeZone::UTC)) {
                self.push(found, Rank::Exact, (all.start(), all.end()), at, None);
            }
        }
    }

    fn http_dates(&self, found: &mut Vec<Candidate>) {
        for caps in HTTP_DATE.captures_iter(self.text) {
            let (Some(all), Some(d), Some(z)) = (caps.get(0), caps.name("d"), caps.name("z"))
            else {
                continue;
            };
            let zone = if z.as_str().starts_with(['+', '-']) {
                z.as_str()
            } else {
                "+0000"
            };
            let full = format!("{} {zone}", d.as_str());
            if let Ok(at) = jiff::fmt::rfc2822::DateTimeParser::new().parse_zoned(&full) {
                self.push(found, Rank::Exact, (all.start(), all.end()), at, None);
            }
        }
    }

    fn iso_times(&self, found: &mut Vec<Candidate>) {
        for caps in ISO.captures_iter(self.text) {
            let Some(all) = caps.get(0) else { continue };
            let Some(anchor) = self.keyword_before(all.start()) else {
                continue;
            };
            let (Some(y), Some(mo), Some(d)) = (num(&caps, "y"), num(&caps, "mo"), num(&caps, "d"))
            else {
                continue;
            };
            let (Some(h), Some(mi)) = (num(&caps, "h"), num(&caps, "mi")) else {
                continue;
            };
            let s = num(&caps, "s").unwrap_or(0);
            let Some(dt) = civil_datetime(y, mo, d, h, mi, s) else {
                continue;
            };
            match caps.name("off").map(|m| m.as_str().trim()) {
                Some(off) => {
                    let Some(offset) = parse_offset(off) else {
                        continue;
                    };
                    if let Some(at) = in_zone(dt, &fixed_zone(offset)) {
                        self.push(found, Rank::Exact, (anchor, all.end()), at, None);
                    }
                }
                None => {
                    let suffix = self.suffix(all.end());
                    if let Some(at) = in_zone(dt, &suffix.zone) {
                        self.push(found, Rank::DateTime, (anchor, suffix.end), at, suffix.note);
                    }
                }
            }
        }
    }

    fn month_name_times(&self, found: &mut Vec<Candidate>) {
        for caps in MONTH_NAME.captures_iter(self.text) {
            let Some(all) = caps.get(0) else { continue };
            let Some(anchor) = self.keyword_before(all.start()) else {
                continue;
            };
            let Some(month) = caps.name("mon").and_then(|m| month_number(m.as_str())) else {
                continue;
            };
            let (Some(day), Some(time)) = (num(&caps, "d"), clock(&caps)) else {
                continue;
            };
            let suffix = self.suffix(all.end());
            let at = match num(&caps, "y") {
                Some(year) => civil_datetime(year, month, day, 0, 0, 0)
                    .and_then(|dt| in_zone(dt.date().to_datetime(time), &suffix.zone)),
                // Without a year, the next such date from now on.
                None => {
                    let year = self.now_in(&suffix.zone).map(|z| i32::from(z.year()));
                    year.and_then(|y| {
                        [y, y + 1].into_iter().find_map(|y| {
                            let dt = civil::Date::new(
                                i16::try_from(y).ok()?,
                                i8::try_from(month).ok()?,
                                i8::try_from(day).ok()?,
                            )
                            .ok()?;
                            in_zone(dt.to_datetime(time), &suffix.zone)
                                .filter(|at| at.timestamp() > self.now)
                        })
                    })
                }
            };
            if let Some(at) = at {
                self.push(found, Rank::DateTime, (anchor, suffix.end), at, suffix.note);
            }
        }
    }

    fn clock_times(&self, found: &mut Vec<Candidate>) {
        // A clock time inside a date (even an invalid one, `Feb 30th 3pm`) is not read alone.
        let dated: Vec<_> = ISO
            .find_iter(self.text)
            .chain(MONTH_NAME.find_iter(self.text))
            .map(|m| m.range())
            .collect();
        for caps in CLOCK_TIME.captures_iter(self.text) {
            let Some(all) = caps.get(0) else { continue };
            if dated
                .iter()
                .any(|r| r.start <= all.start() && all.end() <= r.end)
            {
                continue;
            }
            // A bare number is no clock time: it needs minutes or am/pm.
            if caps.name("mi").is_none() && caps.name("ampm").is_none() {
                continue;
            }
            let Some(anchor) = self.keyword_before(all.start()) else {
                continue;
            };
            let Some(time) = clock(&caps) else { continue };
            let suffix = self.suffix(all.end());
            let tomorrow =
                suffix.tomorrow || TOMORROW_BEFORE.is_match(&self.text[anchor..all.start()]);
            if let Some(at) = self.next_occurrence(time, &suffix.zone, tomorrow) {
                self.push(found, Rank::Clock, (anchor, suffix.end), at, suffix.note);
            }
        }
    }

    fn durations(&self, found: &mut Vec<Candidate>) {
        for caps in RETRY_AFTER.captures_iter(self.text) {
            let (Some(all), Some(n)) = (caps.get(0), caps.name("n")) else {
                continue;
            };
            let unit = if caps.name("ms").is_some() { "ms" } else { "s" };
            if let Some(at) = duration_ms(n.as_str(), unit).and_then(|ms| self.after(ms)) {
                self.push(found, Rank::Duration, (all.start(), all.end()), at, None);
            }
        }
        for caps in IN_DURATION.captures_iter(self.text) {
            let (Some(all), Some(dur)) = (caps.get(0), caps.name("dur")) else {
                continue;
            };
            let total = DURATION_PART
                .captures_iter(dur.as_str())
                .try_fold(0.0, |sum, part| {
                    let n = part.name("n")?.as_str();
                    Some(sum + duration_ms(n, part.name("u")?.as_str())?)
                });
            if let Some(at) = total.and_then(|ms| self.after(ms)) {
                self.push(found, Rank::Duration, (all.start(), all.end()), at, None);
            }
        }
    }

    fn after(&self, ms: f64) -> Option<Zoned> {
        // Anything beyond ~30 years is noise, and keeps the cast below in range.
        if !(0.0..1e12).contains(&ms) {
            return None;
        }
        self.now
            .checked_add(SignedDuration::from_millis(ms.round() as i64))
            .ok()
            .map(|t| t.to_zoned(TimeZone::UTC))
    }

    fn now_in(&self, zone: &TimeZone) -> Option<jiff::Zoned> {
        Some(self.now.to_zoned(zone.clone()))
    }

    /// The first `time` in `zone` after now; with `tomorrow`, the one on tomorrow's date.
    fn next_occurrence(&self, time: civil::Time, zone: &TimeZone, tomorrow: bool) -> Option<Zoned> {
        let today = self.now_in(zone)?.date();
        if tomorrow {
            return in_zone(today.tomorrow().ok()?.to_datetime(time), zone);
        }
        let at = in_zone(today.to_datetime(time), zone)?;
        if at.timestamp() > self.now {
            return Some(at);
        }
        in_zone(today.tomorrow().ok()?.to_datetime(time), zone)
    }
}
