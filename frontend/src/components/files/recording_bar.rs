use leptos::ev;
use leptos::prelude::*;
use shared::recording::RECORDING_SUFFIX;
use web_sys::File;

use super::download::download;
use super::upload;
use crate::components::shown::Shown;
use crate::connection::Connection;
use crate::state::Session;

/// Larger than any recording pipescope writes (timelines are bounded): refused unread.
const MAX_RECORDING_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// "Save session" (the stage's finished runs, with their timelines, as one recording file),
/// "Download as one HTML file" (the same runs inside the page, to open from disk) and "Open
/// recording" (a file picked here or dropped anywhere on the page): the runs it holds take
/// the stage, as a late page's finished runs would.
#[component]
pub fn RecordingBar(conn: Connection) -> impl IntoView {
    let has_runs = Memo::new(move |_| conn.session.with(Session::has_records));
    let save = move |_| {
        let recording = conn.recording(js_sys::Date::now() as u64);
        let name = format!(
            "pipescope-{}{RECORDING_SUFFIX}",
            recording.saved_at.replace(':', "-")
        );
        if let Err(e) = download(&name, "application/json", &recording.to_json()) {
            conn.error
                .set(Some(format!("The browser refused the download: {e:?}")));
        }
    };
    // The server makes the file (`POST /html`, answered as a download): it has the page's
    // parts and a gzip encoder; the WASM has not. The button submits the recording "Save
    // session" would write as its form's one field (a submit button's name and value).
    let fill = move |ev: ev::MouseEvent| {
        let recording = conn.recording(js_sys::Date::now() as u64).to_json();
        let _ = event_target::<web_sys::Element>(&ev).set_attribute("value", &recording);
    };
    let picked = move |ev: ev::Event| {
        if let Some(file) = upload::picked(&ev) {
            read(file, conn);
        }
    };
    // A file dropped anywhere on the page opens (a one-file page has no server to read it).
    if !conn.file {
        upload::on_drop(Box::new(move |file| read(file, conn)));
    }
    view! {
        <section class="card recording" aria-label="Recording">
            <h2>"Show it without the network"</h2>
            <div class="buttons">
                <Shown when=move || has_runs.get()>
                    <button id="save-session" class="small" on:click=crate::erased::handler(save)>
                        "Save session"
                    </button>
                    <form method="post" action="/html">
                        <button id="save-html" class="small" name="recording" on:click=crate::erased::handler(fill)>
                            "Download as one HTML file"
                        </button>
                    </form>
                </Shown>
                <label class="button small" for="open-recording">
                    "Open recording…"
                </label>
                <input
                    id="open-recording"
                    type="file"
                    accept=".json,application/json"
                    class="visually-hidden"
                    on:change=crate::erased::handler(picked)
                />
            </div>
            <p class="explain">
                "Save session writes these runs with their timelines to one file; open it here (or drop it on the page), or serve it with "
                <code>"pipescope replay FILE"</code>
                ", to show every view with no Redis and no network; one HTML file holds the page and the runs, to open from disk in a browser."
            </p>
        </section>
    }
}

/// Sends `file` to the server to be read (`POST /recording`), then opens the recording it
/// answers with, or says why not.
fn read(file: File, conn: Connection) {
    let name = file.name();
    if file.size() > MAX_RECORDING_BYTES {
        conn.error.set(Some(format!(
            "Could not open {name}: {:.0} MB is larger than any pipescope recording. The page still shows what it showed before.",
            file.size() / 1e6
        )));
        return;
    }
    let url = format!(
        "/recording?file={}",
        String::from(js_sys::encode_uri_component(&name))
    );
    upload::send(
        url,
        file,
        conn,
        Box::new(move |reply| {
            if let Some(reply) = reply {
                conn.open_recording(&name, &reply);
            }
        }),
    );
}
