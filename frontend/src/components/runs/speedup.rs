use leptos::prelude::*;

use crate::connection::Connection;
use crate::format;

/// The headline: "Pipelined was 23.4× faster", with the two wall times as bars.
/// `#speedup[data-speedup]` carries the factor with two decimals.
#[component]
pub fn SpeedupHeadline(conn: Connection) -> impl IntoView {
    move || {
        conn.speedup.get().map(|up| {
            let seq = &up.sequential;
            let pipe = &up.pipelined;
            let headline = if up.factor >= 1.0 {
                format!("Pipelined was {} faster", format::factor(up.factor))
            } else {
                format!("Pipelined was {} slower", format::factor(1.0 / up.factor))
            };
            // Bar widths: time per command, so different counts still compare.
            let per_cmd = |s: &shared::RunSummary| s.wall_us as f64 / s.done.max(1) as f64;
            let (a, b) = (per_cmd(seq), per_cmd(pipe));
            let longest = a.max(b).max(f64::MIN_POSITIVE);
            let width = |x: f64| format!("width: {:.2}%", (x / longest * 100.0).max(0.5));
            view! {
                <section
                    id="speedup"
                    class="card speedup"
                    data-speedup=format!("{:.2}", up.factor)
                    aria-live="polite"
                >
                    <p class="headline">{headline}</p>
                    <p class="sub">
                        {format!(
                            "{} {}s: {} round trips one at a time, {} in batches of {}.",
                            format::group(pipe.done),
                            pipe.spec.command.name(),
                            format::group(seq.round_trips),
                            format::group(pipe.round_trips),
                            format::group(pipe.spec.mode.batch() as u64),
                        )}
                    </p>
                    <div class="race">
                        <div class="lane">
                            <span class="lane-label">"sequential"</span>
                            <span class="lane-bar seq" style=width(a)></span>
                            <span class="lane-value">{format::wall(seq.wall_us)}</span>
                        </div>
                        <div class="lane">
                            <span class="lane-label">"pipelined"</span>
                            <span class="lane-bar pipe" style=width(b)></span>
                            <span class="lane-value">{format::wall(pipe.wall_us)}</span>
                        </div>
                    </div>
                </section>
            }
        })
    }
}
