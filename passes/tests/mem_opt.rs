//! Tests of the memory optimizations (`sroa`, `local_load_elimination`,
//! `local_store_forward`, `dead_store_elimination`, `trace_gep`,
//! `transpose_gep`) on XIR text: exact printed results or exact counts, and
//! interpreter equality before and after. Each case opens with what it
//! checks. The random aggregate-slot property lives in `mem_opt_random.rs`.

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;
use xir::{Module, Opcode};

fn count(m: &Module, op: Opcode) -> usize {
    m.functions.iter().map(|f| f.all_insts().filter(|&(_, i)| f.inst(i).opcode == op).count()).sum()
}

/// Run `pass` on `src` (options `opts`), check the interpreter agrees
/// before and after on `inp`, and return the module and the pass outcome.
fn run_checked(src: &str, pass: &str, opts: Option<&str>, inp: &Inputs) -> (Module, xir::pass::PassOutcome) {
    let mut m = parse(src);
    let before = interp(&m, inp);
    assert!(before.is_ok(), "input runs: {before:?}");
    let out = run_pass(&mut m, pass, opts, false);
    assert_eq!(interp(&m, inp), before, "{pass} changed the results:\n{}", xir::text::print_module(&m));
    (m, out)
}

// ---- local_load_elimination ------------------------------------------------

const LLE_IN: &str = r#"callable @bump(%r: ref u32) -> void {
^entry:
  %v = load %r : u32
  %w = add %v, u32 1 : u32
  store %r, %w
  return
}

kernel @k(%in: buffer<u32>, %in2: buffer<u32>, %out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %x = alloca : u32
  %y = alloca : u32
  store %x, u32 5
  %a = load %x : u32
  store %y, u32 7
  %b = load %x : u32
  call @bump, %x
  %c = load %x : u32
  %d = load %x : u32
  %r0 = buffer.read %in, u32 0 : u32
  %r1 = buffer.read %in, u32 0 : u32
  buffer.write %in2, u32 0, u32 9
  %r2 = buffer.read %in, u32 0 : u32
  %s1 = add %a, %b : u32
  %s2 = add %c, %d : u32
  %s3 = add %r0, %r1 : u32
  %s4 = add %s1, %s2 : u32
  %s5 = add %s3, %r2 : u32
  %s6 = add %s4, %s5 : u32
  %t = extract $dispatch_id, u32 0 : u32
  buffer.write %out, %t, %s6
  return
}
"#;

const LLE_OUT: &str = r#"callable @bump(%r: ref u32) -> void {
^entry:
  %v = load %r : u32
  %w = add %v, u32 1 : u32
  store %r, %w
  return
}

kernel @k(%in: buffer<u32>, %in2: buffer<u32>, %out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %x = alloca : u32
  %y = alloca : u32
  store %x, u32 5
  store %y, u32 7
  call @bump, %x
  %c = load %x : u32
  %r0 = buffer.read %in, u32 0 : u32
  buffer.write %in2, u32 0, u32 9
  %r2 = buffer.read %in, u32 0 : u32
  %s1 = add u32 5, u32 5 : u32
  %s2 = add %c, %c : u32
  %s3 = add %r0, %r0 : u32
  %s4 = add %s1, %s2 : u32
  %s5 = add %s3, %r2 : u32
  %s6 = add %s4, %s5 : u32
  %t = extract $dispatch_id, u32 0 : u32
  buffer.write %out, %t, %s6
  return
}
"#;

#[test]
fn lle_reuses_reads_and_writes_until_a_clobber() {
    // Check that loads after a store or a load of the same slot reuse the
    // value, that a store to another slot does not clobber, that a call
    // passed the slot does, and that a write to another buffer argument
    // (possibly the same resource) clobbers the buffer read.
    let inp = inputs(r#"{"args": {"in": [3], "in2": [0], "out": [0, 0]}}"#);
    let out = check_exact(LLE_IN, "local_load_elimination", None, false, LLE_OUT, &inp);
    assert_eq!(stat(&out, "removed_loads"), "4");
}

const SHARED: &str = r#"kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %sh = alloca.shared : array<u32, 4>
  %mine = gep %sh, %t : u32
  store %mine, %t
  %early = load %mine : u32
  sync_block
  %nt = add %t, u32 1 : u32
  %n = bit_and %nt, u32 3 : u32
  %other = gep %sh, %n : u32
  %o = load %other : u32
  %again = load %mine : u32
  %s = add %early, %o : u32
  %s2 = add %s, %again : u32
  buffer.write %out, %t, %s2
  return
}
"#;

#[test]
fn lle_treats_shared_memory_across_a_barrier_conservatively() {
    // Check that the load right after the store is forwarded, but the one
    // after `sync_block` is not (other threads may have written the slot).
    let inp = inputs(r#"{"args": {"out": [0, 0, 0, 0]}}"#);
    let (m, out) = run_checked(SHARED, "local_load_elimination", None, &inp);
    assert_eq!(stat(&out, "removed_loads"), "1");
    assert_eq!(count(&m, Opcode::Load), 2, "{}", xir::text::print_module(&m));
    let text = xir::text::print_module(&m);
    assert!(text.contains("%again = load %mine"), "{text}");
    assert!(text.contains("%s = add %t, %o"), "{text}");
}

// ---- local_store_forward ---------------------------------------------------

const LSF_IN: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{f32, vec<f32, 2>}
  %x = buffer.read %in, u32 0 : f32
  %v = aggregate %x, %x : vec<f32, 2>
  %whole = aggregate %x, %v : struct<align 4>{f32, vec<f32, 2>}
  store %s, %whole
  %p = gep %s, u32 1, u32 1 : f32
  %a = load %p : f32
  %b = load %p : f32
  buffer.write %out, u32 0, %a
  buffer.write %out, u32 1, %b
  %r = buffer.read %out, u32 1 : f32
  buffer.write %out, u32 2, %r
  return
}
"#;

const LSF_OUT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{f32, vec<f32, 2>}
  %x = buffer.read %in, u32 0 : f32
  %v = aggregate %x, %x : vec<f32, 2>
  %whole = aggregate %x, %v : struct<align 4>{f32, vec<f32, 2>}
  store %s, %whole
  %p = gep %s, u32 1, u32 1 : f32
  %0 = extract %whole, u32 1, u32 1 : f32
  %1 = extract %whole, u32 1, u32 1 : f32
  buffer.write %out, u32 0, %0
  buffer.write %out, u32 1, %1
  buffer.write %out, u32 2, %1
  return
}
"#;

#[test]
fn lsf_forwards_stored_values_into_members() {
    // Check that a load of a member after a store of the whole struct
    // becomes an extract of the stored value (each load: store forwarding
    // does not reuse loads), and a buffer read of an element just written
    // takes the written value.
    let inp = inputs(r#"{"args": {"in": [1.5], "out": [0.0, 0.0, 0.0]}}"#);
    let out = check_exact(LSF_IN, "local_store_forward", None, false, LSF_OUT, &inp);
    assert_eq!(stat(&out, "forwarded_loads"), "3");
    assert_eq!(stat(&out, "extracts"), "2");
}

// ---- dead_store_elimination ------------------------------------------------

const DSE_IN: &str = r#"kernel @k(%out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  %junk = alloca : array<u32, 2>
  %a = alloca : array<u32, 2>
  store %x, u32 1
  store %x, u32 2
  %v = load %x : u32
  store %x, u32 3
  %j0 = gep %junk, u32 0 : u32
  store %j0, %v
  %j1 = gep %junk, u32 1 : u32
  store %j1, u32 4
  %a1 = gep %a, u32 1 : u32
  store %a1, u32 6
  store %a, array<u32, 2> [7, 8]
  %w = load %a1 : u32
  %y = load %x : u32
  %s = add %v, %w : u32
  %s2 = add %s, %y : u32
  buffer.write %out, %t, u32 0
  buffer.write %out, %t, %s2
  return
}
"#;

const DSE_OUT: &str = r#"kernel @k(%out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  %a = alloca : array<u32, 2>
  store %x, u32 2
  %v = load %x : u32
  store %x, u32 3
  %a1 = gep %a, u32 1 : u32
  store %a, array<u32, 2> [7, 8]
  %w = load %a1 : u32
  %y = load %x : u32
  %s = add %v, %w : u32
  %s2 = add %s, %y : u32
  buffer.write %out, %t, %s2
  return
}
"#;

#[test]
fn dse_removes_overwritten_and_write_only_stores() {
    // Check that a store overwritten before any read goes (also an element
    // store covered by a later whole store, and a buffer element written
    // twice), a store followed by a read stays, and a slot that is only
    // ever written goes with its stores and geps.
    let inp = inputs(r#"{"args": {"out": [0, 0]}}"#);
    let out = check_exact(DSE_IN, "dead_store_elimination", None, false, DSE_OUT, &inp);
    assert_eq!(stat(&out, "overwritten_stores"), "3");
    assert_eq!(stat(&out, "write_only_slots"), "1");
    assert_eq!(stat(&out, "write_only_stores"), "2");
}

const DSE_SHARED: &str = r#"kernel @k(%out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %t = extract $thread_id, u32 0 : u32
  %sh = alloca.shared : array<u32, 2>
  %mine = gep %sh, %t : u32
  store %mine, u32 1
  sync_block
  %n = bit_xor %t, u32 1 : u32
  %other = gep %sh, %n : u32
  %o = load %other : u32
  sync_block
  store %mine, u32 2
  %r = atomic.fetch_add %out, %t, u32 0 : u32
  store %mine, u32 3
  %f = load %mine : u32
  %s = add %o, %f : u32
  buffer.write %out, %t, %s
  return
}
"#;

#[test]
fn dse_keeps_shared_stores_other_threads_may_read() {
    // Check that a shared store followed by a barrier survives (another
    // thread reads it), and so does one followed by an atomic.
    let inp = inputs(r#"{"args": {"out": [0, 0]}}"#);
    let (m, out) = run_checked(DSE_SHARED, "dead_store_elimination", None, &inp);
    assert!(!out.changed, "{}", xir::text::print_module(&m));
    assert_eq!(count(&m, Opcode::Store), 3);
    // Without the atomic, the middle store is dead.
    let (m, out) = run_checked(
        &DSE_SHARED.replace("  %r = atomic.fetch_add %out, %t, u32 0 : u32\n", ""),
        "dead_store_elimination",
        None,
        &inp,
    );
    assert_eq!(stat(&out, "overwritten_stores"), "1");
    assert_eq!(count(&m, Opcode::Store), 2);
}

// ---- trace_gep / transpose_gep --------------------------------------------

const GEPS_IN: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<struct<align 4>{u32, vec<u32, 2>}, 3>
  %i = buffer.read %in, u32 0 : u32
  %e = gep %a, %i : struct<align 4>{u32, vec<u32, 2>}
  %m = gep %e, u32 1 : vec<u32, 2>
  %l = gep %m, u32 0 : u32
  %h = gep %e, u32 0 : u32
  store %l, u32 11
  store %h, u32 22
  %x = load %l : u32
  %y = load %h : u32
  %s = add %x, %y : u32
  buffer.write %out, u32 0, %s
  return
}
"#;

const TRACED: &str = r#"kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<struct<align 4>{u32, vec<u32, 2>}, 3>
  %i = buffer.read %in, u32 0 : u32
  %l = gep %a, %i, u32 1, u32 0 : u32
  %h = gep %a, %i, u32 0 : u32
  store %l, u32 11
  store %h, u32 22
  %x = load %l : u32
  %y = load %h : u32
  %s = add %x, %y : u32
  buffer.write %out, u32 0, %s
  return
}
"#;

#[test]
fn trace_gep_folds_chains_to_the_root() {
    // Check that every gep addresses the root slot directly and the inner
    // geps of the chain are gone.
    let inp = inputs(r#"{"args": {"in": [2], "out": [0]}}"#);
    let out = check_exact(GEPS_IN, "trace_gep", None, false, TRACED, &inp);
    assert_eq!(stat(&out, "traced_geps"), "3", "%m, then %l through the traced %m, and %h");
    assert_eq!(stat(&out, "removed_geps"), "2");
}

#[test]
fn transpose_gep_makes_the_slot_promotable() {
    // Check that element loads and stores become whole-slot accesses with
    // extract / insert, no gep remains, and mem2reg then promotes the slot.
    let inp = inputs(r#"{"args": {"in": [2], "out": [0]}}"#);
    let (mut m, out) = run_checked(GEPS_IN, "transpose_gep", None, &inp);
    assert_eq!(stat(&out, "transposed_loads"), "2");
    assert_eq!(stat(&out, "transposed_stores"), "2");
    assert_eq!(stat(&out, "zero_initialized"), "1");
    assert_eq!(count(&m, Opcode::Gep), 0);
    assert_eq!(count(&m, Opcode::Insert), 2);
    assert_eq!(count(&m, Opcode::Extract), 2);
    let before = interp(&m, &inp);
    run_pass(&mut m, "destructure_cfg", None, false);
    run_pass(&mut m, "mem2reg", None, false);
    assert_eq!(count(&m, Opcode::Alloca), 0, "{}", xir::text::print_module(&m));
    assert_eq!(interp(&m, &inp), before);
}

#[test]
fn transpose_gep_can_leave_dynamically_indexed_slots() {
    // Check that with `dynamic_indices: false` the slot indexed by `%i`
    // stays in memory (its chains are still traced).
    let inp = inputs(r#"{"args": {"in": [2], "out": [0]}}"#);
    let (m, out) = run_checked(GEPS_IN, "transpose_gep", Some("(dynamic_indices: false)"), &inp);
    assert_eq!(stat(&out, "transposed_loads"), "0");
    assert_eq!(stat(&out, "traced_geps"), "3");
    assert_eq!(count(&m, Opcode::Gep), 2);
    assert_eq!(count(&m, Opcode::Insert), 0);
    // A constant path is transposed.
    let constant = GEPS_IN.replace("gep %a, %i :", "gep %a, u32 2 :");
    let (m, out) = run_checked(&constant, "transpose_gep", Some("(dynamic_indices: false)"), &inp);
    assert_eq!(stat(&out, "transposed_loads"), "2");
    assert_eq!(count(&m, Opcode::Gep), 0);
}

#[test]
fn transpose_gep_leaves_shared_and_escaping_slots() {
    // Check that a shared slot (a whole-slot read-modify-write would race)
    // and a slot passed to a call are not transposed.
    let src = r#"callable @use(%r: ref array<u32, 2>) -> void {
^entry:
  return
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %sh = alloca.shared : array<u32, 2>
  %p = gep %sh, u32 0 : u32
  store %p, u32 1
  %a = alloca : array<u32, 2>
  call @use, %a
  %q = gep %a, u32 1 : u32
  store %q, u32 2
  %x = load %p : u32
  %y = load %q : u32
  %s = add %x, %y : u32
  buffer.write %out, u32 0, %s
  return
}
"#;
    let inp = inputs(r#"{"args": {"out": [0]}}"#);
    let (m, out) = run_checked(src, "transpose_gep", None, &inp);
    assert!(!out.changed);
    assert_eq!(count(&m, Opcode::Gep), 2);
}

// ---- sroa -----------------------------------------------------------------

const SROA_IN: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  // spilled
  %s = alloca : struct<align 4>{f32, array<f32, 2>, vec<f32, 2>} !spill(phi)
  %d = alloca : array<f32, 2>
  %x = buffer.read %in, u32 0 : f32
  %f0 = gep %s, u32 0 : f32
  %f1 = gep %s, u32 1, u32 1 : f32
  %v = gep %s, u32 2 : vec<f32, 2>
  %vy = gep %v, u32 1 : f32
  store %f0, %x
  store %f1, f32 2.0
  store %vy, f32 3.0
  %i = cast.bitwise %x : u32
  %k = bit_and %i, u32 1 : u32
  %dk = gep %d, %k : f32
  store %dk, f32 4.0
  %a = load %f0 : f32
  %b = load %f1 : f32
  %c = load %vy : f32
  %e = load %dk : f32
  %r1 = add %a, %b : f32
  %r2 = add %c, %e : f32
  %r = add %r1, %r2 : f32
  buffer.write %out, u32 0, %r
  return
}
"#;

const SROA_OUT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  // spilled
  %s.0 = alloca : f32 !spill(phi)
  // spilled
  %s.1.1 = alloca : f32 !spill(phi)
  // spilled
  %s.2 = alloca : vec<f32, 2> !spill(phi)
  %d = alloca : array<f32, 2>
  %x = buffer.read %in, u32 0 : f32
  %vy = gep %s.2, u32 1 : f32
  store %s.0, %x
  store %s.1.1, f32 2.0
  store %vy, f32 3.0
  %i = cast.bitwise %x : u32
  %k = bit_and %i, u32 1 : u32
  %dk = gep %d, %k : f32
  store %dk, f32 4.0
  %a = load %s.0 : f32
  %b = load %s.1.1 : f32
  %c = load %vy : f32
  %e = load %dk : f32
  %r1 = add %a, %b : f32
  %r2 = add %c, %e : f32
  %r = add %r1, %r2 : f32
  buffer.write %out, u32 0, %r
  return
}
"#;

#[test]
fn sroa_splits_constant_indexed_aggregates() {
    // Check that the struct splits down to the members used (nested array
    // included, spill provenance and comments kept), the vector member stays
    // whole by default, and the dynamically indexed array stays whole.
    let inp = inputs(r#"{"args": {"in": [1.0], "out": [0.0]}}"#);
    let out = check_exact(SROA_IN, "sroa", None, false, SROA_OUT, &inp);
    assert_eq!(stat(&out, "split_slots"), "2");
    assert_eq!(stat(&out, "member_slots"), "4");
}

#[test]
fn sroa_decomposes_vectors_on_request() {
    // Check that `decompose_vectors` splits the vector member into lanes.
    let inp = inputs(r#"{"args": {"in": [1.0], "out": [0.0]}}"#);
    let (m, out) = run_checked(SROA_IN, "sroa", Some("(decompose_vectors: true)"), &inp);
    assert_eq!(stat(&out, "split_slots"), "3");
    assert_eq!(count(&m, Opcode::Gep), 1, "only the dynamic index remains:\n{}", xir::text::print_module(&m));
    assert!(xir::text::print_module(&m).contains("%s.2.1 = alloca : f32 !spill(phi)"));
}

const MATRIX: &str = r#"kernel @k(%out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %m = alloca : mat<f32, 2>
  store %m, mat<f32, 2> [[1.0, 2.0], [3.0, 4.0]]
  %c1 = gep %m, u32 1 : vec<f32, 2>
  %x = gep %c1, u32 0 : f32
  store %x, f32 9.0
  %w = load %m : mat<f32, 2>
  %col = extract %w, u32 1 : vec<f32, 2>
  %v = extract %col, u32 0 : f32
  %u = load %x : f32
  %s = add %v, %u : f32
  buffer.write %out, u32 0, %s
  return
}
"#;

#[test]
fn sroa_aggressive_splits_whole_accesses_and_matrices() {
    // Check that a matrix slot stays whole without the options, and with
    // `decompose_matrices` + `aggressive` its whole store and load become
    // per-column accesses (extract / aggregate).
    let inp = inputs(r#"{"args": {"out": [0.0]}}"#);
    let (m, out) = run_checked(MATRIX, "sroa", None, &inp);
    assert!(!out.changed);
    assert_eq!(count(&m, Opcode::Alloca), 1);
    let (m, out) = run_checked(MATRIX, "sroa", Some("(decompose_matrices: true)"), &inp);
    assert!(!out.changed, "whole accesses need `aggressive`");
    drop(m);
    let (m, out) = run_checked(MATRIX, "sroa", Some("(decompose_matrices: true, aggressive: true)"), &inp);
    assert_eq!(stat(&out, "split_slots"), "1");
    assert_eq!(count(&m, Opcode::Alloca), 2, "{}", xir::text::print_module(&m));
    assert_eq!(count(&m, Opcode::Aggregate), 1);
    assert_eq!(count(&m, Opcode::Gep), 1, "the column gep is gone, the lane gep stays");
}

#[test]
fn sroa_rejects_unknown_options() {
    let reg = registry();
    let decl = reg.get("sroa").unwrap();
    let bad: ron::Value = ron::from_str("(decompose_vector: true)").unwrap();
    let err = (decl.create)(Some(&bad)).err().expect("unknown option rejected");
    assert!(err.contains("decompose_vector"), "{err}");
}

/// The passes together on the corpus: results never change, and the
/// forwarding / elimination passes remove memory traffic (printed per
/// kernel with `--nocapture`: instructions, loads, stores before -> after).
#[test]
fn mem_opt_passes_keep_corpus_results() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(dir).expect("corpus dir").map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut checked = 0;
    let (mut before_total, mut after_total) = ([0usize; 3], [0usize; 3]);
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
    assert!(after_total[1] < before_total[1], "no read of the corpus was eliminated");
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
