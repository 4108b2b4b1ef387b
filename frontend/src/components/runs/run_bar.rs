use leptos::prelude::*;

use crate::connection::Connection;
use crate::format;
use crate::state::{Outcome, RunView};

/// The live bar of one run: label, `<progress>`, done/total, elapsed, ops/s.
#[component]
pub fn RunBar(conn: Connection, run: u64) -> impl IntoView {
    let this = Memo::new(move |_| conn.session.with(|s| s.run(run).cloned()));
    let read = move |f: fn(&RunView) -> String| {
        move || this.with(|r| r.as_ref().map(f).unwrap_or_default())
    };

    let class = move || {
        let state = this.with(|r| match r.as_ref().map(|r| &r.outcome) {
            Some(Outcome::Finished(_)) => "finished",
            Some(Outcome::Failed { .. }) => "failed",
            _ => "running",
        });
        format!("run-progress {state}")
    };
    let mode = read(|r| r.spec.map_or("unknown", |s| s.mode.kind()).to_string());
    let max = read(|r| r.total.max(1).to_string());
    let value = read(|r| r.done.min(r.total).to_string());
    // Mode, command and network: "pipelined (batch 100) · SET · one-way delay 500 µs".
    let label = read(|r| match r.spec {
        Some(s) => format!(
            "{} · {} · {}",
            s.mode.label(),
            s.command.name(),
            s.network.label()
        ),
        None => r.label(),
    });
    let state = read(|r| match &r.outcome {
        Outcome::Running => format!("{:.0} %", r.fraction() * 100.0),
        Outcome::Finished(_) => "done".to_string(),
        Outcome::Failed { reason, .. } => format!("stopped: {reason}"),
    });
    let counts = read(|r| format!("{} / {}", format::group(r.done), format::group(r.total)));
    let elapsed = read(|r| format::wall(r.elapsed_us));
    let rate = read(|r| format::rate(r.ops_per_sec));

    view! {
        <div class=class data-run=run.to_string() data-mode=mode>
            <div class="bar-head">
                <span class="bar-label">{label}</span>
                <span class="bar-state">{state}</span>
            </div>
            <progress max=max value=value></progress>
            <div class="bar-stats">
                <span><b>{counts}</b>" commands"</span>
                <span><b>{elapsed}</b>" elapsed"</span>
                <span><b>{rate}</b>" ops/s"</span>
            </div>
        </div>
    }
}
