//! What the page's two file openers share (a recording on the main view,
//! `files::recording_bar`; a capture on the observe view, `observe::capture`): the file an
//! input or a drop gives, and its bytes sent to the page's own server, which reads them. One
//! copy of each, not generic, so the second opener costs the page's WASM little.

use js_sys::futures::JsFuture;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DragEvent, File, HtmlInputElement, RequestInit, Response};

use crate::connection::Connection;

/// The file an `<input type=file>`'s change picked; the input is cleared, so picking the same
/// file again is a change too.
pub fn picked(ev: &ev::Event) -> Option<File> {
    let input: HtmlInputElement = event_target(ev);
    let file = input.files().and_then(|f| f.get(0));
    input.set_value("");
    file
}

/// Opens a file dropped anywhere on the page with `open`; the browser must not navigate to it.
pub fn on_drop(open: Box<dyn Fn(File)>) {
    let _ = window_event_listener(ev::dragover, |e: DragEvent| e.prevent_default());
    let _ = window_event_listener(ev::drop, move |e: DragEvent| {
        e.prevent_default();
        if let Some(file) = e
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            open(file);
        }
    });
}

/// Sends `file`'s bytes to `POST url` and hands the answer's text to `then`, or `None` when
/// the server did not answer (the banner says so).
pub fn send(url: String, file: File, conn: Connection, then: Box<dyn FnOnce(Option<String>)>) {
    leptos::task::spawn_local(async move {
        let reply = post(&url, &file).await;
        if let Err(e) = &reply {
            conn.error.set(Some(format!(
                "Could not open {}: the pipescope server did not answer ({e:?}). The page still shows what it showed before.",
                file.name()
            )));
        }
        then(reply.ok());
    });
}

/// `file`'s bytes to `POST url`; the answer's text.
async fn post(url: &str, file: &File) -> Result<String, JsValue> {
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(file);
    let response: Response = JsFuture::from(window().fetch_with_str_and_init(url, &init))
        .await?
        .dyn_into()?;
    JsFuture::from(response.text()?)
        .await?
        .as_string()
        .ok_or_else(|| JsValue::from_str("not text"))
}
