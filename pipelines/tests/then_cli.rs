//! `xir-opt INPUT --then EDIT`: the incremental session as a process. Each
//! shipped pipeline and each `--emit` gives what a plain run of the edited
//! file gives (the `spirv` pipeline on a kernel that calls callables
//! included), the per-version line names what was recompiled and its time,
//! and a diagnostic in an edit names the edit's file and line.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::scratch;
use common::xir_opt;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn original() -> String {
    root().join("tests/corpus/callables.xir").display().to_string()
}

fn edited() -> String {
    root().join("tests/edits/callables-edited.xir").display().to_string()
}

/// The plain run of the edited file and the `--then` run ending in it.
fn both(args: &[&str]) -> (Output, Output) {
    let (o, e) = (original(), edited());
    let plain = xir_opt(&[&[e.as_str()], args].concat());
    let then = xir_opt(&[&[o.as_str()], args, &["--then", &e]].concat());
    (plain, then)
}

#[test]
fn the_spirv_pipeline_compiles_a_kernel_that_calls_callables_in_every_emit_form() {
    for emit in ["xir", "spirv", "spirv-asm", "artifact"] {
        let (plain, then) = both(&["--pipeline", "spirv", "--emit", emit, "-o", "-"]);
        assert_eq!(plain.status.code(), Some(0), "{emit}: {}", stderr(&plain));
        assert_eq!(then.status.code(), Some(0), "{emit}: {}", stderr(&then));
        assert!(!then.stdout.is_empty());
        assert!(plain.stdout == then.stdout, "--emit {emit}: the edit compiles as a plain run of it does");
    }
    // The SPIR-V is the kernel with its callables as SPIR-V functions.
    let (_, then) = both(&["--pipeline", "spirv", "--emit", "spirv-asm"]);
    let asm = String::from_utf8(then.stdout).unwrap();
    // (@square, @accumulate_square, @swap, the kernel body and the entry point.)
    assert_eq!(asm.matches("OpFunction ").count(), 5, "{asm}");
    // The whole-module forms read the compiled functions as one module.
    let (plain, then) = both(&["--pipeline", "spirv", "--emit", "json"]);
    assert_eq!(then.status.code(), Some(0), "{}", stderr(&then));
    let from_json = |o: &Output| {
        xir::text::print_module(&xir::text::json::from_json(std::str::from_utf8(&o.stdout).unwrap(), "j").unwrap())
    };
    assert_eq!(from_json(&plain), from_json(&then));
    let (plain_xir, _) = both(&["--pipeline", "spirv"]);
    let module = xir::text::parse_module(std::str::from_utf8(&plain_xir.stdout).unwrap(), "x").unwrap();
    let (_, then) = both(&["--pipeline", "spirv", "--emit", "dot"]);
    assert_eq!(String::from_utf8(then.stdout).unwrap(), xir_pipelines::dot::module_to_dot(&module));
    // `--emit ast` refuses restructured control flow as a plain run does.
    let (plain, then) = both(&["--pipeline", "spirv", "--emit", "ast"]);
    assert_eq!((plain.status.code(), then.status.code()), (Some(1), Some(1)));
    // (Instruction ids differ: the whole-module forms re-read the printed functions.)
    let why = "a branch that does not end its construct's region";
    assert!(stderr(&plain).contains(why) && stderr(&then).contains(why), "{}", stderr(&then));
}

#[test]
fn each_version_reports_what_was_recompiled_and_its_time() {
    let (_, then) = both(&["--pipeline", "spirv", "--emit", "spirv-asm"]);
    let err = stderr(&then);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    // The backend forms compile the kernel (its closure holds the callables).
    let ms = |l: &str| l.rsplit_once(" in ").and_then(|(_, t)| t.strip_suffix(" ms")?.parse::<f64>().ok());
    assert!(lines[0].ends_with(" ms") && ms(lines[0]).is_some(), "{err}");
    assert!(lines[0].contains("callables.xir: recompiled 1 of 4 functions, reused 3 (callables) in "), "{err}");
    assert!(lines[1].contains("callables-edited.xir: recompiled 1 of 4 functions, reused 3 (callables) in "), "{err}");
    let (_, then) = both(&["--pipeline", "spirv"]);
    let err = stderr(&then);
    assert!(
        err.contains(
            "callables.xir: recompiled 4 of 4 functions, reused 0 (square, accumulate_square, swap, callables) in "
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "callables-edited.xir: recompiled 3 of 4 functions, reused 1 (square, accumulate_square, callables) in "
        ),
        "{err}"
    );
}

#[test]
fn every_shipped_pipeline_gives_what_a_plain_run_gives() {
    let dir = root().join("pipelines");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.path().file_name()?.to_str()?.strip_suffix(".ron").map(String::from))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for name in &names {
        for level in ["0", "2"] {
            let (plain, then) = both(&["--pipeline", name, "--opt-level", level]);
            assert_eq!(plain.status.code(), then.status.code(), "{name} -O{level}: {}", stderr(&then));
            assert!(plain.stdout == then.stdout, "{name} -O{level}");
        }
    }
}

#[test]
fn a_diagnostic_in_an_edit_names_the_edits_file_and_line() {
    let dir = scratch("diag");
    let text = std::fs::read_to_string(edited()).unwrap();
    let bad_text = text.replacen("  %squared = mul %x, %x : f32", "  %squared = frobnicate %x, %x : f32", 1);
    assert_ne!(bad_text, text);
    let bad = dir.join("bad.xir");
    std::fs::write(&bad, &bad_text).unwrap();
    let bad = bad.display().to_string();
    let line = bad_text.lines().position(|l| l.contains("frobnicate")).unwrap() + 1;
    let o = xir_opt(&[&original(), "--pipeline", "spirv", "--then", &bad, "--diagnostics", "short"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let want = format!("{bad}:{line}:14: error: [parse] unknown opcode `frobnicate` (in @square)\n");
    assert!(err.ends_with(&want), "{err}\nwanted: {want}");
    // The human form shows the edit's own line under the caret.
    let o = xir_opt(&[&original(), "--pipeline", "spirv", "--then", &bad, "--diagnostics=human"]);
    let err = stderr(&o);
    assert!(err.contains(&format!("{bad}:{line}:14")) && err.contains("%squared = frobnicate %x, %x : f32"), "{err}");
    // A pipeline failure names the edit too: the backend's handoff refuses
    // a recursive callable.
    let rec = text.replacen("  %squared = mul %x, %x : f32", "  %squared = call @square, %x : f32", 1);
    let rec_path = dir.join("rec.xir");
    std::fs::write(&rec_path, &rec).unwrap();
    let o =
        xir_opt(&[&original(), "--pipeline", "spirv", "--then", rec_path.to_str().unwrap(), "--diagnostics", "short"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let want = format!(
        "{}: error: [spirv-handoff:callgraph] recursive call to @square: SPIR-V forbids recursion (in @square)\n",
        rec_path.display()
    );
    assert!(err.ends_with(&want), "{err}");
}
