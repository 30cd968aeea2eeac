//! Take-over mode's keys: the bytes a terminal sends for a key, and the chord that leaves. Pure.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Leaves take-over mode: Ctrl-] (reported as Ctrl-5 by terminals without key enhancements).
pub fn is_leave_chord(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(key.code, KeyCode::Char(']') | KeyCode::Char('5'))
}

pub const LEAVE_CHORD: &str = "Ctrl-]";

/// The bytes a terminal sends for `key`. `app_cursor`: the agent asked for application cursor
/// keys (`ESC O A` instead of `ESC [ A`).
pub fn to_bytes(key: &KeyEvent, app_cursor: bool) -> Option<Vec<u8>> {
    let mods = key.modifiers;
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    let alt = mods.contains(KeyModifiers::ALT);
    let modifier_param =
        1 + u8::from(mods.contains(KeyModifiers::SHIFT)) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let cursor = |c: char| -> Vec<u8> {
        if modifier_param > 1 {
            format!("\x1b[1;{modifier_param}{c}").into_bytes()
        } else if app_cursor {
            format!("\x1bO{c}").into_bytes()
        } else {
            format!("\x1b[{c}").into_bytes()
        }
    };
    let tilde = |n: u8| -> Vec<u8> {
        if modifier_param > 1 {
            format!("\x1b[{n};{modifier_param}~").into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        }
    };
    let mut bytes = match key.code {
        KeyCode::Char(c) if ctrl => vec![control_byte(c)?],
        KeyCode::Char(c) => c.to_string().into_bytes(),
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Backspace => vec![0x7f],
        KeyCode::Tab => vec![b'\t'],
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Esc => vec![0x1b],
        KeyCode::Up => cursor('A'),
        KeyCode::Down => cursor('B'),
        KeyCode::Right => cursor('C'),
        KeyCode::Left => cursor('D'),
        KeyCode::Home => cursor('H'),
        KeyCode::End => cursor('F'),
        KeyCode::Insert => tilde(2),
        KeyCode::Delete => tilde(3),
        KeyCode::PageUp => tilde(5),
        KeyCode::PageDown => tilde(6),
        KeyCode::F(n @ 1..=4) => format!("\x1bO{}", char::from(b'P' + n - 1)).into_bytes(),
        KeyCode::F(n) => {
            const CODES: [u8; 8] = [15, 17, 18, 19, 20, 21, 23, 24];
            tilde(*CODES.get(usize::from(n).checked_sub(5)?)?)
        }
        _ => return None,
    };
    // Alt prefixes plain keys with ESC; cursor keys carry it in their parameter.
    let prefixed = matches!(
        key.code,
        KeyCode::Char(_) | KeyCode::Enter | KeyCode::Backspace | KeyCode::Tab | KeyCode::Esc
    );
    if alt && prefixed {
        bytes.insert(0, 0x1b);
    }
    Some(bytes)
}

/// Ctrl plus a key, as the control byte a terminal sends.
fn control_byte(c: char) -> Option<u8> {
    Some(match c.to_ascii_lowercase() {
        c @ 'a'..='z' => c as u8 - b'a' + 1,
        '@' | ' ' | '2' => 0,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' => 0x1e,
        '_' | '7' | '/' => 0x1f,
        '8' | '?' => 0x7f,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn with(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn keys_become_the_bytes_a_terminal_sends() {
        let ctrl = KeyModifiers::CONTROL;
        let table: [(KeyEvent, &[u8]); 14] = [
            (key(KeyCode::Char('a')), b"a"),
            (key(KeyCode::Char('é')), "é".as_bytes()),
            (key(KeyCode::Enter), b"\r"),
            (key(KeyCode::Backspace), b"\x7f"),
            (key(KeyCode::Tab), b"\t"),
            (key(KeyCode::Esc), b"\x1b"),
            (key(KeyCode::Up), b"\x1b[A"),
            (key(KeyCode::Left), b"\x1b[D"),
            (with(KeyCode::Char('c'), ctrl), b"\x03"),
            (with(KeyCode::Char('d'), ctrl), b"\x04"),
            (with(KeyCode::Char('x'), KeyModifiers::ALT), b"\x1bx"),
            (with(KeyCode::Right, ctrl), b"\x1b[1;5C"),
            (key(KeyCode::PageDown), b"\x1b[6~"),
            (key(KeyCode::F(5)), b"\x1b[15~"),
        ];
        for (k, bytes) in table {
            assert_eq!(to_bytes(&k, false).as_deref(), Some(bytes), "{k:?}");
        }
        assert_eq!(
            to_bytes(&key(KeyCode::Up), true).as_deref(),
            Some(&b"\x1bOA"[..])
        );
        assert_eq!(
            to_bytes(&key(KeyCode::F(1)), false).as_deref(),
            Some(&b"\x1bOP"[..])
        );
    }

    #[test]
    fn the_leave_chord_is_ctrl_close_bracket_however_it_is_reported() {
        assert!(is_leave_chord(&with(
            KeyCode::Char(']'),
            KeyModifiers::CONTROL
        )));
        assert!(is_leave_chord(&with(
            KeyCode::Char('5'),
            KeyModifiers::CONTROL
        )));
        assert!(!is_leave_chord(&key(KeyCode::Char(']'))));
    }
}
