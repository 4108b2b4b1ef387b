//! The network dialled in between the engine and Redis, as the runs' form sets it: a delay
//! slider and its exact fields (`delay_fields`), the presets (a `preset` each), jitter and a
//! bandwidth cap (`controls`).

pub mod controls;
pub mod delay_fields;
pub mod preset;

pub use controls::NetworkControls;
