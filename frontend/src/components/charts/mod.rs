//! The charts, hand-written SVG on log scales: each run's throughput and latency
//! (`run_charts`), and a batch sweep's throughput and per-command cost with its knee
//! (`sweep_chart`) beside what bigger batches cost (`sweep_cost_chart`).

pub mod run_charts;
pub mod sweep_chart;
pub mod sweep_cost_chart;

pub use run_charts::Charts;
pub use sweep_chart::SweepChart;
pub use sweep_cost_chart::SweepCostChart;
