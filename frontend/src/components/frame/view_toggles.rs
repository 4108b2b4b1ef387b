use leptos::prelude::*;

use crate::look::{Look, Theme};

/// Presenter mode, theme and full screen: the buttons for what P, T and F do.
#[component]
pub fn ViewToggles(look: Look) -> impl IntoView {
    view! {
        <div class="view-toggles">
            <button
                id="presenter-toggle"
                class="small"
                aria-pressed=move || look.presenter.get().to_string()
                title="Presenter mode: large type, controls tucked away (P)"
                on:click=crate::erased::handler(move |_| look.toggle_presenter())
            >
                {move || if look.presenter.get() { "Exit presenter" } else { "Presenter" }}
            </button>
            <button
                id="theme-toggle"
                class="small"
                title="Light theme for bright rooms, dark high-contrast otherwise (T)"
                on:click=crate::erased::handler(move |_| look.toggle_theme())
            >
                {move || match look.theme.get() {
                    Theme::Light => "Dark theme",
                    Theme::Dark => "Light theme",
                }}
            </button>
            <button
                id="fullscreen-toggle"
                class="small"
                title="Full screen (F)"
                on:click=crate::erased::handler(move |_| look.toggle_fullscreen())
            >
                "Full screen"
            </button>
        </div>
    }
}
