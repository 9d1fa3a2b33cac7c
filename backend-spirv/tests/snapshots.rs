//! Checked-in SPIR-V snapshots: the preset-0 disassembly of every corpus
//! kernel that is already in `xir.spirv` form (so the snapshot depends only on
//! the parser and this backend, not on the legalization passes). Each
//! snapshot's module validates; a difference fails with a unified diff.
//! Re-bless with `XIR_BLESS=1 cargo test -p xir-spirv --test snapshots`.

mod common;

use common::*;

#[test]
fn corpus_spirv_snapshots_match() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("XIR_BLESS").is_some();
    let mut paths: Vec<_> =
        std::fs::read_dir(format!("{root}/../tests/corpus")).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut checked = 0;
    let mut diffs = Vec::new();
    for p in paths.iter().filter(|p| p.extension().and_then(|e| e.to_str()) == Some("xir")) {
        let src = std::fs::read_to_string(p).unwrap();
        let m = parse(&src);
        let Ok(out) = xir_spirv::compile(&m, kernel_of(&m), &opts(0, false)) else { continue };
        xir_spirv::validate::validate(&out.words).expect("snapshot module validates");
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let snap = format!("{root}/snapshots/{stem}.spvasm");
        let text = out.disassembly();
        if bless {
            std::fs::write(&snap, &text).unwrap();
        } else {
            match std::fs::read_to_string(&snap) {
                Ok(want) if want == text => {}
                Ok(want) => {
                    let diff = similar::TextDiff::from_lines(&want, &text);
                    diffs.push(format!("{stem}:\n{}", diff.unified_diff().header("snapshot", "emitted")));
                }
                Err(_) => diffs.push(format!("{stem}: no snapshot at {snap} (run with XIR_BLESS=1)")),
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} corpus kernels compile directly");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
