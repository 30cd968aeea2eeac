//! The dashboard's calls for attention: the bell and a desktop notification. Writes only.

use std::io::{self, Write};

/// Rings the bell and asks for a desktop notification (OSC 9 and OSC 777).
pub fn notify(out: &mut impl Write, title: &str, body: &str) -> io::Result<()> {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_control() && *c != ';')
            .take(200)
            .collect()
    };
    let (title, body) = (clean(title), clean(body));
    write!(
        out,
        "\x07\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07"
    )?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_cannot_inject_escape_sequences() {
        let mut out = Vec::new();
        notify(&mut out, "herd", "task\x1b]0;x\x07 waits; now").expect("write");
        let text = String::from_utf8(out).expect("utf8");
        assert_eq!(
            text,
            "\x07\x1b]9;herd: task]0x waits now\x07\x1b]777;notify;herd;task]0x waits now\x07"
        );
    }
}
