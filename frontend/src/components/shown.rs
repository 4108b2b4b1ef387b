use leptos::prelude::*;

/// Leptos's `<Show>` with its condition as a `Signal<bool>` and its children erased: every use
/// is the same type, so the page's WASM holds `Show` (its memo, its switch) once rather than
/// once per use.
#[component]
pub fn Shown(
    /// The children are shown whenever this is true.
    #[prop(into)]
    when: Signal<bool>,
    /// Shown while `when` is false (nothing by default).
    #[prop(optional, into)]
    fallback: ViewFn,
    children: ChildrenFn,
) -> impl IntoView {
    view! {
        <Show when=move || when.get() fallback=fallback>
            {children()}
        </Show>
    }
}
