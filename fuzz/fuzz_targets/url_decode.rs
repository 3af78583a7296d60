//! The link decoder: any text gives a scenario or a message, never a panic; a link that
//! decodes to a valid scenario encodes back to a link that decodes to the same scenario.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(d) = xlog::url::decode(text) else { return };
    let _ = d.at();
    if d.scenario.validate().is_err() {
        return;
    }
    let link = xlog::url::encode(&d.scenario, d.preset.as_deref()).expect("a valid scenario encodes");
    let again = xlog::url::decode(&link).expect("an encoded link decodes");
    assert_eq!(again.scenario, d.scenario, "round trip through {link}");
});
