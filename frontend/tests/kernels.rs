//! File tests: each `tests/kernels/*.wgsl` / `*.comp` starts with
//! `// inputs: JSON` and `// expect: JSON` lines; the shader is compiled by
//! the front end and run on the interpreter, and the outputs must equal the
//! expectation exactly. `XIR_BLESS=1` rewrites the `expect` lines.

use std::path::Path;

use xir_frontend::{compile, Language, Overrides, Source};

fn header<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| l.strip_prefix(&format!("// {key}: ")))
}

fn run_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let display = path.display().to_string();
    let language = Language::from_path(&display).ok_or("unknown extension")?;
    let module =
        compile(&Source { path: &display, text: &text, language }, &Overrides::new()).map_err(|d| d.to_string())?;
    let inputs: xir::interp::Inputs =
        serde_json::from_str(header(&text, "inputs").ok_or("no `// inputs:` line")?).map_err(|e| e.to_string())?;
    let kernel = module.func_ids().find(|&f| module.func(f).is_kernel()).ok_or("no kernel")?;
    let out = xir::interp::run_kernel(&module, kernel, &inputs).map_err(|e| e.to_string())?;
    let got = serde_json::to_string(&out).map_err(|e| e.to_string())?;
    if std::env::var_os("XIR_BLESS").is_some() {
        let mut new: Vec<String> = text.lines().filter(|l| !l.starts_with("// expect: ")).map(String::from).collect();
        let at = new.iter().position(|l| l.starts_with("// inputs: ")).map_or(0, |i| i + 1);
        new.insert(at, format!("// expect: {got}"));
        std::fs::write(path, new.join("\n") + "\n").map_err(|e| e.to_string())?;
        return Ok(());
    }
    let want = header(&text, "expect").ok_or("no `// expect:` line (run with XIR_BLESS=1)")?;
    let want: serde_json::Value = serde_json::from_str(want).map_err(|e| e.to_string())?;
    let got: serde_json::Value = serde_json::from_str(&got).map_err(|e| e.to_string())?;
    if want != got {
        return Err(format!("outputs differ\n want: {want}\n  got: {got}"));
    }
    Ok(())
}

#[test]
fn every_kernel_gives_its_expected_outputs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
    let mut failures = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("kernels dir") {
        let path = entry.expect("entry").path();
        if Language::from_path(&path.display().to_string()).is_none() {
            continue;
        }
        count += 1;
        if let Err(e) = run_file(&path) {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    assert!(count >= 8, "only {count} kernels");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
