//! Figures as a table's rows: label, value, and how each was obtained. The time split's rows
//! (`figures`) and the what-if's lanes in words (`what_if`) are one shape, so the page carries
//! this code once: a leaf both import, so neither imports the other for it.

use leptos::prelude::*;
use shared::observe::Figure;

/// `figures` as `<tr>`s: a row header and two cells each.
pub fn figure_rows(figures: Vec<Figure>) -> impl IntoView + use<> {
    figures
        .into_iter()
        .map(|f| {
            view! {
                <tr>
                    <th scope="row">{f.label}</th>
                    <td class="value">{f.value}</td>
                    <td class="how">{f.how}</td>
                </tr>
            }
        })
        .collect_view()
}
