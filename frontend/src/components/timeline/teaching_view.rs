use leptos::prelude::*;

use super::canvas::Timeline;
use super::drawn_note::DrawnNote;
use super::playback_controls::PlaybackControls;
use super::run_chooser::RunChooser;
use super::run_counters::RunCounters;
use crate::components::shown::Shown;
use crate::connection::Connection;
use crate::look::Look;
use crate::playback::Playback;
use crate::state::Session;

/// The teaching view: the runs' timeline, its playback controls and the counters that tick
/// with it. Says so when it is following a run another page started.
#[component]
pub fn TeachingView(conn: Connection, playback: Playback, look: Look) -> impl IntoView {
    let following = Memo::new(move |_| conn.session.with(Session::following));
    view! {
        <section class="card teaching" aria-label="Timeline">
            <div class="teaching-head">
                <h2>"Requests and replies at measured times"</h2>
                <DrawnNote playback=playback />
                <Shown when=move || following.get()>
                    <span id="following" class="following" role="status">
                        "following a run started elsewhere"
                    </span>
                </Shown>
                <span class="legend">
                    <span class="key seq-req">"sequential request"</span>
                    <span class="key seq-reply">"reply"</span>
                    <span class="key pipe-req">"pipelined request"</span>
                    <span class="key pipe-reply">"reply"</span>
                </span>
            </div>
            <RunChooser playback=playback />
            <Timeline playback=playback look=look />
            <RunCounters playback=playback />
            <PlaybackControls playback=playback />
            <p class="keys">
                "Keys: Space play/pause · ←/→ step · +/− speed · R replay · Z fit · F full screen · P presenter · T theme"
            </p>
        </section>
    }
}
