//! The page's effects and event handlers, each over a boxed closure.
//!
//! Leptos compiles its machinery for an effect (an async task that reruns the closure) and for
//! an event handler (the attribute that attaches it) once per closure type. Boxing every
//! effect's body, and every handler, makes them one type each (a handler's, one per event), so
//! the page's WASM holds that machinery once rather than once per use.

use leptos::prelude::Effect;

/// Runs `body` now and again whenever a signal it read changes (`Effect::new`).
pub fn effect(body: impl FnMut() + 'static) {
    let mut body: Box<dyn FnMut()> = Box::new(body);
    Effect::new(move |_| body());
}

/// As `effect`, with what `body` returned the previous time (`None` the first time), as
/// `Effect::new`'s closure is given its previous value.
pub fn effect_with_previous<T: 'static>(mut body: impl FnMut(Option<T>) -> T + 'static) {
    let mut previous = None;
    effect(move || previous = Some(body(previous.take())));
}

/// An event handler boxed (`on:click=erased::handler(…)`): every handler of one event is then
/// one type, so Leptos's attribute machinery for it is compiled once.
pub fn handler<E: 'static>(f: impl FnMut(E) + 'static) -> Box<dyn FnMut(E)> {
    Box::new(f)
}
