//! Keyboard shortcuts for a room: Space play/pause, ←/→ step, +/− speed, R replay, Z fit/auto
//! zoom, F full screen, P presenter mode, T theme. Typing in a field is never hijacked.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, closure::Closure};
use web_sys::{HtmlElement, HtmlInputElement, KeyboardEvent};

use crate::look::Look;
use crate::playback::Playback;

/// Listens on the window for the page's lifetime.
pub fn install(playback: Playback, look: Look) {
    let on_key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |ev: KeyboardEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.default_prevented() {
            return;
        }
        let target = ev.target().and_then(|t| t.dyn_into::<HtmlElement>().ok());
        let tag = target.as_ref().map(|t| t.tag_name()).unwrap_or_default();
        let range = target
            .as_ref()
            .and_then(|t| t.dyn_ref::<HtmlInputElement>())
            .is_some_and(|i| i.type_() == "range");
        // Text and number fields and selects keep every key; sliders keep their arrows.
        if (tag == "INPUT" && !range) || tag == "SELECT" || tag == "TEXTAREA" {
            return;
        }
        let key = ev.key();
        let handled = match key.as_str() {
            " " | "Spacebar" => {
                playback.toggle_play();
                true
            }
            "ArrowRight" if !range => {
                playback.step_forward();
                true
            }
            "ArrowLeft" if !range => {
                playback.step_back();
                true
            }
            "+" | "=" => {
                playback.faster();
                true
            }
            "-" | "_" => {
                playback.slower();
                true
            }
            "r" | "R" => {
                playback.replay();
                true
            }
            "z" | "Z" => {
                playback.toggle_fit();
                true
            }
            "f" | "F" => {
                look.toggle_fullscreen();
                true
            }
            "p" | "P" => {
                look.toggle_presenter();
                true
            }
            "t" | "T" => {
                look.toggle_theme();
                true
            }
            _ => false,
        };
        if handled {
            // Space would also click a focused button or scroll the page.
            ev.prevent_default();
        }
    });
    let _ = window().add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    // The listener lives as long as the page.
    on_key.forget();
}
