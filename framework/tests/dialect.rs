//! The spec-driven dialect checker: each case is an XIR text fixture, a
//! dialect, and the diagnostics expected (rule name and the instruction's
//! text line), or none. Also `dialect_of` on representative modules.

use xir::dialect::{check_module, dialect_of};
use xir::text::parse_module;
use xir::*;

fn parse(src: &str) -> Module {
    match parse_module(src, "test.xir") {
        Ok(m) => m,
        Err(e) => panic!("fixture does not parse:\n{}", diag::render(&e)),
    }
}

fn dialect(name: &str) -> &'static xir_spec::Dialect {
    xir_spec::spec().dialect(name).unwrap_or_else(|| panic!("no dialect {name}"))
}

/// Check that `src` lies in `dialect`.
#[track_caller]
fn accepts(name: &str, src: &str) {
    let diags = check_module(&parse(src), dialect(name));
    assert!(diags.is_empty(), "expected `{name}` to accept, got:\n{}", diag::render(&diags));
}

/// Check that `src` is rejected by `dialect` with `rule` at text line `line`.
#[track_caller]
fn rejects(name: &str, src: &str, rule: &str, line: u32) {
    let diags = check_module(&parse(src), dialect(name));
    let hit = diags.iter().find(|d| d.rule == rule);
    let Some(d) = hit else { panic!("expected `{rule}`, got:\n{}", diag::render(&diags)) };
    assert_eq!(d.span.map(|s| s.line), Some(line), "wrong line: {d}");
}

const STRUCTURED: &str = "\
kernel @k(%x: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %n = buffer.size %x : u32
  %ok = lt %i, %n : bool
  if %ok, true ^body, false ^done, merge ^done
^body:
  %v = buffer.read %x, %i : f32
  %w = add %v, f32 1.0 : f32
  buffer.write %x, %i, %w
  br target ^done
^done:
  return
}
";

const RAW: &str = "\
callable @count(%n: u32) -> u32 {
^entry:
  br target ^head
^head:
  %i = phi [u32 0, ^entry], [%next, ^body] : u32
  %more = lt %i, %n : bool
  cond_br %more, true ^body, false ^exit
^body:
  %next = add %i, u32 1 : u32
  br target ^head
^exit:
  return %i
}
";

#[test]
fn structured_module_is_structured_not_raw() {
    accepts("xir", STRUCTURED);
    accepts("xir.structured", STRUCTURED);
    // Check that the raw dialect names the structured `if` (line 6).
    rejects("xir.raw", STRUCTURED, "dialect:xir.raw:opcode", 6);
}

#[test]
fn raw_module_is_raw_not_structured() {
    accepts("xir.raw", RAW);
    // `cond_br` outside a loop's prepare block breaks the structured roles.
    rejects("xir.structured", RAW, "dialect:xir.structured:structured_roles_wellformed", 7);
    // Phis are not allowed after reg2mem.
    rejects("xir.raw.phi_free", RAW, "dialect:xir.raw.phi_free:opcode", 5);
}

#[test]
fn verifier_errors_come_first() {
    let src = "\
callable @f() -> f32 {
^entry:
  %x = alloca : f32
  return
}
";
    let m = parse(src);
    let diags = check_module(&m, dialect("xir.spirv"));
    assert!(diags.iter().any(|d| d.rule == "return_matches_function"), "{}", diag::render(&diags));
    assert_eq!(dialect_of(&m).map(|d| &*d.name), None);
}

#[test]
fn spill_metadata_only_on_allocas() {
    let src = "\
kernel @k() block_size(1, 1, 1) {
^entry:
  %s = alloca : f32 !spill(phi)
  store %s, f32 1.0
  %v = load %s : f32
  return
}
";
    accepts("xir.raw.phi_free", src);
    // The audited dialect demands no marker at all.
    rejects("xir.restructured.audited", src, "dialect:xir.restructured.audited:no_spill_markers", 3);
    let mut m = parse(src);
    // Move the marker onto the load: a spill marker on a non-slot.
    let f = &mut m.functions[0];
    let (s, l) = {
        let insts = f.block(f.body().unwrap()).insts();
        (insts[0], insts[2])
    };
    f.inst_md_mut(s).spill = None;
    f.inst_md_mut(l).spill = Some(SpillKind::CrossBlock);
    let diags = check_module(&m, dialect("xir.raw.phi_free"));
    let d = diags.iter().find(|d| d.rule == "dialect:xir.raw.phi_free:spill_slots_tagged").expect("diagnostic");
    assert_eq!(d.inst, Some(l), "{d}");
}

#[test]
fn spill_slots_are_only_loaded_and_stored() {
    let src = "\
callable @g(%p: ref f32) -> void {
^entry:
  return
}
kernel @k() block_size(1, 1, 1) {
^entry:
  %s = alloca : f32 !spill(cross_block)
  call @g, %s
  return
}
";
    rejects("xir.raw.phi_free", src, "dialect:xir.raw.phi_free:spill_slots_tagged", 8);
}

#[test]
fn irreducible_cfg_is_rejected() {
    let src = "\
kernel @k(%c: bool) block_size(1, 1, 1) {
^entry:
  cond_br %c, true ^a, false ^b
^a:
  br target ^b
^b:
  br target ^a
}
";
    accepts("xir.raw", src);
    let diags = check_module(&parse(src), dialect("xir.restructured"));
    let irr: Vec<_> = diags.iter().filter(|d| d.rule == "dialect:xir.restructured:reducible_cfg").collect();
    assert_eq!(irr.len(), 1, "{}", diag::render(&diags));
}

#[test]
fn self_referential_phi() {
    let src = "\
kernel @k(%c: bool) block_size(1, 1, 1) {
^entry:
  loop prepare ^p, body ^b, update ^u, merge ^m
^p:
  %x = phi [f32 0.0, ^entry], [%x, ^u] : f32
  cond_br %c, true ^b, false ^m
^b:
  br target ^u
^u:
  br target ^p
^m:
  return
}
";
    accepts("xir.restructured.ssa", src);
    rejects("xir.restructured.audited", src, "dialect:xir.restructured.audited:no_self_referential_values", 5);
}

#[test]
fn spirv_rejects_zero_length_arrays() {
    let src = "\
kernel @k(%b: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %a = alloca : array<f32, 0>
  return
}
";
    accepts("xir.restructured.audited", src);
    rejects("xir.spirv", src, "dialect:xir.spirv:positive_array_lengths", 3);
}

/// A `bool` has a device-memory representation (one byte, 0 or 1, the host
/// layout), so `buffer<bool>` and buffers of aggregates holding bools are in
/// `xir.spirv` (the SPIR-V backend packs them into words).
#[test]
fn spirv_accepts_bool_buffers() {
    let src = "\
kernel @k(%b: buffer<bool>, %s: buffer<struct<align 4>{bool, u32}>) block_size(1, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %b, %t : bool
  %n = bit_not %x : bool
  buffer.write %b, %t, %n
  %v = buffer.read %s, %t : struct<align 4>{bool, u32}
  buffer.write %s, %t, %v
  return
}
";
    accepts("xir.spirv", src);
}

#[test]
fn break_must_target_a_merge() {
    let src = "\
kernel @k(%c: bool) block_size(1, 1, 1) {
^entry:
  simple_loop body ^b, merge ^m
^b:
  if %c, true ^out, false ^again, merge ^again
^out:
  break target ^again
^again:
  br target ^b
^m:
  return
}
";
    rejects("xir.structured", src, "dialect:xir.structured:structured_roles_wellformed", 7);
}

#[test]
fn dialect_of_picks_the_most_specific() {
    let trivial = parse("kernel @k() block_size(1, 1, 1) {\n^entry:\n  return\n}\n");
    assert_eq!(dialect_of(&trivial).map(|d| &*d.name), Some("xir.spirv"));
    assert_eq!(dialect_of(&parse(RAW)).map(|d| &*d.name), Some("xir.raw"));
    // Straight-line structured code with no Phi meets every invariant.
    assert_eq!(dialect_of(&parse(STRUCTURED)).map(|d| &*d.name), Some("xir.spirv"));
}

#[test]
fn type_kinds_are_checked() {
    // A dialect is free to forbid type kinds; build one that forbids `f64`
    // from the spec files to prove the type set is enforced.
    let mut src = xir_spec::SpecSources::builtin();
    src.dialects.1 = src.dialects.1.replacen(
        "invariants: [\"verified\"],",
        "invariants: [\"verified\"],\n        remove_types: [\"f64\"],",
        1,
    );
    let spec = xir_spec::Spec::load(src).expect("spec loads");
    let m = parse("kernel @k() block_size(1, 1, 1) {\n^entry:\n  %a = alloca : f64\n  return\n}\n");
    let diags = check_module(&m, spec.dialect("xir").unwrap());
    assert_eq!(diags.len(), 1, "{}", diag::render(&diags));
    assert_eq!(diags[0].rule, "dialect:xir:type");
    assert_eq!(diags[0].span.map(|s| s.line), Some(3));
}

fn corpus() -> Vec<(String, Module)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "xir"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let src = std::fs::read_to_string(&p).unwrap();
            let m = parse_module(&src, &name).unwrap_or_else(|e| panic!("{name}:\n{}", diag::render(&e)));
            (name, m)
        })
        .collect()
}

#[test]
fn corpus_kernels_verify_and_are_structured() {
    let corpus = corpus();
    assert!(corpus.len() >= 16, "corpus too small: {}", corpus.len());
    for (name, m) in &corpus {
        let diags = check_module(m, dialect("xir.structured"));
        assert!(diags.is_empty(), "{name}:\n{}", diag::render(&diags));
    }
}

/// Check that bad input never panics the verifier or the dialect checker:
/// every corpus module is broken in several ways at every instruction.
#[test]
fn mutated_corpus_never_panics() {
    let mut broken = 0;
    let mut runs = 0;
    for (_, m) in corpus() {
        for fi in 0..m.functions.len() {
            let insts: Vec<(Block, Inst)> = m.functions[fi].all_insts().collect();
            for &(b, i) in &insts {
                for mutation in 0..4 {
                    let mut m2 = m.clone();
                    let f = &mut m2.functions[fi];
                    match mutation {
                        // Remove it, leaving any uses dangling.
                        0 => f.remove_inst(i),
                        // Make its result void.
                        1 => f.set_type(i, TypeTable::VOID),
                        // Move it to the front of its block.
                        2 => f.move_inst(i, b, 0),
                        // Point operand 0 at the function's first argument or a constant.
                        _ => {
                            if f.inst(i).operands.is_empty() {
                                continue;
                            }
                            let v = if f.args.is_empty() { Value::Undef(TypeTable::BOOL) } else { Value::Arg(0) };
                            f.set_operand(i, 0, v);
                        }
                    }
                    runs += 1;
                    let diags = xir::verify::verify_module(&m2);
                    if !diags.is_empty() {
                        broken += 1;
                    }
                    for d in &xir_spec::spec().dialects {
                        check_module(&m2, d);
                    }
                }
            }
        }
    }
    // Most mutations break a rule; all of them ran without panicking.
    assert!(broken * 10 > runs * 7, "only {broken} of {runs} mutations were caught");
}

/// The invariants the verifier also enforces still work on their own: the
/// backend calls them directly.
#[test]
fn invariants_called_directly() {
    let mut m = parse(RAW);
    let inv = |name: &str| xir::dialect::invariants::lookup(name).expect("registered");
    assert!(inv("phi_first_in_block")(&m).is_empty());
    // Move the Phi of ^head after its comparison.
    let f = &mut m.functions[0];
    let head = f.blocks()[1];
    let phi = f.block(head).insts()[0];
    f.move_inst(phi, head, 1);
    let diags = inv("phi_first_in_block")(&m);
    assert_eq!(diags.len(), 1, "{}", diag::render(&diags));
    assert_eq!((diags[0].rule.name(), diags[0].inst), ("phi_first_in_block", Some(phi)));

    let mut m =
        parse("kernel @k() block_size(1, 1, 1) {\n^entry:\n  %s = alloca : f32\n  store %s, f32 1.0\n  return\n}\n");
    assert!(inv("exact_typed_memory")(&m).is_empty());
    let f = &mut m.functions[0];
    let store = f.block(f.body().unwrap()).insts()[1];
    let one = Value::Undef(TypeTable::I32);
    f.set_operand(store, 1, one);
    let diags = inv("exact_typed_memory")(&m);
    assert_eq!(diags.len(), 1, "{}", diag::render(&diags));
    assert!(diags[0].message.contains("moves `i32` through storage of type `f32`"), "{}", diags[0]);
}
