//! Every `//!` layout list names the modules its file declares, no more and no fewer.
//!
//! The convention: a layout list is a `//!` list whose items open with the modules they
//! describe, backticked, before a colon: `- \`name\`: …`, `- \`a\`, \`b\`: …` or `- \`a\` and
//! \`b\`: …`, a parenthesis allowed before the colon (`- \`tls\` (\`cost tls\`): …`). An item
//! that opens otherwise (`- this file: …`, `- \`Launch\`: …`) names no module. A file whose
//! doc has one such item is held to its list: each name is a module the file declares
//! (`mod name;`), and each module it declares, its tests aside, is named.

use std::path::{Path, PathBuf};

/// The workspace root: the backend crate's parent.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the backend crate sits in the workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The `//!` list items, each with its continuation lines joined.
fn items(source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in source.lines() {
        let Some(doc) = line.trim_start().strip_prefix("//!") else {
            open = false;
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        if let Some(item) = doc.strip_prefix("- ") {
            out.push(item.to_string());
            open = true;
        } else if open && doc.starts_with("  ") {
            let last = out.last_mut().expect("an open item");
            last.push(' ');
            last.push_str(doc.trim());
        } else {
            open = false;
        }
    }
    out
}

fn is_module_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The modules an item opens with, or `None` where it does not open with modules.
fn named(item: &str) -> Option<Vec<String>> {
    // The head: up to the first colon outside backticks and parentheses, parentheses dropped.
    let mut head = String::new();
    let (mut ticked, mut depth, mut colon) = (false, 0u32, false);
    for c in item.chars() {
        match c {
            '`' => ticked = !ticked,
            '(' if !ticked => depth += 1,
            ')' if !ticked => depth = depth.saturating_sub(1),
            ':' if !ticked && depth == 0 => {
                colon = true;
                break;
            }
            _ => {}
        }
        if depth == 0 && c != ')' {
            head.push(c);
        }
    }
    if !colon {
        return None;
    }
    let mut names = Vec::new();
    for (i, part) in head.split('`').enumerate() {
        let part = part.trim();
        if i % 2 == 1 {
            if !is_module_name(part) {
                return None;
            }
            names.push(part.to_string());
        } else if !matches!(part, "" | "," | "and" | ", and") {
            return None;
        }
    }
    (!names.is_empty()).then_some(names)
}

/// The file modules a source declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), those
/// under `#[cfg(test)]` aside.
fn declared(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_only = false;
    for line in source.lines().map(str::trim) {
        let rest = line
            .strip_prefix("pub ")
            .or_else(|| {
                line.strip_prefix("pub(")
                    .and_then(|r| Some(r.split_once(") ")?.1))
            })
            .unwrap_or(line);
        if let Some(name) = rest.strip_prefix("mod ").and_then(|r| r.strip_suffix(';'))
            && is_module_name(name)
            && !test_only
        {
            out.push(name.to_string());
        }
        if !line.is_empty() {
            test_only = line == "#[cfg(test)]";
        }
    }
    out
}

/// What a file's layout list gets wrong, if it has one.
fn drift(file: &str, source: &str) -> Vec<String> {
    let listed: Vec<String> = items(source)
        .iter()
        .filter_map(|i| named(i))
        .flatten()
        .collect();
    if listed.is_empty() {
        return Vec::new();
    }
    let declared = declared(source);
    let mut out = Vec::new();
    for name in &listed {
        if !declared.contains(name) {
            out.push(format!("{file}: lists `{name}`, which it does not declare"));
        }
    }
    for name in &declared {
        if !listed.contains(name) {
            out.push(format!(
                "{file}: declares `{name}`, which its list leaves out"
            ));
        }
    }
    out
}

/// Every layout list in a crate's `src/`, and how many there were.
fn check(krate: &str) -> (usize, Vec<String>) {
    let root = root();
    let mut lists = 0;
    let mut problems = Vec::new();
    for path in rust_files(&root.join(krate).join("src")) {
        let source = std::fs::read_to_string(&path).expect("a readable source file");
        let file = path.strip_prefix(&root).unwrap().display().to_string();
        if items(&source).iter().any(|i| named(i).is_some()) {
            lists += 1;
        }
        problems.extend(drift(&file, &source));
    }
    (lists, problems)
}

fn assert_held(krate: &str) {
    let (lists, problems) = check(krate);
    assert!(lists > 0, "no layout list found in {krate}/src");
    assert!(
        problems.is_empty(),
        "layout lists that drifted from the modules:\n{}",
        problems.join("\n")
    );
    println!("{lists} layout lists in {krate}/src name their modules");
}

#[test]
fn the_backends_layout_lists_name_its_modules() {
    assert_held("backend");
}

#[test]
fn the_shared_crates_layout_lists_name_its_modules() {
    assert_held("shared");
}

#[test]
fn the_pages_layout_lists_name_its_modules() {
    assert_held("frontend");
}

#[test]
fn a_list_that_drifted_is_caught() {
    let source = "//! The rooms:\n//!\n//! - `a`, `b` (`job b`): a and b.\n//! - `gone`: once\n\
                  //!   here.\n//! - this file: not a module.\n//! - `Launch`: a type.\n\n\
                  mod a;\npub mod b;\npub(crate) mod new;\n#[cfg(test)]\nmod tests;\n";
    assert_eq!(
        drift("x.rs", source),
        [
            "x.rs: lists `gone`, which it does not declare",
            "x.rs: declares `new`, which its list leaves out",
        ]
    );
    assert_eq!(
        named("`a` and `b`: two"),
        Some(vec!["a".into(), "b".into()])
    );
    assert_eq!(named("`engine::keys`: a path"), None);
    assert_eq!(named("every run: prose"), None);
    // A file without a layout list is held to nothing.
    assert!(drift("y.rs", "//! Prose naming `a`.\nmod a;\nmod b;\n").is_empty());
}
