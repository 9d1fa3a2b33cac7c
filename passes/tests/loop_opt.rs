//! The loop passes (`licm`, `loop_rotation`, `indvar_simplify`) on XIR text
//! fixtures: exact properties of the output (what moved where, which Phis
//! went, which constants appeared) and interpreter equality before and
//! after; the dialect contract (rotation is refused in a structured
//! stretch at load time); and the corpus through raw SSA with all three.

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;
use xir::{Module, Opcode};

fn inputs(json: &str) -> Inputs {
    Inputs::from_json(json).expect("inputs parse")
}

/// Opcodes of the block labelled `label` in the first function.
fn block_ops(m: &Module, label: &str) -> Vec<Opcode> {
    let f = &m.functions[0];
    let b = f.blocks().iter().copied().find(|&b| f.block(b).md.name.as_deref() == Some(label)).expect("block");
    f.block(b).insts.iter().map(|&i| f.inst(i).opcode).collect()
}

fn count(m: &Module, op: Opcode) -> usize {
    m.functions.iter().map(|f| f.all_insts().filter(|&(_, i)| f.inst(i).opcode == op).count()).sum()
}

/// Run `passes` in order, checking the verifier after each and the
/// interpreter against the input's results at the end.
fn run_checked(src: &str, passes: &[&str], inp: &Inputs) -> (Module, Vec<xir::pass::PassOutcome>) {
    let mut m = parse(src);
    let before = interp(&m, inp);
    assert!(before.is_ok(), "fixture runs: {before:?}");
    let outs = passes.iter().map(|p| run_pass(&mut m, p, None, false)).collect();
    assert_eq!(interp(&m, inp), before, "results changed by {passes:?}:\n{}", xir::text::print_module(&m));
    (m, outs)
}

// ---- licm ---------------------------------------------------------------

/// Check that invariant arithmetic in a structured loop body moves to the
/// block ending in `loop`, and that loads, buffer reads and a division by a
/// variable stay.
const LICM_STRUCTURED: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32, %d: u32) block_size(1, 1, 1) {
^entry:
  %i = alloca : u32
  store %i, u32 0
  loop prepare ^prep, body ^body, update ^step, merge ^done
^prep:
  %iv = load %i : u32
  %c = lt %iv, u32 8 : bool
  cond_br %c, true ^body, false ^done
^body:
  %iv2 = load %i : u32
  %a = mul %n, u32 3 : u32
  %b = add %a, u32 1 : u32
  %q = div %n, %d : u32
  %h = div %n, u32 4 : u32
  %r = buffer.read %out, u32 0 : u32
  %s = add %b, %iv2 : u32
  %t = add %s, %h : u32
  buffer.write %out, %iv2, %t
  br target ^step
^step:
  %iv3 = load %i : u32
  %nx = add %iv3, u32 1 : u32
  store %i, %nx
  br target ^prep
^done:
  return
}
"#;

#[test]
fn licm_hoists_invariant_pure_code_out_of_a_structured_loop() {
    let inp = inputs(r#"{"dispatch":[1,1,1],"args":{"out":[0,0,0,0,0,0,0,0,0,0],"n":5,"d":2}}"#);
    let (m, outs) = run_checked(LICM_STRUCTURED, &["licm"], &inp);
    assert_eq!(stat(&outs[0], "hoisted"), "3");
    use Opcode::*;
    assert_eq!(block_ops(&m, "entry"), [Alloca, Store, Mul, Add, Div, Loop]);
    // The division by a variable (it may be zero) is not speculated; the
    // loads and the buffer read stay too.
    assert_eq!(block_ops(&m, "body"), [Load, Div, BufferRead, Add, Add, BufferWrite, Br]);
    // The hoisted division is the one by a non-zero constant.
    let f = &m.functions[0];
    let entry = f.body().unwrap();
    let hoisted_div = f.block(entry).insts.iter().find(|&&i| f.inst(i).opcode == Div).copied().unwrap();
    assert_eq!(f.inst(hoisted_div).md.name.as_deref(), Some("h"));
}

/// Check that a division by a variable is hoisted from the header, where it
/// ran unconditionally anyway, and that nothing is hoisted past an effect.
const LICM_HEADER: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32, %d: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %i = phi [u32 0, ^entry], [%i1, ^body] : u32
  %q = div %n, %d : u32
  %c = lt %i, %q : bool
  cond_br %c, true ^body, false ^exit
^body:
  buffer.write %out, %i, %i
  %w = mod %n, %d : u32
  buffer.write %out, u32 9, %w
  %i1 = add %i, u32 1 : u32
  br target ^head
^exit:
  return
}
"#;

#[test]
fn licm_hoists_a_trapping_division_only_from_the_header() {
    let inp = inputs(r#"{"dispatch":[1,1,1],"args":{"out":[0,0,0,0,0,0,0,0,0,0],"n":12,"d":3}}"#);
    let (m, outs) = run_checked(LICM_HEADER, &["licm"], &inp);
    assert_eq!(stat(&outs[0], "hoisted"), "1");
    use Opcode::*;
    assert_eq!(block_ops(&m, "entry"), [Div, Br]);
    assert_eq!(block_ops(&m, "head"), [Phi, Lt, CondBr]);
    assert_eq!(block_ops(&m, "body"), [BufferWrite, Mod, BufferWrite, Add, Br]);
    // With d = 0 both versions fail the same way (the header divides first).
    let zero = inputs(r#"{"dispatch":[1,1,1],"args":{"out":[0,0,0,0,0,0,0,0,0,0],"n":12,"d":0}}"#);
    assert!(interp(&parse(LICM_HEADER), &zero).is_err());
    assert!(interp(&m, &zero).is_err());
}

/// Check that code climbs a loop nest: an expression invariant in both loops
/// ends up before the outer loop, one invariant only in the inner loop
/// before the inner loop.
const LICM_NEST: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^oh
^oh:
  %i = phi [u32 0, ^entry], [%i1, ^olatch] : u32
  %oc = lt %i, u32 3 : bool
  cond_br %oc, true ^ipre, false ^exit
^ipre:
  br target ^ih
^ih:
  %j = phi [u32 0, ^ipre], [%j1, ^ibody] : u32
  %ic = lt %j, u32 4 : bool
  cond_br %ic, true ^ibody, false ^olatch
^ibody:
  %a = mul %n, u32 7 : u32
  %b = mul %i, u32 4 : u32
  %ix = add %b, %j : u32
  %v = add %a, %ix : u32
  buffer.write %out, %ix, %v
  %j1 = add %j, u32 1 : u32
  br target ^ih
^olatch:
  %i1 = add %i, u32 1 : u32
  br target ^oh
^exit:
  return
}
"#;

#[test]
fn licm_moves_code_out_of_a_whole_nest() {
    let inp = inputs(&format!(r#"{{"dispatch":[1,1,1],"args":{{"out":{:?},"n":2}}}}"#, vec![0; 12]));
    let (m, outs) = run_checked(LICM_NEST, &["licm"], &inp);
    assert_eq!(stat(&outs[0], "hoisted"), "3", "a to the inner then the outer preheader, b once");
    use Opcode::*;
    assert_eq!(block_ops(&m, "entry"), [Mul, Br]);
    assert_eq!(block_ops(&m, "ipre"), [Mul, Br]);
    assert_eq!(block_ops(&m, "ibody"), [Add, Add, BufferWrite, Add, Br]);
}

// ---- loop_rotation ------------------------------------------------------

/// A raw while loop whose header value `%t` is used in the body and after
/// the loop, so rotation needs a Phi in the body and one after the exit.
const WHILE: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %i = phi [u32 0, ^entry], [%i1, ^latch] : u32
  %s = phi [u32 0, ^entry], [%s1, ^latch] : u32
  %t = mul %i, u32 3 : u32
  %c = lt %i, %n : bool
  cond_br %c, true ^body, false ^exit
^body:
  %s1 = add %s, %t : u32
  buffer.write %out, %i, %s1
  br target ^latch
^latch:
  %i1 = add %i, u32 1 : u32
  br target ^head
^exit:
  buffer.write %out, u32 8, %t
  buffer.write %out, u32 9, %s
  return
}
"#;

fn while_inputs(n: u32) -> Inputs {
    inputs(&format!(r#"{{"dispatch":[1,1,1],"args":{{"out":{:?},"n":{n}}}}}"#, vec![0; 10]))
}

#[test]
fn rotation_makes_a_guarded_do_while() {
    for n in [0, 1, 5] {
        let (m, outs) = run_checked(WHILE, &["loop_rotation"], &while_inputs(n));
        assert_eq!(stat(&outs[0], "rotated"), "1");
        let f = &m.functions[0];
        // The old header is now the loop's bottom test: its Phis have only
        // the latch incoming, and it exits.
        use Opcode::*;
        assert_eq!(block_ops(&m, "head"), [Phi, Phi, Mul, Lt, CondBr]);
        let head = f.blocks().iter().copied().find(|&b| f.block(b).md.name.as_deref() == Some("head")).unwrap();
        for &i in &f.block(head).insts {
            if f.inst(i).opcode == Phi {
                assert_eq!(f.inst(i).operands.len(), 1);
            }
        }
        // The guard duplicates the header: entry -> guard (mul, lt, cond_br).
        let entry = f.body().unwrap();
        let guard = f.successors(entry)[0];
        let ops: Vec<Opcode> = f.block(guard).insts.iter().map(|&i| f.inst(i).opcode).collect();
        assert_eq!(ops, [Mul, Lt, CondBr]);
        // The body merges the guard's and the bottom test's values.
        assert_eq!(block_ops(&m, "body")[..4], [Phi, Phi, Phi, Add]);
        // After the loop, %t and %s come from a Phi over the two exits.
        assert_eq!(block_ops(&m, "exit")[..2], [Phi, Phi]);
        // A second run finds nothing: the latch exits now.
        let mut again = m.clone();
        let out = run_pass(&mut again, "loop_rotation", None, false);
        assert_eq!(stat(&out, "rotated"), "0");
    }
}

#[test]
fn rotation_leaves_a_do_while_loop_alone() {
    let do_while = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  br target ^body
^body:
  %i = phi [u32 0, ^entry], [%i1, ^body] : u32
  buffer.write %out, %i, %i
  %i1 = add %i, u32 1 : u32
  %c = lt %i1, u32 4 : bool
  cond_br %c, true ^body, false ^exit
^exit:
  return
}
"#;
    let inp = inputs(r#"{"dispatch":[1,1,1],"args":{"out":[0,0,0,0]}}"#);
    let (m, outs) = run_checked(do_while, &["loop_rotation"], &inp);
    assert_eq!(stat(&outs[0], "rotated"), "0");
    assert_eq!(xir::text::print_module(&m), xir::text::print_module(&parse(do_while)));
}

#[test]
fn rotation_is_refused_in_a_structured_stretch_at_load_time() {
    let reg = registry();
    let loader = xir::pipeline::Loader::new(&reg);
    let text = r#"Pipeline(name: "p", input: "xir.structured", output: "xir", steps: [Pass("loop_rotation")])"#;
    let err = loader.load_text("p.ron".into(), None, text).err().expect("rejected");
    let msg = err.to_string();
    assert!(msg.contains("`loop_rotation` needs `xir.raw`"), "{msg}");
    // After destructure_cfg it loads.
    let ok = r#"Pipeline(name: "p", input: "xir.structured", output: "xir.raw",
        steps: [Pass("destructure_cfg"), Pass("loop_rotation"), Pass("licm"), Pass("indvar_simplify")])"#;
    assert!(loader.load_text("p.ron".into(), None, ok).is_ok());
}

// ---- indvar_simplify ----------------------------------------------------

/// Two induction variables with steps 1 and 3: `%j` becomes `5 + 3 * %i`.
/// The exit value of `%i` (10 iterations) becomes the constant 10.
const TWO_IVS: &str = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %i = phi [u32 0, ^entry], [%i1, ^latch] : u32
  %j = phi [u32 5, ^entry], [%j1, ^latch] : u32
  %c = lt %i, u32 10 : bool
  cond_br %c, true ^body, false ^exit
^body:
  buffer.write %out, %i, %j
  br target ^latch
^latch:
  %i1 = add %i, u32 1 : u32
  %j1 = add %j, u32 3 : u32
  br target ^head
^exit:
  buffer.write %out, u32 10, %i
  buffer.write %out, u32 11, %j
  return
}
"#;

#[test]
fn indvar_rewrites_derived_ivs_and_exit_values() {
    let inp = inputs(&format!(r#"{{"dispatch":[1,1,1],"args":{{"out":{:?}}}}}"#, vec![0; 12]));
    let (m, outs) = run_checked(TWO_IVS, &["indvar_simplify"], &inp);
    assert_eq!(stat(&outs[0], "ivs_replaced"), "1");
    assert_eq!(stat(&outs[0], "exit_uses_rewritten"), "2");
    use Opcode::*;
    assert_eq!(block_ops(&m, "head"), [Phi, Mul, Add, Lt, CondBr]);
    assert_eq!(block_ops(&m, "latch"), [Add, Br], "the increment of %j is gone");
    let printed = xir::text::print_module(&m);
    assert!(printed.contains("buffer.write %out, u32 10, u32 10"), "{printed}");
    assert!(printed.contains("buffer.write %out, u32 11, u32 35"), "{printed}");
}

/// A symbolic trip count: the exit value is `select(s < n, n - s, 0) + s`
/// shaped, and agrees with the loop for bounds below, at and above the start.
const SYMBOLIC: &str = r#"
kernel @k(%out: buffer<u32>, %s: u32, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %i = phi [%s, ^entry], [%i1, ^latch] : u32
  %c = lt %i, %n : bool
  cond_br %c, true ^latch, false ^exit
^latch:
  %i1 = add %i, u32 1 : u32
  br target ^head
^exit:
  %k = mul %i, u32 2 : u32
  buffer.write %out, u32 0, %k
  return
}
"#;

#[test]
fn indvar_exit_values_with_a_guarded_symbolic_trip_count() {
    for (s, n) in [(3, 9), (9, 3), (4, 4), (0, 0)] {
        let inp = inputs(&format!(r#"{{"dispatch":[1,1,1],"args":{{"out":[0],"s":{s},"n":{n}}}}}"#));
        let (m, outs) = run_checked(SYMBOLIC, &["indvar_simplify", "dce"], &inp);
        assert_eq!(stat(&outs[0], "exit_uses_rewritten"), "1");
        assert_eq!(count(&m, Opcode::Select), 1);
        // The loop no longer feeds anything: dce leaves only its control.
        assert_eq!(block_ops(&m, "head"), [Opcode::Phi, Opcode::Lt, Opcode::CondBr]);
    }
}

#[test]
fn indvar_keeps_values_without_a_trip_count() {
    // Two exits: no trip count, so the exit use of %i stays.
    let src = r#"
kernel @k(%out: buffer<u32>, %s: u32, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %i = phi [%s, ^entry], [%i1, ^more] : u32
  %c = lt %i, %n : bool
  cond_br %c, true ^latch, false ^exit
^latch:
  %stop = eq %i, u32 7 : bool
  cond_br %stop, true ^exit, false ^more
^more:
  %i1 = add %i, u32 1 : u32
  br target ^head
^exit:
  %k = mul %i, u32 2 : u32
  buffer.write %out, u32 0, %k
  return
}
"#;
    let inp = inputs(r#"{"dispatch":[1,1,1],"args":{"out":[0],"s":0,"n":20}}"#);
    let (m, outs) = run_checked(src, &["indvar_simplify"], &inp);
    assert_eq!(stat(&outs[0], "exit_uses_rewritten"), "0");
    assert!(!outs[0].changed);
    assert_eq!(xir::text::print_module(&m), xir::text::print_module(&parse(src)));
}

/// Check that a recurrence of another type than the counter keeps its exit
/// use when the trip count is symbolic (the count is a `u32` value), and
/// gets a constant when the count is constant.
#[test]
fn indvar_exit_values_across_types() {
    let src = r#"
kernel @k(%out: buffer<i32>, %n: u32) block_size(1, 1, 1) {
^entry:
  br target ^head
^head:
  %i = phi [u32 0, ^entry], [%i1, ^latch] : u32
  %v = phi [i32 -3, ^entry], [%v1, ^latch] : i32
  %c = lt %i, BOUND : bool
  cond_br %c, true ^latch, false ^exit
^latch:
  %i1 = add %i, u32 1 : u32
  %v1 = add %v, i32 -2 : i32
  br target ^head
^exit:
  buffer.write %out, u32 0, %v
  return
}
"#;
    let inp = inputs(r#"{"dispatch":[1,1,1],"args":{"out":[0],"n":6}}"#);
    let (m, outs) = run_checked(&src.replace("BOUND", "%n"), &["indvar_simplify"], &inp);
    assert_eq!(stat(&outs[0], "exit_uses_rewritten"), "0");
    assert!(xir::text::print_module(&m).contains("buffer.write %out, u32 0, %v\n"));
    let (m, outs) = run_checked(&src.replace("BOUND", "u32 6"), &["indvar_simplify"], &inp);
    assert_eq!(stat(&outs[0], "exit_uses_rewritten"), "1");
    assert!(xir::text::print_module(&m).contains("buffer.write %out, u32 0, i32 -15"));
}

// ---- all three on the corpus --------------------------------------------

fn corpus() -> Vec<(String, String, Inputs)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).expect("corpus").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.extension().and_then(|e| e.to_str()) != Some("xir") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        let inputs = std::fs::read_to_string(dir.join(format!("{name}.inputs.json")))
            .map(|j| Inputs::from_json(&j).expect("inputs parse"))
            .unwrap_or_default();
        out.push((name, text, inputs));
    }
    out
}

#[test]
fn loop_passes_keep_results_on_the_corpus_in_raw_ssa() {
    let mut fired = std::collections::BTreeMap::<&str, usize>::new();
    for (name, text, inp) in corpus() {
        let mut m = parse(&text);
        let before = interp(&m, &inp);
        for p in ["promote_ref_arg", "destructure_cfg", "mem2reg"] {
            run_pass(&mut m, p, None, false);
        }
        for (p, key) in [("loop_rotation", "rotated"), ("licm", "hoisted"), ("indvar_simplify", "exit_uses_rewritten")]
        {
            let out = run_pass(&mut m, p, None, false);
            *fired.entry(p).or_default() += stat(&out, key).parse::<usize>().unwrap();
            let d = xir_spec::spec().dialect("xir.raw").unwrap();
            let diags = xir::dialect::check_module(&m, d);
            assert!(diags.is_empty(), "{p} on {name}:\n{}", xir::diag::render(&diags));
            assert_eq!(interp(&m, &inp), before, "{p} changed the results of {name}");
        }
    }
    eprintln!("corpus: {fired:?}");
    assert!(fired["loop_rotation"] > 0 && fired["licm"] > 0, "the passes fire on the corpus: {fired:?}");
}

/// The differential test (`differential.rs`) runs these passes on random
/// programs; check that it is not vacuous: over a fixed sample of generated
/// programs in raw SSA form, each pass changes some of them (and keeps
/// their results).
#[test]
fn loop_passes_fire_on_generated_programs() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut fired = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..200 {
        let p = xir::testgen::programs::program().new_tree(&mut runner).expect("a program").current();
        let mut m = p.module.clone();
        let k = m.find_function("main").unwrap();
        let before = xir::interp::run_kernel(&m, k, &p.inputs).map_err(|e| e.message);
        for s in ["promote_ref_arg", "destructure_cfg", "mem2reg"] {
            run_pass(&mut m, s, None, false);
        }
        for s in ["loop_rotation", "licm", "indvar_simplify"] {
            if run_pass(&mut m, s, None, false).changed {
                *fired.entry(s).or_default() += 1;
            }
        }
        let after = xir::interp::run_kernel(&m, k, &p.inputs).map_err(|e| e.message);
        assert_eq!(after, before, "{}", xir::text::print_module(&m));
    }
    eprintln!("programs changed: {fired:?}");
    // The generator's loops each have one counter, used only by the exit
    // test: `indvar_simplify` has nothing to do there (it is exercised by
    // `random_affine_loops` below instead).
    for s in ["loop_rotation", "licm"] {
        assert!(fired.get(s).copied().unwrap_or(0) >= 5, "{s} changed too few programs: {fired:?}");
    }
}

/// Parameters of one random counted loop (see `affine_loop`).
#[derive(Clone, Debug)]
struct LoopCase {
    signed: bool,
    /// Step of the counter `%i`.
    step: i64,
    op: &'static str,
    start: i64,
    bound: i64,
    start_is_arg: bool,
    bound_is_arg: bool,
    /// Test `bound <op'> %i` (mirrored) instead of `%i <op> bound`.
    mirrored: bool,
    /// Branch to the exit on true, with the negated comparison.
    exit_on_true: bool,
    /// (start, step, of the other signedness) of further recurrences.
    others: Vec<(i64, i64, bool)>,
}

fn mirror(op: &str) -> &'static str {
    match op {
        "lt" => "gt",
        "gt" => "lt",
        "le" => "ge",
        "ge" => "le",
        "ne" => "ne",
        _ => "eq",
    }
}

fn negate(op: &str) -> &'static str {
    match op {
        "lt" => "ge",
        "ge" => "lt",
        "gt" => "le",
        "le" => "gt",
        "ne" => "eq",
        _ => "ne",
    }
}

fn loop_case() -> impl proptest::strategy::Strategy<Value = LoopCase> {
    use proptest::prelude::*;
    let steps = prop::sample::select(vec![1i64, 2, 3, -1, -2, -3]);
    (
        any::<bool>(),
        steps,
        0usize..3,
        (-20i64..20, -20i64..20),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        prop::collection::vec(
            (-10i64..10, prop::sample::select(vec![-6i64, -4, -3, -2, -1, 1, 2, 3, 4, 6]), any::<bool>()),
            0..3,
        ),
    )
        .prop_map(|(signed, step, k, (a, b), (sa, ba, mirrored, exit_on_true), others)| {
            let ops: &[&str] = match step {
                1 => &["lt", "le", "ne"],
                -1 => &["gt", "ge", "ne"],
                s if s > 0 => &["lt", "le"],
                _ => &["gt", "ge"],
            };
            let op = ops[k % ops.len()];
            // Keep every run finite and free of unintended wrap-around:
            // unsigned values non-negative, a decreasing unsigned counter
            // stopping at least one step above zero, `ne` approached from
            // the right side.
            let (mut start, mut bound) = if signed { (a, b) } else { (a.abs(), b.abs()) };
            if !signed && step < 0 {
                bound = bound.max(step.abs());
            }
            if op == "ne" && (step > 0) == (start > bound) {
                std::mem::swap(&mut start, &mut bound);
            }
            LoopCase {
                signed,
                step,
                op,
                start,
                bound,
                start_is_arg: sa,
                bound_is_arg: ba,
                mirrored,
                exit_on_true,
                others,
            }
        })
}

/// A raw-SSA loop: counter `%i`, further recurrences `%v<k>`, a derived
/// value and a non-affine accumulator, all written to `%out` after it.
fn affine_loop(c: &LoopCase) -> (String, Inputs) {
    let t = if c.signed { "i32" } else { "u32" };
    // Unsigned literals are written as their 32-bit two's complement.
    let lit = |v: i64| if c.signed { format!("{t} {v}") } else { format!("{t} {}", v as i32 as u32) };
    let start = if c.start_is_arg { "%s".to_string() } else { lit(c.start) };
    let bound = if c.bound_is_arg { "%n".to_string() } else { lit(c.bound) };
    let mut head = format!("  %i = phi [{start}, ^entry], [%i1, ^latch] : {t}\n");
    let mut latch = format!("  %i1 = add %i, {} : {t}\n", lit(c.step));
    let mut exit = String::from("  buffer.write %out, u32 0, %i\n");
    for (k, (s, d, flip)) in c.others.iter().enumerate() {
        // Some recurrences have the other signedness than the counter.
        let (tk, litk) =
            if *flip == c.signed { ("u32", format!("u32 {}", *s as i32 as u32)) } else { ("i32", format!("i32 {s}")) };
        let stepk = if tk == "u32" { format!("u32 {}", *d as i32 as u32) } else { format!("i32 {d}") };
        head += &format!("  %v{k} = phi [{litk}, ^entry], [%v{k}n, ^latch] : {tk}\n");
        latch += &format!("  %v{k}n = add %v{k}, {stepk} : {tk}\n");
        exit += &format!("  %w{k} = cast.bitwise %v{k} : {t}\n  buffer.write %out, u32 {}, %w{k}\n", k + 3);
    }
    head += &format!("  %acc = phi [{}, ^entry], [%acc1, ^latch] : {t}\n", lit(1));
    let (mut op, (mut l, mut r)) = (c.op, ("%i".to_string(), bound.clone()));
    if c.mirrored {
        op = mirror(op);
        std::mem::swap(&mut l, &mut r);
    }
    let branch = if c.exit_on_true {
        op = negate(op);
        "true ^exit, false ^body"
    } else {
        "true ^body, false ^exit"
    };
    head += &format!("  %c = {op} {l}, {r} : bool\n  cond_br %c, {branch}\n");
    let src = format!(
        "kernel @k(%out: buffer<{t}>, %s: {t}, %n: {t}) block_size(1, 1, 1) {{\n^entry:\n  br target ^head\n\
         ^head:\n{head}^body:\n  %d = mul %i, {five} : {t}\n  %e = add %d, %s : {t}\n  %x = bit_xor %acc, %e : {t}\n  \
         %acc1 = mul %x, {three} : {t}\n  br target ^latch\n^latch:\n{latch}  br target ^head\n\
         ^exit:\n{exit}  buffer.write %out, u32 1, %acc\n  %q = mul %i, {seven} : {t}\n  buffer.write %out, u32 2, %q\n  return\n}}\n",
        five = lit(5),
        three = lit(3),
        seven = lit(7),
    );
    let json = format!(r#"{{"dispatch":[1,1,1],"args":{{"out":{:?},"s":{},"n":{}}}}}"#, vec![0; 8], c.start, c.bound);
    (src, inputs(&json))
}

/// Property: on random counted loops (counter direction, comparison,
/// orientation, constant or symbolic bounds, signedness, further
/// recurrences), `indvar_simplify` alone, after rotation, and with `licm`
/// and `dce`, keeps every result; over the run it rewrites many loops.
#[test]
fn random_affine_loops() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;
    let replaced = Cell::new(0usize);
    let exits = Cell::new(0usize);
    let cases = std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&loop_case(), |c| {
            let (src, inp) = affine_loop(&c);
            let base = parse(&src);
            let before = interp(&base, &inp);
            assert!(before.is_ok(), "fixture runs: {before:?}\n{src}");
            let legalized = [
                "reg2mem",
                "restructure_cfg",
                "canonicalize_one_shot_loops",
                "clear_inactive_block_payloads",
                "mem2reg",
                "audit_reg2mem_spills",
                "fix_self_referential",
                "licm",
                "indvar_simplify",
            ];
            for steps in [
                &["indvar_simplify"][..],
                &["loop_rotation", "indvar_simplify"],
                &["loop_rotation", "licm", "indvar_simplify", "dce"],
                &legalized,
            ] {
                let mut m = base.clone();
                for s in steps {
                    let out = run_pass(&mut m, s, None, false);
                    if *s == "indvar_simplify" {
                        replaced.set(replaced.get() + stat(&out, "ivs_replaced").parse::<usize>().unwrap());
                        exits.set(exits.get() + stat(&out, "exit_uses_rewritten").parse::<usize>().unwrap());
                    }
                }
                if steps.len() == legalized.len() {
                    // On structured SSA the passes keep the audited dialect.
                    let d = xir_spec::spec().dialect("xir.restructured.audited").unwrap();
                    let diags = xir::dialect::check_module(&m, d);
                    if !diags.is_empty() {
                        return Err(proptest::test_runner::TestCaseError::fail(format!(
                            "not audited after {steps:?}:\n{}\n{}",
                            xir::diag::render(&diags),
                            xir::text::print_module(&m)
                        )));
                    }
                }
                let after = interp(&m, &inp);
                if after != before {
                    return Err(proptest::test_runner::TestCaseError::fail(format!(
                        "{steps:?} changed results: {before:?} -> {after:?}\n{src}\n{}",
                        xir::text::print_module(&m)
                    )));
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!("ivs replaced: {}, exit uses rewritten: {}", replaced.get(), exits.get());
    assert!(replaced.get() >= cases as usize / 4 && exits.get() >= cases as usize, "too few rewrites");
}

/// Where the passes go in a real pipeline: `loop_rotation` (with `licm`)
/// in the raw stretch of the SPIR-V legalization, `licm` and
/// `indvar_simplify` again on the legalized SSA. The pipeline loads (every
/// dialect transition checks) and, on the corpus, keeps every result with
/// verification after each step.
#[test]
fn loop_passes_inside_the_legalization_keep_results_on_the_corpus() {
    use xir::pipeline::{Loader, PassManager, RunOptions};
    let text = r#"Pipeline(
        name: "legalize-loops",
        input: "xir.structured",
        output: "xir.restructured.audited",
        steps: [
            Pass("promote_ref_arg"),
            Pass("destructure_cfg"),
            Pass("loop_rotation"),
            Pass("licm"),
            Pass("reg2mem"),
            Pass("restructure_cfg"),
            Pass("canonicalize_one_shot_loops"),
            Pass("clear_inactive_block_payloads"),
            Pass("mem2reg"),
            Pass("audit_reg2mem_spills"),
            Pass("fix_self_referential"),
            Pass("licm"),
            Pass("indvar_simplify"),
            Pass("dce"),
        ],
    )"#;
    let reg = registry();
    let p = Loader::new(&reg).load_text("legalize-loops.ron".into(), None, text).unwrap_or_else(|e| panic!("{e}"));
    let mut fired = std::collections::BTreeMap::<String, usize>::new();
    for (name, src, inp) in corpus() {
        let mut m = parse(&src);
        let before = interp(&m, &inp);
        let opts = RunOptions { verify_each: true, time_passes: true, ..RunOptions::default() };
        let mut log = Vec::new();
        let report = PassManager::new(&p, opts).run(&mut m, &mut log).unwrap_or_else(|e| panic!("{name}: {e}"));
        let d = xir_spec::spec().dialect("xir.restructured.audited").unwrap();
        let diags = xir::dialect::check_module(&m, d);
        assert!(diags.is_empty(), "{name}:\n{}", xir::diag::render(&diags));
        assert_eq!(interp(&m, &inp), before, "{name}");
        for row in &report.timings {
            for (k, v) in &row.stats {
                if let Ok(n) = v.parse::<usize>() {
                    *fired.entry(format!("{}.{k}", row.name)).or_default() += n;
                }
            }
        }
    }
    eprintln!("legalization with loop passes, corpus totals: {fired:?}");
    assert!(fired["loop_rotation.rotated"] > 0, "{fired:?}");
    assert!(fired["licm.hoisted"] > 0, "{fired:?}");
}

/// Instructions the longest-running thread executes: the smallest
/// interpreter step limit under which the kernel still completes.
fn longest_thread_steps(m: &Module, inp: &Inputs) -> u64 {
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let ok = |steps: u64| {
        let opts = xir::interp::Options { max_steps: steps, ..xir::interp::Options::default() };
        xir::interp::run_kernel_with(m, k, inp, &opts).is_ok()
    };
    let (mut lo, mut hi) = (0u64, 10_000_000u64);
    assert!(ok(hi), "kernel completes");
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Check that hoisting pays off at run time: on the legalized corpus, the
/// longest thread executes fewer instructions in total after `licm` (each
/// kernel is listed with its counts before and after).
#[test]
fn licm_reduces_executed_instructions_on_the_corpus() {
    let (mut before_total, mut after_total) = (0, 0);
    let chain = [
        "promote_ref_arg",
        "destructure_cfg",
        "reg2mem",
        "restructure_cfg",
        "canonicalize_one_shot_loops",
        "clear_inactive_block_payloads",
        "mem2reg",
        "audit_reg2mem_spills",
        "fix_self_referential",
    ];
    for (name, src, inp) in corpus() {
        let mut m = parse(&src);
        for p in chain {
            run_pass(&mut m, p, None, false);
        }
        let before = longest_thread_steps(&m, &inp);
        let expected = interp(&m, &inp);
        let out = run_pass(&mut m, "licm", None, false);
        assert_eq!(interp(&m, &inp), expected, "{name}");
        let after = longest_thread_steps(&m, &inp);
        eprintln!("{name:<22} {before:>8} {after:>8}  hoisted {}", stat(&out, "hoisted"));
        before_total += before;
        after_total += after;
    }
    eprintln!("total {before_total} -> {after_total}");
    assert!(after_total < before_total, "{before_total} -> {after_total}");
}
