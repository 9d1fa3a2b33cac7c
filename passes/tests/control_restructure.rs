//! `restructure_cfg` on raw, Phi-free CFGs written by hand: each case checks
//! that the result verifies, lies in `xir.restructured`, round-trips through
//! text, and computes the same buffers as the raw input in the interpreter.
//! The irreducible case checks the rejection: module unchanged, diagnostic
//! naming the cycle and its entries. The corpus case runs every corpus
//! kernel through destructure_cfg -> restructure_cfg.

mod control_support;

use control_support::{check, check_passes, count_op, parse, run, run_pass};
use xir_passes::control::{destructure_cfg, restructure};
use xir_testgen::nesting::{nested_ifs, Form};

fn restructure(src: &str, inputs: &str) -> xir::Module {
    check(&parse(src), "xir.raw.phi_free");
    check_passes(src, &[restructure::decl()], &["xir.restructured"], "k", inputs)
}

const OUT8: &str = r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#;

// Check that a two-armed diamond becomes one `if` whose merge is the join.
#[test]
fn if_diamond() {
    let m = restructure(
        r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  %c = lt %t, u32 3 : bool
  cond_br %c, true ^a, false ^b
^a:
  store %x, u32 10
  br target ^m
^b:
  %y = mul %t, u32 7 : u32
  store %x, %y
  br target ^m
^m:
  %v = load %x : u32
  buffer.write %out, %t, %v
  return
}
"#,
        OUT8,
    );
    assert_eq!(count_op(&m, "if"), 1);
    assert_eq!(count_op(&m, "alloca"), 1, "no selector is needed");
    let text = xir::text::print_module(&m);
    assert!(text.contains("if %c, true ^a, false ^b, merge ^m"), "{text}");
}

// Check that an if without else uses the join as both false arm and merge.
#[test]
fn if_without_else() {
    let m = restructure(
        r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  store %x, u32 1
  %c = gt %t, u32 4 : bool
  cond_br %c, true ^then, false ^m
^then:
  store %x, u32 2
  br target ^m
^m:
  %v = load %x : u32
  buffer.write %out, %t, %v
  return
}
"#,
        OUT8,
    );
    let text = xir::text::print_module(&m);
    assert!(text.contains("if %c, true ^then, false ^m, merge ^m"), "{text}");
}

// Check that a multi-way branch with shared case targets and a default
// becomes one `switch` merging at the join.
#[test]
fn switch_with_cases_and_default() {
    let m = restructure(
        r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  %s = mod %t, u32 4 : u32
  br_indexed %s, default ^d, case 0 ^c0, case 1 ^c1, case 2 ^c0
^c0:
  store %x, u32 10
  br target ^m
^c1:
  store %x, u32 20
  br target ^m
^d:
  store %x, u32 30
  br target ^m
^m:
  %v = load %x : u32
  %w = add %v, %t : u32
  buffer.write %out, %t, %w
  return
}
"#,
        OUT8,
    );
    let text = xir::text::print_module(&m);
    assert!(text.contains("switch %s, merge ^m, default ^d, case 0 ^c0, case 1 ^c1, case 2 ^c0"), "{text}");
}

// Check that an inner loop that continues and breaks the outer loop gets a
// selector dispatch after its merge, and the outer loop reuses its header
// as `prepare` and its latch as `update`.
#[test]
fn nested_loops_break_and_continue_outer() {
    let m = restructure(
        r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %acc = alloca : u32
  %i = alloca : u32
  %j = alloca : u32
  store %acc, u32 0
  store %i, u32 0
  br target ^outer
^outer:
  %iv = load %i : u32
  %oc = lt %iv, u32 4 : bool
  cond_br %oc, true ^outer_body, false ^done
^outer_body:
  store %j, u32 0
  br target ^inner
^inner:
  %jv = load %j : u32
  %ic = lt %jv, u32 8 : bool
  cond_br %ic, true ^inner_body, false ^outer_step
^inner_body:
  %jv1 = load %j : u32
  %iv1 = load %i : u32
  %lim = add %iv1, %t : u32
  %skip = eq %jv1, %lim : bool
  cond_br %skip, true ^outer_step, false ^check_stop
^check_stop:
  %stop = eq %jv1, u32 6 : bool
  cond_br %stop, true ^done, false ^accum
^accum:
  %a = load %acc : u32
  %a2 = add %a, %jv1 : u32
  store %acc, %a2
  %jn = add %jv1, u32 1 : u32
  store %j, %jn
  br target ^inner
^outer_step:
  %iv2 = load %i : u32
  %in = add %iv2, u32 1 : u32
  store %i, %in
  br target ^outer
^done:
  %r = load %acc : u32
  buffer.write %out, %t, %r
  return
}
"#,
        OUT8,
    );
    assert_eq!(count_op(&m, "loop"), 2);
    let text = xir::text::print_module(&m);
    assert!(text.contains("update ^outer_step"), "{text}");
    assert!(text.contains("restructure.sel"), "the inner loop has two exit targets: {text}");
}

// Check that a return inside a loop body stays a return and the loop keeps
// its normal exit.
#[test]
fn early_return_inside_loop() {
    let m = restructure(
        r#"
kernel @k(%data: buffer<u32>, %out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %i = alloca : u32
  store %i, u32 0
  buffer.write %out, %t, u32 99
  br target ^head
^head:
  %iv = load %i : u32
  %c = lt %iv, u32 8 : bool
  cond_br %c, true ^body, false ^after
^body:
  %idx = add %iv, %t : u32
  %v = buffer.read %data, %idx : u32
  %z = eq %v, u32 0 : bool
  cond_br %z, true ^ret, false ^step
^ret:
  buffer.write %out, %t, %iv
  return
^step:
  %inext = add %iv, u32 1 : u32
  store %i, %inext
  br target ^head
^after:
  buffer.write %out, %t, u32 1000
  return
}
"#,
        r#"{"dispatch": [4, 1, 1], "args": {"data": [5, 6, 0, 7, 8, 9, 10, 11, 12, 13, 14, 15], "out": {"fill": 0, "len": 4}}}"#,
    );
    assert_eq!(count_op(&m, "loop"), 1);
    assert_eq!(count_op(&m, "return"), 2);
}

// Check that paths joining before the common merge (short-circuit shape)
// are routed through a guarded stage, and the result still computes the same.
#[test]
fn crossing_join_uses_guard() {
    let m = restructure(
        r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  store %x, u32 0
  %a = lt %t, u32 4 : bool
  cond_br %a, true ^s1, false ^s2
^s1:
  %b = eq %t, u32 1 : bool
  cond_br %b, true ^j, false ^k
^s2:
  store %x, u32 5
  br target ^j
^j:
  %v = load %x : u32
  %v1 = add %v, u32 100 : u32
  store %x, %v1
  br target ^m
^k:
  store %x, u32 7
  br target ^m
^m:
  %r = load %x : u32
  buffer.write %out, %t, %r
  return
}
"#,
        OUT8,
    );
    assert!(count_op(&m, "if") >= 3, "{}", xir::text::print_module(&m));
}

// Check that a loop whose header is the entry block gets a fresh entry.
#[test]
fn loop_at_function_entry() {
    restructure(
        r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %out, %t : u32
  %n = add %v, u32 3 : u32
  buffer.write %out, %t, %n
  %c = lt %n, %t : bool
  cond_br %c, true ^entry, false ^exit
^exit:
  return
}
"#,
        r#"{"dispatch": [8, 1, 1], "args": {"out": [0, 1, 2, 3, 4, 5, 6, 7]}}"#,
    );
}

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
// it, the module unchanged; and that the same shape with a data value
// instead is demoted and computes the same.
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
    let good = shape("%p = mul %iv, u32 3 : u32", "buffer.write %out, %t, %p");
    let m = check_passes(&good, &[restructure::decl()], &["xir.restructured"], "k", OUT8);
    assert!(xir::text::print_module(&m).contains("%p.slot = alloca"), "{}", xir::text::print_module(&m));
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
