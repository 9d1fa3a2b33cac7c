//! What the fuzz targets share: the oracles. A reader may refuse its input
//! only with typed, located diagnostics (rendering them must not panic
//! either); a module that verifies goes on through every shipped pipeline
//! with verification after each pass, and one that reaches `xir.spirv` and
//! passes the backend's handoff must validate in SPIRV-Tools. Any panic,
//! hang or stack overflow on the way is a finding (libFuzzer reports it).

use xir::diag::{Diagnostic, Sources};
use xir::pipeline::{PassManager, RunOptions};
use xir::Module;

/// The file name every diagnostic of a fuzzed text names.
pub const FILE: &str = "fuzz.xir";

/// Render `diags` in the three forms the drivers print, against `text`:
/// a span past the end of the text or inside a UTF-8 sequence must not
/// panic a renderer.
pub fn render_all(diags: &[Diagnostic], file: &str, text: &str) {
    let sources = Sources::in_memory();
    sources.add(file, text);
    let with_file: Vec<Diagnostic> = diags.iter().map(|d| d.clone().with_file(file)).collect();
    let _ = xir::diag::render_human(&with_file, &sources);
    let _ = xir::diag::render_json(&with_file, &sources);
    let _ = xir::diag::render_short(&with_file);
}

/// A refusal of text input: at least one error, every error located.
pub fn check_refusal(diags: &[Diagnostic], what: &str, file: &str, text: &str) {
    assert!(diags.iter().any(Diagnostic::is_error), "{what} refused its input without an error: {diags:?}");
    for d in diags.iter().filter(|d| d.is_error()) {
        assert!(d.span.is_some(), "{what}: an error without a location: {d:?}");
    }
    render_all(diags, file, text);
}

/// Verify `m`; true when it verifies (its diagnostics rendered otherwise).
pub fn verifies(m: &Module, file: &str, text: &str) -> bool {
    let diags = xir::verify::verify_module(m);
    render_all(&diags, file, text);
    !diags.iter().any(Diagnostic::is_error)
}

/// The printer's round trip: what it prints of a verified module parses
/// back to a module that prints the same (ARCHITECTURE.md's invariant).
pub fn round_trips(m: &Module) {
    let printed = xir::text::print_module(m);
    let back = match xir::text::parse_module(&printed, FILE) {
        Ok(b) => b,
        Err(d) => panic!("the printed module does not parse back:\n{}\n{printed}", xir::diag::render(&d)),
    };
    assert_eq!(xir::text::print_module(&back), printed, "print(parse(print(m))) != print(m)");
}

/// Every shipped pipeline on a copy of `m` (which verified) with
/// verification after each pass; each that ends in `xir.spirv` goes on to
/// the backend at every optimization level.
pub fn all_pipelines(m: &Module) {
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    for &(name, _) in xir_pipelines::SHIPPED {
        let pipeline = loader.load(name).unwrap_or_else(|e| panic!("shipped pipeline {name} does not load: {e}"));
        let mut copy = m.clone();
        let opts = RunOptions { verify_each: true, ..RunOptions::default() };
        // A pass may refuse the module (a typed `RunError`); a pass that
        // breaks the IR is caught by verify-each as an error too, and
        // reported as the pass's fault by the manager.
        match PassManager::new(&pipeline, opts).run(&mut copy, &mut std::io::sink()) {
            Ok(rep) if rep.final_dialect == "xir.spirv" => backend(&copy, name),
            Ok(_) => {}
            Err(e) => {
                let diags = e.to_diagnostics();
                assert!(!diags.is_empty(), "pipeline {name}: a run error without diagnostics");
                render_all(&diags, FILE, "");
            }
        }
    }
}

/// The backend on a module in `xir.spirv`: a refusal must be typed; a
/// module that passes the handoff must not fail SPIRV-Tools validation.
pub fn backend(m: &Module, pipeline: &str) {
    for k in m.func_ids().filter(|&f| m.func(f).is_kernel()) {
        for opt_level in [0, 2] {
            let opts = xir_spirv::CompileOptions { opt_level, ..Default::default() };
            if let Err(diags) = xir_spirv::compile(m, k, &opts) {
                for d in &diags {
                    assert!(
                        d.rule.name() != "spirv-validate",
                        "after pipeline {pipeline}, @{} passed the handoff but failed SPIR-V validation:\n{}\n{}",
                        m.func(k).name,
                        d.message,
                        xir::text::print_module(m),
                    );
                }
            }
        }
    }
}

/// `data` as text: libFuzzer's bytes that are not UTF-8 are skipped by
/// the text targets (the readers take `&str`; `read_source`'s UTF-8 check
/// is its own target's business).
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A shader through the front end: refused with one located diagnostic,
/// or compiled to a module that verifies and goes through every pipeline.
pub fn shader(text: &str, language: xir_frontend::Language, file: &str) {
    let src = xir_frontend::Source { path: file, text, language };
    match xir_frontend::compile(&src, &xir_frontend::Overrides::new()) {
        Ok(m) => front_end_module(&m),
        Err(d) => render_all(std::slice::from_ref(&d), file, text),
    }
}

/// SPIR-V `bytes` through the SPIR-V front end: a module that comes out
/// verifies and goes through every pipeline; a refusal names the file.
pub fn spirv(bytes: &[u8], file: &str) {
    match xir_frontend::spirv::compile(file, bytes, &xir_frontend::Overrides::new()) {
        Ok(m) => front_end_module(&m),
        Err(d) => {
            assert!(d.is_error() && d.file.as_deref() == Some(file), "a refusal that names no file: {d:?}");
            render_all(std::slice::from_ref(&d), file, "");
        }
    }
}

/// What a front end made: it must verify, and goes through every pipeline.
fn front_end_module(m: &Module) {
    let diags = xir::verify::verify_module(m);
    assert!(
        !diags.iter().any(Diagnostic::is_error),
        "the front end produced a module that does not verify:\n{}\n{}",
        xir::diag::render(&diags),
        xir::text::print_module(m),
    );
    all_pipelines(m);
}
