//! Saving text the lab made (a trace, a sweep's table) as a file, from a Blob URL.

use wasm_bindgen::JsCast;

/// Offers `text` as a download named `name` (a Blob URL clicked through a transient link).
pub fn save(name: &str, mime: &str, text: &str) -> Option<()> {
    let doc = web_sys::window()?.document()?;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    let a = doc.create_element("a").ok()?.dyn_into::<web_sys::HtmlAnchorElement>().ok()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url).ok()
}

/// Offers `bytes` as a binary download.
pub fn save_bytes(name: &str, mime: &str, bytes: &[u8]) -> Option<()> {
    let doc = web_sys::window()?.document()?;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    let a = doc.create_element("a").ok()?.dyn_into::<web_sys::HtmlAnchorElement>().ok()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url).ok()
}

/// Offers the picture on the first canvas matching `selector` as a PNG.
pub fn save_canvas_png(name: &str, selector: &str) -> Option<()> {
    let doc = web_sys::window()?.document()?;
    let canvas = doc.query_selector(selector).ok()??.dyn_into::<web_sys::HtmlCanvasElement>().ok()?;
    let url = canvas.to_data_url_with_type("image/png").ok()?;
    let a = doc.create_element("a").ok()?.dyn_into::<web_sys::HtmlAnchorElement>().ok()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    Some(())
}
