//! Structured control flow: OpPhi first with one entry per physical
//! predecessor (through a forwarding Phi in a synthetic continue target),
//! loop headers with exactly one back edge that comes from the continue
//! target, and plan rejections.

mod common;

use common::*;
use std::collections::HashSet;

/// A do-while whose body Phi has two logical back edges (from inside a
/// selection and from the loop's tail): the synthetic header carries the Phi
/// with two physical incomings, the synthetic continue block a forwarding Phi.
const SIMPLE_LOOP: &str = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  simple_loop body ^body, merge ^exit
^body:
  %i = phi [u32 0, ^entry], [%i1, ^odd], [%i2, ^again] : u32
  %bit = bit_and %i, u32 1 : u32
  %isodd = eq %bit, u32 1 : bool
  if %isodd, true ^odd, false ^even, merge ^join
^odd:
  %i1 = add %i, u32 3 : u32
  br target ^body
^even:
  br target ^join
^join:
  %i2 = add %i, u32 1 : u32
  %done = gt %i2, u32 20 : bool
  if %done, true ^brk, false ^again, merge ^again
^brk:
  br target ^exit
^again:
  br target ^body
^exit:
  buffer.write %out, u32 0, %i2
  return
}
"#;

const LOOP: &str = r#"
kernel @k(%x: buffer<f32>, %n: u32) block_size(32, 1, 1) {
^entry:
  loop prepare ^prep, body ^body, update ^step, merge ^done
^prep:
  %i = phi [u32 0, ^entry], [%inext, ^step] : u32
  %acc = phi [f32 0.0, ^entry], [%acc2, ^step] : f32
  %more = lt %i, %n : bool
  cond_br %more, true ^body, false ^done
^body:
  %v = buffer.read %x, %i : f32
  %acc2 = add %acc, %v : f32
  br target ^step
^step:
  %inext = add %i, u32 1 : u32
  br target ^prep
^done:
  buffer.write %x, u32 0, %acc
  return
}
"#;

fn loop_headers(m: &SpvModule) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for f in &m.functions {
        for b in &f.blocks {
            for i in &b.instructions {
                if i.class.opcode == Op::LoopMerge {
                    out.push((b.label.as_ref().unwrap().result_id.unwrap(), i.operands[1].unwrap_id_ref()));
                }
            }
        }
    }
    out
}

/// Every loop header has exactly one back edge, and it comes from its continue target.
fn check_back_edges(m: &SpvModule) {
    let preds = predecessors(m);
    for f in &m.functions {
        let order: Vec<u32> = f.blocks.iter().map(|b| b.label.as_ref().unwrap().result_id.unwrap()).collect();
        let pos = |l: u32| order.iter().position(|&x| x == l).unwrap();
        for b in &f.blocks {
            let h = b.label.as_ref().unwrap().result_id.unwrap();
            let Some(lm) = b.instructions.iter().find(|i| i.class.opcode == Op::LoopMerge) else { continue };
            let cont = lm.operands[1].unwrap_id_ref();
            let back: Vec<u32> = preds[&h].iter().copied().filter(|&p| pos(p) >= pos(h)).collect();
            assert_eq!(back, vec![cont], "loop header %{h}: back edges {back:?}, continue target %{cont}");
        }
    }
}

#[test]
fn simple_loop_phi_goes_through_a_forwarding_phi_in_the_continue_target() {
    let out = compile_all_presets(SIMPLE_LOOP);
    let m = load(&out.words_unoptimized);
    check_phis(&m);
    check_back_edges(&m);
    let headers = loop_headers(&m);
    assert_eq!(headers.len(), 1);
    let (h, c) = headers[0];
    let body_fn = &m.functions[0];
    let phis_in = |l: u32| -> Vec<usize> {
        let b = body_fn.blocks.iter().find(|b| b.label.as_ref().unwrap().result_id == Some(l)).unwrap();
        b.instructions.iter().filter(|i| i.class.opcode == Op::Phi).map(|i| i.operands.len() / 2).collect()
    };
    assert_eq!(phis_in(h), vec![2], "header Phi: entry + continue target");
    assert_eq!(phis_in(c), vec![2], "forwarding Phi: the two logical back edges");
    // The optimized module keeps the same invariants.
    for level in 1..=3 {
        let o = compile_with(SIMPLE_LOOP, &opts(level, false));
        let m = load(&o.words);
        check_phis(&m);
        check_back_edges(&m);
    }
}

#[test]
fn loop_prepare_is_the_header_with_one_back_edge_through_update() {
    let out = compile_all_presets(LOOP);
    let m = load(&out.words_unoptimized);
    check_phis(&m);
    check_back_edges(&m);
    assert_eq!(loop_headers(&m).len(), 1);
    let dis = out.disassembly_unoptimized();
    // The header holds both Phis, each with one incoming per predecessor (entry, update).
    assert_eq!(count(&dis, "OpPhi"), 2, "{dis}");
    for l in dis.lines().filter(|l| l.contains("OpPhi")) {
        assert_eq!(l.matches('%').count(), 6, "result, type and two (value, parent) pairs: {l}");
    }
}

#[test]
fn every_corpus_module_has_first_phis_and_single_back_edges() {
    for src in [
        SIMPLE_LOOP,
        LOOP,
        include_str!("../../tests/corpus/nested_loops.xir"),
        include_str!("../../tests/corpus/prefix_sum.xir"),
    ] {
        let out = compile_with(src, &opts(0, false));
        let m = load(&out.words);
        check_phis(&m);
        check_back_edges(&m);
    }
}

#[test]
fn cond_br_outside_a_loop_prepare_is_rejected_by_the_plan() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %c = eq u32 1, u32 1 : bool
  cond_br %c, true ^a, false ^b
^a:
  return
^b:
  return
}
"#;
    let e = compile_err(src, &opts(0, false));
    assert!(e.contains("cond_br") || e.contains("structured"), "{e}");
}

#[test]
fn unreachable_merge_and_continue_become_canonical_stubs() {
    // Both arms return: the merge is unreachable; the loop body always returns: update unreachable.
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  loop prepare ^prep, body ^body, update ^step, merge ^done
^prep:
  br target ^body
^body:
  %t = extract $dispatch_id, u32 0 : u32
  %c = eq %t, u32 0 : bool
  if %c, true ^a, false ^b, merge ^m
^a:
  buffer.write %out, u32 0, u32 1
  return
^b:
  return
^m:
  br target ^step
^step:
  br target ^prep
^done:
  return
}
"#;
    let out = compile_all_presets(src);
    let m = load(&out.words_unoptimized);
    check_phis(&m);
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpUnreachable"), 2, "the if merge and the loop merge:\n{dis}");
    let _: HashSet<u32> = HashSet::new();
}

#[test]
fn a_phi_in_the_entry_block_is_refused_at_the_handoff_with_its_location() {
    // The entry block has no predecessors, so the verifier's one-incoming-per-edge
    // rule admits a Phi with no incomings there; SPIR-V validation would reject it last.
    let src = "kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  \
               %x = phi : u32\n  br target ^tail\n^tail:\n  \
               buffer.write %out, u32 0, %x\n  return\n}\n";
    let e = compile_err(src, &opts(0, false));
    assert!(e.contains("spirv-handoff:entry-phi"), "{e}");
    assert!(e.contains("`phi` in the entry block"), "{e}");
    assert!(e.contains(":3:3: error") && e.contains("(in @k, bb0, inst0)"), "located at the Phi:\n{e}");
    assert!(!e.contains("spirv-validate"), "refused before emission:\n{e}");
}

#[test]
fn a_kernel_declaring_curve_bases_is_refused_at_the_handoff() {
    let src = "kernel @k(%out: buffer<u32>) block_size(1, 1, 1) !curve_basis(cubic_bspline) {\n^entry:\n  \
               buffer.write %out, u32 0, u32 1\n  return\n}\n";
    let e = compile_err(src, &opts(0, false));
    assert!(e.contains("spirv-handoff:curve-basis"), "{e}");
    assert!(e.contains("declares curve primitives (cubic_bspline)"), "{e}");
    assert!(e.contains(":1:1: error"), "located at the kernel:\n{e}");
}
