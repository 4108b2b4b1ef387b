//! The join link as a QR code (`GET /lab/qr.svg`), drawn here as SVG, so a room's phones can
//! scan it off the projector: no service asked, and nothing added to the page's WASM.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use qrcode::QrCode;
use qrcode::render::svg;

use super::lane::LabServer;

/// Large enough to scan from the back of a room once the page scales it up.
const MIN_PX: u32 = 240;

/// `text` as a QR code in SVG, black on white with its quiet zone.
pub fn svg(text: &str) -> Result<String, qrcode::types::QrError> {
    let code = QrCode::new(text.as_bytes())?;
    Ok(code
        .render::<svg::Color>()
        .min_dimensions(MIN_PX, MIN_PX)
        .dark_color(svg::Color("#000"))
        .light_color(svg::Color("#fff"))
        .build())
}

/// The current join link's QR code (it changes when the presenter rotates the link).
pub async fn handler(State(lab): State<LabServer>) -> Response {
    let Some(url) = lab.join_urls().into_iter().next() else {
        return (
            axum::http::StatusCode::NOT_FOUND,
            "this lab has no join link to draw",
        )
            .into_response();
    };
    match svg(&url) {
        Ok(svg) => (
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            svg,
        )
            .into_response(),
        Err(e) => (
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            format!("the join link {url} does not fit a QR code: {e}"),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read back as a phone would: the code's modules as a greyscale image (with the quiet
    /// zone the standard asks for), found and decoded by an independent decoder.
    fn decoded(text: &str) -> String {
        let code = QrCode::new(text.as_bytes()).unwrap();
        let width = code.width();
        let colors = code.to_colors();
        let (quiet, scale) = (4, 4);
        let side = (width + 2 * quiet) * scale;
        let mut img = rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| {
            let (mx, my) = (x / scale, y / scale);
            let inside =
                (quiet..quiet + width).contains(&mx) && (quiet..quiet + width).contains(&my);
            let dark = inside && colors[(my - quiet) * width + (mx - quiet)] == qrcode::Color::Dark;
            if dark { 0 } else { 255 }
        });
        let grids = img.detect_grids();
        assert_eq!(grids.len(), 1, "one code found");
        grids[0].decode().unwrap().1
    }

    #[test]
    fn a_join_link_reads_back_as_itself() {
        let url = "http://192.168.1.20:8080/lab/join/aZ3kQ9mX2p";
        assert_eq!(decoded(url), url);
        let svg = svg(url).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("width=\""),
            "{svg:.200}"
        );
    }
}
