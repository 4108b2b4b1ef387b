//! A cluster run's split across its masters, as the engine counted it: per master the commands
//! it ran and its round trips (sub-batches answered), and the run's redirects and slot-map reads.

use leptos::prelude::*;
use shared::ClusterRun;

use crate::connection::Connection;
use crate::format;

/// A master's share of the run's commands: `"33.4 %"` (`"—"` for an empty run).
pub fn share(commands: u64, done: u64) -> String {
    if done == 0 {
        return "—".to_string();
    }
    // Tenths of a percent, rounded, in integers (no float formatting in the page).
    let tenths = (commands * 2000 / done).div_ceil(2);
    format!("{}.{} %", tenths / 10, tenths % 10)
}

/// A master's throughput over the run: its commands over the run's wall time, ops/s (whole;
/// `"—"` for a run that took no time).
pub fn rate(commands: u64, wall_us: u64) -> String {
    if wall_us == 0 {
        return "—".to_string();
    }
    format::group(commands * 1_000_000 / wall_us)
}

/// One table per finished cluster run of the latest plan (nothing on a single server).
#[component]
pub fn ClusterShares(conn: Connection) -> impl IntoView {
    let runs = move || {
        conn.results.with(|rows| {
            rows.iter()
                .filter_map(|r| {
                    let c = r.summary.cluster.clone()?;
                    Some((
                        r.key.clone(),
                        r.summary.spec.mode.label() + r.summary.spec.keys.suffix(),
                        r.summary.done,
                        r.summary.wall_us,
                        c,
                    ))
                })
                .collect::<Vec<_>>()
        })
    };
    let table = |(key, label, done, wall_us, c): (String, String, u64, u64, ClusterRun)| {
        let rows = c
            .masters
            .iter()
            .map(|m| {
                view! {
                    <tr class="master-row" data-addr=m.addr.clone() data-commands=m.commands.to_string()>
                        <th scope="row">{m.addr.clone()}</th>
                        <td>{format::group(m.commands)}</td>
                        <td>{format::group(m.round_trips)}</td>
                        <td>{share(m.commands, done)}</td>
                        <td>{rate(m.commands, wall_us)}</td>
                    </tr>
                }
            })
            .collect_view();
        let redirects = format!(
            "Redirects: {} MOVED, {} ASK (each sent again where Redis said); slot map read again {} times.",
            format::group(c.moved),
            format::group(c.ask),
            format::group(c.map_refreshes)
        );
        view! {
            <div class="cluster-run" data-run=key data-done=done.to_string()>
                <h3>{format!("{label}: per master")}</h3>
                <div class="table-wrap">
                    <table class="cluster-shares">
                        <thead>
                            <tr>
                                <th scope="col">"Master"</th>
                                <th scope="col">"Commands"</th>
                                <th scope="col" title="Sub-batches it answered: its round trips, paid side by side with the other masters'">"Round trips"</th>
                                <th scope="col" title="Its commands over the run's">"Share of the run"</th>
                                <th scope="col" title="Derived: its commands over the run's wall time">"ops/s (derived)"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                <p class="note cluster-redirects" data-moved=c.moved.to_string() data-ask=c.ask.to_string()>
                    {redirects}
                </p>
            </div>
        }
    };
    move || {
        let runs = runs();
        (!runs.is_empty()).then(|| {
            view! {
                <div id="cluster-shares" class="cluster-shares-block">
                    <p class="note">"On the Redis Cluster: counted by the engine. Each batch went out as one sub-batch per master it touched, side by side; a master's commands are those it ran (a redirected command counts where it finally ran)."</p>
                    {runs.into_iter().map(table).collect_view()}
                </div>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test;

    #[test]
    fn a_master_s_share_is_of_the_run_s_commands() {
        assert_eq!(share(1, 3), "33.3 %");
        assert_eq!(share(3000, 3000), "100.0 %");
        assert_eq!(share(0, 0), "—");
    }

    #[test]
    fn a_master_s_rate_is_its_commands_over_the_run_s_time() {
        assert_eq!(rate(1_000, 2_000_000), "500");
        assert_eq!(rate(3_000, 20_000), "150,000");
        assert_eq!(rate(5, 0), "—");
    }
}
