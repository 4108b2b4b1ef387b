//! Every relative link in README.md and docs/*.md reaches a file that exists, and a link to a
//! heading (`file.md#heading`) reaches a heading of that file, named as GitHub names it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root: the backend crate's parent.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the backend crate sits in the workspace")
        .to_path_buf()
}

/// README.md and every Markdown file in docs/.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs = vec![root.join("README.md")];
    let entries = std::fs::read_dir(root.join("docs")).expect("docs/ is readable");
    for entry in entries {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    docs
}

/// The text outside fenced code blocks, where Markdown links live.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a document's headings (`# …` to `###### …`).
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').strip_prefix(' '))
        .map(anchor)
        .collect()
}

/// The targets of `[text](target)` and `![alt](target)`.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find([')', ' ', '\n']).unwrap_or(rest.len());
        out.push(rest[..end].to_string());
    }
    out
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let docs = documents();
    assert!(docs.len() > 1, "no docs/*.md found beside README.md");
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(doc).expect("a readable document");
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, heading) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().expect("a document's folder").join(path)
            };
            checked += 1;
            let Ok(target_text) = std::fs::read(&target) else {
                broken.push(format!("{}: {link}: no such file", doc.display()));
                continue;
            };
            if !heading.is_empty() && (path.is_empty() || path.ends_with(".md")) {
                let headings = anchors(&String::from_utf8_lossy(&target_text));
                if !headings.contains(heading) {
                    broken.push(format!("{}: {link}: no such heading", doc.display()));
                }
            }
        }
    }
    assert!(checked > 0, "no relative link found in {docs:?}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    println!(
        "{checked} relative links in {} documents resolve",
        docs.len()
    );
}

#[test]
fn anchors_are_named_as_github_names_them() {
    assert_eq!(anchor("Guided tour (`/tour`)"), "guided-tour-tour");
    assert_eq!(
        anchor("From a capture: `observe --pcap`"),
        "from-a-capture-observe---pcap"
    );
    assert_eq!(
        anchor("The page's size and load time"),
        "the-pages-size-and-load-time"
    );
    assert_eq!(
        links("see [a](docs/a.md#b) and ![p](x.png)\n```\n[c](nowhere)\n```\n"),
        ["docs/a.md#b", "x.png"]
    );
}
