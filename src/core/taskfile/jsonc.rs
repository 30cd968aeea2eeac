//! JSON with comments, as Gemini CLI reads its settings: the text with every comment blanked
//! out (strings kept), so that it parses as JSON. Pure.

/// `text` with its comments replaced by spaces (newlines kept, so line numbers still match).
pub fn strip_comments(text: &str) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        Text { escaped: bool },
        LineComment,
        BlockComment,
    }
    let mut out = String::with_capacity(text.len());
    let mut state = State::Code;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        state = match state {
            State::Code => match (c, chars.peek()) {
                ('"', _) => {
                    out.push(c);
                    State::Text { escaped: false }
                }
                ('/', Some('/')) => {
                    chars.next();
                    out.push_str("  ");
                    State::LineComment
                }
                ('/', Some('*')) => {
                    chars.next();
                    out.push_str("  ");
                    State::BlockComment
                }
                _ => {
                    out.push(c);
                    State::Code
                }
            },
            State::Text { escaped } => {
                out.push(c);
                match c {
                    '"' if !escaped => State::Code,
                    '\\' => State::Text { escaped: !escaped },
                    _ => State::Text { escaped: false },
                }
            }
            State::LineComment if c == '\n' => {
                out.push(c);
                State::Code
            }
            State::BlockComment if c == '*' && chars.peek() == Some(&'/') => {
                chars.next();
                out.push_str("  ");
                State::Code
            }
            comment => {
                out.push(if c == '\n' { '\n' } else { ' ' });
                comment
            }
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_and_strings_stay() {
        let table = [
            ("{\"a\": 1} // note", "{\"a\": 1}"),
            ("{/* x */\"a\": 1}", "{\"a\": 1}"),
            ("{\"u\": \"http://x/*y*/\"}", "{\"u\": \"http://x/*y*/\"}"),
            ("{\"q\": \"a\\\"//b\"}", "{\"q\": \"a\\\"//b\"}"),
            (
                "{\"b\": \"c\\\\\"} // after an escaped backslash",
                "{\"b\": \"c\\\\\"}",
            ),
            (
                "{\n// line\n\"a\": /* multi\nline */ 2\n}",
                "{\n\n\"a\": \n 2\n}",
            ),
        ];
        for (text, expected) in table {
            let stripped = strip_comments(text);
            let got: serde_json::Value = serde_json::from_str(&stripped)
                .unwrap_or_else(|e| panic!("{text:?} → {stripped:?}: {e}"));
            let want: serde_json::Value = serde_json::from_str(expected).expect("expected");
            assert_eq!(got, want, "{text:?}");
        }
        assert_eq!(strip_comments("{} // x\n").lines().count(), 1);
        assert_eq!(strip_comments("/* a\nb */{}").lines().count(), 2);
    }
}
