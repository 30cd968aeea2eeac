//! One task object's text rewritten with its changed fields, in the style found around them. A
//! child of `splice`, which finds the objects.

use super::*;

/// How the text around a value is written, so a rewritten or new value looks like its siblings.
#[derive(Debug, Clone)]
struct Style {
    newline: &'static str,
    /// One level of indentation (of the object's members relative to the object's own line).
    unit: String,
    /// Between a key and its value, for values written afresh: `": "` or `":"`.
    colon: &'static str,
    /// Between members of an inline container: `", "` or `","`.
    comma: &'static str,
    /// Inside the braces of an inline object: `" "` or `""`.
    pad: &'static str,
}

/// The object text with every key in `keys` set to its value in `object` (or removed).
pub(super) fn rewrite_object(
    text: &str,
    object: &serde_json::Map<String, Value>,
    keys: &BTreeSet<String>,
) -> Option<String> {
    let found = members(text)?;
    let first = found.first()?;
    let last = found.last()?;
    let prefix = &text[..first.key_start];
    let suffix = &text[last.value.end..];
    // Separators: seps[i] lies between member i and member i + 1 (it holds the comma).
    let seps: Vec<&str> = found
        .windows(2)
        .map(|w| &text[w[0].value.end..w[1].key_start])
        .collect();
    let multiline = text.contains('\n');
    let style = style_of(text, &found, multiline);
    let indent = line_indent(text, last.key_start);
    // The last occurrence of a repeated key is the one serde_json read.
    let mut last_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in found.iter().enumerate() {
        last_of.insert(&m.key, i);
    }
    // Each kept member with the original index it had, so it keeps the separator before it.
    let mut kept: Vec<(usize, String)> = Vec::with_capacity(found.len());
    for (i, m) in found.iter().enumerate() {
        let changed = keys.contains(&m.key) && last_of.get(m.key.as_str()) == Some(&i);
        if !changed {
            kept.push((i, text[m.key_start..m.value.end].to_string()));
        } else if let Some(value) = object.get(&m.key) {
            let old = &text[m.value.clone()];
            let inline = !multiline || (!old.contains('\n') && is_filled_container(old));
            let rendered = render(value, inline, &line_indent(text, m.key_start), &style);
            kept.push((
                i,
                format!("{}{rendered}", &text[m.key_start..m.value.start]),
            ));
        }
        // A removed member goes with the separator before it (or, first, after it).
    }
    // What separates a new member from the one before it: the siblings' own separator.
    let new_sep = seps.last().map_or_else(
        || {
            if multiline {
                format!(",{}{}", style.newline, indent)
            } else {
                style.comma.to_string()
            }
        },
        |s| (*s).to_string(),
    );
    let present: BTreeSet<&str> = found.iter().map(|m| m.key.as_str()).collect();
    let key_colon = separator_after_key(text, last).unwrap_or_else(|| style.colon.to_string());
    let mut added = Vec::new();
    for (key, value) in object {
        if keys.contains(key) && !present.contains(key.as_str()) {
            added.push(format!(
                "{}{key_colon}{}",
                Value::String(key.clone()),
                render(value, !multiline, &indent, &style)
            ));
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(prefix);
    for (n, (i, piece)) in kept.iter().enumerate() {
        if n > 0 {
            out.push_str(seps.get(i - 1).copied().unwrap_or(&new_sep));
        }
        out.push_str(piece);
    }
    let mut first = kept.is_empty();
    for piece in added {
        if !first {
            out.push_str(&new_sep);
        }
        first = false;
        out.push_str(&piece);
    }
    out.push_str(suffix);
    Some(out)
}

fn is_filled_container(value: &str) -> bool {
    let inner = value.get(1..value.len().saturating_sub(1)).unwrap_or("");
    value.starts_with(['{', '[']) && !inner.trim().is_empty()
}

/// The text between a member's key and its value (`": "`, `" : "`, `":"`).
fn separator_after_key(text: &str, member: &Member) -> Option<String> {
    let key_end = skip_string(text.as_bytes(), member.key_start)?;
    text.get(key_end..member.value.start).map(str::to_string)
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn style_of(text: &str, found: &[Member], multiline: bool) -> Style {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let colon = found
        .iter()
        .find_map(|m| separator_after_key(text, m))
        .map_or(": ", |s| if s.ends_with(' ') { ": " } else { ":" });
    let comma = if multiline {
        ", "
    } else {
        found.windows(2).next().map_or(", ", |w| {
            if text[w[0].value.end..w[1].key_start].ends_with(' ') {
                ", "
            } else {
                ","
            }
        })
    };
    let pad = if text.starts_with("{ ") { " " } else { "" };
    let member_indent = found
        .first()
        .map(|m| line_indent(text, m.key_start))
        .unwrap_or_default();
    // The closing brace of a multi-line object sits at the object's own indentation.
    let object_indent = line_indent(text, text.len().saturating_sub(1));
    let unit = member_indent
        .strip_prefix(object_indent.as_str())
        .filter(|u| !u.is_empty())
        .unwrap_or("  ")
        .to_string();
    Style {
        newline,
        unit,
        colon,
        comma,
        pad,
    }
}

/// `value` as JSON text: on one line (`inline`), or one member per line indented from `indent`.
fn render(value: &Value, inline: bool, indent: &str, style: &Style) -> String {
    let mut out = String::new();
    write_value(&mut out, value, inline, indent, style);
    out
}

fn write_value(out: &mut String, value: &Value, inline: bool, indent: &str, style: &Style) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let items = map.iter().map(|(k, v)| (Some(k), v));
            write_container(out, ('{', '}'), items, inline, indent, style);
        }
        Value::Array(list) if !list.is_empty() => {
            let items = list.iter().map(|v| (None, v));
            write_container(out, ('[', ']'), items, inline, indent, style);
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn write_container<'a>(
    out: &mut String,
    (open, close): (char, char),
    items: impl Iterator<Item = (Option<&'a String>, &'a Value)>,
    inline: bool,
    indent: &str,
    style: &Style,
) {
    let inner = format!("{indent}{}", style.unit);
    out.push(open);
    if inline && open == '{' {
        out.push_str(style.pad);
    }
    for (n, (key, item)) in items.enumerate() {
        if n > 0 {
            out.push_str(if inline { style.comma } else { "," });
        }
        if !inline {
            out.push_str(style.newline);
            out.push_str(&inner);
        }
        if let Some(key) = key {
            out.push_str(&Value::String(key.clone()).to_string());
            out.push_str(style.colon);
        }
        write_value(out, item, inline, &inner, style);
    }
    if inline {
        if open == '{' {
            out.push_str(style.pad);
        }
    } else {
        out.push_str(style.newline);
        out.push_str(indent);
    }
    out.push(close);
}
