//! Raw-CFG cleanup (`simplify_cfg`) and the post-restructure payload
//! clearing (`clear_inactive_block_payloads`) on the corpus, through the
//! legalization spine (their fixtures are file tests,
//! `tests/filetests/simplify_cfg/` and `clear_inactive_block_payloads/`).

mod control_support;

use control_support::{check, check_passes, corpus, run_pass};
use xir_passes::control::{clear_inactive_block_payloads, destructure_cfg, restructure, simplify_cfg};

// Check that simplify_cfg keeps every corpus kernel's results after
// destructure, and that the result still restructures.
#[test]
fn simplify_on_corpus() {
    for k in corpus() {
        check_passes(
            &k.src,
            &[destructure_cfg::decl(), simplify_cfg::decl(), restructure::decl()],
            &["xir.raw", "xir.raw", "xir.restructured"],
            &k.kernel,
            &k.inputs,
        );
    }
}

// Check that clearing inactive payloads after restructure keeps results on
// the corpus.
#[test]
fn clear_inactive_on_corpus() {
    for k in corpus() {
        let m = check_passes(
            &k.src,
            &[destructure_cfg::decl(), restructure::decl(), clear_inactive_block_payloads::decl()],
            &["xir.raw", "xir.restructured", "xir.restructured"],
            &k.kernel,
            &k.inputs,
        );
        let mut again = m.clone();
        let out = run_pass(&mut again, clear_inactive_block_payloads::decl()).unwrap();
        assert!(!out.changed, "{}: clearing is idempotent", k.name);
        check(&again, "xir.restructured");
    }
}
