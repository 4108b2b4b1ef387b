//! The runs' form (`Controls`): what each request is, how the commands travel, and the buttons
//! that run, compare or sweep them (the network between engine and Redis is `network`'s).
//! How the commands travel (`mode_fields`) holds a pipeline's flush policy (`flush_field`), the
//! other client that tests atomicity (`other_client_box`) and busy-polling (`busy_poll_box`).
//! Every field writes into one `inputs::Form`; nothing here is stored twice.

pub mod busy_poll_box;
pub mod controls;
pub mod controls_bar;
pub mod flush_field;
pub mod mode_fields;
pub mod other_client_box;
pub mod run_buttons;
pub mod workload_fields;

pub use controls::Controls;
pub use controls_bar::ControlsBar;
pub use mode_fields::ModeFields;
pub use run_buttons::RunButtons;
pub use workload_fields::WorkloadFields;
