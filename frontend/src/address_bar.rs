//! The browser's address bar: the page keeps its path and query in step with what is on screen
//! (a prepared run, a tour step) with `history.replaceState`, so a reload or a shared link opens
//! the same thing without filling the history with every keystroke.

use leptos::prelude::window;

/// The query as it is now (`?…`, or empty).
pub fn search() -> String {
    window().location().search().unwrap_or_default()
}

/// The path as it is now.
pub fn path() -> String {
    window()
        .location()
        .pathname()
        .unwrap_or_else(|_| "/".into())
}

/// Shows `path` + `query` (`query` starts with `?`, or is empty) without a history entry.
/// Does nothing when the address already says that.
pub fn replace(path: &str, query: &str) {
    if self::path() == path && search() == query {
        return;
    }
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{query}")),
        );
    }
}
