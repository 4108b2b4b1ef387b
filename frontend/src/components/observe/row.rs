use leptos::prelude::*;
use shared::digits::group;
use shared::observe::ObservedConnection;

use crate::state::observe::verdict_word;

/// One connection's row: its tick (shown or not), who it is, what it sent and its verdict;
/// `data-` attributes carry the verdict's kind and candidates for the tests.
#[component]
pub fn ObservedRow(
    c: ObservedConnection,
    chosen: RwSignal<Vec<u64>>,
    toggle: impl Fn(u64) + Copy + 'static,
) -> impl IntoView {
    let id = c.id;
    let checked = move || chosen.with(|ids| ids.contains(&id));
    let state = match (&c.ended, c.open) {
        (_, true) => "open".to_string(),
        (Some(end), false) => end.clone(),
        (None, false) => "ended".to_string(),
    };
    // When undetermined, the kinds it could be: "OneAtATime,WritePerCommand".
    let candidates = c
        .verdict
        .candidates
        .iter()
        .map(|k| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(",");
    view! {
        <tr
            id=format!("observed-{id}")
            class="observed-row"
            data-verdict=format!("{:?}", c.verdict.kind)
            data-candidates=candidates
            data-commands=c.counts.commands.to_string()
        >
            <td class="choose">
                <input
                    type="checkbox"
                    id=format!("choose-{id}")
                    aria-label=format!("show connection {id}")
                    prop:checked=checked
                    on:change=crate::erased::handler(move |_| toggle(id))
                />
            </td>
            <th scope="row" class="client">
                <span class="conn-id">{format!("#{id}")}</span>
                " "
                {c.client.clone()}
                <span class="conn-state">{state}</span>
            </th>
            <td class="name">{c.name.clone().unwrap_or_else(|| "—".into())}</td>
            <td>{group(c.counts.commands)}</td>
            <td>{group(c.counts.writes)}</td>
            <td>{group(c.counts.round_trips)}</td>
            <td>{format!("{:.1} (max {})", c.times.mean_depth, group(c.counts.max_depth))}</td>
            <td class="verdict" title=c.verdict.text.clone()>
                <span class="verdict-word">{verdict_word(c.verdict.kind)}</span>
                <span class="verdict-text">{c.verdict.lead().to_string()}</span>
            </td>
        </tr>
    }
}
