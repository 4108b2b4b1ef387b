use leptos::prelude::*;
use shared::observe::ObservedConnection;
use shared::observe_report;

use crate::components::files::clipboard::copy_text;
use crate::components::files::download::{download, indented};
use crate::connection::Connection;

/// The verdicts as Markdown (copy or download) or JSON, and the observation as one HTML file:
/// the same text `pipescope observe` prints, from `shared::observe_report` (a capture's Markdown headed by its label, as
/// `observe --pcap --format markdown` heads it; each connection's row comes worded by the
/// server, `Words::markdown_row`). The JSON is written compact and indented by
/// the browser, as the runs' export is, so the page carries no second, pretty serialiser of
/// every connection's fields.
#[component]
pub fn ObserveExport(conn: Connection) -> impl IntoView {
    let copied = RwSignal::new(None::<bool>);
    let conns = Memo::new(move |_| {
        conn.observe.with(|o| {
            o.connections
                .values()
                .cloned()
                .collect::<Vec<ObservedConnection>>()
        })
    });
    let markdown = move || {
        let text = conns.with_untracked(|c| {
            c.iter()
                .filter_map(|c| c.words.as_ref())
                .fold(observe_report::markdown_head(), |md, w| {
                    md + &w.markdown_row
                })
        });
        match conn
            .observe
            .with_untracked(|o| o.capture.as_ref().map(|c| c.label.clone()))
        {
            Some(label) => format!("{label}\n\n{text}"),
            None => text,
        }
    };
    let save = move |name: &'static str, mime: &'static str, text: String| {
        if let Err(e) = download(name, mime, &text) {
            conn.error
                .set(Some(format!("The browser refused the download: {e:?}")));
        }
    };
    // The observation as one HTML file, written by the server and answered as a download:
    // the proxy's (`POST /observe.html`; not in a replay, which has no proxy), or a capture's,
    // sent back as the server read it (`POST /capture.html`, the button's field); never in a
    // file, which has no server.
    let from_capture = move || conn.observe.with(|o| o.from_capture());
    let one_file = move || {
        !conn.file
            && (from_capture() || !conn.server.with(|s| s.as_ref().is_some_and(|s| s.replay)))
    };
    let fill = move |ev: leptos::ev::MouseEvent| {
        if let Some(read) = conn.capture_read.get_value().filter(|_| from_capture()) {
            let _ = event_target::<web_sys::Element>(&ev).set_attribute("value", &read);
        }
    };
    move || {
        (!conns.with(Vec::is_empty)).then(|| {
            view! {
                <section class="card export" aria-label="Export the verdicts">
                    <h2>"Take the verdicts with you"</h2>
                    <div class="buttons export-buttons">
                        <button
                            id="observe-export-json"
                            class="small"
                            on:click=crate::erased::handler(move |_| save("pipescope-observed.json", "application/json", indented(&conns.with(|c| serde_json::to_string(c).expect("connections serialise")))))
                        >
                            "Download JSON"
                        </button>
                        <button
                            id="observe-export-md-copy"
                            class="small"
                            on:click=crate::erased::handler(move |_| copy_text(&markdown(), copied))
                        >
                            "Copy Markdown"
                        </button>
                        <button
                            id="observe-export-md"
                            class="small"
                            on:click=crate::erased::handler(move |_| save("pipescope-observed.md", "text/markdown", markdown()))
                        >
                            "Download Markdown"
                        </button>
                        {move || {
                            copied
                                .get()
                                .map(|ok| {
                                    view! {
                                        <span class="copied" role="status">
                                            {if ok { "Copied." } else { "The clipboard was refused: download it instead." }}
                                        </span>
                                    }
                                })
                        }}
                    </div>
                    <form
                        class="observe-html"
                        method="post"
                        action=move || if from_capture() { "/capture.html" } else { "/observe.html" }
                        hidden=move || !one_file()
                    >
                        <div class="buttons">
                            <button
                                id="observe-html"
                                class="small"
                                type="submit"
                                name=move || from_capture().then_some("capture")
                                on:click=crate::erased::handler(fill)
                            >
                                "Download as one HTML file"
                            </button>
                            <label>
                                <input id="observe-html-redact" type="checkbox" name="redact" value="yes" />
                                " Replace client addresses and names by numbers"
                            </label>
                        </div>
                        <p class="explain">
                            "The page and this observation in one file to open from disk, as "
                            <code>"pipescope observe --html"</code>
                            " (or "
                            <code>"--pcap FILE --html"</code>
                            ")"
                            " writes it: command names, counts and times, never keys, values or passwords."
                        </p>
                    </form>
                </section>
            }
        })
    }
}
