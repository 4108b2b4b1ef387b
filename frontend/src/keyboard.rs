//! Keyboard shortcuts for a room: Space play/pause, ←/→ step, +/− speed, R replay, Z fit/auto
//! zoom, F full screen, P presenter mode, T theme. Typing in a field is never hijacked.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, closure::Closure};
use web_sys::{HtmlElement, HtmlInputElement, KeyboardEvent};

use crate::look::Look;
use crate::playback::Playback;

/// Where a key press landed: what the page's shortcuts must leave alone.
pub struct KeyTarget {
    /// The focused element's tag (`INPUT`, `BUTTON`, …; empty for the page itself).
    pub tag: String,
    pub id: String,
    /// A slider (`<input type=range>`): it keeps its arrow keys, nothing else.
    pub slider: bool,
}

impl KeyTarget {
    fn of(ev: &KeyboardEvent) -> KeyTarget {
        let target = ev.target().and_then(|t| t.dyn_into::<HtmlElement>().ok());
        KeyTarget {
            tag: target.as_ref().map(|t| t.tag_name()).unwrap_or_default(),
            id: target.as_ref().map(|t| t.id()).unwrap_or_default(),
            slider: target
                .as_ref()
                .and_then(|t| t.dyn_ref::<HtmlInputElement>())
                .is_some_and(|i| i.type_() == "range"),
        }
    }

    /// A field the user types in (text and number inputs, selects, text areas): it keeps
    /// every key.
    pub fn is_typing(&self) -> bool {
        (self.tag == "INPUT" && !self.slider) || self.tag == "SELECT" || self.tag == "TEXTAREA"
    }

    /// A button or link, which Enter and Space click.
    pub fn clicks_on_enter(&self) -> bool {
        self.tag == "BUTTON" || self.tag == "A"
    }
}

/// Calls `handler` for every plain key press (no Ctrl, Meta or Alt, not already handled) on
/// the window, for the page's lifetime; the key press's default is prevented when it returns
/// true.
pub fn listen(mut handler: impl FnMut(&str, &KeyTarget) -> bool + 'static) {
    let on_key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |ev: KeyboardEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.default_prevented() {
            return;
        }
        if handler(&ev.key(), &KeyTarget::of(&ev)) {
            ev.prevent_default();
        }
    });
    let _ = window().add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    // The listener lives as long as the page.
    on_key.forget();
}

/// The teaching view's shortcuts.
pub fn install(playback: Playback, look: Look) {
    listen(move |key, target| {
        if target.is_typing() {
            return false;
        }
        let range = target.slider;
        // A handled key's default is prevented: Space would also click a focused button or
        // scroll the page.
        match key {
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
        }
    });
}
