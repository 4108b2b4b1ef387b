use leptos::prelude::*;
use shared::Mode;

use crate::connection::Connection;
use crate::format;
use crate::state::ResultRow;

/// What a run's batches are called in the atomicity line.
fn batch_word(mode: Mode) -> &'static str {
    match mode {
        Mode::Transaction { .. } => "transactions",
        Mode::Pipelined { .. } => "pipelines",
        _ => "batches",
    }
}

/// Atomicity, measured: for each finished run that had the other client, how many of its INCRs
/// Redis ran inside the run's batches. Rendered only when such a run finished.
#[component]
pub fn AtomicityLines(conn: Connection) -> impl IntoView {
    let line = |r: ResultRow| {
        let s = r.summary;
        let i = s.interleaving?;
        let mode = s.spec.mode;
        Some(view! {
            <p
                class="atomicity"
                data-mode=mode.kind()
                data-run=r.key
                data-other=i.other_commands.to_string()
                data-inside=i.other_inside.to_string()
                data-batches=i.batches.to_string()
            >
                <strong>{mode.label()}</strong>
                ": "
                {i.sentence(batch_word(mode), format::group)}
                ". "
                <span class="how">"measured: INCR replies give Redis's order"</span>
                {i.final_value.map(|v| {
                    format!(
                        " (the shared counter ended at {}: the run's {} INCRs plus the other client's {})",
                        format::group(v),
                        format::group(s.done),
                        format::group(i.other_commands),
                    )
                })}
            </p>
        })
    };
    move || {
        let lines: Vec<_> = conn.results.get().into_iter().filter_map(line).collect();
        (!lines.is_empty()).then(|| {
            view! {
                <div id="atomicity" aria-label="Atomicity, measured">
                    {lines}
                    <p class="note">
                        "Both the run and the other client INCR one shared counter; each reply is the counter just after that command, so a batch whose replies skip values had the other client's commands run in between. The other client connects straight to Redis, one INCR at a time."
                    </p>
                </div>
            }
        })
    }
}
