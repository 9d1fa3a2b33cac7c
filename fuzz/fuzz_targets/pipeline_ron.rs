//! Pipeline RON with includes: the input is up to three files separated by
//! a line `---` (`main.ron`, `a.ron`, `b.ron`), written to a directory that
//! is also a search directory, so `Include("a")`, `Include("a.ron")`, a
//! shipped name and cycles among them all resolve as they do for a user.
//! A pipeline that loads runs over a small kernel with verify-each.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use xir::pipeline::{PassManager, RunOptions};

const KERNEL: &str = include_str!("../../tests/corpus/break_continue.xir");

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"))
}

fuzz_target!(|data: &[u8]| {
    let Some(text) = xir_fuzz::text(data) else { return };
    let dir = dir().path();
    let mut parts = text.splitn(3, "\n---\n");
    for name in ["main.ron", "a.ron", "b.ron"] {
        let path = dir.join(name);
        match parts.next() {
            Some(p) => std::fs::write(&path, p).expect("write a pipeline file"),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, Some(dir));
    match loader.load_path(&dir.join("main.ron")) {
        Ok(p) => {
            let mut m = xir::text::parse_module(KERNEL, "k.xir").expect("the corpus kernel parses");
            let opts = RunOptions { verify_each: true, ..RunOptions::default() };
            if let Err(e) = PassManager::new(&p, opts).run(&mut m, &mut std::io::sink()) {
                assert!(!e.to_diagnostics().is_empty(), "a run error without diagnostics");
            }
        }
        Err(f) => {
            assert!(f.errors().next().is_some(), "a load failure without an error");
            let _ = f.to_string();
            let diags: Vec<_> = f.diagnostics.iter().map(|d| d.to_diagnostic()).collect();
            xir_fuzz::render_all(&diags, "main.ron", text);
        }
    }
});
