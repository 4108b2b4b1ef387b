//! The page's effects, each a boxed closure run by one `Effect`.
//!
//! Leptos compiles its effect machinery (an async task that reruns the closure) once per
//! closure type. Boxing every effect's body makes them all one type, so the page's WASM holds
//! that machinery once.

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
