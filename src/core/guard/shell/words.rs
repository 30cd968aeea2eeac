//! The shell parser's words: quotes removed, substitutions parsed as scripts of their own,
//! here-documents skipped. A child of `shell`, sharing its state.

use super::{MAX_DEPTH, ParseError, Parser, Script, Word, parse_at};

impl Parser {
    pub(super) fn word(&mut self, closer: Option<char>) -> Result<Word, ParseError> {
        let mut word = Word::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' => break,
                '(' => return self.err("a `(` inside a word is not followed"),
                ')' if closer == Some(')') => break,
                ')' => return self.err("a `)` has no `(`"),
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.nested_script(')')?;
                    word.inner.push(inner);
                    word.dynamic = true;
                    word.text.push_str("<(…)");
                }
                '<' | '>' => break,
                '\'' => {
                    self.pos += 1;
                    quoted_tilde(&mut word, self.peek());
                    loop {
                        match self.peek() {
                            None => return self.err("a ' quote is not closed"),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(ch) => {
                                word.text.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    quoted_tilde(&mut word, self.peek());
                    self.double_quoted(&mut word)?;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(ch) => {
                            word.text.push(ch);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '$' => self.dollar(&mut word)?,
                '`' => {
                    self.pos += 1;
                    self.backtick(&mut word)?;
                }
                '*' | '?' | '[' => {
                    word.glob = true;
                    word.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(word)
    }

    pub(super) fn double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                None => return self.err("a \" quote is not closed"),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(ch @ ('"' | '\\' | '$' | '`')) => {
                            word.text.push(ch);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => word.text.push('\\'),
                    }
                }
                Some('$') => self.dollar(word)?,
                Some('`') => {
                    self.pos += 1;
                    self.backtick(word)?;
                }
                Some(ch) => {
                    word.text.push(ch);
                    self.pos += 1;
                }
            }
        }
    }

    pub(super) fn dollar(&mut self, word: &mut Word) -> Result<(), ParseError> {
        self.pos += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                // Arithmetic: nothing runs, but its value is unknown.
                self.pos += 2;
                let mut depth = 2usize;
                while depth > 0 {
                    match self.peek() {
                        None => return self.err("a `$((` is not closed"),
                        Some('(') => depth += 1,
                        Some(')') => depth -= 1,
                        _ => {}
                    }
                    self.pos += 1;
                }
                word.dynamic = true;
                word.text.push_str("$((…))");
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.nested_script(')')?;
                word.inner.push(inner);
                word.dynamic = true;
                word.text.push_str("$(…)");
            }
            Some('{') => {
                let start = self.pos + 1;
                let Some(len) = self.chars[start..].iter().position(|&c| c == '}') else {
                    return self.err("a `${` is not closed");
                };
                let name: String = self.chars[start..start + len].iter().collect();
                self.pos = start + len + 1;
                push_variable(word, &name);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                push_variable(word, &name);
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 1;
                word.dynamic = true;
                word.text.push('$');
                word.text.push(c);
            }
            Some('\'') => {
                // $'…' (ANSI-C quoting): escapes could hide anything; read it as unknown text.
                self.pos += 1;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == '\\' {
                        self.pos += 1;
                    } else if c == '\'' {
                        word.dynamic = true;
                        word.text.push_str("$'…'");
                        return Ok(());
                    }
                }
                return self.err("a $' quote is not closed");
            }
            _ => word.text.push('$'),
        }
        Ok(())
    }

    /// The text up to the matching `closer`, parsed as a script of its own.
    pub(super) fn nested_script(&mut self, closer: char) -> Result<Script, ParseError> {
        if self.depth + 1 > MAX_DEPTH {
            return self.err("nested too deeply to follow");
        }
        let mut inner = Parser {
            chars: std::mem::take(&mut self.chars),
            pos: self.pos,
            depth: self.depth + 1,
            pending_heredocs: Vec::new(),
        };
        let result = inner.script(Some(closer));
        self.pos = inner.pos;
        self.chars = inner.chars;
        result
    }

    pub(super) fn backtick(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return self.err("a ` quote is not closed"),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    text.push(self.chars[self.pos + 1]);
                    self.pos += 2;
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        word.inner.push(parse_at(&text, self.depth + 1)?);
        word.dynamic = true;
        word.text.push_str("`…`");
        Ok(())
    }

    pub(super) fn heredoc_delimiter(&mut self) -> Result<(String, bool), ParseError> {
        self.skip_blanks();
        let start = self.pos;
        let word = self.word(None)?;
        let written: String = self.chars[start..self.pos].iter().collect();
        if word.text.is_empty() || word.dynamic {
            return self.err("a here-document has no plain delimiter");
        }
        let quoted = written.contains(['\'', '"', '\\']);
        Ok((word.text, quoted))
    }

    /// Skips the bodies of the here-documents opened on the line just ended (substitutions in an
    /// unquoted body are not followed).
    pub(super) fn read_heredoc_bodies(&mut self) -> Result<(), ParseError> {
        for (delimiter, quoted) in std::mem::take(&mut self.pending_heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return self.err("a here-document is not closed");
                }
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |i| self.pos + i);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                if line.trim_start_matches('\t') == delimiter {
                    break;
                }
                if !quoted && (line.contains("$(") || line.contains('`')) {
                    return self.err("a here-document runs commands inside it");
                }
            }
        }
        Ok(())
    }
}

/// A quoted `~` at the start of a word is a file named `~`, not the home folder.
fn quoted_tilde(word: &mut Word, next: Option<char>) {
    if word.text.is_empty() && next == Some('~') {
        word.text.push_str("./");
    }
}

fn push_variable(word: &mut Word, name: &str) {
    if name == "HOME" {
        word.text.push('~');
    } else {
        word.dynamic = true;
        word.text.push('$');
        word.text.push_str(name);
    }
}

pub(super) fn is_assignment(text: &str) -> bool {
    let Some((name, _)) = text.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}
