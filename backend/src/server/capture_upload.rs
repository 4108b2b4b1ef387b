//! `POST /capture?file=NAME&ports=6379,7000` (no ports: Redis found in the capture): a capture file (pcap, pcapng) a page opened on
//! its observe view, read here instead of in the page. The page sends the file's bytes as they
//! are; this reads them from memory with the reader `pipescope observe --pcap` uses
//! (`observe::captured`, on a blocking thread: it is CPU work) and answers with the
//! `ServerMsg` the page applies: `CaptureRead` with the connections, their figures labelled
//! as the capture's, and the latest ones' requests; or `Rejected` with the capture error's own
//! words (not a capture, cut by a snap length: how to capture whole packets). Reading captures
//! in the page would put the reassembly and a pcap reader into its WASM, which has a size
//! budget; the server has them already.

use std::path::Path;

use axum::body::Body;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use shared::ServerMsg;

use crate::capture::Source;
use crate::observe::captured;

/// Larger bodies are refused: unread when their length is announced (the page says so before
/// sending one), or once the limit is passed.
pub const MAX_CAPTURE_BYTES: usize = 256 * 1024 * 1024;

#[derive(Debug, serde::Deserialize)]
pub struct Params {
    /// The file's name as the page's user picked it: the label and the messages name it.
    file: Option<String>,
    /// Redis's ports, comma-separated; absent or empty: Redis is found in the capture.
    ports: Option<String>,
}

/// The route; `read` applies the body limit itself.
pub fn route<S: Clone + Send + Sync + 'static>() -> MethodRouter<S> {
    post(read)
}

async fn read(Query(params): Query<Params>, headers: HeaderMap, body: Body) -> Response {
    // Only the name: a path the browser gave would mean nothing here.
    let file = params
        .file
        .as_deref()
        .and_then(|f| Path::new(f).file_name())
        .and_then(|f| f.to_str())
        .unwrap_or("the capture")
        .to_string();
    let too_big = || {
        respond(
            StatusCode::PAYLOAD_TOO_LARGE,
            &file,
            format!(
                "it is larger than the 256 MiB the page may send; read it with pipescope observe --pcap {file}"
            ),
        )
    };
    // An announced length beyond the limit: refused before a byte of it is read.
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_CAPTURE_BYTES as u64) {
        return too_big();
    }
    // Otherwise read up to the limit (a body without a length stops there; one cut off by a
    // page that went away gets this answer too, unread).
    let Ok(body) = axum::body::to_bytes(body, MAX_CAPTURE_BYTES).await else {
        return too_big();
    };
    let answer = match ports(params.ports.as_deref()) {
        Ok(ports) => {
            let name = file.clone();
            tokio::task::spawn_blocking(move || decode(&name, &body, &ports))
                .await
                .unwrap_or_else(|e| Err(format!("reading {file} failed: {e}")))
        }
        Err(reason) => Err(reason),
    };
    match answer {
        Ok(msg) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            msg.to_json(),
        )
            .into_response(),
        Err(reason) => respond(StatusCode::UNPROCESSABLE_ENTITY, &file, reason),
    }
}

/// `Rejected`, saying why `file` could not be read, with `status`.
fn respond(status: StatusCode, file: &str, reason: String) -> Response {
    tracing::info!(file, reason, "refused a capture a page opened");
    // The capture error names the file too: said once, after "Could not open".
    let reason = match reason.strip_prefix(file) {
        Some(rest) if rest.starts_with(": ") => rest[2..].to_string(),
        Some(rest) if rest.starts_with(' ') => format!("it{rest}"),
        _ => reason,
    };
    let reason =
        format!("Could not open {file}: {reason}. The page still shows what it showed before.");
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        ServerMsg::Rejected { reason }.to_json(),
    )
        .into_response()
}

/// `"6379,7000"` as ports; none given: none, Redis is found in the capture.
fn ports(text: Option<&str>) -> Result<Vec<u16>, String> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(Vec::new());
    };
    text.split(',')
        .map(|p| match p.trim().parse::<u16>() {
            Ok(port) if port > 0 => Ok(port),
            _ => Err(format!(
                "{:?} is not a TCP port (Redis's port: a whole number from 1 to 65535; several separated by commas)",
                p.trim()
            )),
        })
        .collect()
}

/// The capture in `body`, as the page's message, or the capture error's words.
fn decode(file: &str, body: &[u8], ports: &[u16]) -> Result<ServerMsg, String> {
    let source = Source::Bytes {
        name: Path::new(file),
        bytes: body,
    };
    let mut seen = captured::observe(source, ports).map_err(|e| e.to_string())?;
    // The CLI's flag is the page's port field.
    for n in &mut seen.notes {
        *n = n.replace("with --redis-port", "in the Redis port field");
    }
    Ok(capture_read(seen))
}

/// What was read from a capture as the page's message (also what a one-file page of it
/// carries, `html_file`).
pub fn capture_read(seen: captured::FromCapture) -> ServerMsg {
    ServerMsg::CaptureRead {
        label: captured::label(&seen.facts),
        notes: seen.notes,
        // Worded for the page, as the hub words the proxy's (`ObservedConnection::with_words`).
        connections: seen
            .connections
            .into_iter()
            .map(|c| c.with_words())
            .collect(),
        timelines: seen.timelines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ports_means_find_redis_and_a_bad_one_is_named() {
        assert_eq!(ports(None).unwrap(), Vec::<u16>::new());
        assert_eq!(ports(Some(" ")).unwrap(), Vec::<u16>::new());
        assert_eq!(ports(Some("6379, 7000")).unwrap(), vec![6379, 7000]);
        let bad = ports(Some("6379,70000")).unwrap_err();
        assert!(bad.starts_with("\"70000\" is not a TCP port"), "{bad}");
        assert!(ports(Some("0")).is_err());
    }

    #[test]
    fn random_bytes_are_not_a_capture() {
        let reason = decode("x.pcap", b"SET k v\r\n and more bytes here", &[6379]).unwrap_err();
        assert!(
            reason.contains("x.pcap is not a pcap or pcapng capture"),
            "{reason}"
        );
    }
}
