//! One figure the page shows of a connection, and how it was obtained: a row of its time
//! taken apart (`words`), a lane of what if it pipelined (`what_if`). A leaf, so both use it.

use serde::{Deserialize, Serialize};

/// A label, its value, and how the value was obtained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub label: String,
    pub value: String,
    /// Starts with "measured", "derived" or "assumed", then by what or from what (a what-if
    /// lane's says its waits and own time first, then "derived, not measured" or by what).
    pub how: String,
}
