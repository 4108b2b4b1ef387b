//! The round trip taken apart: the RTT diagram of the latest runs (`diagram`), and one trip
//! drawn (`trip_figure`, no component: the SVG and its legend, for the diagram, the tour's
//! one-trip figure and an observed connection's figures).

pub mod diagram;
pub mod trip_figure;

pub use diagram::RttDiagram;
