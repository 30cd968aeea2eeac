//! The globs of permission rules, compiled once with `globset`. The rules' own syntax: `*` is any
//! text (not `/` in a path), `**` crosses folders (`**/` also no folder), `?` one byte but never
//! `/`, everything else literal; spelled out in `globset`'s syntax.

use globset::{GlobBuilder, GlobMatcher};

/// Whether `*` stops at `/` (paths) or crosses it (command lines, tool inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GlobKind {
    /// A path: `*` stops at `/`, `**` crosses folders.
    Path,
    /// A command line or a tool's input: `*` is any text.
    Text,
}

/// A rule's glob, compiled.
#[derive(Debug, Clone)]
pub(super) struct RuleGlob {
    /// The pattern as the rule wrote it (for equality and messages).
    pattern: String,
    kind: GlobKind,
    matcher: GlobMatcher,
}

impl PartialEq for RuleGlob {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.kind == other.kind
    }
}

impl Eq for RuleGlob {}

impl RuleGlob {
    /// Compiles `pattern`; the error says what `globset` could not build.
    pub(super) fn new(pattern: &str, kind: GlobKind) -> Result<RuleGlob, globset::Error> {
        let translated = to_globset(pattern, kind);
        let glob = GlobBuilder::new(&translated)
            .literal_separator(kind == GlobKind::Path)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()?;
        Ok(RuleGlob {
            pattern: pattern.to_string(),
            kind,
            matcher: glob.compile_matcher(),
        })
    }

    pub(super) fn is_match(&self, text: &str) -> bool {
        self.matcher.is_match(text)
    }
}

/// The rules' glob syntax in `globset`'s.
fn to_globset(pattern: &str, kind: GlobKind) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                let then_slash = chars.peek() == Some(&'/');
                if then_slash {
                    chars.next();
                }
                out.push_str(match (kind, then_slash) {
                    // Nothing, or any text that ends with `/`.
                    (GlobKind::Path, true) => "{,*/**/}",
                    // Any text: without `/`, or with one or more.
                    (GlobKind::Path, false) => "{*,*/**/*}",
                    (GlobKind::Text, true) => "{,*/}",
                    (GlobKind::Text, false) => "*",
                });
            }
            '*' => out.push('*'),
            '?' => out.push_str(match kind {
                GlobKind::Path => "?",
                GlobKind::Text => "[!/]",
            }),
            '\\' | '[' | ']' | '{' | '}' | ',' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(pattern: &str, text: &str) -> bool {
        RuleGlob::new(pattern, GlobKind::Path)
            .expect("glob")
            .is_match(text)
    }

    fn text(pattern: &str, text: &str) -> bool {
        RuleGlob::new(pattern, GlobKind::Text)
            .expect("glob")
            .is_match(text)
    }

    #[test]
    fn path_globs() {
        let cases = [
            ("/w/src/**", "/w/src/a/b.rs", true),
            ("/w/src/**", "/w/src/", true),
            ("/w/src/**", "/w/src", false),
            ("/w/src/*.rs", "/w/src/b.rs", true),
            ("/w/src/*.rs", "/w/src/a/b.rs", false),
            ("/w/src/**/*.rs", "/w/src/b.rs", true),
            ("/w/src/**/*.rs", "/w/src/a/b/c.rs", true),
            ("/w/src/**.rs", "/w/src/a/b.rs", true),
            ("/w/src/**.rs", "/w/src/b.rs", true),
            ("/w/src**/x", "/w/srcx", true),
            ("/w/src**/x", "/w/src/a/x", true),
            ("/w/***", "/w/a/b", true),
            ("/w/?.rs", "/w/a.rs", true),
            ("/w/?.rs", "/w/ab.rs", false),
            ("/w/[ab].rs", "/w/a.rs", false),
            ("/w/[ab].rs", "/w/[ab].rs", true),
            ("/w/{a,b}", "/w/{a,b}", true),
            ("/w/{a,b}", "/w/a", false),
            ("/w/a\\b", "/w/a\\b", true),
            ("/w/!a", "/w/!a", true),
        ];
        for (pattern, target, want) in cases {
            assert_eq!(path(pattern, target), want, "{pattern} against {target}");
        }
    }

    /// `?` is one character, never a folder separator, in paths and in command lines alike.
    #[test]
    fn question_mark_never_matches_a_slash() {
        assert!(path("/w/src?x.rs", "/w/srcAx.rs"));
        assert!(!path("/w/src?x.rs", "/w/src/x.rs"));
        assert!(text("ls a?b*", "ls a.b -l"));
        assert!(!text("ls a?b*", "ls a/b -l"));
    }

    #[test]
    fn text_globs() {
        let cases = [
            ("git * main", "git push origin main", true),
            ("git * main", "git push origin/x main", true),
            ("git * main", "git push origin dev", false),
            ("cat **/x", "cat x", true),
            ("cat **/x", "cat a/b/x", true),
            ("echo [a]*", "echo [a] b", true),
            ("echo [a]*", "echo a b", false),
            ("echo {a,b}*", "echo {a,b} c", true),
            ("{\"title\":*}", "{\"title\":\"x\"}", true),
            ("run *", "run a\nb", true),
        ];
        for (pattern, target, want) in cases {
            assert_eq!(text(pattern, target), want, "{pattern} against {target}");
        }
    }
}
