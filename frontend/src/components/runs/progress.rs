use leptos::prelude::*;

use super::run_bar::RunBar;
use crate::components::shown::Shown;
use crate::connection::Connection;

/// One live bar per run of the current plan, plus the runs still queued behind them.
#[component]
pub fn RunProgress(conn: Connection) -> impl IntoView {
    let any = move || !conn.run_ids.with(Vec::is_empty);
    view! {
        <Shown when=any>
            <section class="card progress" aria-label="Progress">
                <h2>"Progress"</h2>
                <For
                    each=move || conn.run_ids.get()
                    key=|id| *id
                    children=move |id| view! { <RunBar conn=conn run=id /> }
                />
                {move || {
                    let queued = conn.queued.get();
                    (queued > 0)
                        .then(|| {
                            view! {
                                <p class="queued">
                                    {if queued == 1 {
                                        "1 more run queued".to_string()
                                    } else {
                                        format!("{queued} more runs queued")
                                    }}
                                </p>
                            }
                        })
                }}
            </section>
        </Shown>
    }
}
