use leptos::prelude::*;
use shared::RunSummary;

use super::clipboard::copy_text;
use super::download::{download, indented};
use crate::connection::Connection;
use crate::export;

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
