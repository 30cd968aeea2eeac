//! A small, conservative shell parser: enough of sh and bash to split a command line into the
//! simple commands it would run (lists, pipelines, subshells, substitutions, redirections,
//! here-documents, quotes). What it does not understand is an error, and the guard asks the
//! operator. It never runs or expands anything (`$VAR` stays unknown, but `$HOME`/`~`). This file
//! holds the tree, lists, pipelines and tokens; `words` reads one word.

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

/// What `Parser::script` has read so far at one level.
#[derive(Default)]
struct Reading {
    script: Script,
    /// The pipeline being read.
    pipeline: Pipeline,
    /// The command being read.
    command: SimpleCommand,
    /// `for NAME in words; do`: the words are not a command.
    in_for_header: bool,
}

impl Reading {
    /// The command being read has something: a word, a redirection or an assignment.
    fn command_started(&self) -> bool {
        !self.command.words.is_empty()
            || !self.command.redirects.is_empty()
            || !self.command.assignments.is_empty()
    }

    /// The script, with the command and pipeline being read at its end.
    fn finish(mut self) -> Script {
        if self.command_started() {
            self.pipeline.commands.push(self.command);
        }
        if !self.pipeline.commands.is_empty() {
            self.script.pipelines.push(self.pipeline);
        }
        self.script
    }
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
        let mut reading = Reading::default();
        loop {
            match self.token(closer)? {
                Token::Word(word) => self.read_word(&mut reading, word)?,
                Token::Redirect(op) => self.read_redirect(&mut reading.command, op, closer)?,
                Token::Op(op) => self.read_operator(&mut reading, op)?,
                Token::End => {
                    if !self.pending_heredocs.is_empty() {
                        return self.err("a here-document is not closed");
                    }
                    return Ok(reading.finish());
                }
            }
        }
    }

    /// A word: the command's name or an argument, an assignment, or a skipped keyword.
    fn read_word(&self, reading: &mut Reading, word: Word) -> Result<(), ParseError> {
        if reading.in_for_header {
            return Ok(());
        }
        let command = &mut reading.command;
        let at_start = command.words.is_empty();
        if at_start && word.inner.is_empty() && !word.dynamic {
            if word.text == "for" || word.text == "select" {
                reading.in_for_header = true;
                return Ok(());
            }
            if word.text == "case" || word.text == "function" {
                return self.err("`case` and functions are not followed");
            }
            if KEYWORDS_SKIPPED.contains(&word.text.as_str()) {
                return Ok(());
            }
            if is_assignment(&word.text) {
                command.assignments.push(word);
                return Ok(());
            }
        }
        command.words.push(word);
        Ok(())
    }

    /// A redirection of `command` and its target; a here-document's body is read after its line.
    fn read_redirect(
        &mut self,
        command: &mut SimpleCommand,
        op: String,
        closer: Option<char>,
    ) -> Result<(), ParseError> {
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
            return Ok(());
        }
        let target = match self.token(closer)? {
            Token::Word(w) => w,
            _ => return self.err("a redirection has no target"),
        };
        command.redirects.push(Redirect { op, target });
        Ok(())
    }

    /// An operator: in a subshell or group it joins the script; a pipe ends the command, any
    /// other list operator the pipeline too.
    fn read_operator(&mut self, reading: &mut Reading, op: String) -> Result<(), ParseError> {
        if op == "(" {
            if !reading.command.words.is_empty() {
                return self.err("function definitions are not followed");
            }
            let inner = self.script(Some(')'))?;
            reading.script.pipelines.extend(inner.pipelines);
            return Ok(());
        }
        if op == "\n" && !self.pending_heredocs.is_empty() {
            self.read_heredoc_bodies()?;
        }
        let ends_pipeline = op != "|" && op != "|&";
        if ends_pipeline {
            reading.in_for_header = false;
        }
        if reading.command_started() {
            let command = std::mem::take(&mut reading.command);
            reading.pipeline.commands.push(command);
        } else if !ends_pipeline {
            return self.err("a pipe with no command before it");
        }
        if ends_pipeline && !reading.pipeline.commands.is_empty() {
            let pipeline = std::mem::take(&mut reading.pipeline);
            reading.script.pipelines.push(pipeline);
        }
        Ok(())
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
}

mod words;

use words::is_assignment;

#[cfg(test)]
mod tests;
