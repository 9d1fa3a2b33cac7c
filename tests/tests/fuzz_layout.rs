//! The fuzz crate's layout, checked on stable (`fuzz/` builds only on
//! nightly): every target named in `fuzz/Cargo.toml` has its source, a
//! `//!` header and a non-empty seed corpus, every seed and found-input
//! folder names a target, the root workspace excludes `fuzz`; and the
//! seeds are what they claim to be: the well-formed ones are accepted by
//! the reader their target fuzzes (a seed the reader refuses would start
//! the fuzzer in the refusal paths only).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use xir_tests::source_tree::repo;

fn fuzz() -> PathBuf {
    repo().join("fuzz")
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`, with their paths.
fn targets() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fuzz().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let mut out = Vec::new();
    for section in text.split("[[bin]]").skip(1) {
        let field = |key: &str| {
            section
                .lines()
                .find_map(|l| {
                    l.trim()
                        .strip_prefix(key)?
                        .trim_start()
                        .strip_prefix('=')
                        .map(|v| v.trim().trim_matches('"').to_string())
                })
                .unwrap_or_else(|| panic!("a [[bin]] without `{key}`: {section}"))
        };
        out.push((field("name"), field("path")));
    }
    out
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

fn subdirs(dir: &Path) -> BTreeSet<String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return BTreeSet::new() };
    rd.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn every_target_has_a_source_a_header_and_seeds() {
    let targets = targets();
    assert!(targets.len() >= 10, "fuzz/Cargo.toml names only {} targets", targets.len());
    for (name, path) in &targets {
        let src = std::fs::read_to_string(fuzz().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(src.starts_with("//!"), "fuzz/{path} does not start with a `//!` comment");
        assert!(src.contains("fuzz_target!"), "fuzz/{path} declares no fuzz target");
        assert!(!seed_files(name).is_empty(), "no seeds for `{name}` (fuzz/seeds/{name}/, fuzz/seed-dirs.txt)");
    }
    let names: BTreeSet<String> = targets.into_iter().map(|(n, _)| n).collect();
    for dir in ["seeds", "artifacts-found"] {
        for d in subdirs(&fuzz().join(dir)) {
            assert!(names.contains(&d), "fuzz/{dir}/{d}/ names no target of fuzz/Cargo.toml");
        }
    }
}

#[test]
fn the_root_workspace_excludes_fuzz() {
    let root = std::fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        root.contains("exclude = [\"fuzz\"]"),
        "the root Cargo.toml must exclude fuzz/ (its own nightly workspace)"
    );
}

/// The seed files of `target`: its own folder under fuzz/seeds (if any) and
/// the files with the listed suffix in the corpora fuzz/seed-dirs.txt names.
fn seed_files(target: &str) -> Vec<PathBuf> {
    let own = fuzz().join("seeds").join(target);
    let mut out = if own.is_dir() { files(&own) } else { Vec::new() };
    let table = std::fs::read_to_string(fuzz().join("seed-dirs.txt")).expect("fuzz/seed-dirs.txt");
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let row: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(row.len(), 3, "fuzz/seed-dirs.txt: `{line}` is not `target directory suffix`");
        if row[0] == target {
            let found = files(&fuzz().join(row[1]));
            let with_suffix: Vec<PathBuf> =
                found.into_iter().filter(|p| p.to_string_lossy().ends_with(row[2])).collect();
            assert!(!with_suffix.is_empty(), "fuzz/seed-dirs.txt: no `{}` file in {}", row[2], row[1]);
            out.extend(with_suffix);
        }
    }
    out
}

fn seeds(target: &str) -> Vec<(String, String)> {
    seed_files(target)
        .into_iter()
        .map(|p| {
            let name = p.file_name().expect("a file name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        })
        .collect()
}

#[test]
fn module_seeds_parse_and_verify() {
    for target in ["xir_text", "whole_pipeline"] {
        for (name, text) in seeds(target) {
            let m = xir::text::parse_module(&text, &name).unwrap_or_else(|d| panic!("{target}/{name}: {d:?}"));
            let diags = xir::verify::verify_module(&m);
            assert!(!diags.iter().any(|d| d.is_error()), "{target}/{name}: {diags:?}");
        }
    }
    for (name, text) in seeds("xir_json") {
        let m = xir::text::json::from_json(&text, &name).unwrap_or_else(|d| panic!("xir_json/{name}: {d:?}"));
        assert!(!xir::verify::verify_module(&m).iter().any(|d| d.is_error()), "xir_json/{name}");
    }
}

#[test]
fn shader_seeds_compile() {
    for (target, language) in [("wgsl", xir_frontend::Language::Wgsl), ("glsl", xir_frontend::Language::Glsl)] {
        for (name, text) in seeds(target) {
            let src = xir_frontend::Source { path: &name, text: &text, language };
            xir_frontend::compile(&src, &xir_frontend::Overrides::new())
                .unwrap_or_else(|d| panic!("{target}/{name}: {}", xir::diag::render(&[*d])));
        }
    }
}

#[test]
fn spirv_seeds_compile() {
    for p in seed_files("spirv") {
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let name = p.display().to_string();
        xir_frontend::spirv::compile(&name, &bytes, &xir_frontend::Overrides::new())
            .unwrap_or_else(|d| panic!("spirv/{name}: {}", xir::diag::render(&[*d])));
    }
}

#[test]
fn artifact_inputs_and_spec_seeds_load() {
    let req = xir_spirv::artifact::LoadRequirements::any_xir_spirv();
    for p in files(&fuzz().join("seeds/artifact")) {
        let bytes = std::fs::read(&p).expect("an artifact seed");
        let art = xir_spirv::artifact::decode(&bytes, &req, None).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        art.signature_module().unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    for (name, text) in seeds("inputs_json") {
        xir::interp::Inputs::from_json(&text).unwrap_or_else(|e| panic!("inputs_json/{name}: {e}"));
    }
    // The first byte picks the spec file the rest replaces: the seeds are
    // the built-in files, so each loads.
    for p in files(&fuzz().join("seeds/spec_ron")) {
        let bytes = std::fs::read(&p).expect("a spec seed");
        let (which, rest) = bytes.split_first().expect("a non-empty seed");
        let mut sources = xir_spec::SpecSources::builtin();
        let slot = [&mut sources.types, &mut sources.opcodes, &mut sources.registers, &mut sources.dialects];
        let builtin = slot.into_iter().nth(usize::from(*which % 4)).expect("four slots");
        assert_eq!(rest, builtin.1.as_bytes(), "{}: not the built-in spec file its first byte picks", p.display());
    }
}

#[test]
fn single_file_pipeline_seeds_are_the_shipped_and_bad_pipelines() {
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    let (mut good, mut bad) = (0, 0);
    for (name, text) in seeds("pipeline_ron") {
        if text.contains("\n---\n") {
            continue;
        }
        let loaded = loader.load_text(name.clone().into(), None, &text);
        if name.starts_with("bad_") {
            bad += 1;
        } else {
            loaded.unwrap_or_else(|e| panic!("pipeline_ron/{name}: {e}"));
            good += 1;
        }
    }
    assert!(good >= 10 && bad >= 10, "{good} shipped and {bad} bad pipeline seeds");
}

/// The `generated` target's input decoding (fuzz/fuzz_targets/generated.rs):
/// a seed and sizes for xir-testgen's generators.
fn generated_module(data: &[u8]) -> xir::Module {
    let mut seed = [0u8; 8];
    let n = data.len().min(8);
    seed[..n].copy_from_slice(&data[..n]);
    let seed = u64::from_le_bytes(seed);
    let knob = |i: usize| data.get(8 + i).copied().unwrap_or(0) as usize;
    if knob(0) & 1 == 0 {
        xir_testgen::modules::generate(seed, 1 + knob(1) % 5, 1 + knob(2) % 24)
    } else {
        let p = xir_testgen::wgslsmith::generate(seed, &xir_testgen::wgslsmith::Config::default());
        let src =
            xir_frontend::Source { path: "generated.wgsl", text: &p.source, language: xir_frontend::Language::Wgsl };
        xir_frontend::compile(&src, &xir_frontend::Overrides::new()).expect("wgslsmith's programs compile")
    }
}

/// Every input the `generated` fuzzer found (fuzz/artifacts-found/generated,
/// named after the bug: RELIABILITY.md) on stable: the module verifies and
/// every shipped pipeline that ends in `xir.spirv` compiles each kernel at
/// -O0 and -O2. Before the fixes these panicked (`i8_to_i16_sign_extension`)
/// or aborted the process in SPIRV-Tools (`f16_constant_print_optimizer_abort`).
#[test]
fn inputs_the_generated_fuzzer_found_compile() {
    let found = files(&fuzz().join("artifacts-found/generated"));
    assert!(found.len() >= 8, "found inputs: {found:?}");
    let reg = xir_pipelines::registry();
    let loader = xir_pipelines::loader(&reg, None);
    for p in &found {
        let m = generated_module(&std::fs::read(p).expect("a found input"));
        assert!(!xir::verify::verify_module(&m).iter().any(|d| d.is_error()), "{}", p.display());
        let mut compiled = 0;
        for &(name, _) in xir_pipelines::SHIPPED {
            let pipeline = loader.load(name).expect("a shipped pipeline loads");
            if pipeline.output != "xir.spirv" {
                continue;
            }
            let mut legal = m.clone();
            let opts = xir::pipeline::RunOptions { verify_each: true, ..Default::default() };
            if xir::pipeline::PassManager::new(&pipeline, opts).run(&mut legal, &mut std::io::sink()).is_err() {
                continue;
            }
            for k in legal.func_ids().filter(|&f| legal.func(f).is_kernel()) {
                for opt_level in [0, 2] {
                    let opts = xir_spirv::CompileOptions { opt_level, ..Default::default() };
                    match xir_spirv::compile(&legal, k, &opts) {
                        Ok(_) => compiled += 1,
                        Err(d) => assert!(
                            d.iter().all(|d| d.rule.name() != "spirv-validate"),
                            "{} after {name}: {}",
                            p.display(),
                            xir::diag::render(&d)
                        ),
                    }
                }
            }
        }
        assert!(compiled > 0, "{}: no kernel compiled through any pipeline", p.display());
    }
}

/// The kernels of `tests/fuzz-found/` (fuzz findings that are not Vulkan
/// fixtures: they print) through the `spirv` pipeline and the backend at
/// every level: each validates, and at -O2 and -O3 the optimizer is skipped
/// with the reason (before the fix, SPIRV-Tools aborted the process).
#[test]
fn fuzz_found_kernels_compile_at_every_level() {
    let dir = repo().join("tests/fuzz-found");
    let kernels = files(&dir);
    assert!(!kernels.is_empty(), "tests/fuzz-found/ is empty");
    for k in &kernels {
        let text = std::fs::read_to_string(k).expect("a fuzz-found kernel");
        let m = xir::text::parse_module(&text, "k.xir").unwrap_or_else(|d| panic!("{}: {d:?}", k.display()));
        for opt_level in 0..=3u8 {
            let (_, _, out) = xir_pipelines::backend::legalize_and_compile(&m, None, opt_level, false)
                .unwrap_or_else(|e| panic!("{} -O{opt_level}: {e}", k.display()));
            xir_spirv::validate::validate(&out.words).unwrap_or_else(|e| panic!("{} -O{opt_level}: {e}", k.display()));
            match (&out.opt, opt_level) {
                (xir_spirv::validate::OptOutcome::Skipped, 0) => {}
                (xir_spirv::validate::OptOutcome::Optimized, 1) => {}
                (xir_spirv::validate::OptOutcome::Rejected(why), 2 | 3) => {
                    assert!(why.starts_with("not run: the module bit-casts"), "{}: {why}", k.display())
                }
                (o, _) => panic!("{} -O{opt_level}: {o:?}", k.display()),
            }
        }
    }
}
