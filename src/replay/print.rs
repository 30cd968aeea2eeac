//! `herd replay --print`: a recording's screen at its end or at a time, as text, in one pass;
//! and the recording a path names (a `.cast`, or a task folder's latest attempt).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::cast::{CastError, Problem, Step, read_header};
use super::term::{Term, scrollback_for};

/// A task folder means its latest attempt (`attempt_<n>.cast` with the highest n).
pub fn resolve_cast(path: &Path) -> std::io::Result<PathBuf> {
    if !path.exists() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such recording (give runs/<task_id>/attempt_<n>.cast, or a task's folder under \
             runs/ for its latest attempt)",
        ));
    }
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let mut best: Option<(u32, PathBuf)> = None;
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name
            .strip_prefix("attempt_")
            .and_then(|rest| rest.strip_suffix(".cast"))
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(n) = number
            && best.as_ref().is_none_or(|(b, _)| n > *b)
        {
            best = Some((n, entry.path()));
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the folder holds no attempt_<n>.cast recording",
        )
    })
}

/// What `--print` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    pub text: String,
    pub problems: Vec<Problem>,
    /// Recorded time of the last event applied.
    pub time: f64,
    pub events: u64,
}

/// The screen after every event at or before `at` (all events when `None`).
pub fn screen_at<R: BufRead>(src: R, at: Option<f64>) -> Result<Printed, CastError> {
    let (header, mut problems, mut reader) = read_header(src)?;
    let mut term = Term::new(header.rows, header.cols, scrollback_for(header.rows));
    let (mut time, mut events) = (0.0, 0);
    while let Some(step) = reader.next_step()? {
        match step {
            Step::Problem(problem) => problems.push(problem),
            Step::Event(event) => {
                if at.is_some_and(|limit| event.time > limit + 1e-7) {
                    break;
                }
                time = event.time;
                events += 1;
                term.apply(&event);
            }
        }
    }
    Ok(Printed {
        text: term.text(),
        problems,
        time,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::cast::ProblemKind;

    #[test]
    fn prints_the_screen_at_the_end_and_at_a_time() {
        let cast = "{\"version\": 2, \"width\": 20, \"height\": 3}\n[0.5, \"o\", \"hello\"]\n[1.0, \"o\", \"\\r\\nworld\"]\nnot json\n[1.5, \"o\", \"\\u001b[2J\\u001b[Hbye\"]\n";
        let end = screen_at(cast.as_bytes(), None).unwrap();
        assert_eq!(end.text, "bye");
        assert_eq!(end.problems.len(), 1);
        assert_eq!(end.problems[0].line, 4);
        assert_eq!(
            screen_at(cast.as_bytes(), Some(1.2)).unwrap().text,
            "hello\nworld"
        );
        assert_eq!(
            screen_at(cast.as_bytes(), Some(1.0)).unwrap().text,
            "hello\nworld"
        );
        assert_eq!(screen_at(cast.as_bytes(), Some(0.0)).unwrap().text, "");
        assert!(matches!(
            screen_at("garbage".as_bytes(), None),
            Err(CastError::NoHeader(_))
        ));
        assert!(matches!(
            screen_at("".as_bytes(), None),
            Err(CastError::Empty)
        ));
    }

    #[test]
    fn damage_is_reported_and_the_rest_plays() {
        let mut cast = b"{\"version\": 2, \"width\": 20, \"height\": 3}\n[0.1, \"o\", \"a\xffb\"]\n[0.05, \"o\", \"c\"]\n[0.2, \"o\", \"\\u001b[999;999H\\u001b[?1049h\\u001bP\\u001b]x\"]\n[0.3, \"o\", \"d".to_vec();
        cast.extend_from_slice(b"");
        let printed = screen_at(cast.as_slice(), None).unwrap();
        let kinds: Vec<_> = printed
            .problems
            .iter()
            .map(|p| (p.line, p.kind.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                (2, ProblemKind::InvalidUtf8),
                (
                    3,
                    ProblemKind::TimeBackwards {
                        time: 0.05,
                        before: 0.1
                    }
                ),
                (5, ProblemKind::CutShort),
            ]
        );
        assert_eq!(printed.events, 3);
    }
}
