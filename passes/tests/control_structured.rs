//! The structured-form control passes (`lower_break_continue`,
//! `destructure_cfg`, `early_return_elimination`, `lower_switch`,
//! `canonicalize_one_shot_loops`): each on the whole corpus (verifier,
//! dialect check and interpreter equality) and on focused fixtures.

mod control_support;

use control_support::{check, check_passes, corpus, count_op, parse, run_pass};
use xir::pass::PassDecl;
use xir_passes::control::{
    canonicalize_one_shot_loops, destructure_cfg, early_return_elimination, lower_break_continue, lower_switch,
    restructure,
};

fn over_corpus(passes: &[PassDecl], dialects: &[&str]) {
    for k in corpus() {
        eprintln!("{}", k.name);
        check_passes(&k.src, passes, dialects, &k.kernel, &k.inputs);
    }
}

#[test]
fn lower_break_continue_on_corpus() {
    over_corpus(&[lower_break_continue::decl()], &["xir.structured.lowered"]);
}

#[test]
fn destructure_on_corpus() {
    over_corpus(&[destructure_cfg::decl()], &["xir.raw"]);
}

#[test]
fn early_return_elimination_on_corpus() {
    over_corpus(&[early_return_elimination::decl()], &["xir.structured"]);
}

#[test]
fn lower_switch_on_corpus() {
    over_corpus(&[lower_switch::decl()], &["xir.structured"]);
}

#[test]
fn one_shot_on_corpus() {
    over_corpus(&[canonicalize_one_shot_loops::decl()], &["xir.structured"]);
}

// Check that early returns, then the structured -> raw -> structured round
// trip, compose on every corpus kernel.
#[test]
fn early_return_then_round_trip_on_corpus() {
    over_corpus(
        &[early_return_elimination::decl(), destructure_cfg::decl(), restructure::decl()],
        &["xir.structured", "xir.raw", "xir.restructured"],
    );
}

const BREAKS: &str = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %i = alloca : u32
  store %i, u32 0
  simple_loop body ^body, merge ^exit
^body:
  %v = load %i : u32
  %v1 = add %v, u32 1 : u32
  store %i, %v1
  %big = gt %v1, %t : bool
  if %big, true ^leave, false ^again, merge ^again
^leave:
  break target ^exit
^again:
  continue target ^body
^exit:
  %r = load %i : u32
  buffer.write %out, %t, %r
  return
}
"#;

const OUT8: &str = r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#;

// Check that break and continue become plain branches to their targets.
#[test]
fn break_continue_become_branches() {
    let m = check_passes(BREAKS, &[lower_break_continue::decl()], &["xir.structured.lowered"], "k", OUT8);
    assert_eq!(count_op(&m, "break") + count_op(&m, "continue"), 0);
    let text = xir::text::print_module(&m);
    assert!(text.contains("^leave:\n  br target ^exit"), "{text}");
    assert!(text.contains("^again:\n  br target ^body"), "{text}");
}

// Check that destructure rewrites disconnected role blocks too: the merge of
// an if whose arms both return still holds a structured loop, which must
// become raw.
#[test]
fn destructure_rewrites_disconnected_role_blocks() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 4 : bool
  if %c, true ^a, false ^b, merge ^dead
^a:
  buffer.write %out, %t, u32 1
  return
^b:
  buffer.write %out, %t, u32 2
  return
^dead:
  simple_loop body ^dead_body, merge ^dead_exit
^dead_body:
  break target ^dead_exit
^dead_exit:
  return
}
"#;
    let m = check_passes(src, &[destructure_cfg::decl()], &["xir.raw"], "k", OUT8);
    let text = xir::text::print_module(&m);
    assert!(text.contains("^dead:\n  br target ^dead_body"), "{text}");
    assert!(text.contains("^dead_body:\n  br target ^dead_exit"), "{text}");
    assert_eq!(count_op(&m, "simple_loop") + count_op(&m, "break") + count_op(&m, "if"), 0);
}

// Check that returns inside a branch and inside a nested loop leave one
// final return, with the loop's value preserved.
#[test]
fn early_returns_become_single_exit() {
    let src = r#"
callable @first_at_least(%data: buffer<u32>, %lo: u32) -> u32 {
^entry:
  %i = alloca : u32
  %j = alloca : u32
  %z = eq %lo, u32 0 : bool
  if %z, true ^zero, false ^scan, merge ^scan
^zero:
  return u32 77
^scan:
  store %i, u32 0
  loop prepare ^prep, body ^body, update ^step, merge ^done
^prep:
  %iv = load %i : u32
  %more = lt %iv, u32 4 : bool
  cond_br %more, true ^body, false ^done
^body:
  store %j, u32 0
  loop prepare ^jprep, body ^jbody, update ^jstep, merge ^jdone
^jprep:
  %jv = load %j : u32
  %jmore = lt %jv, u32 2 : bool
  cond_br %jmore, true ^jbody, false ^jdone
^jbody:
  %iv1 = load %i : u32
  %jv1 = load %j : u32
  %row = mul %iv1, u32 2 : u32
  %idx = add %row, %jv1 : u32
  %v = buffer.read %data, %idx : u32
  %hit = ge %v, %lo : bool
  if %hit, true ^found, false ^jnext, merge ^jnext
^found:
  return %idx
^jnext:
  br target ^jstep
^jstep:
  %jn = add %jv1, u32 1 : u32
  store %j, %jn
  br target ^jprep
^jdone:
  br target ^step
^step:
  %iv2 = load %i : u32
  %in = add %iv2, u32 1 : u32
  store %i, %in
  br target ^prep
^done:
  return u32 4294967295
}

kernel @k(%data: buffer<u32>, %out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %lo = mul %t, u32 3 : u32
  %r = call @first_at_least, %data, %lo : u32
  buffer.write %out, %t, %r
  return
}
"#;
    let inputs =
        r#"{"dispatch": [8, 1, 1], "args": {"data": [1, 4, 2, 9, 7, 3, 12, 5], "out": {"fill": 0, "len": 8}}}"#;
    let m = check_passes(src, &[early_return_elimination::decl()], &["xir.structured"], "k", inputs);
    assert_eq!(count_op(&m, "return"), 2, "one per function:\n{}", xir::text::print_module(&m));
    // The rewritten structure is still a valid input of the legalization spine.
    let mut m2 = m.clone();
    run_pass(&mut m2, destructure_cfg::decl()).unwrap();
    run_pass(&mut m2, restructure::decl()).unwrap();
    check(&m2, "xir.restructured");
}

const SWITCH: &str = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  store %x, u32 0
  %s = mod %t, u32 5 : u32
  switch %s, merge ^m, default ^d, case 0 ^a, case 3 ^a, case 1 ^b, case 4 ^m
^a:
  %big = gt %t, u32 2 : bool
  if %big, true ^a_big, false ^a_end, merge ^a_end
^a_big:
  store %x, u32 100
  br target ^a_end
^a_end:
  %v = load %x : u32
  %v1 = add %v, u32 1 : u32
  store %x, %v1
  break target ^m
^b:
  store %x, u32 20
  br target ^m
^d:
  store %x, u32 30
  br target ^m
^m:
  %r = load %x : u32
  buffer.write %out, %t, %r
  return
}
"#;

// Check that a switch with shared literals, a case going straight to the
// merge, a nested if in an arm and a default becomes a chain of ifs.
#[test]
fn switch_becomes_if_chain() {
    let m = check_passes(SWITCH, &[lower_switch::decl()], &["xir.structured"], "k", OUT8);
    assert_eq!(count_op(&m, "switch"), 0);
    assert_eq!(count_op(&m, "if"), 4, "{}", xir::text::print_module(&m));
    // And the chain survives the legalization spine.
    let mut m2 = m.clone();
    run_pass(&mut m2, destructure_cfg::decl()).unwrap();
    run_pass(&mut m2, restructure::decl()).unwrap();
    check(&m2, "xir.restructured");
}

// Check that a switch whose arm leaves for the merge from a nested construct
// is left alone.
#[test]
fn switch_with_nested_break_is_kept() {
    let src = SWITCH
        .replace("^a_big:\n  store %x, u32 100\n  br target ^a_end", "^a_big:\n  store %x, u32 100\n  br target ^m");
    let mut m = parse(&src);
    check(&m, "xir.structured");
    run_pass(&mut m, lower_switch::decl()).unwrap();
    assert_eq!(count_op(&m, "switch"), 1);
}

// Check that loops that never continue become plain regions, and a loop
// that does continue stays.
#[test]
fn one_shot_loops_become_regions() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = alloca : u32
  store %x, u32 5
  simple_loop body ^once, merge ^after_once
^once:
  %v = load %x : u32
  %v1 = mul %v, %t : u32
  store %x, %v1
  break target ^after_once
^after_once:
  loop prepare ^p, body ^b, update ^u, merge ^after_loop
^p:
  %c = lt %t, u32 6 : bool
  cond_br %c, true ^b, false ^after_loop
^b:
  %w = load %x : u32
  %w1 = add %w, u32 1000 : u32
  store %x, %w1
  br target ^after_loop
^u:
  br target ^p
^after_loop:
  %r = load %x : u32
  buffer.write %out, %t, %r
  return
}
"#;
    let m = check_passes(src, &[canonicalize_one_shot_loops::decl()], &["xir.structured"], "k", OUT8);
    assert_eq!(count_op(&m, "loop") + count_op(&m, "simple_loop"), 0, "{}", xir::text::print_module(&m));
    let text = xir::text::print_module(&m);
    assert!(text.contains("if %c, true ^b, false ^after_loop, merge ^after_loop"), "{text}");
    assert!(text.contains("^u:\n  unreachable"), "{text}");
    // A real loop is untouched.
    let mut m = parse(BREAKS);
    run_pass(&mut m, canonicalize_one_shot_loops::decl()).unwrap();
    assert_eq!(count_op(&m, "simple_loop"), 1);
}
