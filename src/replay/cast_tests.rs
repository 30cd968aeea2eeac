use super::*;

fn events(text: &str) -> (Header, Vec<Step>) {
    let (header, mut problems, mut reader) = read_header(text.as_bytes()).unwrap();
    let mut steps: Vec<Step> = problems.drain(..).map(Step::Problem).collect();
    while let Some(step) = reader.next_step().unwrap() {
        steps.push(step);
    }
    (header, steps)
}

fn times(steps: &[Step]) -> Vec<f64> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Event(e) => Some((e.time * 1e6).round() / 1e6),
            Step::Problem(_) => None,
        })
        .collect()
}

#[test]
fn version_2_has_absolute_times() {
    let (header, steps) = events(
        "{\"version\":2,\"width\":100,\"height\":30,\"title\":\"t\",\"timestamp\":1700000000,\"idle_time_limit\":1.5}\n[0.5,\"o\",\"a\"]\n[1.25,\"m\",\"x\"]\n",
    );
    assert_eq!(header.cols, 100);
    assert_eq!(header.rows, 30);
    assert_eq!(header.title.as_deref(), Some("t"));
    assert_eq!(header.timestamp, Some(1_700_000_000));
    assert_eq!(header.idle_time_limit, Some(1.5));
    assert_eq!(times(&steps), [0.5, 1.25]);
    let Step::Event(marker) = &steps[1] else {
        panic!()
    };
    assert_eq!((marker.kind, marker.line), (EventKind::Marker, 3));
}

#[test]
fn version_3_has_relative_times_and_comments() {
    let (header, steps) = events(
        "{\"version\":3,\"term\":{\"cols\":90,\"rows\":20,\"type\":\"xterm\"}}\n# a comment\n[0.5,\"o\",\"a\"]\n\n[0.25,\"o\",\"b\"]\n[1.0,\"x\",\"0\"]\n",
    );
    assert_eq!((header.version, header.cols, header.rows), (3, 90, 20));
    assert_eq!(times(&steps), [0.5, 0.75, 1.75]);
    let Step::Event(exit) = &steps[2] else {
        panic!()
    };
    assert_eq!((exit.kind, exit.line), (EventKind::Exit, 6));
}

#[test]
fn headers_that_cannot_be_replayed_are_errors() {
    let err = |text: &str| read_header(text.as_bytes()).err().unwrap();
    assert!(matches!(err(""), CastError::Empty));
    assert!(matches!(
        err("[0.1, \"o\", \"x\"]\n"),
        CastError::NoHeader(_)
    ));
    assert!(matches!(
        err("{\"version\": 1, \"stdout\": []}\n"),
        CastError::Version(1)
    ));
    assert!(matches!(err("\u{1b}[31mnot json"), CastError::NoHeader(_)));
}

#[test]
fn a_header_without_a_size_gets_a_default_and_a_problem() {
    let (header, steps) = events("{\"version\":2,\"width\":99999}\n");
    assert_eq!((header.cols, header.rows), (MAX_COLS, 24));
    assert!(matches!(
        &steps[0],
        Step::Problem(Problem {
            line: 1,
            kind: ProblemKind::Header(_)
        })
    ));
}

#[test]
fn damaged_lines_are_problems_and_reading_goes_on() {
    let (_, steps) = events(
        "{\"version\":2,\"width\":10,\"height\":2}\n[0.1,\"o\"]\n{\"x\":1}\n[\"late\",\"o\",\"a\"]\n[0.2,\"o\",\"ok\",\"extra\"]\n[0.3,\"o\",\"cut",
    );
    let lines: Vec<_> = steps
        .iter()
        .map(|s| match s {
            Step::Event(e) => (e.line, format!("event {}", e.data)),
            Step::Problem(p) => (p.line, p.kind.to_string()),
        })
        .collect();
    assert_eq!(lines[0], (2, "event ".to_string()));
    assert!(lines[1].1.starts_with("not an event"), "{lines:?}");
    assert!(lines[2].1.starts_with("not an event"), "{lines:?}");
    assert_eq!(lines[3], (5, "event ok".to_string()));
    assert!(lines[4].1.starts_with("cut short"), "{lines:?}");
}

#[test]
fn a_last_line_without_newline_is_still_an_event() {
    let (_, steps) = events("{\"version\":2,\"width\":10,\"height\":2}\n[0.1,\"o\",\"a\"]");
    assert_eq!(times(&steps), [0.1]);
    assert_eq!(steps.len(), 1);
}

#[test]
fn sizes_parse_and_clamp() {
    assert_eq!(parse_size("120x40"), Some((120, 40)));
    assert_eq!(parse_size(" 80X24 "), Some((80, 24)));
    assert_eq!(parse_size("0x99999"), Some((1, MAX_ROWS)));
    assert_eq!(parse_size("big"), None);
    assert_eq!(parse_size("-1x5"), None);
}
