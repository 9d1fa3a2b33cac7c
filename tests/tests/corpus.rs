//! The kernel corpus (`tests/corpus/*.xir`), checked end to end: every kernel
//! parses, verifies, is in `xir.structured`, round-trips through text and
//! JSON, and runs in the reference interpreter; then each kernel's outputs
//! are compared with values worked out by hand (or, for the larger grids, by
//! a plain Rust re-implementation of the same arithmetic).

use xir::pipeline::{PassManager, RunOptions};
use xir_tests::{corpus, expect, kernel, parse, print, run, run_module};

#[test]
fn corpus_has_every_kernel_with_inputs() {
    let all = corpus();
    assert!(all.len() >= 22, "the corpus has {} kernels, want at least 22", all.len());
    for k in &all {
        let json: serde_json::Value = serde_json::from_str(&k.inputs_json)
            .unwrap_or_else(|e| panic!("{}: inputs are not JSON: {e}", k.inputs_path.display()));
        assert!(json.get("dispatch").is_some(), "{}: no dispatch", k.name);
        assert!(json.get("args").is_some(), "{}: no args", k.name);
    }
}

// Check the corpus rules of tests/corpus/README.md that a machine can see:
// a comment on the first line, a reasonable size, at most 4096 threads.
#[test]
fn every_kernel_is_documented_and_small() {
    for k in corpus() {
        assert!(k.text.starts_with("// "), "{}: start with a `//` comment saying what it computes", k.name);
        let lines = k.text.lines().count();
        assert!((10..=150).contains(&lines), "{}: {lines} lines, want 10..=150", k.name);
        let threads: u64 = xir_tests::inputs(&k).dispatch.map_or(1, |d| d.iter().map(|&x| x as u64).product());
        assert!(threads <= 4096, "{}: {threads} threads", k.name);
    }
}

#[test]
fn every_kernel_parses_verifies_and_is_structured() {
    let structured = xir_spec::spec().dialect("xir.structured").expect("dialect xir.structured");
    let mut failures = Vec::new();
    for k in corpus() {
        let m = match xir::text::parse_module(&k.text, &k.path.display().to_string()) {
            Ok(m) => m,
            Err(d) => {
                failures.push(format!("{}: parse:\n{}", k.name, xir::diag::render(&d)));
                continue;
            }
        };
        let errs: Vec<_> = xir::verify::verify_module(&m).into_iter().filter(|d| d.is_error()).collect();
        if !errs.is_empty() {
            failures.push(format!("{}: verify:\n{}", k.name, xir::diag::render(&errs)));
        }
        let errs: Vec<_> = xir::dialect::check_module(&m, structured).into_iter().filter(|d| d.is_error()).collect();
        if !errs.is_empty() {
            failures.push(format!("{}: xir.structured:\n{}", k.name, xir::diag::render(&errs)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_kernel_round_trips_through_text() {
    for k in corpus() {
        let m = parse(&k);
        let once = print(&m);
        let again = xir::text::parse_module(&once, "printed")
            .unwrap_or_else(|d| panic!("{}: printed text does not parse:\n{}\n{once}", k.name, xir::diag::render(&d)));
        assert_eq!(print(&again), once, "{}: print(parse(print(m))) != print(m)", k.name);
        // Comments are metadata and survive the trip.
        let first_comment = k.text.lines().find_map(|l| l.trim().strip_prefix("// ")).unwrap();
        assert!(once.contains(first_comment), "{}: comment `{first_comment}` lost", k.name);
    }
}

#[test]
fn every_kernel_round_trips_through_json() {
    for k in corpus() {
        let m = parse(&k);
        let json = xir::text::json::to_json(&m);
        let back = xir::text::json::from_json(&json, &k.name)
            .unwrap_or_else(|d| panic!("{}: JSON does not read back:\n{}", k.name, xir::diag::render(&d)));
        assert_eq!(print(&back), print(&m), "{}: JSON round trip changed the module", k.name);
    }
}

#[test]
fn every_kernel_runs_in_the_interpreter() {
    for k in corpus() {
        run(&k);
    }
}

#[test]
fn every_kernel_has_expectations() {
    let names: Vec<String> = corpus().into_iter().map(|k| k.name).collect();
    let checked: Vec<String> = expect::ALL.iter().map(|(n, _)| n.to_string()).collect();
    let mut sorted = checked.clone();
    sorted.sort();
    assert_eq!(sorted, names, "expect::ALL must list exactly the corpus kernels");
}

// Check that the mandatory SPIR-V legalization (destructure, reg2mem,
// restructure, mem2reg, ...) keeps every kernel's expected outputs, without
// and with the optional cleanup group.
#[test]
fn every_kernel_keeps_its_outputs_through_spirv_legalize() {
    let reg = xir_pipelines::registry();
    let pipeline = xir_pipelines::loader(&reg, None).load("spirv-legalize").expect("shipped spirv-legalize pipeline");
    for opt_level in [0, 2] {
        for k in corpus() {
            let mut m = parse(&k);
            let options = RunOptions { opt_level, ..RunOptions::default() };
            if let Err(e) = PassManager::new(&pipeline, options).run(&mut m, &mut std::io::sink()) {
                panic!("{} at -O{opt_level}: spirv-legalize fails:\n{e}", k.name);
            }
            let checked = std::panic::catch_unwind(|| expect::check(&k.name, &run_module(&m, &k)));
            if let Err(e) = checked {
                let msg = e.downcast_ref::<String>().map(String::as_str).or(e.downcast_ref::<&str>().copied());
                panic!("{} at -O{opt_level}, after spirv-legalize: {}", k.name, msg.unwrap_or("(no message)"));
            }
        }
    }
}

/// Every scalar of a buffer's JSON encoding replaced by 0 (shapes kept).
fn zeroed(j: &serde_json::Value) -> serde_json::Value {
    match j {
        serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(zeroed).collect()),
        serde_json::Value::Object(o) => o.iter().map(|(k, v)| (k.clone(), zeroed(v))).collect(),
        _ => serde_json::json!(0),
    }
}

// Check that the expectations can fail: with every output zeroed, each
// kernel's check rejects the run.
#[test]
fn expectations_reject_zeroed_outputs() {
    for k in corpus() {
        let mut o = run(&k);
        for buf in o.raw.buffers.values_mut() {
            *buf = zeroed(buf);
        }
        let rejected = std::panic::catch_unwind(|| expect::check(&k.name, &o)).is_err();
        assert!(rejected, "{}: the expectations accept all-zero outputs", k.name);
    }
}

// ---- per-kernel expectations (tests/src/expect.rs) --------------------------

macro_rules! expect_tests {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            expect::$name(&run(&kernel(stringify!($name))));
        }
    )*};
}

expect_tests!(
    saxpy,
    reduce_block,
    prefix_sum,
    histogram,
    mandelbrot,
    matmul,
    bitonic_sort,
    break_continue,
    switch,
    nested_loops,
    callables,
    scalar_widths,
    narrow_storage,
    vector_ops,
    matrix_ops,
    struct_gep,
    early_return,
    round_bits,
    fma_contract,
    int64,
    select_minmax,
    do_while,
    byte_buffer,
    atomics,
    bytecode_vm,
    simple_loop_continue,
    float_math,
    unusual_shapes,
);
