//! The runs as they go and as they ended: a live bar each, the headline speed-up, the results
//! table with its atomicity lines and a cluster run's split across masters, and the card
//! explaining what a Redis Cluster changes.

pub mod atomicity;
pub mod cluster_explainer;
pub mod cluster_shares;
pub mod progress;
pub mod results;
pub mod run_bar;
pub mod speedup;

pub use atomicity::AtomicityLines;
pub use cluster_explainer::ClusterExplainer;
pub use cluster_shares::ClusterShares;
pub use progress::RunProgress;
pub use results::Results;
pub use run_bar::RunBar;
pub use speedup::SpeedupHeadline;
