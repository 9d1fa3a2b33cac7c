//! XIR JSON: the JSON reader must refuse bad input with diagnostics (not a
//! panic); a module it accepts and that verifies round-trips through JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.json";

fuzz_target!(|data: &[u8]| {
    let Some(text) = xir_fuzz::text(data) else { return };
    match xir::text::json::from_json(text, FILE) {
        Ok(m) => {
            if xir_fuzz::verifies(&m, FILE, text) {
                xir_fuzz::round_trips(&m);
                let again = xir::text::json::to_json(&m);
                let back = xir::text::json::from_json(&again, FILE).expect("written JSON reads back");
                assert_eq!(xir::text::print_module(&back), xir::text::print_module(&m), "JSON round trip");
            }
        }
        Err(diags) => {
            assert!(diags.iter().any(|d| d.is_error()), "the JSON reader refused without an error");
            xir_fuzz::render_all(&diags, FILE, text);
        }
    }
});
