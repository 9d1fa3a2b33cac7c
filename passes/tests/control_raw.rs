//! Raw-CFG cleanup (`simplify_cfg`) and the post-restructure payload
//! clearing (`clear_inactive_block_payloads`): fixtures with Phis and dead
//! role blocks, plus corpus sweeps through the legalization spine.

mod control_support;

use control_support::{check, check_passes, corpus, count_op, parse, run_pass};
use xir_passes::control::{clear_inactive_block_payloads, destructure_cfg, restructure, simplify_cfg};

const OUT8: &str = r#"{"dispatch": [8, 1, 1], "args": {"out": {"fill": 0, "len": 8}}}"#;

// Check that an empty forwarding block is bypassed with its Phi incoming
// moved to the new predecessor, a straight-line chain is merged, and an
// identical-target cond_br is folded.
#[test]
fn simplify_forwarders_chains_and_folds() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 3 : bool
  cond_br %c, true ^fwd, false ^other
^fwd:
  br target ^join
^other:
  %x = mul %t, u32 5 : u32
  br target ^join
^join:
  %p = phi [u32 1, ^fwd], [%x, ^other] : u32
  %d = eq %p, u32 10 : bool
  cond_br %d, true ^tail, false ^tail
^tail:
  %q = phi [%p, ^join], [%p, ^join] : u32
  br target ^last
^last:
  buffer.write %out, %t, %q
  return
}
"#;
    let m = check_passes(src, &[simplify_cfg::decl()], &["xir.raw"], "k", OUT8);
    let text = xir::text::print_module(&m);
    assert!(!text.contains("^fwd"), "forwarder kept:\n{text}");
    assert!(text.contains("[u32 1, ^entry]") && text.contains("[%x, ^other]"), "{text}");
    assert!(!text.contains("^tail") && !text.contains("^last"), "chain not merged:\n{text}");
    assert_eq!(count_op(&m, "cond_br"), 1, "{text}");
}

// Check that a forwarder is kept when bypassing it would give a Phi two
// different values from one predecessor.
#[test]
fn simplify_keeps_conflicting_forwarder() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 3 : bool
  cond_br %c, true ^fwd, false ^join
^fwd:
  br target ^join
^join:
  %p = phi [u32 1, ^fwd], [u32 2, ^entry] : u32
  buffer.write %out, %t, %p
  return
}
"#;
    let m = check_passes(src, &[simplify_cfg::decl()], &["xir.raw"], "k", OUT8);
    assert!(xir::text::print_module(&m).contains("^fwd"));
}

// Check that after restructuring, a dead merge keeps its identity with only
// `unreachable`, and an orphan block is cleared the same way.
#[test]
fn clear_inactive_keeps_blocks() {
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %c = lt %t, u32 3 : bool
  if %c, true ^a, false ^b, merge ^dead
^a:
  buffer.write %out, %t, u32 1
  return
^b:
  buffer.write %out, %t, u32 2
  return
^dead:
  %z = add %t, u32 9 : u32
  buffer.write %out, %t, %z
  return
^orphan:
  %y = mul %t, u32 2 : u32
  buffer.write %out, %y, %y
  return
}
"#;
    let before = parse(src);
    let blocks_before = before.functions[0].blocks().len();
    let m = check_passes(src, &[clear_inactive_block_payloads::decl()], &["xir.restructured"], "k", OUT8);
    let f = &m.functions[0];
    assert_eq!(f.blocks().len(), blocks_before);
    let text = xir::text::print_module(&m);
    assert!(text.contains("^dead:\n  unreachable"), "{text}");
    assert!(text.contains("^orphan:\n  unreachable"), "{text}");
    assert!(text.contains("merge ^dead"), "{text}");
}

// Check that simplify_cfg keeps every corpus kernel's results after
// destructure, and that the result still restructures.
#[test]
fn simplify_on_corpus() {
    for k in corpus() {
        check_passes(
            &k.src,
            &[destructure_cfg::decl(), simplify_cfg::decl(), restructure::decl()],
            &["xir.raw", "xir.raw", "xir.restructured"],
            &k.kernel,
            &k.inputs,
        );
    }
}

// Check that clearing inactive payloads after restructure keeps results on
// the corpus.
#[test]
fn clear_inactive_on_corpus() {
    for k in corpus() {
        let m = check_passes(
            &k.src,
            &[destructure_cfg::decl(), restructure::decl(), clear_inactive_block_payloads::decl()],
            &["xir.raw", "xir.restructured", "xir.restructured"],
            &k.kernel,
            &k.inputs,
        );
        let mut again = m.clone();
        let out = run_pass(&mut again, clear_inactive_block_payloads::decl()).unwrap();
        assert!(!out.changed, "{}: clearing is idempotent", k.name);
        check(&again, "xir.restructured");
    }
}
