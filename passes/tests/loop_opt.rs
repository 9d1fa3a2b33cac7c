//! The loop passes (`licm`, `loop_rotation`, `indvar_simplify`) on XIR text
//! fixtures: exact properties of the output (what moved where, which Phis
//! went, which constants appeared) and interpreter equality before and
//! after; the dialect contract (rotation is refused in a structured
//! stretch at load time); and the corpus through raw SSA with all three.

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;
use xir::{Module, Opcode};

/// Opcodes of the block labelled `label` in the first function.
fn block_ops(m: &Module, label: &str) -> Vec<Opcode> {
    let f = &m.functions[0];
    let b = f.blocks().iter().copied().find(|&b| f.block_md(b).name.as_deref() == Some(label)).expect("block");
    f.block(b).insts().iter().map(|&i| f.inst(i).opcode).collect()
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
    let hoisted_div = f.block(entry).insts().iter().find(|&&i| f.inst(i).opcode == Div).copied().unwrap();
    assert_eq!(f.inst_md(hoisted_div).name.as_deref(), Some("h"));
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

/// Check that an operation reading a value that may be undefined (a Phi
/// with an `undef` incoming) is not speculated out of a conditional block,
/// while the same operation on a Phi of defined values is.
const LICM_UNDEF: &str = r#"
kernel @k(%out: buffer<u32>, %n: u32, %flag: u32) block_size(1, 1, 1) {
^entry:
  %f = ne %flag, u32 0 : bool
  cond_br %f, true ^a, false ^b
^a:
  br target ^m
^b:
  br target ^m
^m:
  %u = phi [%n, ^a], [undef u32, ^b] : u32
  %v = phi [%n, ^a], [u32 3, ^b] : u32
  br target ^head
^head:
  %i = phi [u32 0, ^m], [%i1, ^latch] : u32
  %c = lt %i, u32 4 : bool
  cond_br %c, true ^body, false ^exit
^body:
  cond_br %f, true ^use, false ^latch
^use:
  %x = add %u, u32 1 : u32
  %y = add %v, u32 1 : u32
  %z = add %x, %y : u32
  buffer.write %out, %i, %z
  br target ^latch
^latch:
  %i1 = add %i, u32 1 : u32
  br target ^head
^exit:
  return
}
"#;

#[test]
fn licm_does_not_speculate_uses_of_undefined_values() {
    for flag in [0, 1] {
        let inp = inputs(&format!(r#"{{"dispatch":[1,1,1],"args":{{"out":[0,0,0,0],"n":7,"flag":{flag}}}}}"#));
        let (m, outs) = run_checked(LICM_UNDEF, &["licm"], &inp);
        assert_eq!(stat(&outs[0], "hoisted"), "1");
        use Opcode::*;
        assert_eq!(block_ops(&m, "m"), [Phi, Phi, Add, Br], "only %y moves");
        assert_eq!(block_ops(&m, "use"), [Add, Add, BufferWrite, Br]);
    }
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
        let head = f.blocks().iter().copied().find(|&b| f.block_md(b).name.as_deref() == Some("head")).unwrap();
        for &i in f.block(head).insts() {
            if f.inst(i).opcode == Phi {
                assert_eq!(f.inst(i).operands.len(), 1);
            }
        }
        // The guard duplicates the header: entry -> guard (mul, lt, cond_br).
        let entry = f.body().unwrap();
        let guard = f.successors(entry)[0];
        let ops: Vec<Opcode> = f.block(guard).insts().iter().map(|&i| f.inst(i).opcode).collect();
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

/// Instructions the run executes, all threads together: the smallest
/// interpreter step limit (global to a run) under which the kernel still
/// completes.
fn run_steps(m: &Module, inp: &Inputs) -> u64 {
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let ok = |steps: u64| {
        let opts = xir::interp::Options { max_steps: steps, ..xir::interp::Options::default() };
        xir::interp::run_kernel_with(m, k, inp, &opts).is_ok()
    };
    let (mut lo, mut hi) = (0u64, xir::interp::Options::default().max_steps);
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
/// runs execute fewer instructions in total after `licm` (each
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
        let before = run_steps(&m, &inp);
        let expected = interp(&m, &inp);
        let out = run_pass(&mut m, "licm", None, false);
        assert_eq!(interp(&m, &inp), expected, "{name}");
        let after = run_steps(&m, &inp);
        eprintln!("{name:<22} {before:>8} {after:>8}  hoisted {}", stat(&out, "hoisted"));
        before_total += before;
        after_total += after;
    }
    eprintln!("total {before_total} -> {after_total}");
    assert!(after_total < before_total, "{before_total} -> {after_total}");
}

#[path = "loop_opt/random.rs"]
mod random;
