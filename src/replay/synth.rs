//! Synthetic agent-like recordings of any size, for tests and benchmarks (spinners, dialogs, wide
//! characters, split escapes, resizes, markers, idle gaps). Deterministic for a seed; pure.

use std::io::{self, Write};

use serde_json::json;

/// A small deterministic generator (xorshift64*), so no dependency is needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const WORDS: [&str; 16] = [
    "parser", "merge", "tests", "config", "❯", "→", "漢字", "✓", "index", "render", "retry",
    "cache", "🙂", "schema", "pytest", "lint",
];

struct Writer<W> {
    out: W,
    time: f64,
    written: usize,
}

impl<W: Write> Writer<W> {
    fn event(&mut self, kind: &str, data: &str) -> io::Result<()> {
        let line = json!([(self.time * 1e6).round() / 1e6, kind, data]).to_string();
        self.written += line.len() + 1;
        writeln!(self.out, "{line}")
    }
}

/// Writes an asciicast v2 of about `target_bytes` bytes, 120x40.
pub fn agent_cast<W: Write>(out: W, target_bytes: usize, seed: u64) -> io::Result<usize> {
    let mut rng = Rng(seed | 1);
    let mut w = Writer {
        out,
        time: 0.0,
        written: 0,
    };
    let header = json!({"version": 2, "width": 120, "height": 40, "title": "synthetic"});
    writeln!(w.out, "{header}")?;
    w.written += header.to_string().len() + 1;
    let mut turn = 0u64;
    while w.written < target_bytes {
        turn += 1;
        w.time += 0.05;
        w.event(
            "o",
            &format!(
                "\x1b[1;36m❯\x1b[0m Turn {turn}: fix the \x1b[33m{}\x1b[0m module\r\n",
                WORDS[rng.below(16) as usize]
            ),
        )?;
        for i in 0..rng.below(12) {
            w.time += 0.01 + rng.below(50) as f64 / 1000.0;
            w.event(
                "o",
                &format!(
                    "\r\x1b[2K\x1b[38;5;174m{}\x1b[0m Thinking… ({i}s)",
                    ['⠋', '⠙', '⠹', '⠸'][i as usize % 4]
                ),
            )?;
        }
        w.event("o", "\r\x1b[2K")?;
        for _ in 0..rng.below(30) {
            w.time += rng.below(20) as f64 / 1000.0;
            let mut line = String::new();
            for _ in 0..rng.below(14) + 2 {
                let word = WORDS[rng.below(16) as usize];
                let colour = 31 + rng.below(7);
                line.push_str(&format!("\x1b[{colour}m{word}\x1b[39m "));
            }
            w.event("o", &format!("  ⎿ {line}\r\n"))?;
        }
        if rng.below(3) == 0 {
            // A dialog drawn, a sequence split across two events, answered, then cleared.
            w.event(
                "o",
                "\x1b[1m Do you want to proceed?\x1b[22m\r\n ❯ 1. Yes\r\n   2. No\r\n\x1b[38;2;",
            )?;
            w.time += 0.2;
            w.event("o", "120;120;120mEsc to cancel\x1b[0m")?;
            w.event("m", "prompt press_1: ❯ 1. Yes")?;
            w.event("i", "1")?;
            w.event("m", "auto answer press_1: \"1\"")?;
            w.time += 0.01;
            w.event("o", "\x1b[3A\r\x1b[J")?;
        }
        if rng.below(25) == 0 {
            w.time += 5.0 + rng.below(60) as f64;
        }
        if rng.below(40) == 0 {
            let size = if rng.below(2) == 0 {
                "100x30"
            } else {
                "120x40"
            };
            w.event("r", size)?;
        }
        if rng.below(50) == 0 {
            w.event(
                "o",
                "\x1b]0;✳ Claude Code\x07\x1b[?1049h\x1b[H\x1b[2Jfull screen\x1b[?1049l",
            )?;
        }
    }
    w.time += 0.5;
    w.event("m", "completion marker seen")?;
    w.event("m", "verdict: completed")?;
    Ok(w.written)
}
