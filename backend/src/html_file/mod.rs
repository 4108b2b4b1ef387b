//! One self-contained HTML file: the page (its CSS, JS glue and WASM) and the message a replay's
//! websocket would send it, so a recording opens by double-click from disk, with no server
//! and no network (`pipescope replay REC --html FILE`, `bench --html FILE`, the page's
//! download). The WASM and the message are gzip-compressed, as base64, in
//! `<script type="application/octet-stream">` elements; the loader unpacks them with the
//! browser's `DecompressionStream`, leaves the message in `window.pipescopeFile` (the page's
//! `Connection` reads it instead of opening a websocket) and instantiates the WASM from its
//! bytes. A Content-Security-Policy lets nothing be fetched.
//!
//! - `page`: the built page (`dist/`) taken apart into what is inlined.
//! - `observed`: an observation through the proxy as a file (`observe --html`, the observe
//!   view's download).
//! - The page's "Download as one HTML file" (`POST /html`) is the server's: `server::html_download`.

pub mod observed;
pub mod page;

use std::io::Write;

use base64::Engine;
use shared::Recording;

pub use observed::{Observed, of_proxy};
pub use page::{Page, PageError};

/// Nothing is fetched or connected to: scripts and styles are inline, WASM is compiled from
/// bytes, images are the page's own (the handout chart's PNG is a `data:` URL, drawn by a
/// function the page makes from text: `'unsafe-eval'`, which fetches nothing).
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'; \
style-src 'unsafe-inline'; img-src data: blob:; base-uri 'none'; form-action 'none'";

/// What a file cannot do, hidden: it runs nothing and has no server (no run controls, no
/// views to switch to, no connection, nothing to open or have written; its own line says what
/// it is, in place of a served replay's banner).
const FILE_CSS: &str = ".controls, nav.views, #status, #target, #recording-banner, \
label[for=\"open-recording\"], .recording form, .recording .explain, .observe-controls, \
.observe-capture, button[id^=\"equivalent-\"], #timeline-refresh { display: none !important; }
#file-line { margin: 0; padding: 0.5rem 1rem; background: #fff6db; color: #3b3000; \
border-bottom: 1px solid #e8d9a6; font: 0.9rem/1.45 system-ui, sans-serif; }
#file-line a { margin-left: 0.5rem; }";

/// Unpacks the WASM and the message, then starts the page; a browser that cannot is told so.
const LOADER: &str = r#"
const packed = id => {
  const text = atob(document.getElementById(id).textContent);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')));
};
const view = document.getElementById('pipescope-data').dataset.view;
if (view && !location.hash) location.hash = view;
try {
  const [wasm, message] = await Promise.all([
    packed('pipescope-wasm').arrayBuffer(),
    packed('pipescope-data').text(),
  ]);
  window.pipescopeFile = message;
  await __wbg_init({ module_or_path: wasm });
} catch (e) {
  const p = document.createElement('p');
  p.textContent = 'This pipescope file could not start in this browser (' + e +
    '). It needs WebAssembly and DecompressionStream: a current Chromium, Firefox or Safari.';
  document.body.append(p);
}
"#;

/// The file for `recording`, said to be `file` (a name, no directory).
pub fn of_recording(page: &Page, recording: Recording, file: &str) -> String {
    let line = line_of(&recording, file);
    let message = recording.welcome(file).to_json();
    html(page, &message, &format!("pipescope · {file}"), &line)
}

/// The file for what `observe --pcap` read from a capture (`capture_upload::capture_read`'s
/// message), said to be `file`; it opens on the observe view.
pub fn of_capture(page: &Page, read: &shared::ServerMsg, file: &str) -> String {
    let (label, n) = match read {
        shared::ServerMsg::CaptureRead {
            label, connections, ..
        } => (label.as_str(), connections.len()),
        _ => ("", 0),
    };
    of_observation(page, &[read], file, &format!("{n} connections {label}"))
}

/// The file for an observation given as the messages a page would get (`messages`, in order),
/// said to be `file`, whose line says `what` (text) of it; it opens on the observe view.
pub fn of_observation(
    page: &Page,
    messages: &[&shared::ServerMsg],
    file: &str,
    what: &str,
) -> String {
    let line = format!(
        "<strong>A pipescope observation</strong>, {}: {}. \
         This file holds the page and what was observed: nothing runs here, and nothing is fetched.",
        escape(file),
        escape(what),
    );
    // One message a line: serde_json's compact text has no raw line breaks.
    let text: Vec<String> = messages.iter().map(|m| m.to_json()).collect();
    html_of(
        page,
        &text.join("\n"),
        &format!("pipescope · {file}"),
        &line,
        "observe",
    )
}

/// The line that says what the file is (HTML): when and where the runs were measured, and
/// with a tour's runs, links to the tour's view and back.
fn line_of(r: &Recording, file: &str) -> String {
    let mut line = format!(
        "<strong>A pipescope recording</strong>, {}: {} runs saved {} by pipescope {}, measured against Redis {} at {}, network: {}. \
         This file holds the page and its runs: nothing runs here, and nothing is fetched.",
        escape(file),
        r.runs.len(),
        escape(&r.saved_at),
        escape(&r.server_version),
        escape(&r.redis_version),
        escape(&r.target),
        escape(&r.networks_words()),
    );
    if !r.tour.is_empty() {
        // The page picks its view from `#…`; a new query loads the file again (a file URL's
        // query is ignored), there.
        line.push_str(
            " <a id=\"file-runs\" href=\"?runs\">All runs</a> · \
             <a id=\"file-tour\" href=\"?tour#tour/handout\">The tour and its handout</a>",
        );
    }
    line
}

/// `page` with `message` (one `ServerMsg` as JSON), titled `title`, under `line` (HTML).
pub fn html(page: &Page, message: &str, title: &str, line: &str) -> String {
    html_of(page, message, title, line, "")
}

/// `html`, opening on `view` (the page's `#…`: `observe`) when the address names none.
fn html_of(page: &Page, message: &str, title: &str, line: &str, view: &str) -> String {
    let wasm = packed(&page.wasm);
    let data = packed(message.as_bytes());
    let mut out = String::with_capacity(wasm.len() + data.len() + page.glue.len() + 64 * 1024);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n"
    ));
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<meta name=\"color-scheme\" content=\"light\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(title)));
    out.push_str("<link rel=\"icon\" href=\"data:,\">\n");
    for css in &page.css {
        out.push_str("<style>\n");
        out.push_str(css);
        out.push_str("\n</style>\n");
    }
    out.push_str("<style>\n");
    out.push_str(FILE_CSS);
    out.push_str("\n</style>\n</head>\n<body>\n<noscript>pipescope needs JavaScript and WebAssembly.</noscript>\n");
    out.push_str(&format!("<p id=\"file-line\" role=\"note\">{line}</p>\n"));
    out.push_str(&format!(
        "<script type=\"application/octet-stream\" id=\"pipescope-data\" data-view=\"{view}\">{data}</script>\n"
    ));
    out.push_str(&format!(
        "<script type=\"application/octet-stream\" id=\"pipescope-wasm\">{wasm}</script>\n"
    ));
    out.push_str("<script type=\"module\">\n");
    out.push_str(&page.glue);
    out.push_str(LOADER);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// `bytes` gzip-compressed (best), as base64.
fn packed(bytes: &[u8]) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes).expect("writing to memory");
    let gz = gz.finish().expect("writing to memory");
    base64::engine::general_purpose::STANDARD.encode(gz)
}

/// `s` as HTML text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn page() -> Page {
        Page {
            css: vec!["body { color: red }".into(), "p { margin: 0 }".into()],
            glue: "async function __wbg_init(m) {}\n".into(),
            wasm: b"\0asm\x01\0\0\0".to_vec(),
        }
    }

    fn unpacked(html: &str, id: &str) -> Vec<u8> {
        let open = format!("id=\"{id}\"");
        let at = html.find(&open).unwrap();
        let start = at + html[at..].find('>').unwrap() + 1;
        let end = start + html[start..].find("</script>").unwrap();
        let gz = base64::engine::general_purpose::STANDARD
            .decode(&html[start..end])
            .unwrap();
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn the_parts_are_inlined_and_the_data_comes_back() {
        let html = html(
            &page(),
            r#"{"type":"welcome"}"#,
            "pipescope · a<b>.json",
            "<b>line</b>",
        );
        assert!(html.contains("<p id=\"file-line\" role=\"note\"><b>line</b></p>"));
        assert!(html.contains("<title>pipescope · a&lt;b&gt;.json</title>"));
        assert!(html.find("body { color: red }") < html.find("p { margin: 0 }"));
        assert_eq!(unpacked(&html, "pipescope-data"), br#"{"type":"welcome"}"#);
        assert_eq!(unpacked(&html, "pipescope-wasm"), b"\0asm\x01\0\0\0");
        assert!(html.contains("async function __wbg_init(m) {}\n\nconst packed"));
        // Nothing it names is fetched: no URL outside the policy and the `data:` icon.
        assert!(!html.contains("src=") && !html.contains("://"), "{html}");
    }
}
