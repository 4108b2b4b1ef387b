use leptos::prelude::*;

use crate::playback::Playback;

/// What the timeline draws of each run, for its heading: every request, or the first ones and a
/// sample of the rest.
#[component]
pub fn DrawnNote(playback: Playback) -> impl IntoView {
    let note = Memo::new(move |_| {
        playback.traces.with(|traces| {
            let whats: Vec<Option<String>> = traces.iter().map(crate::trace::drawn_note).collect();
            // Several runs drawn alike (a sweep's) are said once, not once a run.
            if whats.len() > 1 && whats[0].is_some() && whats.iter().all(|w| *w == whats[0]) {
                return format!("each run: {}", whats[0].clone().unwrap_or_default());
            }
            let notes: Vec<String> = traces
                .iter()
                .zip(whats)
                .filter_map(|(t, what)| {
                    let what = what?;
                    Some(match t.mode {
                        Some(mode) => format!("{}: {what}", mode.label()),
                        None => what,
                    })
                })
                .collect();
            match (traces.is_empty(), notes.is_empty()) {
                (true, _) => String::new(),
                (false, true) => "every request drawn".to_string(),
                (false, false) => notes.join(" · "),
            }
        })
    });
    view! { <span id="drawn-note" class="drawn-note">{move || note.get()}</span> }
}
