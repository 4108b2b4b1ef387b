//! Text put on the clipboard, for every copy button of the page (the runs' Markdown, the
//! observation's, the address to point an application at).
use leptos::prelude::*;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;

/// Puts `text` on the clipboard; `copied` then says whether the browser allowed it.
pub fn copy_text(text: &str, copied: RwSignal<Option<bool>>) {
    let promise = window().navigator().clipboard().write_text(text);
    let ok = Closure::<dyn FnMut(JsValue)>::new(move |_| copied.set(Some(true)));
    let err = Closure::<dyn FnMut(JsValue)>::new(move |_| copied.set(Some(false)));
    let _ = promise.then2(&ok, &err);
    // One small pair per click, kept until the promise settles (and then some).
    ok.forget();
    err.forget();
}
