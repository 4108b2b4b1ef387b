//! One round trip drawn: client and Redis lanes, the request and reply arrows, a bar of the
//! parts in time order (the one bar-segment layout), and the legend naming each part's source.
//! Used by the RTT diagram (`round_trip::diagram`), the tour's one-trip figure (`tour::rtt`)
//! and an observed connection's figures (`observe::figures`), where the near lane is the proxy
//! (or the host a capture was taken on).

use leptos::prelude::*;

use crate::format;
use crate::rtt_model::{TripBreakdown, Vantage};
use crate::timeaxis::duration;

/// Width the SVG gives a part however small, so a 0.05 µs transmission stays legible.
const MIN_PART: f64 = 70.0;

/// The short name a bar segment carries.
fn short(key: &str, half: bool) -> &'static str {
    match (key, half) {
        ("t1", _) => "t1 ½",
        ("host", _) => "host ½",
        ("t2", _) => "t2",
        ("redis", _) => "Redis",
        ("out", _) => "out",
        ("tap", _) => "proxy ⇄ Redis",
        ("capture", _) => "request → reply",
        ("back", _) => "back",
        ("proxy", _) => "proxy ½",
        _ => "",
    }
}

/// The SVG width a segment's name takes (its font is about 7.5 units a character), with room
/// either side: a segment is never narrower, so "proxy ⇄ Redis" is never cut.
fn name_width(name: &str) -> f64 {
    name.chars().count() as f64 * 7.5 + 16.0
}

/// Left edges of the segments (and the last right edge): proportional, each at least
/// `MIN_PART` and as wide as its name.
fn edges(trip: &TripBreakdown, x0: f64, width: f64) -> Vec<f64> {
    let total: f64 = trip.segments.iter().map(|s| s.us).sum::<f64>().max(1e-9);
    let least: Vec<f64> = trip
        .segments
        .iter()
        .map(|s| MIN_PART.max(name_width(short(trip.parts[s.part].key, s.half))))
        .collect();
    let free = (width - least.iter().sum::<f64>()).max(0.0);
    let mut edges = vec![x0];
    for (s, least) in trip.segments.iter().zip(&least) {
        edges.push(edges.last().unwrap() + least + free * s.us / total);
    }
    edges
}

/// Where the request reaches Redis and the reply leaves it: around the segments at Redis, or
/// the middle of the bar when nothing at Redis is drawn.
fn at_redis(trip: &TripBreakdown, edges: &[f64]) -> (f64, f64) {
    let at: Vec<usize> = (0..trip.segments.len())
        .filter(|&k| trip.parts[trip.segments[k].part].tint == crate::rtt_model::Tint::Redis)
        .collect();
    match (at.first(), at.last()) {
        (Some(&a), Some(&b)) => (edges[a], edges[b + 1]),
        _ => {
            let mid = edges[trip.segments.len() / 2];
            (mid, mid)
        }
    }
}

/// The round trip drawn: client and Redis lanes, the request and reply arrows, and a bar of the
/// parts in time order, each with its value and its source (measured / derived / assumed).
pub fn trip_svg(id: String, trip: &TripBreakdown) -> impl IntoView + use<> {
    let (x0, width) = (110.0, 860.0);
    let edges = edges(trip, x0, width);
    let end = *edges.last().unwrap();
    let (arrive, leave) = at_redis(trip, &edges);
    let (y_client, y_redis, bar_y) = (58.0, 168.0, 200.0);
    let head = format!("{id}-head");
    let marker = format!("url(#{head})");
    let segments = trip
        .segments
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let part = &trip.parts[s.part];
            let (a, b) = (edges[k], edges[k + 1]);
            view! {
                <g class=format!("part {}", part.tint.class()) data-part=part.key data-source=part.source.kind()>
                    <rect x=a y=bar_y width=b - a height="26" rx="4"></rect>
                    <text x=(a + b) / 2.0 y=bar_y + 18.0 text-anchor="middle" class="part-name">{short(part.key, s.half)}</text>
                    <text x=(a + b) / 2.0 y=bar_y + 46.0 text-anchor="middle" class="part-value">{duration(s.us)}</text>
                    <text x=(a + b) / 2.0 y=bar_y + 64.0 text-anchor="middle" class="part-source">{part.source.kind()}</text>
                </g>
            }
        })
        .collect_view();
    let us = |key: &str| trip.part(key).map_or(0.0, |p| p.us);
    // t2 and t3 as the seed's model names them: the dialled or measured legs, and Redis.
    let t2 = if trip.tapped {
        (us("out") + us("back")) / 2.0
    } else {
        us("t2")
    };
    let t3 = if trip.tapped { us("tap") } else { us("redis") };
    let (near, request, reply) = match trip.vantage {
        Vantage::Engine => ("Client", "SET →", "← +OK"),
        Vantage::Proxy => ("Proxy", "commands →", "← replies"),
        Vantage::Capture => ("Capture", "commands →", "← replies"),
    };
    view! {
        <svg
            id=id
            class="trip-svg"
            viewBox="0 0 1000 280"
            role="img"
            aria-label="One round trip taken apart, each part labelled measured, derived or assumed"
            data-rtt-us=trip.rtt_us.to_string()
            data-p50-us=trip.p50_us.to_string()
            data-t1-us=us("t1").to_string()
            data-t2-us=t2.to_string()
            data-t3-us=t3.to_string()
            data-host-us=us("host").to_string()
            data-measured=trip.tapped.to_string()
        >
            <defs>
                <marker id=head viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                    <path d="M0,0 L10,5 L0,10 z" class="head"></path>
                </marker>
            </defs>
            <text x="100" y=y_client + 5.0 text-anchor="end" class="lane-name">{near}</text>
            <text x="100" y=y_redis + 5.0 text-anchor="end" class="lane-name">"Redis"</text>
            <line x1=x0 x2=x0 + width y1=y_client y2=y_client class="lane"></line>
            <line x1=x0 x2=x0 + width y1=y_redis y2=y_redis class="lane"></line>
            <line x1=x0 y1=y_client x2=arrive y2=y_redis class="req" marker-end=marker.clone()></line>
            <rect x=arrive y=y_redis - 14.0 width=(leave - arrive).max(4.0) height="14" class="server"></rect>
            <line x1=leave y1=y_redis x2=end y2=y_client class="reply" marker-end=marker></line>
            <text x=(x0 + arrive) / 2.0 - 18.0 y=(y_client + y_redis) / 2.0 text-anchor="end" class="arrow-label">{request}</text>
            <text x=(leave + end) / 2.0 + 18.0 y=(y_client + y_redis) / 2.0 class="arrow-label">{reply}</text>
            <line x1=x0 x2=end y1="24" y2="24" class="bracket"></line>
            <text x=(x0 + end) / 2.0 y="18" text-anchor="middle" class="rtt-label">
                {rtt_label(trip)}
            </text>
            {segments}
        </svg>
    }
}

/// The RTT over the bar: the engine's mean, with the median beside it; or the proxy's mean.
fn rtt_label(trip: &TripBreakdown) -> String {
    if trip.vantage == Vantage::Capture {
        return format!(
            "Round trip at the capture's host = {} (mean of {}, measured by the capture on its host)",
            duration(trip.rtt_us),
            shared::observe::count(trip.n, "round trip"),
        );
    }
    if trip.vantage == Vantage::Proxy {
        return format!(
            "Round trip at the proxy = {} (mean of {}, measured by the observing proxy)",
            duration(trip.rtt_us),
            shared::observe::count(trip.n, "round trip"),
        );
    }
    if trip.n == 1 {
        return format!(
            "RTT = {} (one request, measured by the engine)",
            duration(trip.rtt_us)
        );
    }
    format!(
        "RTT = {} (mean of {} requests, measured by the engine; median {})",
        duration(trip.rtt_us),
        format::group(trip.n),
        duration(trip.p50_us),
    )
}

/// Every part with its value, its source in words and what the time is.
pub fn parts_legend(id: String, trip: &TripBreakdown) -> impl IntoView + use<> {
    let items = trip
        .parts
        .iter()
        .map(|p| {
            view! {
                <li class=p.tint.class() data-part=p.key data-source=p.source.kind()>
                    <b>{format!("{} {}", p.name, duration(p.us))}</b>
                    " — "
                    <span class="source">{p.source.describe()}</span>
                    {format!(". {}.", crate::connection::capitalise(&p.what))}
                </li>
            }
        })
        .collect_view();
    let note = if trip.vantage == Vantage::Capture {
        "The capture's host stamped each segment once: a round trip runs from a command's segment to its reply's, the network included unless captured on Redis's host, so it is not taken apart further."
    } else if trip.vantage == Vantage::Proxy {
        "The proxy times a round trip from a command's arrival to its reply handed back: the hops between your application and the proxy lie outside it, so they are not drawn here (the time split above gives them as the observer's two hops, measured at start). Bars are widened to stay readable; the numbers are the values."
    } else if trip.tapped {
        "The legs are medians over the stamped requests, so they need not add up to the mean RTT. Bars are widened to stay readable; the numbers are the values."
    } else {
        "On loopback there is no wire, so no propagation: the time is the hosts'. Bars are widened to stay readable; the numbers are the values."
    };
    view! {
        <ul class="parts-legend" id=id>
            {items}
            <li class="note">{note}</li>
        </ul>
    }
}
