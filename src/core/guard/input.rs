//! Reading a tool's structured input so that nothing in it goes unjudged: a reader takes the keys
//! that become the request and passes over those known to carry no action; whatever is left is
//! unread, and so is the request. The accounting is the reader's, so a new shape of input is
//! unread until herd is taught it. Pure.

use serde_json::{Map, Value};

/// The input of one tool call, read key by key.
pub struct Fields<'a> {
    map: Map<String, Value>,
    /// An input that is not an object (a bare string, a list): unread as a whole.
    shapeless: Option<&'a Value>,
}

/// The keys that state a command, in the order herd reads them.
const COMMAND_KEYS: [&str; 6] = ["command", "cmd", "argv", "script", "commands", "args"];

/// The keys that name a path a request acts on.
pub const PATH_KEYS: [&str; 6] = [
    "file_path",
    "path",
    "absolute_path",
    "notebook_path",
    "filePath",
    "paths",
];

/// The keys that name the folder a command runs in.
pub const WORKDIR_KEYS: [&str; 5] = [
    "cwd",
    "workdir",
    "dir_path",
    "directory",
    "working_directory",
];

impl<'a> Fields<'a> {
    /// The input to read; `None` and `null` are an empty input.
    pub fn of(input: Option<&'a Value>) -> Fields<'a> {
        match input {
            None | Some(Value::Null) => Fields {
                map: Map::new(),
                shapeless: None,
            },
            Some(Value::Object(map)) => Fields {
                map: map
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                shapeless: None,
            },
            Some(other) => Fields {
                map: Map::new(),
                shapeless: Some(other),
            },
        }
    }

    /// Whether the input holds nothing at all.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty() && self.shapeless.is_none()
    }

    /// Takes the first of `keys` holding a non-blank string (anything else stays, unread).
    pub fn text(&mut self, keys: &[&str]) -> Option<String> {
        let key = keys.iter().find(|k| {
            self.map
                .get(**k)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.trim().is_empty())
        })?;
        self.map
            .remove(*key)
            .and_then(|v| v.as_str().map(str::to_string))
    }

    /// Passes over keys that carry no action of their own.
    pub fn pass_over(&mut self, keys: &[&str]) {
        for key in keys {
            // An empty string, `false` or `0` says nothing either way.
            self.map.remove(*key);
        }
    }

    /// Every command the input states, each as one shell line.
    pub fn commands(&mut self) -> Vec<String> {
        let mut found = Vec::new();
        let program = self
            .map
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_string);
        let args = self.map.get("args").and_then(argv_of);
        if let (Some(program), Some(args)) = (&program, &args)
            && !program.trim().is_empty()
        {
            // `{"command": "npm", "args": ["test"]}`: one command.
            let mut words = vec![program.clone()];
            words.extend(args.iter().cloned());
            found.push(join_argv(&words));
            self.map.remove("command");
            self.map.remove("args");
        }
        for key in COMMAND_KEYS {
            let Some(value) = self.map.get(key) else {
                continue;
            };
            let read = match (key, value) {
                ("commands", Value::Array(items)) => items.iter().map(command_of).collect(),
                (_, value) => vec![command_of(value)],
            };
            // A list with any item herd cannot read stays whole, to be reported.
            if read.iter().any(Option::is_none) || read.is_empty() {
                continue;
            }
            found.extend(read.into_iter().flatten());
            self.map.remove(key);
        }
        found
    }

    /// Every path the input names under `PATH_KEYS` (a string or a list of strings).
    pub fn paths(&mut self) -> Vec<String> {
        let mut found = Vec::new();
        for key in PATH_KEYS {
            let read = match self.map.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
                Some(Value::Array(items)) if !items.is_empty() => {
                    let texts: Option<Vec<String>> = items
                        .iter()
                        .map(|i| {
                            i.as_str()
                                .filter(|s| !s.trim().is_empty())
                                .map(str::to_string)
                        })
                        .collect();
                    match texts {
                        Some(texts) => texts,
                        None => continue,
                    }
                }
                _ => continue,
            };
            found.extend(read);
            self.map.remove(key);
        }
        found
    }

    /// The folder a command runs in, when the input names one.
    pub fn workdir(&mut self) -> Option<String> {
        self.text(&WORKDIR_KEYS)
    }

    /// Whatever no reader took: `Ok` when nothing is left, or an excerpt of what is.
    pub fn finish(self) -> Result<(), String> {
        if let Some(value) = self.shapeless {
            return Err(excerpt(&value.to_string()));
        }
        if self.map.is_empty() {
            return Ok(());
        }
        Err(excerpt(&Value::Object(self.map).to_string()))
    }
}

/// One command from a value: a string, or an argv (`["bash", "-lc", "…"]` is the script).
pub fn command_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Array(_) => {
            let words = argv_of(value)?;
            match words.as_slice() {
                [] => None,
                [shell, flag, script] if is_shell(shell) && is_command_flag(flag) => {
                    Some(script.clone())
                }
                words => Some(join_argv(words)),
            }
        }
        _ => None,
    }
}

/// The words of an argv: every item a string, or nothing.
fn argv_of(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|w| w.as_str().map(str::to_string))
        .collect()
}

/// An argv as one shell line, each word quoted where it must be.
pub fn join_argv(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh" | "dash" | "ksh")
}

/// `-c`, `-lc`, `-ec`…: a short option cluster that ends in `c`.
fn is_command_flag(flag: &str) -> bool {
    flag.strip_prefix('-')
        .is_some_and(|f| !f.is_empty() && !f.starts_with('-') && f.ends_with('c'))
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// At most 160 characters of a text, on one line.
pub fn excerpt(text: &str) -> String {
    const MAX: usize = 160;
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let one_line = one_line.trim();
    if one_line.chars().count() <= MAX {
        one_line.to_string()
    } else {
        let cut: String = one_line.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

/// Every string in a value, depth first, in order: what a person reading it would see.
pub fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_shape_of_a_command_is_read() {
        let table = [
            (json!({"command": "make test"}), vec!["make test"]),
            (
                json!({"command": ["bash", "-lc", "rm -rf build && ls"]}),
                vec!["rm -rf build && ls"],
            ),
            (
                json!({"cmd": ["git", "commit", "-m", "a b"]}),
                vec!["git commit -m 'a b'"],
            ),
            (
                json!({"argv": ["sh", "-c", "rm -rf ~/x && make test"]}),
                vec!["rm -rf ~/x && make test"],
            ),
            (json!({"script": "rm -rf ~/x"}), vec!["rm -rf ~/x"]),
            (
                json!({"commands": ["make", ["rm", "-rf", "/tmp/y"]]}),
                vec!["make", "rm -rf /tmp/y"],
            ),
            (
                json!({"command": "npm", "args": ["run", "a b"]}),
                vec!["npm run 'a b'"],
            ),
            (
                json!({"command": "ls", "script": "rm -rf ~"}),
                vec!["ls", "rm -rf ~"],
            ),
        ];
        for (input, expected) in table {
            let mut fields = Fields::of(Some(&input));
            assert_eq!(fields.commands(), expected, "{input}");
            assert_eq!(fields.finish(), Ok(()), "{input}");
        }
    }

    #[test]
    fn what_no_reader_takes_is_unread() {
        let input = json!({"command": "ls", "shell": "rm -rf ~", "description": "list"});
        let mut fields = Fields::of(Some(&input));
        fields.pass_over(&["description"]);
        assert_eq!(fields.commands(), vec!["ls"]);
        assert_eq!(fields.finish(), Err(r#"{"shell":"rm -rf ~"}"#.to_string()));
        // A list with one item herd cannot read stays whole.
        let input = json!({"commands": ["make", {"run": "rm -rf ~"}]});
        let mut fields = Fields::of(Some(&input));
        assert!(fields.commands().is_empty());
        assert!(fields.finish().is_err());
        // An input that is not an object is unread as a whole.
        let input = json!("rm -rf ~");
        assert_eq!(
            Fields::of(Some(&input)).finish(),
            Err("\"rm -rf ~\"".into())
        );
        assert_eq!(Fields::of(None).finish(), Ok(()));
    }

    #[test]
    fn paths_are_read_from_a_string_or_a_list() {
        let input = json!({"file_path": "a.rs", "paths": ["b.rs", "c.rs"], "offset": 3});
        let mut fields = Fields::of(Some(&input));
        assert_eq!(fields.paths(), vec!["a.rs", "b.rs", "c.rs"]);
        assert!(fields.finish().is_err(), "offset was not passed over");
    }

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt("a\nb"), "a b");
        assert_eq!(excerpt(&"x".repeat(400)).chars().count(), 160);
    }
}
