//! The tour's step dots, Back and Next.

use leptos::prelude::*;

use crate::tour::{self, STEPS, Tour};

/// Step dots, Back and Next.
#[component]
pub fn StepNav(tour: Tour) -> impl IntoView {
    let dots = (0..tour::pages())
        .map(|k| {
            let label = if k < STEPS.len() {
                (k + 1).to_string()
            } else {
                "✎".to_string()
            };
            let title = STEPS.get(k).map_or("Handout", |s| s.title);
            let measured = move || tour.results.with(|r| r.iter().any(|r| r.step == k));
            view! {
                <button
                    class="dot"
                    class:current=move || tour.page.get() == k
                    class:measured=measured
                    title=title
                    aria-label=format!("Go to: {title}")
                    aria-current=move || (tour.page.get() == k).then_some("step")
                    on:click=crate::erased::handler(move |_| tour.go(k))
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    view! {
        <nav class="tour-nav" aria-label="Tour steps">
            <button
                id="tour-back"
                disabled=move || tour.page.get() == 0
                on:click=crate::erased::handler(move |_| tour.back())
            >
                "← Back"
            </button>
            <div class="dots">{dots}</div>
            <button
                id="tour-next"
                disabled=move || { tour.page.get() + 1 >= tour::pages() }
                on:click=crate::erased::handler(move |_| tour.next())
            >
                "Next →"
            </button>
        </nav>
    }
}
