//! `{name}` placeholders in prompt templates, commands and markers: `{{` and `}}` are literal,
//! names are `[A-Za-z_][A-Za-z0-9_.-]*`. The caller passes the lookup.

use thiserror::Error;

/// What is wrong with a template. Character positions are 1-based and count characters.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TemplateError {
    #[error("unclosed {{ at character {at} (write {{{{ for a literal brace)")]
    Unclosed { at: usize },
    #[error("stray }} at character {at} (write }}}} for a literal brace)")]
    StrayClose { at: usize },
    #[error("empty placeholder {{}} at character {at} (write {{{{}}}} for literal braces)")]
    EmptyName { at: usize },
    #[error(
        "{{{name}}} at character {at} is not a placeholder: names are letters, digits, _ . - and \
         start with a letter or _ (write {{{{ and }}}} for literal braces)"
    )]
    InvalidName { name: String, at: usize },
    #[error("{}", missing_message(names))]
    Missing { names: Vec<String> },
}

fn missing_message(names: &[String]) -> String {
    let list = names
        .iter()
        .map(|n| format!("{{{n}}}"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() == 1 {
        format!("no value for placeholder {list}")
    } else {
        format!("no values for placeholders {list}")
    }
}

enum Piece<'a> {
    Text(String),
    Name(&'a str),
}

/// Longest name shown in an error; an unescaped `{` can swallow a whole paragraph.
const SHOWN_NAME_CHARS: usize = 40;

fn pieces(template: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = template.char_indices().enumerate().peekable();
    while let Some((n, (i, c))) = chars.next() {
        let at = n + 1;
        match c {
            '{' if matches!(chars.peek(), Some((_, (_, '{')))) => {
                chars.next();
                text.push('{');
            }
            '}' if matches!(chars.peek(), Some((_, (_, '}')))) => {
                chars.next();
                text.push('}');
            }
            '}' => return Err(TemplateError::StrayClose { at }),
            '{' => {
                let end = chars.by_ref().find(|(_, (_, d))| *d == '}');
                let Some((_, (end, _))) = end else {
                    return Err(TemplateError::Unclosed { at });
                };
                let name = &template[i + 1..end];
                check_name(name, at)?;
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Name(name));
            }
            _ => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

fn check_name(name: &str, at: usize) -> Result<(), TemplateError> {
    if name.is_empty() {
        return Err(TemplateError::EmptyName { at });
    }
    if is_placeholder_name(name) {
        return Ok(());
    }
    let mut shown: String = name.chars().take(SHOWN_NAME_CHARS).collect();
    if name.chars().nth(SHOWN_NAME_CHARS).is_some() {
        shown.push('…');
    }
    Err(TemplateError::InvalidName { name: shown, at })
}

/// Whether `name` can be written as a `{name}` placeholder.
pub fn is_placeholder_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The placeholder names of `template`, each once, in order of first appearance.
pub fn placeholders(template: &str) -> Result<Vec<String>, TemplateError> {
    let mut names: Vec<String> = Vec::new();
    for piece in pieces(template)? {
        if let Piece::Name(name) = piece
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

/// Fills every placeholder with `lookup(name)`: syntax errors first, else every missing name
/// once, in order, in one `Missing` error.
pub fn render(
    template: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(template.len());
    let mut missing: Vec<String> = Vec::new();
    for piece in pieces(template)? {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Name(name) => match lookup(name) {
                Some(value) => out.push_str(&value),
                None if missing.iter().any(|m| m == name) => {}
                None => missing.push(name.to_string()),
            },
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(TemplateError::Missing { names: missing })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(name: &str) -> Option<String> {
        match name {
            "a" => Some("1".into()),
            "task_id" => Some("t-1".into()),
            "doc.url" => Some("https://x".into()),
            "é" => Some("never".into()),
            "empty" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn renders() {
        let table = [
            ("", ""),
            ("plain", "plain"),
            ("{a}", "1"),
            ("x{a}y{a}", "x1y1"),
            ("{{a}}", "{a}"),
            ("{{{a}}}", "{1}"),
            ("{{", "{"),
            ("}}", "}"),
            ("{{}}", "{}"),
            ("json {{\"k\": {a}}}", "json {\"k\": 1}"),
            ("é{a}ü😀{task_id}€", "é1ü😀t-1€"),
            ("see {doc.url} now", "see https://x now"),
            ("[{empty}]", "[]"),
            ("line1\n{a}\nline3", "line1\n1\nline3"),
        ];
        for (template, expected) in table {
            assert_eq!(
                render(template, values).as_deref(),
                Ok(expected),
                "{template:?}"
            );
        }
    }

    #[test]
    fn errors() {
        use TemplateError::*;
        let invalid = |name: &str, at| InvalidName {
            name: name.into(),
            at,
        };
        let table = [
            ("{a", Unclosed { at: 1 }),
            ("ab{", Unclosed { at: 3 }),
            ("é😀{a", Unclosed { at: 3 }),
            ("}", StrayClose { at: 1 }),
            ("a}b", StrayClose { at: 2 }),
            ("{a}}", StrayClose { at: 4 }),
            ("{}", EmptyName { at: 1 }),
            ("x {1a}", invalid("1a", 3)),
            ("{ a }", invalid(" a ", 1)),
            ("{a{b}}", invalid("a{b", 1)),
            ("{é}", invalid("é", 1)),
            ("{\"k\": 1}", invalid("\"k\": 1", 1)),
            (
                "{missing}",
                Missing {
                    names: vec!["missing".into()],
                },
            ),
            (
                "{x} {a} {y} {x} {z}",
                Missing {
                    names: vec!["x".into(), "y".into(), "z".into()],
                },
            ),
            ("{nope} }", StrayClose { at: 8 }),
        ];
        for (template, expected) in table {
            assert_eq!(render(template, values), Err(expected), "{template:?}");
        }
    }

    #[test]
    fn long_names_are_shortened_in_errors() {
        let template = format!("{{{}}}", "word ".repeat(20));
        let Err(TemplateError::InvalidName { name, .. }) = render(&template, values) else {
            panic!("expected an invalid name");
        };
        assert_eq!(name.chars().count(), SHOWN_NAME_CHARS + 1);
        assert!(name.ends_with('…'));
    }

    #[test]
    fn messages() {
        let table = [
            (
                TemplateError::Unclosed { at: 3 },
                "unclosed { at character 3 (write {{ for a literal brace)",
            ),
            (
                TemplateError::StrayClose { at: 2 },
                "stray } at character 2 (write }} for a literal brace)",
            ),
            (
                TemplateError::EmptyName { at: 1 },
                "empty placeholder {} at character 1 (write {{}} for literal braces)",
            ),
            (
                TemplateError::InvalidName {
                    name: "1a".into(),
                    at: 4,
                },
                "{1a} at character 4 is not a placeholder: names are letters, digits, _ . - and \
                 start with a letter or _ (write {{ and }} for literal braces)",
            ),
            (
                TemplateError::Missing {
                    names: vec!["x".into()],
                },
                "no value for placeholder {x}",
            ),
            (
                TemplateError::Missing {
                    names: vec!["x".into(), "y".into()],
                },
                "no values for placeholders {x}, {y}",
            ),
        ];
        for (error, expected) in table {
            assert_eq!(error.to_string(), expected);
        }
    }

    #[test]
    fn lists_placeholders_once_in_order() {
        assert_eq!(
            placeholders("{b}{{x}}{a}{b}"),
            Ok(vec!["b".to_string(), "a".to_string()])
        );
        assert_eq!(placeholders("no braces"), Ok(vec![]));
        assert_eq!(placeholders("{"), Err(TemplateError::Unclosed { at: 1 }));
    }

    #[test]
    fn names() {
        for ok in ["a", "_", "A_b", "doc.url", "x-1", "_9"] {
            assert!(is_placeholder_name(ok), "{ok}");
        }
        for bad in ["", "1", "-a", ".a", "a b", "é", "a{"] {
            assert!(!is_placeholder_name(bad), "{bad}");
        }
    }
}
