//! `herd replay`: a recorded attempt's screen at the end or at a time (`--print`).

use std::path::{Path, PathBuf};

use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use serde_json::Value;

use crate::cli::ReplayArgs;
use crate::core::screen::Screen;

/// A task folder means its latest attempt.
pub fn resolve_cast(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let mut best: Option<(u32, PathBuf)> = None;
    for entry in
        std::fs::read_dir(path).wrap_err_with(|| format!("cannot list {}", path.display()))?
    {
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
    best.map(|(_, p)| p)
        .ok_or_else(|| eyre!("{} holds no attempt_<n>.cast recording", path.display()))
}

/// The screen of a recording at `at` seconds (or the end), as text. Lines that are not valid
/// events are skipped and counted.
pub fn screen_at(cast_text: &str, at: Option<f64>) -> Result<(String, usize)> {
    let mut lines = cast_text.lines();
    let header: Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            eyre!("not an asciicast v2 recording: the first line is not a JSON header")
        })?;
    let cols = header["width"].as_u64().unwrap_or(80).clamp(1, 1000) as u16;
    let rows = header["height"].as_u64().unwrap_or(24).clamp(1, 500) as u16;
    let mut screen = Screen::new(rows, cols);
    let mut skipped = 0;
    for line in lines {
        let Ok(Value::Array(event)) = serde_json::from_str::<Value>(line) else {
            skipped += usize::from(!line.trim().is_empty());
            continue;
        };
        let (Some(time), Some(kind), Some(data)) = (
            event.first().and_then(Value::as_f64),
            event.get(1).and_then(Value::as_str),
            event.get(2).and_then(Value::as_str),
        ) else {
            skipped += 1;
            continue;
        };
        if at.is_some_and(|limit| time > limit) {
            break;
        }
        match kind {
            "o" => {
                screen.feed(data.as_bytes(), 0);
            }
            "r" => {
                if let Some((c, r)) = data.split_once('x')
                    && let (Ok(c), Ok(r)) = (c.parse::<u16>(), r.parse::<u16>())
                {
                    screen.resize(r.max(1), c.max(1));
                }
            }
            _ => {}
        }
    }
    Ok((screen.text(), skipped))
}

pub fn replay(args: &ReplayArgs) -> Result<i32> {
    let cast = resolve_cast(&args.path)?;
    if !args.print {
        bail!(
            "the interactive player is not in this build yet; use: herd replay {} --print [--at SECONDS]",
            args.path.display()
        );
    }
    let bytes = std::fs::read(&cast).wrap_err_with(|| format!("cannot read {}", cast.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let (screen, skipped) = screen_at(&text, args.at)?;
    println!("{screen}");
    if skipped > 0 {
        eprintln!(
            "herd: {skipped} damaged line(s) in {} were skipped",
            cast.display()
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_the_screen_at_the_end_and_at_a_time() {
        let cast = "{\"version\": 2, \"width\": 20, \"height\": 3}\n[0.5, \"o\", \"hello\"]\n[1.0, \"o\", \"\\r\\nworld\"]\nnot json\n[1.5, \"o\", \"\\u001b[2J\\u001b[Hbye\"]\n";
        assert_eq!(screen_at(cast, None).unwrap(), ("bye".to_string(), 1));
        assert_eq!(screen_at(cast, Some(1.2)).unwrap().0, "hello\nworld");
        assert!(screen_at("garbage", None).is_err());
    }
}
