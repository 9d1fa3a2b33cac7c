//! XIR text: the reader (source reading with its UTF-8 and size checks,
//! lexer, parser) must refuse bad text with located diagnostics; text that
//! parses and verifies must print and parse back to the same module.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xir_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    // Bytes first, as the drivers read them (located UTF-8 errors).
    let Ok(text) = xir::text::source::read_source(data) else { return };
    match xir::text::parse_module(&text, FILE) {
        Ok(m) => {
            if xir_fuzz::verifies(&m, FILE, &text) {
                xir_fuzz::round_trips(&m);
            }
        }
        Err(diags) => xir_fuzz::check_refusal(&diags, "the XIR parser", FILE, &text),
    }
});
