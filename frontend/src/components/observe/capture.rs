use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, HtmlInputElement};

use crate::components::files::upload;
use crate::components::shown::Shown;
use crate::connection::Connection;

/// Larger captures are refused by the server unread (`capture_upload::MAX_CAPTURE_BYTES`).
const MAX_CAPTURE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

/// "Open a capture": a pcap or pcapng file, picked here or dropped on the observe view, is
/// sent to the server (`POST /capture`), which reads it as `pipescope observe --pcap` does and
/// answers with its connections; the table, the timeline, the figures and the export then
/// show them in place of the proxy's, headed by what their figures are; while observing, a
/// button goes back to the proxy's.
#[component]
pub fn ObserveCapture(conn: Connection) -> impl IntoView {
    // "Reading capture.pcap (12.3 MB)…" while the server reads.
    let reading = RwSignal::new(String::new());
    // The Redis port field (empty: Redis is found in the capture), which the tcpdump hint
    // follows.
    let ports = RwSignal::new(String::new());
    let open = move |file: File| read(file, reading, conn);
    let picked = move |ev: ev::Event| {
        if let Some(file) = upload::picked(&ev) {
            open(file);
        }
    };
    // A file dropped anywhere on the view opens.
    upload::on_drop(Box::new(open));
    // While observing, the proxy's connections are a click away from a capture shown in
    // their place.
    let back = Signal::derive(move || conn.observe.with(|o| o.from_capture() && o.observing()));
    let back_label = move || {
        let n = conn
            .observe
            .with(|o| o.live_aside.as_ref().map_or(0, |a| a.connections.len()));
        format!(
            "Back to live: the proxy's {}",
            shared::digits::count(n as u64, "connection")
        )
    };
    view! {
        <section class="card observe-capture" aria-label="Open a capture">
            <div class="observe-head">
                <h2>"Or read a capture"</h2>
                <div class="buttons">
                    <label for="capture-ports">"Redis port"</label>
                    <input
                        id="capture-ports"
                        type="text"
                        size="12"
                        prop:value=move || ports.get()
                        on:input=crate::erased::handler(move |ev| ports.set(event_target_value(&ev)))
                        placeholder="any (found)"
                        title="Redis's port, or several separated by commas; empty: the side answering RESP replies to RESP commands is taken as Redis"
                    />
                    <label class="button small" for="open-capture">
                        "Open a capture…"
                    </label>
                    <input
                        id="open-capture"
                        type="file"
                        accept=".pcap,.pcapng,.cap,.gz,.zst"
                        class="visually-hidden"
                        on:change=crate::erased::handler(picked)
                    />
                </div>
            </div>
            <p class="explain">
                "A capture of your application's Redis traffic (" <code id="capture-hint">{move || tcpdump_hint(&ports.get())}</code>
                "), picked here or dropped on this view, is read by the pipescope server as " <code>"pipescope observe --pcap"</code> " reads it."
            </p>
            // Empty (and hidden) but while the server reads, or once a capture is shown.
            <p id="capture-reading" class="note" role="status">{move || reading.get()}</p>
            <Shown when=back>
                <button id="observe-back-live" class="small" on:click=crate::erased::handler(move |_| conn.back_to_live())>
                    {back_label}
                </button>
            </Shown>
            <p id="capture-label" class="capture-label">{move || conn.observe.with(|o| o.capture.as_ref().map(|c| c.label.clone()))}</p>
            <p id="capture-notes" class="note">{move || conn.observe.with(|o| o.capture.as_ref().map(|c| c.notes.join(" ")))}</p>
        </section>
    }
}

/// Sends `file` to the server to be read for Redis's `ports` (`POST /capture`), saying so
/// meanwhile, then shows the connections it answers with, or why not.
fn read(file: File, reading: RwSignal<String>, conn: Connection) {
    let name = file.name();
    // As the field says when the file is opened.
    let ports = document()
        .get_element_by_id("capture-ports")
        .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default();
    let mb = format!("{:.1} MB", file.size() / 1e6);
    if file.size() > MAX_CAPTURE_BYTES {
        conn.error.set(Some(format!(
            "Could not open {name}: {mb} is more than the 256 MiB the page sends; read it with pipescope observe --pcap {name} instead. The page still shows what it showed before."
        )));
        return;
    }
    let url = format!(
        "/capture?file={}&ports={}",
        String::from(js_sys::encode_uri_component(&name)),
        String::from(js_sys::encode_uri_component(&ports)),
    );
    reading.set(format!("Reading {name} ({mb})…"));
    upload::send(
        url,
        file,
        conn,
        Box::new(move |reply| {
            reading.set(String::new());
            if let Some(reply) = reply {
                conn.open_capture(&name, &reply);
            }
        }),
    );
}

/// The tcpdump command for the ports in the field ("6379", "6379,7000"; empty: Redis's usual
/// port): whole packets to or from any of them.
fn tcpdump_hint(ports: &str) -> String {
    let ports: Vec<&str> = ports
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    let filter = match ports.as_slice() {
        [] => "tcp port 6379".to_string(),
        ports => ports
            .iter()
            .map(|p| format!("tcp port {p}"))
            .collect::<Vec<_>>()
            .join(" or "),
    };
    format!("tcpdump -i any -s 0 -w redis.pcap '{filter}'")
}
