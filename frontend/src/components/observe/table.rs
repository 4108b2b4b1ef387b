use leptos::prelude::*;

use super::row::ObservedRow;
use crate::components::shown::Shown;
use crate::connection::Connection;

/// Every connection the proxy followed, live, or a capture's: who it is, what it sent, and the
/// verdict in words. Choosing a row asks the server for its requests (the timeline below; a
/// capture's came with it).
#[component]
pub fn ObservedTable(conn: Connection, chosen: RwSignal<Vec<u64>>) -> impl IntoView {
    let rows = Memo::new(move |_| {
        conn.observe
            .with(|o| o.connections.values().cloned().collect::<Vec<_>>())
    });
    let capture = Memo::new(move |_| conn.observe.with(|o| o.from_capture()));
    let toggle = move |id: u64| {
        let adding = !chosen.with_untracked(|c| c.contains(&id));
        chosen.update(|c| {
            if adding {
                c.push(id);
            } else {
                c.retain(|x| *x != id);
            }
        });
        if adding && !capture.get_untracked() {
            conn.want_timeline(id);
        }
    };
    view! {
        <section class="card observed" aria-label="Observed connections">
            <h2>"Connections"</h2>
            <Shown
                when=move || !rows.with(Vec::is_empty)
                fallback=move || {
                    view! {
                        <p id="observed-empty" class="note">
                            {move || empty_text(conn)}
                        </p>
                    }
                }
            >
                <table id="observed-table">
                    <thead>
                        <tr>
                            <th scope="col">"show"</th>
                            <th scope="col">"client"</th>
                            <th scope="col">"name"</th>
                            <th scope="col">"commands"</th>
                            <th scope="col">{move || if capture.get() { "segments" } else { "writes" }}</th>
                            <th scope="col">"round trips"</th>
                            <th scope="col">"depth"</th>
                            <th scope="col">"verdict"</th>
                        </tr>
                    </thead>
                    <tbody>
                        <For each=move || rows.get() key=|c| (c.id, c.counts.commands, c.open, c.verdict.text.clone()) let:c>
                            <ObservedRow c=c chosen=chosen toggle=toggle />
                        </For>
                    </tbody>
                </table>
                <p class="note">
                    {move || if capture.get() {
                        "Segments are the client's TCP segments as captured: the kernel may merge small writes into one or split a large one. Depth: commands in flight, on average (and at most)."
                    } else {
                        "Writes are the proxy's reads from the client: one read ≈ one client write, because TCP may merge or split writes. Depth: commands in flight, on average (and at most)."
                    }}
                </p>
            </Shown>
        </section>
    }
}

/// Why the table is empty: a capture with no Redis connection, or nothing observed yet.
fn empty_text(conn: Connection) -> &'static str {
    conn.observe.with(|o| match (&o.capture, o.observing()) {
        (Some(_), _) => {
            "This capture holds no connection to Redis's port (see the note above): if Redis listened on another port, put it in the Redis port field and open the capture again."
        }
        (None, true) => "No connections yet: run your application against the address above.",
        (None, false) => {
            "No connections yet: start observing, then run your application against the address above; or open a capture."
        }
    })
}
