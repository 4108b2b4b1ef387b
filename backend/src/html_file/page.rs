//! The built page (Trunk's `dist/`) taken apart into what one file inlines: its stylesheets in
//! order, its JS glue as a classic part of a module script (no `export`s, so it can share one
//! inline `<script type="module">` with the loader), and its WASM.

use crate::assets::dist_file;

/// Why the built page could not be taken apart; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(
        "the page is not built (no dist/index.html in this pipescope): build it with scripts/build-page, then build pipescope again"
    )]
    NotBuilt,
    #[error(
        "the built page's {what} is not what this pipescope expects ({detail}): rebuild the page with scripts/build-page"
    )]
    Unexpected { what: &'static str, detail: String },
}

/// The page's parts, read from `dist/`.
#[derive(Debug, Clone)]
pub struct Page {
    /// The stylesheets' text, in the order `index.html` links them.
    pub css: Vec<String>,
    /// wasm-bindgen's glue with its `export`s removed: it defines `__wbg_init`.
    pub glue: String,
    pub wasm: Vec<u8>,
}

impl Page {
    /// The page pipescope carries (embedded in release builds, `dist/` on disk in debug ones).
    pub fn built() -> Result<Page, PageError> {
        let index = dist_file("index.html").ok_or(PageError::NotBuilt)?;
        let index = String::from_utf8_lossy(&index);
        let text = |name: &str, what: &'static str| {
            let bytes =
                dist_file(name).ok_or_else(|| unexpected(what, format!("{name} is missing")))?;
            String::from_utf8(bytes.into_owned())
                .map_err(|_| unexpected(what, format!("{name} is not UTF-8")))
        };
        let names = asset_names(&index);
        let css = names
            .iter()
            .filter(|n| n.ends_with(".css"))
            .map(|n| text(n, "stylesheet"))
            .collect::<Result<Vec<_>, _>>()?;
        let glue_name = only(&names, ".js", "JS glue")?;
        let wasm_name = only(&names, ".wasm", "WASM")?;
        let glue = without_exports(&text(glue_name, "JS glue")?)?;
        let wasm = dist_file(wasm_name)
            .ok_or_else(|| unexpected("WASM", format!("{wasm_name} is missing")))?
            .into_owned();
        if !wasm.starts_with(b"\0asm") {
            return Err(unexpected(
                "WASM",
                format!("{wasm_name} is not WebAssembly"),
            ));
        }
        for (what, part) in css
            .iter()
            .map(|c| ("stylesheet", c))
            .chain([("JS glue", &glue)])
        {
            // Inlined, either would end its element early.
            if part.to_ascii_lowercase().contains("</s") {
                return Err(unexpected(what, "it holds \"</s\"".into()));
            }
        }
        Ok(Page { css, glue, wasm })
    }
}

fn unexpected(what: &'static str, detail: String) -> PageError {
    PageError::Unexpected { what, detail }
}

/// Every absolute asset URL `index.html` names (`href="/…"`, `from '/…'`, `'/….wasm'`), without
/// its `/`, each once, in order.
fn asset_names(index: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for quote in ['"', '\''] {
        let mut rest = index;
        while let Some(at) = rest.find(&format!("{quote}/")) {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(quote) else { break };
            let name = &rest[..end];
            if !name.is_empty()
                && !name.contains(['/', '?', '#', '<', '>', ' '])
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
    }
    // Stylesheets keep their order in the document: both quotes were scanned apart.
    names.sort_by_key(|n| index.find(n.as_str()));
    names
}

/// The one name ending in `suffix`.
fn only<'a>(names: &'a [String], suffix: &str, what: &'static str) -> Result<&'a str, PageError> {
    let mut found = names.iter().filter(|n| n.ends_with(suffix));
    match (found.next(), found.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(unexpected(
            what,
            format!("index.html names no {suffix} file"),
        )),
        (Some(a), Some(b)) => Err(unexpected(what, format!("index.html names {a} and {b}"))),
    }
}

/// wasm-bindgen's `--target web` glue as statements of a module script that exports nothing:
/// `export function f` → `function f`, `export class`/`const`/`let` likewise, and the closing
/// `export { … }` list dropped. What it defines stays in the script's scope.
fn without_exports(glue: &str) -> Result<String, PageError> {
    let mut out = String::with_capacity(glue.len());
    for line in glue.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("export ") {
            if rest.starts_with('{') || rest.starts_with("default ") {
                continue;
            }
            out.push_str(rest);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !out.contains("function __wbg_init") {
        return Err(unexpected("JS glue", "it defines no __wbg_init".into()));
    }
    if out
        .lines()
        .any(|l| l.trim_start().starts_with("export ") || l.trim_start().starts_with("import "))
    {
        return Err(unexpected("JS glue", "an export or import is left".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_index_in_order() {
        let index = r#"<link rel="stylesheet" href="/style-1.css" integrity="x"/>
<link rel="stylesheet" href="/tour-2.css"/>
<link rel="modulepreload" href="/app-3.js">
<script type="module">import init from '/app-3.js'; await init({ module_or_path: '/app-3_bg.wasm' });</script>"#;
        assert_eq!(
            asset_names(index),
            ["style-1.css", "tour-2.css", "app-3.js", "app-3_bg.wasm"]
        );
    }

    #[test]
    fn the_glue_loses_its_exports_only() {
        let glue = "let wasm;\nexport function greet(a) { return a; }\nexport class Thing {}\nfunction initSync(m) {}\nasync function __wbg_init(m) {}\nexport { initSync };\nexport default __wbg_init;\n";
        assert_eq!(
            without_exports(glue).unwrap(),
            "let wasm;\nfunction greet(a) { return a; }\nclass Thing {}\nfunction initSync(m) {}\nasync function __wbg_init(m) {}\n"
        );
        assert!(
            without_exports("import x from './y.js';\nasync function __wbg_init() {}").is_err()
        );
        assert!(without_exports("function other() {}").is_err());
    }
}
