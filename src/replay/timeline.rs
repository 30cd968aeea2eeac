//! The recording's timeline: its markers, and recorded time mapped to shown time when idle gaps
//! are capped (like `asciinema play -i`). Pure.

/// Gaps shorter than this are never capped, so they are not kept.
pub const MIN_IDLE_LIMIT: f64 = 0.1;

/// What a marker says, from herd's marker labels (`run::engine::note_label`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    Prompt,
    AutoAnswer,
    OperatorAnswer,
    Waiting,
    CompletionSeen,
    Ending,
    Verdict {
        completed: bool,
    },
    Bell,
    /// A marker herd did not write (asciinema's own markers).
    Other,
}

impl MarkerKind {
    pub fn of(label: &str) -> MarkerKind {
        let starts = |prefix: &str| label.starts_with(prefix);
        if starts("prompt ") {
            MarkerKind::Prompt
        } else if starts("auto answer") {
            MarkerKind::AutoAnswer
        } else if starts("operator answer") {
            MarkerKind::OperatorAnswer
        } else if starts("waiting for operator") {
            MarkerKind::Waiting
        } else if starts("completion marker seen") {
            MarkerKind::CompletionSeen
        } else if starts("ending:") {
            MarkerKind::Ending
        } else if let Some(rest) = label.strip_prefix("verdict: ") {
            MarkerKind::Verdict {
                completed: rest.trim() == "completed",
            }
        } else if label == "bell" {
            MarkerKind::Bell
        } else {
            MarkerKind::Other
        }
    }

    /// The tick drawn on the timeline.
    pub fn glyph(self) -> char {
        match self {
            MarkerKind::Prompt => '?',
            MarkerKind::AutoAnswer => 'a',
            MarkerKind::OperatorAnswer => 'o',
            MarkerKind::Waiting => 'w',
            MarkerKind::CompletionSeen => '✓',
            MarkerKind::Ending => '■',
            MarkerKind::Verdict { completed: true } => 'V',
            MarkerKind::Verdict { completed: false } => 'X',
            MarkerKind::Bell => '!',
            MarkerKind::Other => '|',
        }
    }

    /// A word for the legend under the timeline.
    pub fn meaning(self) -> &'static str {
        match self {
            MarkerKind::Prompt => "prompt",
            MarkerKind::AutoAnswer => "auto answer",
            MarkerKind::OperatorAnswer => "your answer",
            MarkerKind::Waiting => "waits for you",
            MarkerKind::CompletionSeen => "marker seen",
            MarkerKind::Ending => "ending",
            MarkerKind::Verdict { completed: true } => "completed",
            MarkerKind::Verdict { completed: false } => "failed",
            MarkerKind::Bell => "bell",
            MarkerKind::Other => "other",
        }
    }

    /// Which tick wins when several fall in one column.
    pub fn rank(self) -> u8 {
        match self {
            MarkerKind::Verdict { .. } => 9,
            MarkerKind::Waiting => 8,
            MarkerKind::OperatorAnswer => 7,
            MarkerKind::Prompt => 6,
            MarkerKind::AutoAnswer => 5,
            MarkerKind::CompletionSeen => 4,
            MarkerKind::Ending => 3,
            MarkerKind::Other => 2,
            MarkerKind::Bell => 1,
        }
    }
}

/// One marker event.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Recorded time, seconds.
    pub time: f64,
    /// 1-based number of the marker's event (several markers can share a time).
    pub event: u64,
    pub kind: MarkerKind,
    pub label: String,
}

/// A stretch of recorded time without events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gap {
    /// Recorded time of the event before the gap.
    pub start: f64,
    pub len: f64,
}

/// Markers and the recorded/shown time mapping.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Recorded time of the last event.
    duration: f64,
    markers: Vec<Marker>,
    gaps: Vec<Gap>,
    limit: Option<f64>,
    /// Shown time removed by the gaps before gap `i` (parallel to `gaps`).
    removed_before: Vec<f64>,
}

impl Timeline {
    /// `gaps` in time order, at least [`MIN_IDLE_LIMIT`] long each.
    pub fn new(duration: f64, markers: Vec<Marker>, gaps: Vec<Gap>) -> Timeline {
        let mut timeline = Timeline {
            duration: duration.max(0.0),
            markers,
            gaps,
            limit: None,
            removed_before: Vec::new(),
        };
        timeline.set_idle_limit(None);
        timeline
    }

    /// Caps every gap at `limit` seconds (`None`: real time).
    pub fn set_idle_limit(&mut self, limit: Option<f64>) {
        self.limit = limit
            .filter(|l| l.is_finite())
            .map(|l| l.max(MIN_IDLE_LIMIT));
        let mut removed = 0.0;
        self.removed_before = self
            .gaps
            .iter()
            .map(|gap| {
                let before = removed;
                removed += self.cut(gap);
                before
            })
            .collect();
    }

    pub fn idle_limit(&self) -> Option<f64> {
        self.limit
    }

    fn cut(&self, gap: &Gap) -> f64 {
        self.limit.map_or(0.0, |l| (gap.len - l).max(0.0))
    }

    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// Recorded length.
    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// Shown length.
    pub fn shown_duration(&self) -> f64 {
        self.to_shown(self.duration)
    }

    /// Recorded time → shown time.
    pub fn to_shown(&self, recorded: f64) -> f64 {
        let recorded = recorded.clamp(0.0, self.duration);
        if self.limit.is_none() {
            return recorded;
        }
        // The last gap that starts before `recorded`.
        let i = self.gaps.partition_point(|g| g.start < recorded);
        let Some(i) = i.checked_sub(1) else {
            return recorded;
        };
        let gap = self.gaps[i];
        let into = recorded - gap.start;
        let in_gap = into.min(gap.len);
        let kept = self.limit.map_or(in_gap, |l| in_gap.min(l));
        gap.start - self.removed_before[i] + kept + (into - in_gap)
    }

    /// Shown time → recorded time (inside a capped gap: its first `limit` seconds).
    pub fn to_recorded(&self, shown: f64) -> f64 {
        let shown = shown.max(0.0);
        if self.limit.is_none() {
            return shown.min(self.duration);
        }
        let i = partition(self.gaps.len(), |i| {
            self.gaps[i].start - self.removed_before[i] < shown
        });
        let Some(i) = i.checked_sub(1) else {
            return shown.min(self.duration);
        };
        let gap = self.gaps[i];
        let gap_shown_start = gap.start - self.removed_before[i];
        let into = shown - gap_shown_start;
        let shown_len = gap.len - self.cut(&gap);
        // The end of a gap is the next event: rounding must not leave it just short of it.
        let recorded = if into < shown_len - 1e-9 {
            gap.start + into
        } else {
            gap.start + gap.len + (into - shown_len).max(0.0)
        };
        recorded.min(self.duration)
    }

    /// The first marker strictly after `recorded` (by more than a microsecond).
    pub fn next_marker(&self, recorded: f64) -> Option<&Marker> {
        let i = self.markers.partition_point(|m| m.time <= recorded + 1e-6);
        self.markers.get(i)
    }

    /// The last marker strictly before `recorded`.
    pub fn prev_marker(&self, recorded: f64) -> Option<&Marker> {
        let i = self.markers.partition_point(|m| m.time < recorded - 1e-6);
        i.checked_sub(1).and_then(|i| self.markers.get(i))
    }

    /// The last marker among the first `events` events: what the screen there follows from.
    pub fn last_marker_within(&self, events: u64) -> Option<&Marker> {
        let i = self.markers.partition_point(|m| m.event <= events);
        i.checked_sub(1).and_then(|i| self.markers.get(i))
    }

    /// The first marker after the first `events` events.
    pub fn first_marker_after(&self, events: u64) -> Option<&Marker> {
        let i = self.markers.partition_point(|m| m.event <= events);
        self.markers.get(i)
    }
}

/// The first index in `0..n` where `pred` is false (as `slice::partition_point`).
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps() -> Timeline {
        // Events at 0, 1, 11 (gap 10 s), 12, 42 (gap 30 s), 43.
        let gaps = vec![
            Gap {
                start: 1.0,
                len: 10.0,
            },
            Gap {
                start: 12.0,
                len: 30.0,
            },
        ];
        Timeline::new(43.0, Vec::new(), gaps)
    }

    #[test]
    fn without_a_cap_shown_time_is_recorded_time() {
        let t = gaps();
        for r in [0.0, 1.0, 5.0, 11.0, 30.0, 43.0] {
            assert_eq!(t.to_shown(r), r);
            assert_eq!(t.to_recorded(r), r);
        }
        assert_eq!(t.shown_duration(), 43.0);
    }

    #[test]
    fn capped_gaps_shrink_and_map_back() {
        let mut t = gaps();
        t.set_idle_limit(Some(2.0));
        // 10 s gap -> 2 s, 30 s gap -> 2 s: 43 - 8 - 28 = 7.
        assert_eq!(t.shown_duration(), 7.0);
        let pairs = [
            (0.0, 0.0),
            (1.0, 1.0),
            (2.0, 2.0),
            (3.0, 3.0),
            (11.0, 3.0),
            (12.0, 4.0),
            (42.0, 6.0),
            (43.0, 7.0),
        ];
        for (recorded, shown) in pairs {
            assert!(
                (t.to_shown(recorded) - shown).abs() < 1e-9,
                "{recorded} -> {}",
                t.to_shown(recorded)
            );
        }
        for (recorded, shown) in [
            (0.5, 0.5),
            (2.5, 2.5),
            (12.0, 4.0),
            (13.0, 5.0),
            (42.5, 6.5),
            (43.0, 7.0),
        ] {
            assert!(
                (t.to_recorded(shown) - recorded).abs() < 1e-9,
                "{shown} -> {}",
                t.to_recorded(shown)
            );
        }
        // Past the end stays at the end.
        assert_eq!(t.to_recorded(100.0), 43.0);
    }

    #[test]
    fn markers_step_forward_and_back() {
        let marker = |time, event, label: &str| Marker {
            time,
            event,
            kind: MarkerKind::of(label),
            label: label.to_string(),
        };
        let t = Timeline::new(
            5.0,
            vec![
                marker(1.0, 3, "prompt press_1: ❯ 1. Yes"),
                marker(1.0, 5, "auto answer press_1: \"1\""),
                marker(4.0, 9, "verdict: completed"),
            ],
            Vec::new(),
        );
        assert_eq!(t.next_marker(0.0).unwrap().kind, MarkerKind::Prompt);
        assert_eq!(
            t.next_marker(1.0).unwrap().kind,
            MarkerKind::Verdict { completed: true }
        );
        assert!(t.next_marker(4.0).is_none());
        assert_eq!(t.prev_marker(4.0).unwrap().kind, MarkerKind::AutoAnswer);
        assert!(t.prev_marker(1.0).is_none());
        assert_eq!(t.last_marker_within(4).unwrap().kind, MarkerKind::Prompt);
        assert_eq!(
            t.last_marker_within(5).unwrap().kind,
            MarkerKind::AutoAnswer
        );
        assert!(t.last_marker_within(2).is_none());
        assert_eq!(
            t.first_marker_after(3).unwrap().kind,
            MarkerKind::AutoAnswer
        );
        assert!(t.first_marker_after(9).is_none());
    }

    #[test]
    fn labels_are_classified() {
        let cases = [
            ("prompt press_1: ❯ 1. Yes", MarkerKind::Prompt),
            ("auto answer press_1: \"1\"", MarkerKind::AutoAnswer),
            ("operator answer press_1: \"2\"", MarkerKind::OperatorAnswer),
            (
                "waiting for operator press_1: ❯ 1. Yes",
                MarkerKind::Waiting,
            ),
            ("completion marker seen", MarkerKind::CompletionSeen),
            ("ending: timeout after 6 s", MarkerKind::Ending),
            (
                "verdict: completed",
                MarkerKind::Verdict { completed: true },
            ),
            (
                "verdict: failed_auth (Not logged in)",
                MarkerKind::Verdict { completed: false },
            ),
            ("chapter 2", MarkerKind::Other),
        ];
        for (label, kind) in cases {
            assert_eq!(MarkerKind::of(label), kind, "{label}");
        }
    }
}
