//! Reading one HTML file's packed parts: the page's WASM and the data are base64 text of gzip
//! inside `<script id=…>` elements, so a search of the file's text cannot see what they hold.

use std::io::Read;

use base64::Engine;

/// The base64 text of the `<script id=…>` element `id`, gunzipped.
pub fn unpacked(html: &str, id: &str) -> Vec<u8> {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the file"));
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

/// The data packed in the file (its server messages, a line each), as text.
pub fn data(html: &str) -> String {
    String::from_utf8(unpacked(html, "pipescope-data")).expect("the packed data is UTF-8")
}
