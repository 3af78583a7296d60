//! Saving what the lab made (a trace, a sweep's table, a stream, a chart) as a file.

use wasm_bindgen::JsCast;

/// Clicks a transient link to `href`, downloading it as `name`.
fn click(name: &str, href: &str) -> Option<()> {
    let doc = web_sys::window()?.document()?;
    let a = doc.create_element("a").ok()?.dyn_into::<web_sys::HtmlAnchorElement>().ok()?;
    a.set_href(href);
    a.set_download(name);
    a.click();
    Some(())
}

/// Downloads `part` (a string or a byte array) as a Blob of type `mime`.
fn save_part(name: &str, mime: &str, part: &wasm_bindgen::JsValue) -> Option<()> {
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_blob_sequence_and_options(&js_sys::Array::of1(part), &opts).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    click(name, &url);
    web_sys::Url::revoke_object_url(&url).ok()
}

/// Offers `text` as a download named `name`.
pub fn save(name: &str, mime: &str, text: &str) -> Option<()> {
    save_part(name, mime, &wasm_bindgen::JsValue::from_str(text))
}

/// Offers `bytes` as a binary download.
pub fn save_bytes(name: &str, mime: &str, bytes: &[u8]) -> Option<()> {
    save_part(name, mime, &js_sys::Uint8Array::from(bytes).into())
}

/// Offers the picture on the first canvas matching `selector` as a PNG.
pub fn save_canvas_png(name: &str, selector: &str) -> Option<()> {
    let doc = web_sys::window()?.document()?;
    let canvas = doc.query_selector(selector).ok()??.dyn_into::<web_sys::HtmlCanvasElement>().ok()?;
    click(name, &canvas.to_data_url_with_type("image/png").ok()?)
}
