use leptos::prelude::*;
use shared::RunSummary;
use wasm_bindgen::{JsCast, JsValue, closure::Closure};

use crate::connection::Connection;
use crate::export;

/// Offers the browser a file to save (a Blob behind a temporary `<a download>`).
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a: web_sys::HtmlAnchorElement = document().create_element("a")?.unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url)
}

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

/// Download the finished runs as JSON or CSV, or copy / download their Markdown table (for a
/// slide or the handout). The Markdown is also shown, selectable, in case the clipboard is
/// refused. Everything comes from `export`, over the complete rows of the results table.
#[component]
pub fn ExportBar(conn: Connection) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    let runs = Memo::new(move |_| {
        conn.results.with(|rows| {
            rows.iter()
                .filter(|r| !r.partial)
                .map(|r| r.summary.clone())
                .collect::<Vec<RunSummary>>()
        })
    });
    let markdown = Memo::new(move |_| runs.with(|r| export::markdown(r)));
    let save = move |name: &'static str, mime: &'static str, text: String| {
        if let Err(e) = download(name, mime, &text) {
            conn.error
                .set(Some(format!("The browser refused the download: {e:?}")));
        }
    };
    let copy = move |_| copy_text(&markdown.get_untracked(), copied);

    move || {
        (!runs.with(Vec::is_empty)).then(|| {
            view! {
                <section class="card export" aria-label="Export">
                    <h2>"Take the numbers with you"</h2>
                    <div class="buttons export-buttons">
                        <button
                            id="export-json"
                            class="small"
                            on:click=crate::erased::handler(move |_| {
                                save("pipescope-runs.json", "application/json", indented(&runs.with(|r| export::json(r))))
                            })
                        >
                            "Download JSON"
                        </button>
                        <button
                            id="export-csv"
                            class="small"
                            on:click=crate::erased::handler(move |_| {
                                save("pipescope-runs.csv", "text/csv", runs.with(|r| export::csv(r)))
                            })
                        >
                            "Download CSV"
                        </button>
                        <button id="export-md-copy" class="small" on:click=crate::erased::handler(copy)>
                            "Copy Markdown"
                        </button>
                        <button
                            id="export-md"
                            class="small"
                            on:click=crate::erased::handler(move |_| {
                                save("pipescope-runs.md", "text/markdown", markdown.get_untracked())
                            })
                        >
                            "Download Markdown"
                        </button>
                        {move || {
                            copied
                                .get()
                                .map(|ok| {
                                    view! {
                                        <span class="copied" role="status">
                                            {if ok {
                                                "Copied."
                                            } else {
                                                "The clipboard was refused: select the table below."
                                            }}
                                        </span>
                                    }
                                })
                        }}
                    </div>
                    <details class="markdown-preview">
                        <summary>"Markdown table"</summary>
                        <textarea id="export-markdown" readonly rows="8" prop:value=move || markdown.get()></textarea>
                    </details>
                </section>
            }
        })
    }
}

/// `json` indented by two spaces, by the browser's `JSON.stringify` (`json` as it is if the
/// browser will not): the page writes compact JSON only, so it carries one serialiser.
pub fn indented(json: &str) -> String {
    js_sys::JSON::parse(json)
        .and_then(|v| {
            js_sys::JSON::stringify_with_replacer_and_space(&v, &JsValue::NULL, &JsValue::from(2))
        })
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| json.to_string())
}
