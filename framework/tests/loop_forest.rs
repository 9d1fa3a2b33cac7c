//! `LoopForest::blocks_in_rpo` against its definition (the RPO filtered by
//! loop membership) on generated programs; an integration test because the
//! generators live in `xir-testgen`, which depends on `xir`.

use proptest::strategy::{Strategy, ValueTree};
use xir::analysis::{Cfg, DomTree, LoopForest};
use xir::Block;

/// `blocks_in_rpo` is the per-loop filter of the RPO it replaces, on
/// the loops of generated programs (nested, with breaks and continues).
#[test]
fn blocks_in_rpo_is_the_filtered_rpo_of_each_loop() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut loops, mut nested) = (0, 0);
    for _ in 0..200 {
        let p = xir_testgen::programs::program().new_tree(&mut runner).expect("a program").current();
        for f in p.module.functions.iter().filter(|f| f.body().is_some()) {
            let cfg = Cfg::compute(f);
            let dom = DomTree::from_cfg(&cfg);
            let Ok(forest) = LoopForest::compute(&cfg, &dom) else { continue };
            let lists = forest.blocks_in_rpo(&cfg);
            assert_eq!(lists.len(), forest.loops.len());
            for (l, list) in lists.iter().enumerate() {
                let filtered: Vec<Block> = cfg.rpo.iter().copied().filter(|&b| forest.contains(l, b)).collect();
                assert_eq!(*list, filtered, "loop {l} of {}", f.name);
                loops += 1;
                nested += usize::from(forest.loops[l].depth > 1);
            }
        }
    }
    assert!(loops > 50 && nested > 5, "too few loops to say anything: {loops} ({nested} nested)");
}
