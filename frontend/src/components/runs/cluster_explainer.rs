//! A short card shown when the server's target is a Redis Cluster: why a batch of keys spread
//! over the slots costs one round trip per master (paid side by side), and what putting every
//! key under one hash tag changes.

use leptos::prelude::*;

use crate::connection::Connection;

/// Whether the server's target (`Welcome::target`) is a Redis Cluster: the backend names one
/// `"Redis Cluster via <url>"`.
pub fn is_cluster_target(target: &str) -> bool {
    target.starts_with("Redis Cluster via ")
}

/// The card's prose: static, so one `inner_html` rather than a view per element (the page's
/// WASM budget).
const EXPLAINER: &str = "<h2>Pipelining on a Redis Cluster</h2>\
<p>Each key lives in one of 16,384 slots, and each slot on one master. A pipelined batch of \
keys spread over the slots is split by master: one sub-batch per master it touches, each on \
that master's connection. So a batch costs one round trip per master, but the sub-batches go \
out side by side: the batch waits about as long as its slowest master, not the sum.</p>\
<p>A single hash tag changes that: keys that share a <code>{tag}</code> hash only the tag, so \
they all land in one slot on one master. A batch is then one round trip to one master, and \
that master does all the work while the others idle.</p>";

#[component]
pub fn ClusterExplainer(conn: Connection) -> impl IntoView {
    let on_cluster = move || {
        conn.server
            .with(|s| s.as_ref().is_some_and(|s| is_cluster_target(&s.target)))
    };
    move || {
        on_cluster().then(|| {
            view! {
                <section class="card cluster-explainer" id="cluster-explainer" aria-label="Pipelining on a Redis Cluster">
                    <div inner_html=EXPLAINER></div>
                    <p class="note">"Each cluster run's round trips per master are in its table under the results (counted by the engine)."</p>
                    <p class="note">"“Spread vs one hash tag”, beside Compare, runs the same pipelined run both ways (the link's plan=layouts)."</p>
                </section>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn a_cluster_is_told_by_the_server_s_target() {
        assert!(is_cluster_target(
            "Redis Cluster via redis://127.0.0.1:7000/"
        ));
        assert!(!is_cluster_target("redis://127.0.0.1:6379/"));
    }
}
