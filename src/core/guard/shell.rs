//! A small, conservative shell parser: enough of POSIX sh / bash to split a command line into
//! the simple commands it would run, so the guard can judge each one.
//!
//! It splits lists (`;`, `&&`, `||`, `&`, newlines), pipelines (`|`, `|&`), subshells and
//! groups, `$(…)`, backticks and `<(…)`/`>(…)` (parsed as commands of their own), redirections
//! and here-documents, and removes quotes. What it does not understand (`case`, function
//! definitions, unterminated quotes, unbalanced parentheses, `eval` of dynamic text) is an
//! error: the guard then asks the operator. It never runs or expands anything: `$VAR` stays
//! unknown except `$HOME`/`~`, which the caller's home stands for.

use thiserror::Error;

/// Why a command line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The literal text; unknown parts (`$VAR`, `$(…)`) are kept as written.
    pub text: String,
    /// Part of the word is only known when the shell runs (`$VAR`, `$(…)`, backticks).
    pub dynamic: bool,
    /// Some unquoted `*`, `?` or `[` (a glob).
    pub glob: bool,
    /// Scripts inside `$(…)`, backticks or `<(…)` in this word.
    pub inner: Vec<Script>,
}

/// A redirection such as `> out.txt` or `2>> log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `<`, `&>`, `>&`, `<>`, `<<<`, `<<`.
    pub op: String,
    pub target: Word,
}

impl Redirect {
    /// Writes to its target (as opposed to reading it).
    pub fn writes(&self) -> bool {
        self.op.contains('>') && self.op != ">&" || self.op == "&>"
    }
}

/// A simple command: `env`-style assignments, words, redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// The command as one line, for messages and rule matching.
    pub fn display(&self) -> String {
        self.words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Commands joined by `|`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pipeline {
    pub commands: Vec<SimpleCommand>,
}

/// A parsed command line: its pipelines in order (subshells and groups flattened).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    pub pipelines: Vec<Pipeline>,
}

impl Script {
    /// Every simple command, including those inside substitutions, depth first.
    pub fn all_commands(&self) -> Vec<&SimpleCommand> {
        let mut out = Vec::new();
        for pipeline in &self.pipelines {
            for command in &pipeline.commands {
                out.push(command);
                for word in command
                    .words
                    .iter()
                    .chain(&command.assignments)
                    .chain(command.redirects.iter().map(|r| &r.target))
                {
                    for inner in &word.inner {
                        out.extend(inner.all_commands());
                    }
                }
            }
        }
        out
    }
}

/// Deepest nesting of substitutions and `bash -c` accepted before giving up.
pub const MAX_DEPTH: usize = 8;

/// Parses a command line.
pub fn parse(text: &str) -> Result<Script, ParseError> {
    parse_at(text, 0)
}

pub(super) fn parse_at(text: &str, depth: usize) -> Result<Script, ParseError> {
    if depth > MAX_DEPTH {
        return Err(ParseError("nested too deeply to follow".into()));
    }
    let mut parser = Parser {
        chars: text.chars().collect(),
        pos: 0,
        depth,
        pending_heredocs: Vec::new(),
    };
    parser.script(None)
}

const KEYWORDS_SKIPPED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
];

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// Here-documents whose bodies start after the current line: (delimiter, quoted).
    pending_heredocs: Vec<(String, bool)>,
}

enum Token {
    Word(Word),
    Op(String),
    Redirect(String),
    End,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn err<T>(&self, message: &str) -> Result<T, ParseError> {
        Err(ParseError(message.to_string()))
    }

    /// Reads pipelines until the end, or until `closer` (`)`) at this level.
    fn script(&mut self, closer: Option<char>) -> Result<Script, ParseError> {
        let mut script = Script::default();
        let mut pipeline = Pipeline::default();
        let mut command = SimpleCommand::default();
        // `for NAME in words; do`: the words are not a command.
        let mut in_for_header = false;
        loop {
            let token = self.token(closer)?;
            match token {
                Token::Word(word) => {
                    if in_for_header {
                        continue;
                    }
                    let at_start = command.words.is_empty();
                    if at_start && word.inner.is_empty() && !word.dynamic {
                        if word.text == "for" || word.text == "select" {
                            in_for_header = true;
                            continue;
                        }
                        if word.text == "case" || word.text == "function" {
                            return self.err("`case` and functions are not followed");
                        }
                        if KEYWORDS_SKIPPED.contains(&word.text.as_str()) {
                            continue;
                        }
                        if is_assignment(&word.text) {
                            command.assignments.push(word);
                            continue;
                        }
                    }
                    command.words.push(word);
                }
                Token::Redirect(op) => {
                    if op == "<<" || op == "<<-" {
                        let (delimiter, quoted) = self.heredoc_delimiter()?;
                        self.pending_heredocs.push((delimiter.clone(), quoted));
                        command.redirects.push(Redirect {
                            op,
                            target: Word {
                                text: delimiter,
                                ..Word::default()
                            },
                        });
                        continue;
                    }
                    let target = match self.token(closer)? {
                        Token::Word(w) => w,
                        _ => return self.err("a redirection has no target"),
                    };
                    command.redirects.push(Redirect { op, target });
                }
                Token::Op(op) => {
                    if op == "(" {
                        if !command.words.is_empty() {
                            return self.err("function definitions are not followed");
                        }
                        let inner = self.script(Some(')'))?;
                        script.pipelines.extend(inner.pipelines);
                        continue;
                    }
                    if op == "\n" && !self.pending_heredocs.is_empty() {
                        self.read_heredoc_bodies()?;
                    }
                    let ends_pipeline = op != "|" && op != "|&";
                    if ends_pipeline {
                        in_for_header = false;
                    }
                    if !command.words.is_empty()
                        || !command.redirects.is_empty()
                        || !command.assignments.is_empty()
                    {
                        pipeline.commands.push(std::mem::take(&mut command));
                    } else if !ends_pipeline {
                        return self.err("a pipe with no command before it");
                    }
                    if ends_pipeline && !pipeline.commands.is_empty() {
                        script.pipelines.push(std::mem::take(&mut pipeline));
                    }
                }
                Token::End => {
                    if !self.pending_heredocs.is_empty() {
                        return self.err("a here-document is not closed");
                    }
                    if !command.words.is_empty()
                        || !command.redirects.is_empty()
                        || !command.assignments.is_empty()
                    {
                        pipeline.commands.push(command);
                    }
                    if !pipeline.commands.is_empty() {
                        script.pipelines.push(pipeline);
                    }
                    return Ok(script);
                }
            }
        }
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' {
                self.pos += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn token(&mut self, closer: Option<char>) -> Result<Token, ParseError> {
        self.skip_blanks();
        let Some(c) = self.peek() else {
            if closer.is_some() {
                return self.err("a `(` is not closed");
            }
            return Ok(Token::End);
        };
        if c == '#' {
            while let Some(c) = self.peek() {
                if c == '\n' {
                    break;
                }
                self.pos += 1;
            }
            return self.token(closer);
        }
        if Some(c) == closer {
            self.pos += 1;
            return Ok(Token::End);
        }
        let two: String = self.chars[self.pos..].iter().take(3).collect();
        for op in ["&&", "||", "|&", ";;"] {
            if two.starts_with(op) {
                if op == ";;" {
                    return self.err("`case` is not followed");
                }
                self.pos += 2;
                return Ok(Token::Op(op.into()));
            }
        }
        match c {
            ';' | '&' | '|' | '\n' => {
                if c == '&' && self.peek_at(1) == Some('>') {
                    let op = if self.peek_at(2) == Some('>') {
                        "&>>"
                    } else {
                        "&>"
                    };
                    self.pos += op.len();
                    return Ok(Token::Redirect(op.into()));
                }
                self.pos += 1;
                return Ok(Token::Op(c.to_string()));
            }
            '(' => {
                self.pos += 1;
                return Ok(Token::Op("(".into()));
            }
            ')' => return self.err("a `)` has no `(`"),
            _ => {}
        }
        // Redirections, with an optional file-descriptor number before them.
        let mut look = self.pos;
        while self.chars.get(look).is_some_and(char::is_ascii_digit) {
            look += 1;
        }
        if let Some(&r) = self.chars.get(look)
            && (r == '>' || r == '<')
            && self.chars.get(look + 1) != Some(&'(')
        {
            let rest: String = self.chars[look..].iter().take(3).collect();
            let op = ["<<<", "<<-", ">>", "<<", ">&", "<&", "<>", ">|", ">", "<"]
                .into_iter()
                .find(|op| rest.starts_with(op))
                .unwrap_or(">");
            self.pos = look + op.len();
            return Ok(Token::Redirect(op.into()));
        }
        Ok(Token::Word(self.word(closer)?))
    }

    fn word(&mut self, closer: Option<char>) -> Result<Word, ParseError> {
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

    fn double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
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

    fn dollar(&mut self, word: &mut Word) -> Result<(), ParseError> {
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
    fn nested_script(&mut self, closer: char) -> Result<Script, ParseError> {
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

    fn backtick(&mut self, word: &mut Word) -> Result<(), ParseError> {
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

    fn heredoc_delimiter(&mut self) -> Result<(String, bool), ParseError> {
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

    /// Skips the bodies of the here-documents opened on the line just ended. An unquoted body
    /// with substitutions would run them: that is not followed.
    fn read_heredoc_bodies(&mut self) -> Result<(), ParseError> {
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

fn is_assignment(text: &str) -> bool {
    let Some((name, _)) = text.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
