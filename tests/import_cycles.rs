//! No import cycle between the files of `src/`.
//!
//! Walks the module tree from `src/lib.rs` (following `mod x;` and `#[path]`), reads every
//! `crate::…`, `super::…` and `self::…` path of each file (`use` trees and paths in code), maps
//! each to the file of the deepest module it names, and fails on any group of files that import
//! each other, printing the group and the lines that close it.
//!
//! How strict, and why:
//! - A module and its own descendants may import each other. A child file is its parent's
//!   implementation split across files: the parent declares it, and Rust's privacy gives it the
//!   parent's private state (`impl Attempt` blocks in `core/attempt/`), so the two are one unit.
//!   Cycles between siblings, cousins or folders are errors.
//! - Test modules (declared under `#[cfg(test)]`, and inline `mod … {` blocks after a
//!   `#[cfg(test)]`) are left out: tests reach into everything by design.
//! - A path to an item re-exported by a parent (`use super::Thing`) counts as an import of the
//!   parent, not of the file that defines it: the checker does not resolve `pub use`. Breaking a
//!   cycle by re-exporting is therefore possible and is left to review (there is none today).
//! - `main.rs` is a separate crate (it uses `herd::`), so it is not walked.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One module backed by its own file.
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The file's text with comments and string literals blanked, and everything from the first
/// `#[cfg(test)]` inline module on cut off.
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Skips to just past `close`, keeping the line breaks in between.
    let skip_to = |from: usize, close: &str, escapes: bool, out: &mut String| -> usize {
        let close: Vec<char> = close.chars().collect();
        let mut k = from;
        while k < chars.len() {
            if escapes && chars[k] == '\\' {
                k += 2;
                continue;
            }
            if chars[k..].starts_with(&close) {
                return k + close.len();
            }
            if chars[k] == '\n' {
                out.push('\n');
            }
            k += 1;
        }
        k
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            i = skip_to(i, "\n", false, &mut out);
            out.push('\n');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            let hashes = chars[i + 1..].iter().take_while(|h| **h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                i = skip_to(i + 2 + hashes, &close, false, &mut out);
                out.push_str("\"\"");
            } else {
                out.push(c);
                i += 1;
            }
        } else if c == '"' {
            i = skip_to(i + 1, "\"", true, &mut out);
            out.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            i = skip_to(i + 3, "'", false, &mut out);
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    let lines: Vec<&str> = out.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("#[cfg(test)]")
            && lines
                .get(i + 1)
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.ends_with('{'))
        {
            break;
        }
        kept.push(lines[i]);
        i += 1;
    }
    kept.join("\n")
}

/// `mod name;` declarations of a file, with their `#[path]` and whether they are under
/// `#[cfg(test)]`.
fn child_modules(text: &str) -> Vec<(String, Option<String>, bool)> {
    let mut out = Vec::new();
    let mut test = false;
    let mut path_attr = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("#[cfg(test)]") {
            test = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.strip_suffix("\"]").map(str::to_string);
            continue;
        }
        if line.starts_with("#[") {
            continue;
        }
        // `pub`, `pub(crate)`, `pub(super)`, `pub(in …)`.
        let decl = match line.strip_prefix("pub") {
            Some(rest) if rest.starts_with('(') => {
                rest.split_once(") ").map_or(line, |(_, after)| after)
            }
            Some(rest) => rest.trim_start(),
            None => line,
        };
        if let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
            out.push((name.trim().to_string(), path_attr.clone(), test));
        }
        test = false;
        path_attr = None;
    }
    out
}

/// Walks the modules from `file`; files of test modules go to `tests` (not walked).
fn walk(file: &Path, path: Vec<String>, out: &mut Vec<Module>, tests: &mut Vec<PathBuf>) {
    let text = fs::read_to_string(file).unwrap_or_default();
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let owns_dir = matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "lib.rs")
    );
    let child_dir = if owns_dir {
        dir.clone()
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    };
    for (name, attr, test) in child_modules(&text) {
        let child = match attr {
            Some(p) => dir.join(p),
            None if child_dir.join(format!("{name}.rs")).exists() => {
                child_dir.join(format!("{name}.rs"))
            }
            None => child_dir.join(&name).join("mod.rs"),
        };
        if test {
            tests.push(child);
            continue;
        }
        let mut child_path = path.clone();
        child_path.push(name);
        walk(&child, child_path, out, tests);
    }
    out.push(Module {
        path,
        file: file.to_path_buf(),
    });
}

/// Every path starting with `crate::`, `super::` or `self::` in the code, expanded through `use`
/// braces, as module-relative segments with the line it is on.
fn paths_in(code: &str) -> Vec<(Vec<String>, usize)> {
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == '\n' {
            line += 1;
        }
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        let at = |word: &str| bytes[i..].iter().take(word.len()).copied().eq(word.chars());
        if starts_word && (at("crate::") || at("super::") || at("self::")) {
            let (paths, end) = use_tree(&bytes, i);
            out.extend(paths.into_iter().map(|p| (p, line)));
            line += bytes[i..end].iter().filter(|c| **c == '\n').count();
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// Parses `a::b::{c, d::{e}}` from `start`: the full paths and where parsing stopped.
fn use_tree(chars: &[char], start: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    let mut i = start;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i < chars.len() && chars[i] == '{' {
            let mut all = Vec::new();
            i += 1;
            loop {
                while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                    i += 1;
                }
                if i >= chars.len() || chars[i] == '}' {
                    i += 1;
                    break;
                }
                let (inner, end) = use_tree(chars, i);
                for p in inner {
                    let mut full = prefix.clone();
                    full.extend(p);
                    all.push(full);
                }
                if end == i {
                    i += 1;
                } else {
                    i = end;
                }
            }
            return (all, i);
        }
        let word_start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        if i == word_start {
            return (vec![prefix], i);
        }
        prefix.push(chars[word_start..i].iter().collect());
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// The module a path written in module `here` names, as an absolute path.
fn absolute(here: &[String], path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self" | "super") => {
            base = here.to_vec();
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "self" => {}
                    "super" => {
                        base.pop();
                    }
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    base.extend(rest.iter().cloned());
    base
}

fn is_prefix(a: &[String], b: &[String]) -> bool {
    a.len() <= b.len() && a == &b[..a.len()]
}

/// Strongly connected groups of more than one module (Tarjan).
fn cycles(edges: &BTreeMap<usize, BTreeSet<usize>>, n: usize) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let targets: Vec<usize> = s.edges.get(&v).into_iter().flatten().copied().collect();
        for w in targets {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort_unstable();
                s.groups.push(group);
            }
        }
    }
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        groups: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.groups
}

/// Every module in its own file, and which imports which (with the first line and path that
/// does, as evidence).
struct Graph {
    modules: Vec<Module>,
    edges: BTreeMap<usize, BTreeSet<usize>>,
    evidence: BTreeMap<(usize, usize), (usize, String)>,
}

fn import_graph() -> Graph {
    let src = source_dir();
    let mut modules = Vec::new();
    let mut tests = Vec::new();
    walk(&src.join("lib.rs"), Vec::new(), &mut modules, &mut tests);
    // Every file is seen: walked, a test module, inside a test module's folder, or `main.rs`.
    let mut unseen = Vec::new();
    let mut pending = vec![src.clone()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path != src.join("main.rs")
                && !modules.iter().any(|m| m.file == path)
                && !tests.iter().any(|t| {
                    let folder = if t.ends_with("mod.rs") {
                        t.parent().map(Path::to_path_buf).unwrap_or_default()
                    } else {
                        t.with_extension("")
                    };
                    path == *t || path.starts_with(folder)
                })
            {
                unseen.push(path.display().to_string());
            }
        }
    }
    assert!(
        unseen.is_empty(),
        "files the checker did not reach (a `mod` it cannot read?): {unseen:?}"
    );
    let by_path: BTreeMap<Vec<String>, usize> = modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.path.clone(), i))
        .collect();
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut evidence: BTreeMap<(usize, usize), (usize, String)> = BTreeMap::new();
    for (from, module) in modules.iter().enumerate() {
        let text = fs::read_to_string(&module.file).unwrap_or_default();
        for (path, line) in paths_in(&code_of(&text)) {
            let mut target = absolute(&module.path, &path);
            // The deepest module the path names (the rest is an item inside it).
            let to = loop {
                if let Some(&to) = by_path.get(&target) {
                    break Some(to);
                }
                if target.pop().is_none() {
                    break None;
                }
            };
            let Some(to) = to else { continue };
            let there = &modules[to].path;
            if to == from || is_prefix(there, &module.path) || is_prefix(&module.path, there) {
                continue;
            }
            edges.entry(from).or_default().insert(to);
            evidence
                .entry((from, to))
                .or_insert((line, path.join("::")));
        }
    }
    Graph {
        modules,
        edges,
        evidence,
    }
}

#[test]
fn no_import_cycle_between_files() {
    let src = source_dir();
    let Graph {
        modules,
        edges,
        evidence,
    } = import_graph();
    let name = |i: usize| {
        modules[i]
            .file
            .strip_prefix(&src)
            .unwrap_or(&modules[i].file)
            .display()
            .to_string()
    };
    let groups = cycles(&edges, modules.len());
    let mut report = String::new();
    for group in &groups {
        report.push_str("files that import each other:\n");
        for &a in group {
            for &b in group {
                if let Some((line, path)) = evidence.get(&(a, b)) {
                    report.push_str(&format!(
                        "  src/{}:{line} -> src/{} ({path})\n",
                        name(a),
                        name(b)
                    ));
                }
            }
        }
    }
    println!(
        "{} modules in files, {} imports between files, {} cycles",
        modules.len(),
        edges.values().map(BTreeSet::len).sum::<usize>(),
        groups.len()
    );
    assert!(groups.is_empty(), "{report}");
}

/// The top-level modules of the pure core (`core::profile`, `core::guard`, …) never import each
/// other both ways: what two of them share lives in one of them, or in a third.
#[test]
fn no_two_core_modules_import_each_other() {
    let Graph {
        modules,
        edges,
        evidence,
    } = import_graph();
    let top = |i: usize| match modules[i].path.as_slice() {
        [core, top, ..] if core == "core" => Some(top.clone()),
        _ => None,
    };
    // (from, to) → the first file import that makes it.
    let mut between: BTreeMap<(String, String), String> = BTreeMap::new();
    for (&from, targets) in &edges {
        for &to in targets {
            let (Some(a), Some(b)) = (top(from), top(to)) else {
                continue;
            };
            if a != b {
                let (line, path) = &evidence[&(from, to)];
                between
                    .entry((a, b))
                    .or_insert_with(|| format!("{}:{line} ({path})", modules[from].file.display()));
            }
        }
    }
    let mutual: Vec<String> = between
        .iter()
        .filter(|((a, b), _)| a < b && between.contains_key(&(b.clone(), a.clone())))
        .map(|((a, b), there)| {
            let back = &between[&(b.clone(), a.clone())];
            format!("core::{a} <-> core::{b}: {there}; {back}")
        })
        .collect();
    assert!(mutual.is_empty(), "{}", mutual.join("\n"));
}

/// The workers that report to the engine (an agent's terminal, the tasks file's writer, the
/// hook and app-server links, the attempt's file reader) and the outbox they report through
/// import neither the engine nor one another: each reports in its own type, and the engine's
/// inbox (`run::engine::inbox`) is what converts.
#[test]
fn workers_import_neither_the_engine_nor_each_other() {
    const WORKERS: [&[&str]; 5] = [
        &["run", "pty"],
        &["run", "store", "writer"],
        &["run", "hook_server"],
        &["run", "app_server"],
        &["run", "attempt_files"],
    ];
    const OUTBOX: &[&str] = &["run", "jobs"];
    const ENGINE: &[&str] = &["run", "engine"];
    let Graph {
        modules,
        edges,
        evidence,
    } = import_graph();
    let under = |i: usize, prefix: &[&str]| {
        let path = &modules[i].path;
        path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
    };
    let worker = |i: usize| WORKERS.iter().position(|w| under(i, w));
    let mut found = Vec::new();
    for (&from, targets) in &edges {
        // The outbox's module is held to the same rule, as a worker of its own.
        let mine = match worker(from) {
            Some(w) => w,
            None if under(from, OUTBOX) => WORKERS.len(),
            None => continue,
        };
        for &to in targets {
            let theirs = worker(to).filter(|&w| w != mine);
            if under(to, ENGINE) || theirs.is_some() {
                let (line, path) = &evidence[&(from, to)];
                found.push(format!(
                    "{}:{line} imports {}",
                    modules[from].file.display(),
                    path
                ));
            }
        }
    }
    assert!(
        WORKERS
            .iter()
            .chain([&OUTBOX])
            .all(|w| modules.iter().any(|m| m.path.iter().eq(w.iter()))),
        "a worker module moved: update WORKERS"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The frontends' floor (`serve`: the driver, headless, the control socket, MCP, the web view)
/// imports no face above it: the dashboard (`ui`) runs on the floor, handed down by `cli`.
#[test]
fn the_floor_imports_no_dashboard() {
    let Graph {
        modules,
        edges,
        evidence,
    } = import_graph();
    let top = |i: usize| modules[i].path.first().cloned().unwrap_or_default();
    let mut found = Vec::new();
    for (&from, targets) in &edges {
        for &to in targets {
            if top(from) == "serve" && top(to) == "ui" {
                let (line, path) = &evidence[&(from, to)];
                found.push(format!(
                    "{}:{line} imports {path}",
                    modules[from].file.display()
                ));
            }
        }
    }
    let floor = modules
        .iter()
        .any(|m| m.path.first().is_some_and(|t| t == "serve"));
    assert!(floor, "no module under src/serve: update this test");
    assert!(found.is_empty(), "{}", found.join("\n"));
}
