//! Text in a fixed number of display columns: cut or padded (`fit`), or wrapped (`wrap`). Pure;
//! wide characters count double.

use unicode_width::UnicodeWidthStr;

/// `text` in exactly `width` columns, the last one blank: padded, or cut with an ellipsis.
pub fn fit(text: &str, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let room = width - 1;
    let mut out = String::new();
    let mut used = 0;
    if text.width() <= room {
        out.push_str(text);
        used = text.width();
    } else {
        for ch in text.chars() {
            let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + w + 1 > room {
                break;
            }
            out.push(ch);
            used += w;
        }
        if room > 0 {
            out.push('…');
            used += 1;
        }
    }
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// As `fit`, but a cut text keeps its end (`str…-018 `): task ids differ most at their end.
pub fn fit_middle(text: &str, width: usize) -> String {
    let room = width.saturating_sub(1);
    if text.width() <= room || room < 5 {
        return fit(text, width);
    }
    let keep = room - 1; // one for the ellipsis
    let tail_room = keep.div_ceil(2);
    let mut tail: Vec<char> = Vec::new();
    let mut tail_used = 0;
    for ch in text.chars().rev() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if tail_used + w > tail_room {
            break;
        }
        tail.push(ch);
        tail_used += w;
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w > keep - tail_used {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out.extend(tail.iter().rev());
    used += 1 + tail_used;
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// `text` in rows of at most `width` display columns, broken at spaces where possible.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    let mut used = 0;
    // A path breaks after a `/` rather than anywhere: its parts wrap like words.
    for word in text
        .split_inclusive(' ')
        .flat_map(|word| word.split_inclusive('/'))
    {
        let w = word.width();
        if used + w.min(width) > width && used > 0 {
            rows.push(String::new());
            used = 0;
        }
        for ch in word.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + cw > width {
                rows.push(String::new());
                used = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push(ch);
            }
            used += cw;
        }
    }
    rows.into_iter().map(|r| r.trim_end().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_wrap_after_a_slash() {
        assert_eq!(
            wrap("runs/fix-issue-142/attempt_1.log", 20),
            ["runs/fix-issue-142/", "attempt_1.log"]
        );
        assert_eq!(
            wrap("see runs/a/b.log now", 12),
            ["see runs/a/", "b.log now"]
        );
    }

    #[test]
    fn text_is_cut_with_an_ellipsis_or_padded() {
        assert_eq!(fit("abc", 6), "abc   ");
        assert_eq!(fit("abcdefgh", 6), "abcd… ");
        assert_eq!(fit("abcdef", 6), "abcd… ");
        assert_eq!(fit("abcde", 6), "abcde ");
        assert_eq!(fit("界界界界", 5), "界…  ");
        assert_eq!(fit("x", 0), "");
        assert_eq!(fit("xy", 1), " ");
    }

    #[test]
    fn ids_cut_in_the_middle_stay_apart() {
        let ids = [
            "structured-017",
            "structured-auth-018",
            "structured-denied-019",
        ];
        let cut: Vec<String> = ids.iter().map(|id| fit_middle(id, 10)).collect();
        assert_eq!(cut, ["stru…-017 ", "stru…-018 ", "stru…-019 "]);
        assert_eq!(fit_middle("short", 10), "short     ");
        assert_eq!(fit_middle("abcdefghij", 10), "abcd…ghij ");
        assert_eq!(
            fit_middle("abcdefgh", 4),
            "ab… ",
            "too narrow to keep both ends"
        );
        assert_eq!(fit_middle("界界界界界界", 8), "界界…界 ");
    }

    #[test]
    fn long_values_wrap_at_spaces() {
        assert_eq!(
            wrap("Fix issue #142 and run the tests.", 16),
            ["Fix issue #142", "and run the", "tests."]
        );
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
    }
}
