//! A file handed to the browser to save, and JSON indented for a person to read in it: what
//! every download button of the page (the runs', the observation's, a session's, the tour's
//! handout) shares.
use leptos::prelude::document;
use wasm_bindgen::{JsCast, JsValue};

/// Offers the browser a file to save (a Blob behind a temporary `<a download>`).
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a: web_sys::HtmlAnchorElement = document().create_element("a")?.unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url)
}

/// `json` indented by two spaces, by the browser's `JSON.stringify` (`json` as it is if the
/// browser will not): the page writes compact JSON only, so it carries one serialiser.
pub fn indented(json: &str) -> String {
    js_sys::JSON::parse(json)
        .and_then(|v| {
            js_sys::JSON::stringify_with_replacer_and_space(&v, &JsValue::NULL, &JsValue::from(2))
        })
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| json.to_string())
}
