//! `restructure_cfg` beyond its fixtures (file tests,
//! `tests/filetests/restructure_cfg/`): rejections (irreducible CFGs, Phis,
//! undemotable references) leave the module unchanged with a diagnostic
//! naming the problem; every corpus kernel goes through destructure_cfg ->
//! restructure_cfg with the same interpreter outputs; 5,000 nested ifs
//! restructure on a main-thread-sized stack.

mod control_support;

use control_support::{check, check_passes, count_op, parse, run, run_pass};
use xir_passes::control::{destructure_cfg, restructure};
use xir_testgen::nesting::{nested_ifs, Form};

fn restructure(src: &str, inputs: &str) -> xir::Module {
    check(&parse(src), "xir.raw.phi_free");
    check_passes(src, &[restructure::decl()], &["xir.restructured"], "k", inputs)
}

const OUT8: &str = r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#;

// Check that an irreducible CFG is rejected before anything changes, and
// the diagnostic names the cycle and both of its entries.
#[test]
fn irreducible_is_rejected_unchanged() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 3 : bool
  cond_br %c, true ^left, false ^right
^left:
  %d = eq %t, u32 1 : bool
  cond_br %d, true ^right, false ^exit
^right:
  %e = eq %t, u32 5 : bool
  cond_br %e, true ^left, false ^exit
^exit:
  return
}
"#;
    let mut m = parse(src);
    let before = xir::text::print_module(&m);
    let err = run_pass(&mut m, restructure::decl()).expect_err("irreducible input must be rejected");
    assert_eq!(xir::text::print_module(&m), before, "module changed");
    let msg = xir::diag::render(&err.diagnostics);
    assert!(msg.contains("irreducible"), "{msg}");
    assert!(msg.contains("^left") && msg.contains("^right"), "{msg}");
    assert!(msg.contains("entered at ^left, ^right"), "{msg}");
}

// Check that every corpus kernel survives destructure -> restructure with
// identical interpreter outputs.
#[test]
fn corpus_round_trip() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".xir").map(str::to_string))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    for name in names {
        let src = std::fs::read_to_string(dir.join(format!("{name}.xir"))).unwrap();
        let inputs = std::fs::read_to_string(dir.join(format!("{name}.inputs.json"))).unwrap();
        let m = parse(&src);
        if m.functions.iter().any(|f| count_phis(f) > 0) {
            continue; // needs reg2mem first
        }
        let kernel = m.functions.iter().find(|f| f.is_kernel()).expect("corpus file has a kernel").name.clone();
        let _ = run(&m, &kernel, &inputs);
        check_passes(
            &src,
            &[destructure_cfg::decl(), restructure::decl()],
            &["xir.raw.phi_free", "xir.restructured"],
            &kernel,
            &inputs,
        );
    }
}

// Check the spine's boundary on every corpus kernel, Phis included:
// destructure -> reg2mem -> restructure.
#[test]
fn corpus_through_reg2mem_and_restructure() {
    for k in control_support::corpus() {
        check_passes(
            &k.src,
            &[destructure_cfg::decl(), xir_passes::memory::reg2mem::decl(), restructure::decl()],
            &["xir.raw", "xir.raw.phi_free", "xir.restructured"],
            &k.kernel,
            &k.inputs,
        );
    }
}

// Check that Phis are refused with a located diagnostic, module unchanged.
#[test]
fn phis_are_refused() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 3 : bool
  cond_br %c, true ^a, false ^m
^a:
  br target ^m
^m:
  %p = phi [u32 1, ^a], [u32 2, ^entry] : u32
  buffer.write %out, %t, %p
  return
}
"#;
    let mut m = parse(src);
    let before = xir::text::print_module(&m);
    let err = run_pass(&mut m, restructure::decl()).expect_err("Phis must be refused");
    assert_eq!(xir::text::print_module(&m), before);
    assert!(err.diagnostics[0].message.contains("reg2mem"), "{err}");
    assert!(err.diagnostics[0].span.is_some());
}

fn count_phis(f: &xir::Function) -> usize {
    f.all_insts().filter(|&(_, i)| f.inst(i).opcode == xir::Opcode::Phi).count()
}

// Check that a reference the new loop-exit dispatch separates from its use
// (a `gep` cannot live in a local slot) is rejected with a diagnostic naming
// it, the module unchanged. (The same shape with a data value instead is
// demoted: tests/filetests/restructure_cfg/demotes_a_separated_value.xir.)
#[test]
fn undemotable_reference_is_rejected_unchanged() {
    let shape = |def: &str, use_: &str| {
        format!(
            r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {{
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %arr = alloca : array<u32, 8>
  %i = alloca : u32
  store %i, u32 0
  br target ^head
^head:
  %iv = load %i : u32
  %c = lt %iv, u32 8 : bool
  cond_br %c, true ^body, false ^after
^body:
  {def}
  %z = eq %iv, %t : bool
  cond_br %z, true ^found, false ^step
^step:
  %inext = add %iv, u32 1 : u32
  store %i, %inext
  br target ^head
^found:
  {use_}
  br target ^end
^after:
  buffer.write %out, %t, u32 1000
  br target ^end
^end:
  return
}}
"#
        )
    };
    let bad = shape("%p = gep %arr, %iv : u32", "store %p, %t\n  buffer.write %out, %t, %iv");
    let mut m = parse(&bad);
    check(&m, "xir.raw.phi_free");
    let before = xir::text::print_module(&m);
    let err = run_pass(&mut m, restructure::decl()).expect_err("an undemotable reference must be rejected");
    assert_eq!(xir::text::print_module(&m), before, "module changed");
    let msg = xir::diag::render(&err.diagnostics);
    assert!(msg.contains("no longer dominates") && msg.contains("local slot"), "{msg}");
    assert!(msg.contains("@k"), "{msg}");
}

/// The main thread's stack (8 MiB): what the drivers run on.
fn on_main_sized_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(8 << 20).spawn(f).expect("thread").join().expect("no panic");
}

// Check that 5,000 nested ifs restructure (the recursive emitter overflowed
// the stack at about 4,500); verify, print, parse and the interpreter run
// on the same input.
#[test]
fn five_thousand_nested_ifs() {
    on_main_sized_stack(|| {
        let m = restructure(&nested_ifs(5_000, Form::Raw), OUT8);
        assert_eq!(count_op(&m, "if"), 5_000);
        let out = run(&m, "k", OUT8);
        assert_eq!(out.buffers["out"].to_string(), "[7,7,7,0,0,0,0,0]");
    });
}
