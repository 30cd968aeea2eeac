//! serde_json's syntax errors as problems a user can act on: a character position and what is
//! missing.

use super::{Location, Problem};
use crate::core::taskfile::json_pos;

/// One problem for text that is not JSON, with serde_json's position in characters.
pub(super) fn problem(text: &str, error: &serde_json::Error) -> Problem {
    let location = (error.line() > 0).then(|| Location {
        line: error.line(),
        column: json_pos::char_column(text, error.line(), error.column()),
    });
    let full = error.to_string();
    let what = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(what, _)| what);
    let readable = match what {
        "EOF while parsing a value" if text.trim().is_empty() => {
            "the file is empty: it must be a JSON object like {\"tasks\": [ ... ]}"
        }
        "EOF while parsing a value" => "the file ends where a value was expected",
        "EOF while parsing a list" => "the file ends inside a list: a `]` is missing",
        "EOF while parsing an object" => "the file ends inside an object: a `}` is missing",
        "EOF while parsing a string" => "the file ends inside a string: a closing `\"` is missing",
        "expected `,` or `}`" => {
            "expected `,` or `}`: a comma between fields, or a `}`, is missing"
        }
        "expected `,` or `]`" => "expected `,` or `]`: a comma between items, or a `]`, is missing",
        "expected `:`" => "expected `:` after the key",
        "key must be a string" => "expected a key in double quotes, like \"agent\"",
        "trailing comma" => "trailing comma: JSON allows no comma before `}` or `]`",
        "trailing characters" => "unexpected text after the end of the JSON object",
        "expected value" => {
            "expected a value: a string in double quotes, a number, true, false, null, an object \
             or a list"
        }
        "expected ident" => "expected true, false or null",
        "control character (\\u0000-\\u001F) found while parsing a string" => {
            "a line break or tab inside a string: write it as \\n or \\t"
        }
        "recursion limit exceeded" => "the document is nested too deeply",
        other => other,
    };
    Problem::of_file(location, format!("not valid JSON: {readable}"))
}
