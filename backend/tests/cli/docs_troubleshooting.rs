//! docs/troubleshooting.md quotes each message as printed: every line of its ```text blocks
//! must still be in the code. A line is checked without the `pipescope: ` every error is
//! printed after; `…` stands for what varies, so the pieces between are looked for, in order,
//! in one source file (a Rust string's `\`-continued lines joined, `\"` as `"`).

use std::path::{Path, PathBuf};

/// The workspace root: the backend crate's parent.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the backend crate sits in the workspace")
        .to_path_buf()
}

/// The Rust sources under `dir`, as their string literals read.
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            out.push((path, unescaped(&text)));
        }
    }
}

/// A source as its string literals print: `\` + newline + indentation dropped, `\"` as `"`,
/// `{{` and `}}` as braces.
fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('\n')) => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            ('\\', Some('"')) | ('{', Some('{')) | ('}', Some('}')) => {
                out.push(chars.next().expect("peeked"));
            }
            _ => out.push(c),
        }
    }
    out
}

/// The lines of the document's ```text blocks.
fn quoted(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("```") {
            inside = line == "```text";
        } else if inside && !line.trim().is_empty() {
            out.push(line.to_string());
        }
    }
    out
}

/// The pieces of a quoted line that the code must hold, in order.
fn pieces(line: &str) -> Vec<&str> {
    line.strip_prefix("pipescope: ")
        .unwrap_or(line)
        .split('…')
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == ':'))
        .filter(|p| !p.is_empty())
        .collect()
}

/// Whether `text` holds every piece, one after the other.
fn holds_in_order(text: &str, pieces: &[&str]) -> bool {
    let mut from = 0;
    for piece in pieces {
        match text[from..].find(piece) {
            Some(at) => from += at + piece.len(),
            None => return false,
        }
    }
    true
}

/// The quoted lines no source file holds.
fn missing(doc: &str, sources: &[(PathBuf, String)]) -> Vec<String> {
    quoted(doc)
        .into_iter()
        .filter(|line| {
            let pieces = pieces(line);
            !sources
                .iter()
                .any(|(_, text)| holds_in_order(text, &pieces))
        })
        .collect()
}

#[test]
fn docs_troubleshooting_quotes_what_the_code_prints() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/troubleshooting.md"))
        .expect("docs/troubleshooting.md");
    let mut code = Vec::new();
    for dir in ["backend/src", "shared/src"] {
        sources(&root.join(dir), &mut code);
    }
    let lines = quoted(&doc);
    assert!(lines.len() > 10, "few quoted messages found: {lines:?}");
    let gone = missing(&doc, &code);
    assert!(
        gone.is_empty(),
        "troubleshooting.md quotes messages the code no longer prints:\n{}",
        gone.join("\n")
    );
    println!(
        "the {} messages troubleshooting.md quotes are in the code",
        lines.len()
    );
}

#[test]
fn docs_troubleshooting_catches_a_message_that_changed() {
    let code = [(
        PathBuf::from("x.rs"),
        unescaped("bail!(\"cannot listen on {addr}: {e} (choose \\\n     another)\");"),
    )];
    let doc = "```text\npipescope: cannot listen on …: … (choose another)\n```\n\
               ```sh\nnot checked\n```\n```text\npipescope: cannot listen on …: … (pick another)\n```\n";
    assert_eq!(
        missing(doc, &code),
        ["pipescope: cannot listen on …: … (pick another)"]
    );
    assert_eq!(pieces("pipescope: …: packet … (TCP"), ["packet", "(TCP"]);
}
