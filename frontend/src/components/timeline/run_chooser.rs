use leptos::prelude::*;

use crate::components::shown::Shown;
use crate::drawn_runs::{self, DRAWN_AT_MOST};
use crate::playback::Playback;

/// For a plan of more runs than fit the timeline: which are drawn, a button per kind of run
/// (its latest run) to add or remove it.
#[component]
pub fn RunChooser(playback: Playback) -> impl IntoView {
    let Some(runs) = playback.runs else {
        return ().into_any();
    };
    let total = Memo::new(move |_| runs.all.with(Vec::len));
    let choices = Memo::new(move |_| runs.all.with(|all| drawn_runs::choices(all)));
    let drawn = Memo::new(move |_| {
        playback
            .traces
            .with(|t| t.iter().map(|t| t.run).collect::<Vec<u64>>())
    });
    let toggle = move |run: u64| {
        let mut now = drawn.get_untracked();
        match now.iter().position(|r| *r == run) {
            // One run stays drawn.
            Some(k) if now.len() > 1 => {
                now.remove(k);
            }
            Some(_) => return,
            None => now.push(run),
        }
        runs.chosen.set(Some(now));
    };
    let buttons = move || {
        let choices = choices.get();
        let names = drawn_runs::short_names(&choices);
        choices
            .into_iter()
            .zip(names)
            .map(|((full, run), name)| {
                let on = move || drawn.with(|d| d.contains(&run));
                view! {
                    <button
                        class="chip"
                        title=full
                        aria-pressed=move || on().to_string()
                        on:click=crate::erased::handler(move |_| toggle(run))
                    >
                        {name}
                    </button>
                }
            })
            .collect_view()
    };
    let said = move || {
        format!(
            "{} of {} runs drawn (the latest of each kind):",
            drawn.with(Vec::len),
            total.get()
        )
    };
    view! {
        <Shown when=Signal::derive(move || total.get() > DRAWN_AT_MOST)>
            <div class="run-chooser" role="group" aria-label="Runs drawn">
                <span class="run-chooser-said">{said}</span>
                {buttons}
            </div>
        </Shown>
    }
    .into_any()
}
