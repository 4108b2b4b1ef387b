//! The network dialled in between the engine and Redis, as the runs' form sets it: a delay
//! slider with its presets and exact fields (`controls`).

pub mod controls;

pub use controls::NetworkControls;
