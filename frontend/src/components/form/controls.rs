use leptos::prelude::*;

use super::controls_bar::ControlsBar;
use super::mode_fields::ModeFields;
use super::run_buttons::RunButtons;
use super::workload_fields::WorkloadFields;
use crate::address_bar;
use crate::components::network::controls::NetworkControls;
use crate::components::shown::Shown;
use crate::connection::Connection;
use crate::inputs::Form;
use crate::look::Look;
use crate::url_state::UrlState;

/// Everything a `RunSpec` can say (command, count, value size, mode and its parameters, the
/// network), and the Run / Compare / Sweep / Cancel buttons. The form is one signal of strings
/// as typed: input is checked as it is typed (shown inline) and again on click (shown in the
/// banner) with the backend's own validation; nothing invalid is sent and nothing typed is
/// lost. The form starts from the URL query (else the server's network) and keeps the query up
/// to date, so a slide can link to a prepared run that opens with its button focused. In
/// presenter mode the fields fold into one line (`ControlsBar`) until Edit opens them.
#[component]
pub fn Controls(conn: Connection, look: Look, url: UrlState) -> impl IntoView {
    let form = RwSignal::new(Form::from_url(&url));
    let invalid = Memo::new(move |_| {
        let limits = conn.limits();
        form.with(|f| f.runs(f.plan, &limits).err())
    });
    let replay = move || conn.server.with(|s| s.as_ref().is_some_and(|s| s.replay));
    let watch_only = move || conn.server.with(Option::is_some) && !conn.can_control() && !replay();
    let editing = RwSignal::new(false);
    start_from_the_servers_network(form, conn, &url);
    show_the_recordings_values(form, conn);
    keep_the_url_in_step(form, look);

    view! {
        <section class="card controls" class:editing=move || editing.get() aria-label="Run controls">
            <ControlsBar form=form editing=editing />
            <div class="fields">
                <WorkloadFields form=form />
                <ModeFields form=form />
            </div>
            <NetworkControls form=form />
            <RunButtons form=form conn=conn />
            <Shown when=watch_only>
                <p id="watch-only" class="watch-only" role="status">
                    "This page can only watch: starting or cancelling runs needs the presenter's link (with its token), printed when pipescope started."
                </p>
            </Shown>
            <Shown when=replay>
                <p id="replay-only" class="watch-only" role="status">
                    "This server replays a recording (pipescope replay): there is no Redis behind it, so nothing can run. Start pipescope without replay to run live."
                </p>
            </Shown>
            {move || invalid.get().map(|e| view! { <p class="field-error" role="status">{e}</p> })}
            <p class="explain">
                <strong>"Sequential"</strong>
                " waits for each reply: one round trip per command. "
                <strong>"Pipelined"</strong>
                " writes a batch, then reads its replies: one round trip per batch. "
                <strong>"Multiplexed"</strong>
                " keeps n callers' commands in flight on one connection. "
                <strong>"MULTI/EXEC"</strong>
                " wraps each batch in a transaction; "
                <strong>"MSET/MGET"</strong>
                " sends one command for a batch of keys."
            </p>
        </section>
    }
}

/// The server's network is the form's starting point, unless the link chose one.
fn start_from_the_servers_network(form: RwSignal<Form>, conn: Connection, url: &UrlState) {
    let network_taken = StoredValue::new(Form::network_in_url(url));
    crate::erased::effect(move || {
        if network_taken.get_value() {
            return;
        }
        // A recording on the stage brings its own network (`show_the_recordings_values`).
        if conn.session.with(|s| s.recording.is_some()) {
            return;
        }
        if let Some(network) = conn.server.with(|s| s.as_ref().map(|s| s.network)) {
            network_taken.set_value(true);
            form.update(|f| f.set_network(network));
        }
    });
}

/// A recording on the stage (served by `pipescope replay`, or opened on this page) puts its
/// runs' values in the form, once per recording: the fields say what was run.
fn show_the_recordings_values(form: RwSignal<Form>, conn: Connection) {
    // The effect's value is the recording it last showed (its saved time).
    crate::erased::effect_with_previous(move |shown: Option<Option<String>>| {
        conn.session.with(|s| {
            let saved_at = s.recording.as_ref().map(|r| r.saved_at.clone());
            if saved_at.is_some() && saved_at != shown.flatten() {
                let runs: Vec<_> = s.recent.iter().map(|r| r.summary.spec).collect();
                form.update(|f| f.show_runs(&runs));
            }
            saved_at
        })
    });
}

/// The address bar follows the form and the look, keeping the presenter's token: it is what
/// lets this page start runs.
fn keep_the_url_in_step(form: RwSignal<Form>, look: Look) {
    crate::erased::effect(move || {
        let mut state = UrlState {
            presenter: look.presenter.get(),
            theme: Some(look.theme.get().as_str().into()),
            token: UrlState::parse(&address_bar::search()).token,
            ..UrlState::default()
        };
        form.with(|f| f.write_url(&mut state));
        address_bar::replace(&address_bar::path(), &state.to_query());
    });
}
