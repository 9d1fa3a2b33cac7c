//! The memory optimizations (`sroa`, `local_load_elimination`,
//! `local_store_forward`, `dead_store_elimination`, `trace_gep`,
//! `transpose_gep`) beyond their fixtures (file tests under
//! `tests/filetests/<pass>/`): option checking, the corpus alone and inside
//! the shipped pipelines, and how often they fire on random programs. The
//! random aggregate-slot property lives in `mem_opt_random.rs`.

mod opt_support;

use opt_support::*;
use xir::{Module, Opcode};

fn count(m: &Module, op: Opcode) -> usize {
    m.functions.iter().map(|f| f.all_insts().filter(|&(_, i)| f.inst(i).opcode == op).count()).sum()
}

#[test]
fn sroa_rejects_unknown_options() {
    let reg = registry();
    let decl = reg.get("sroa").unwrap();
    let bad: ron::Value = ron::from_str("(decompose_vector: true)").unwrap();
    let err = (decl.create)(Some(&bad)).err().expect("unknown option rejected");
    match err {
        xir::pass::OptionsError::Ron(ron::Error::NoSuchStructField { found, .. }) => {
            assert_eq!(found, "decompose_vector")
        }
        other => panic!("expected an unknown-option error, got {other:?}"),
    }
}

/// The passes together on the corpus: results never change, and the
/// forwarding / elimination passes remove memory traffic (printed per
/// kernel with `--nocapture`: instructions, loads, stores before -> after).
/// The reads are compared with what `sroa` leaves: splitting a slot that is
/// loaded whole trades the load for one per member (`mem2reg` and
/// `const_fold` clean up after it, not these passes).
#[test]
fn mem_opt_passes_keep_corpus_results() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(dir).expect("corpus dir").map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut checked = 0;
    let (mut before_total, mut after_total) = ([0usize; 3], [0usize; 3]);
    let mut split_reads = 0;
    let sizes = |m: &Module| {
        [
            m.inst_count(),
            count(m, Opcode::Load) + count(m, Opcode::BufferRead),
            count(m, Opcode::Store) + count(m, Opcode::BufferWrite),
        ]
    };
    for path in paths {
        if path.extension().and_then(|e| e.to_str()) != Some("xir") {
            continue;
        }
        let Ok(json) = std::fs::read_to_string(path.with_extension("inputs.json")) else { continue };
        let inp = inputs(&json);
        let mut m = parse(&std::fs::read_to_string(&path).unwrap());
        let Ok(before) = interp(&m, &inp) else { continue };
        let start = sizes(&m);
        for pass in ["trace_gep", "sroa", "local_store_forward", "local_load_elimination", "dead_store_elimination"] {
            run_pass(&mut m, pass, None, false);
            assert_eq!(interp(&m, &inp).as_ref(), Ok(&before), "{} after {pass}", path.display());
            if pass == "sroa" {
                split_reads += sizes(&m)[1];
            }
        }
        let end = sizes(&m);
        run_pass(&mut m, "transpose_gep", None, false);
        assert_eq!(interp(&m, &inp).as_ref(), Ok(&before), "{} after transpose_gep", path.display());
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        eprintln!(
            "{name:>20}: insts {} -> {}, reads {} -> {}, writes {} -> {}",
            start[0], end[0], start[1], end[1], start[2], end[2]
        );
        for k in 0..3 {
            before_total[k] += start[k];
            after_total[k] += end[k];
        }
        checked += 1;
    }
    eprintln!(
        "{:>20}: insts {} -> {}, reads {} -> {}, writes {} -> {}",
        "total", before_total[0], after_total[0], before_total[1], after_total[1], before_total[2], after_total[2]
    );
    assert!(checked >= 5, "only {checked} corpus kernels with inputs");
    assert!(after_total[1] < split_reads, "no read of the corpus was eliminated ({split_reads} after sroa)");
}

/// The passes inside the shipped pipelines, on the corpus: legalization +
/// O2 with the memory passes before legalization and after O2 (then O2
/// again) keeps every kernel's results, is verified after every pass, and
/// never leaves more instructions than legalization + O2 alone (per-kernel
/// counts printed with `--nocapture`).
#[test]
fn mem_opt_in_legalize_and_o2_on_the_corpus() {
    use xir::pipeline::{Loader, PassManager, RunOptions};
    let mut reg = registry();
    // The SPIR-V backend binds this hook; unbound, it does nothing.
    reg.declare_hook("callable_specialization", "bound by the SPIR-V backend");
    let pipelines = concat!(env!("CARGO_MANIFEST_DIR"), "/../pipelines");
    let load = |steps: &str| {
        let text = format!("Pipeline(name: \"t\", input: \"xir.structured\", output: \"xir\", steps: [{steps}])");
        Loader::new(&reg)
            .with_search_dir(pipelines)
            .load_text("t.ron".into(), None, &text)
            .unwrap_or_else(|f| panic!("{f}"))
    };
    let plain = load(r#"Include("spirv-legalize"), Include("O2")"#);
    let with_mem = load(
        r#"Pass("trace_gep"), Pass("sroa"), Pass("local_store_forward"), Pass("local_load_elimination"),
           Pass("dead_store_elimination"), Pass("transpose_gep"), Include("spirv-legalize"), Include("O2"),
           Pass("local_load_elimination"), Pass("dead_store_elimination"), Include("O2")"#,
    );
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(dir).expect("corpus dir").map(|e| e.unwrap().path()).collect();
    paths.sort();
    let (mut total_plain, mut total_mem, mut kernels) = (0, 0, 0);
    for path in paths {
        if path.extension().and_then(|e| e.to_str()) != Some("xir") {
            continue;
        }
        let Ok(json) = std::fs::read_to_string(path.with_extension("inputs.json")) else { continue };
        let inp = inputs(&json);
        let m0 = parse(&std::fs::read_to_string(&path).unwrap());
        let Ok(expected) = interp(&m0, &inp) else { continue };
        let mut counts = [0usize; 2];
        for (k, p) in [&plain, &with_mem].into_iter().enumerate() {
            let mut m = m0.clone();
            let opts = RunOptions { opt_level: 2, verify_each: true, ..Default::default() };
            PassManager::new(p, opts)
                .run(&mut m, &mut std::io::sink())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(interp(&m, &inp).as_ref(), Ok(&expected), "{} (pipeline {k})", path.display());
            counts[k] = m.inst_count();
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        eprintln!("{name:>20}: legalize+O2 {:>4}   with mem_opt {:>4}", counts[0], counts[1]);
        total_plain += counts[0];
        total_mem += counts[1];
        kernels += 1;
    }
    eprintln!("{:>20}: legalize+O2 {total_plain:>4}   with mem_opt {total_mem:>4}", "total");
    assert!(kernels >= 5);
    assert!(total_mem <= total_plain, "the memory passes added instructions: {total_mem} > {total_plain}");
}

/// The random programs of the differential test exercise these passes:
/// over one deterministic run, each forwarding / elimination pass changes a
/// fair share of them (so `differential.rs` tests real rewrites).
#[test]
fn mem_opt_passes_fire_on_random_programs() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let passes = ["local_load_elimination", "local_store_forward", "dead_store_elimination"];
    let mut fired = [0usize; 3];
    let n = 128;
    for _ in 0..n {
        let p = xir_testgen::programs::program().new_tree(&mut runner).expect("a program").current();
        for (k, pass) in passes.iter().enumerate() {
            let mut m = p.module.clone();
            if run_pass(&mut m, pass, None, false).changed {
                fired[k] += 1;
            }
        }
    }
    eprintln!("fired on {fired:?} of {n} programs");
    for (pass, c) in passes.iter().zip(fired) {
        assert!(c >= n / 10, "`{pass}` changed only {c} of {n} programs");
    }
}
