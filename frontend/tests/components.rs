//! Components whose logic lives in their view, mounted on their own in headless Chromium
//! (`wasm-bindgen-test`), fed the same server messages the websocket would bring. The whole
//! stack (a backend, a Redis, a page) is tested by the backend's browser tests; these check one
//! component's output without it. Run by `scripts/test` (`cargo test -p pipescope-frontend
//! --target wasm32-unknown-unknown`, with `wasm-bindgen-test-runner` and chromedriver).
#![cfg(target_arch = "wasm32")]

use leptos::prelude::*;
use pipescope_frontend::components::{Results, RttDiagram};
use pipescope_frontend::connection::Connection;
use pipescope_frontend::playback::Playback;
use shared::{Latency, Mode, Network, RunSpec, RunSummary, ServerMsg, Timeline};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::HtmlElement;

wasm_bindgen_test_configure!(run_in_browser);

fn summary(spec: RunSpec, done: u64, wall_us: u64) -> RunSummary {
    RunSummary {
        round_trips: spec.mode.round_trips(done),
        writes: spec.mode.writes(done).unwrap_or(0),
        wire_commands: done,
        spec,
        done,
        wall_us,
        ops_per_sec: shared::report::ops_per_sec(done, wall_us),
        latency: Latency {
            p50_us: 50.0,
            p99_us: 90.0,
            max_us: 400.0,
            ..Latency::default()
        },
        split: None,
        redis_usec_per_call: None,
        redis_load: None,
        interleaving: None,
        redis_memory: None,
        cluster: None,
    }
}

/// A connection that never opens a socket, holding what these messages say.
fn connection(msgs: Vec<ServerMsg>) -> Connection {
    let conn = Connection::new();
    conn.session.update(|s| {
        for msg in msgs {
            s.apply(msg);
        }
    });
    conn
}

fn started(run: u64, index: usize, spec: &RunSpec) -> ServerMsg {
    ServerMsg::RunStarted {
        run,
        index,
        of: 2,
        spec: *spec,
    }
}

fn finished(run: u64, summary: RunSummary) -> ServerMsg {
    ServerMsg::Finished {
        run,
        summary,
        timeline: Timeline::default(),
    }
}

/// Mounts `view` in a fresh element of the test page and returns that element.
fn mount<V: IntoView + 'static>(view: impl FnOnce() -> V + 'static) -> HtmlElement {
    let document = document();
    let host: HtmlElement = document.create_element("div").unwrap().unchecked_into();
    document.body().unwrap().append_child(&host).unwrap();
    leptos::mount::mount_to(host.clone(), view).forget();
    host
}

/// The text of every cell of the results table, row by row (header excluded).
fn rows(host: &HtmlElement) -> Vec<Vec<String>> {
    let rows = host.query_selector_all("#results tbody tr").unwrap();
    (0..rows.length())
        .map(|r| {
            let cells = rows
                .item(r)
                .unwrap()
                .unchecked_into::<web_sys::Element>()
                .query_selector_all("th, td")
                .unwrap();
            (0..cells.length())
                .map(|c| cells.item(c).unwrap().text_content().unwrap_or_default())
                .collect()
        })
        .collect()
}

#[wasm_bindgen_test]
fn the_results_table_shows_each_run_and_its_speed_up_over_the_sequential_one() {
    let seq = RunSpec::set(1_000, Mode::Sequential);
    let pipe = RunSpec::set(1_000, Mode::pipelined(100));
    let conn = connection(vec![
        started(1, 0, &seq),
        finished(1, summary(seq, 1_000, 1_000_000)),
        started(2, 1, &pipe),
        finished(2, summary(pipe, 1_000, 10_000)),
    ]);
    let host = mount(move || view! { <Results conn=conn /> });
    let rows = rows(&host);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0][0].starts_with("sequential"), "{rows:?}");
    assert!(rows[1][0].starts_with("pipelined (batch 100)"), "{rows:?}");
    // Round trips (after mode, commands, wall time, ops/s and latency): one per command, then
    // one per batch.
    assert_eq!(rows[0][5], "1,000");
    assert_eq!(rows[1][5], "10");
    // 100 000 ops/s against 1 000 ops/s.
    assert_eq!(rows[1].last().unwrap(), "100×");
    assert_eq!(rows[0].last().unwrap(), "1.00×");
}

#[wasm_bindgen_test]
fn a_stopped_run_says_so_and_claims_no_speed_up() {
    let seq = RunSpec::set(1_000, Mode::Sequential);
    let conn = connection(vec![
        started(1, 0, &seq),
        ServerMsg::Failed {
            run: Some(1),
            reason: "cancelled".into(),
            partial: Some(summary(seq, 400, 500_000)),
        },
    ]);
    let host = mount(move || view! { <Results conn=conn /> });
    let rows = rows(&host);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0][0].contains("stopped"), "{rows:?}");
    assert_eq!(rows[0][1], "400 of 1,000");
    assert_eq!(rows[0].last().unwrap(), "—");
}

/// `(data-part, data-source)` of every element matching `selector`.
fn sources(host: &HtmlElement, selector: &str) -> Vec<(String, String)> {
    let found = host.query_selector_all(selector).unwrap();
    (0..found.length())
        .map(|k| {
            let el: web_sys::Element = found.item(k).unwrap().unchecked_into();
            (
                el.get_attribute("data-part").unwrap_or_default(),
                el.get_attribute("data-source").unwrap_or_default(),
            )
        })
        .collect()
}

/// The RTT diagram fed a sequential and a pipelined run, as a Compare brings them.
fn rtt_diagram(seq: RunSummary, pipe: RunSummary) -> HtmlElement {
    let conn = connection(vec![
        started(1, 0, &seq.spec),
        finished(1, seq),
        started(2, 1, &pipe.spec),
        finished(2, pipe),
    ]);
    mount(move || view! { <RttDiagram playback=Playback::new(conn) /> })
}

fn legend(parts: &[(&str, &str)]) -> Vec<(String, String)> {
    parts
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect()
}

#[wasm_bindgen_test]
fn on_loopback_the_rtt_diagram_labels_t1_assumed_the_hosts_derived_and_redis_measured() {
    let mut seq = summary(RunSpec::set(1_000, Mode::Sequential), 1_000, 50_000);
    seq.redis_usec_per_call = Some(1.5);
    let pipe = summary(RunSpec::set(1_000, Mode::pipelined(100)), 1_000, 2_000);
    let host = rtt_diagram(seq, pipe);
    let expected = legend(&[
        ("t1", "assumed"),
        ("host", "derived"),
        ("redis", "measured"),
    ]);
    assert_eq!(sources(&host, "#rtt-legend li[data-part]"), expected);
    // The bar draws each part where the legend lists it, with the same source.
    let mut bars = sources(&host, "g.part");
    bars.sort();
    bars.dedup();
    let mut listed = expected.clone();
    listed.sort();
    assert_eq!(bars, listed);
}

#[wasm_bindgen_test]
fn without_the_wire_tap_the_dialled_delay_is_labelled_assumed() {
    let net = Network::symmetric(250);
    let seq = summary(
        RunSpec::set(1_000, Mode::Sequential).with_network(net),
        1_000,
        600_000,
    );
    let pipe = summary(
        RunSpec::set(1_000, Mode::pipelined(100)).with_network(net),
        1_000,
        10_000,
    );
    let host = rtt_diagram(seq, pipe);
    assert_eq!(
        sources(&host, "#rtt-legend li[data-part]"),
        legend(&[("t1", "assumed"), ("host", "derived"), ("t2", "assumed")])
    );
}
