//! Answers to the terminal queries agent CLIs send (cursor position, device attributes, colours,
//! keyboard protocol, modes): vt100 does not answer, and the CLIs stall without. Pure.

/// A query recognised in the agent's output, with what is needed to answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalQuery {
    /// `CSI 6n`: cursor position report. Row and column are 0-based here.
    CursorPosition { row: u16, col: u16 },
    /// `CSI 5n`: device status.
    DeviceStatus,
    /// `CSI c` / `CSI 0c`: primary device attributes.
    PrimaryAttributes,
    /// `CSI > c`: secondary device attributes.
    SecondaryAttributes,
    /// `CSI > 0 q`: XTVERSION.
    TerminalVersion,
    /// `CSI ? u`: kitty keyboard protocol flags.
    KeyboardFlags,
    /// `CSI ? Ps $ p`: DEC private mode report.
    PrivateModeReport { mode: u16 },
    /// `OSC 10;?` / `OSC 11;?`: foreground / background colour.
    Colour { which: u16 },
}

impl TerminalQuery {
    /// Recognises a CSI sequence that vt100 left unhandled.
    pub fn from_csi(
        first_intermediate: Option<u8>,
        second_intermediate: Option<u8>,
        params: &[&[u16]],
        action: char,
        cursor: (u16, u16),
    ) -> Option<TerminalQuery> {
        let first_param = params.first().and_then(|p| p.first()).copied();
        match (first_intermediate, second_intermediate, action) {
            (None, None, 'n') => match first_param {
                Some(6) => Some(TerminalQuery::CursorPosition {
                    row: cursor.0,
                    col: cursor.1,
                }),
                Some(5) => Some(TerminalQuery::DeviceStatus),
                _ => None,
            },
            (None, None, 'c') if matches!(first_param, None | Some(0)) => {
                Some(TerminalQuery::PrimaryAttributes)
            }
            (Some(b'>'), None, 'c') => Some(TerminalQuery::SecondaryAttributes),
            (Some(b'>'), None, 'q') => Some(TerminalQuery::TerminalVersion),
            (Some(b'?'), None, 'u') => Some(TerminalQuery::KeyboardFlags),
            (Some(b'?'), Some(b'$'), 'p') => {
                first_param.map(|mode| TerminalQuery::PrivateModeReport { mode })
            }
            _ => None,
        }
    }

    /// Recognises an OSC sequence that vt100 left unhandled.
    pub fn from_osc(params: &[&[u8]]) -> Option<TerminalQuery> {
        match params {
            [b"10", b"?"] => Some(TerminalQuery::Colour { which: 10 }),
            [b"11", b"?"] => Some(TerminalQuery::Colour { which: 11 }),
            _ => None,
        }
    }

    /// The bytes a common xterm-compatible terminal would send back.
    pub fn answer(&self) -> Vec<u8> {
        match self {
            TerminalQuery::CursorPosition { row, col } => {
                format!("\x1b[{};{}R", row + 1, col + 1).into_bytes()
            }
            TerminalQuery::DeviceStatus => b"\x1b[0n".to_vec(),
            // VT220 with ANSI colour, the answer xterm gives.
            TerminalQuery::PrimaryAttributes => b"\x1b[?62;22c".to_vec(),
            TerminalQuery::SecondaryAttributes => b"\x1b[>0;10;1c".to_vec(),
            TerminalQuery::TerminalVersion => b"\x1bP>|herd(0.1)\x1b\\".to_vec(),
            // No kitty keyboard enhancements are active.
            TerminalQuery::KeyboardFlags => b"\x1b[?0u".to_vec(),
            // Synchronized output (2026) is recognised and reset; other modes are unknown.
            TerminalQuery::PrivateModeReport { mode } => {
                let state = if *mode == 2026 { 2 } else { 0 };
                format!("\x1b[?{mode};{state}$y").into_bytes()
            }
            TerminalQuery::Colour { which } => {
                let rgb = if *which == 10 {
                    "c7c7/c7c7/c7c7"
                } else {
                    "0000/0000/0000"
                };
                format!("\x1b]{which};rgb:{rgb}\x1b\\").into_bytes()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_report_is_one_based() {
        let q = TerminalQuery::from_csi(None, None, &[&[6]], 'n', (4, 9)).unwrap();
        assert_eq!(q.answer(), b"\x1b[5;10R");
    }

    #[test]
    fn recognises_the_queries_real_clis_send() {
        type Case = (Option<u8>, Option<u8>, Vec<u16>, char, &'static str);
        let cases: Vec<Case> = vec![
            (None, None, vec![], 'c', "\x1b[?62;22c"),
            (None, None, vec![0], 'c', "\x1b[?62;22c"),
            (Some(b'>'), None, vec![0], 'q', "\x1bP>|herd(0.1)\x1b\\"),
            (Some(b'?'), None, vec![], 'u', "\x1b[?0u"),
            (Some(b'?'), Some(b'$'), vec![2026], 'p', "\x1b[?2026;2$y"),
            (None, None, vec![5], 'n', "\x1b[0n"),
        ];
        for (i1, i2, params, action, want) in cases {
            let p: Vec<&[u16]> = params.iter().map(std::slice::from_ref).collect();
            let q = TerminalQuery::from_csi(i1, i2, &p, action, (0, 0))
                .unwrap_or_else(|| panic!("not recognised: {i1:?} {params:?} {action}"));
            assert_eq!(String::from_utf8(q.answer()).unwrap(), want);
        }
        assert_eq!(
            TerminalQuery::from_csi(None, None, &[&[1]], 'm', (0, 0)),
            None
        );
        assert_eq!(
            TerminalQuery::from_osc(&[b"11", b"?"]),
            Some(TerminalQuery::Colour { which: 11 })
        );
        assert_eq!(TerminalQuery::from_osc(&[b"11", b"rgb:0/0/0"]), None);
    }
}
