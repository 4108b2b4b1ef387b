use leptos::prelude::*;

use crate::connection::Connection;

/// Says the stage shows a recording: which file, when it was saved, and the Redis it
/// measured. Every figure on the page then was measured when recorded, not now; and whether
/// anything can run here.
#[component]
pub fn ReplayBanner(conn: Connection) -> impl IntoView {
    let replay_server = move || conn.server.with(|s| s.as_ref().is_some_and(|s| s.replay));
    move || {
        conn.session.with(|s| s.recording.clone()).map(|r| {
            let after = if replay_server() {
                "Nothing can run here: this server replays a file, with no Redis behind it."
            } else {
                "Running anything replaces it with live runs."
            };
            view! {
                <div id="recording-banner" class="recording-banner" role="status">
                    <span class="banner-icon" aria-hidden="true">"▶"</span>
                    <p>
                        <strong>"A recording: "</strong>
                        <span id="recording-file">{r.file}</span>
                        {format!(
                            ", saved {} by pipescope {}. Every figure below was measured when it was recorded, against Redis {} at {}, not now. ",
                            r.saved_at,
                            r.server_version,
                            r.redis_version,
                            r.target,
                        )}
                        {after}
                    </p>
                </div>
            }
        })
    }
}
