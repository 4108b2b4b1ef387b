//! `pipescope cost html`, run as a user runs it with tiny counts: the seed's experiment and an
//! observation of a few connections each made into one file and opened from disk in headless
//! Chromium. What it prints must add up: the file's parts to its size (the file kept with
//! --out), and an observation's connections to those the proxy saw. Its times are printed,
//! never judged here (`docs/measurements.md` has them, from a full run).

use crate::support;

fn cost_html(args: &[&str], file: &std::path::Path) -> serde_json::Value {
    let mut cmd = support::pipescope("pipescope=warn");
    cmd.args(["cost", "html", "--loads", "1", "--json", "--out"])
        .arg(file)
        .args(args);
    let out = support::clients::output_within(cmd, "pipescope cost html");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pipescope cost html {args:?}: {stderr}"
    );
    eprintln!("{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let cost: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("--json prints one JSON object ({e}): {stdout}"));
    let n = |k: &str| cost[k].as_u64().unwrap_or_else(|| panic!("{k} in {cost}"));
    assert_eq!(
        n("bytes"),
        std::fs::metadata(file).expect("--out keeps the file").len(),
        "{cost}"
    );
    assert_eq!(
        n("wasm_bytes") + n("data_bytes") + n("rest_bytes"),
        n("bytes"),
        "{cost}"
    );
    assert!(n("wasm_bytes") > 0 && n("data_bytes") > 0, "{cost}");
    let ms = cost["interactive_ms"].as_f64().unwrap();
    assert!(ms.is_finite() && ms > 0.0, "{cost}");
    cost
}

#[test]
fn the_seeds_experiment_as_one_file_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let cost = cost_html(
        &["--count", "300", "--batch", "10"],
        &dir.path().join("runs.html"),
    );
    assert_eq!(cost["mode"], "compare", "{cost}");
    assert!(cost.get("connections").is_none(), "{cost}");
}

#[test]
fn an_observation_as_one_file_shows_every_connection_the_proxy_saw() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("observed.html");
    let cost = cost_html(&["--observed", "4", "--count", "400"], &file);
    assert_eq!(cost["mode"], "observed", "{cost}");
    // redis-benchmark's four sending connections, and a connection of each benchmark that
    // asks for the server's config before it starts.
    let seen = cost["connections"].as_u64().unwrap();
    assert!((4..=6).contains(&seen), "{cost}");
    // The load was timed until the file's table showed `seen` rows: the file says as many.
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(
        html.contains(&format!("{seen} connections through the observing proxy")),
        "the file's line names the connections the report counted ({seen})"
    );
}
