//! `ast2xir(xir2ast(m))` gives `m` back: the same instructions in the same
//! order, up to value and block names, and the same results on the
//! interpreter. Generated structured programs must round-trip exactly; the
//! hand-written corpus (whose allocas do not all stand at the top of the
//! entry block) must run the same and reach a fixpoint after one trip.

use proptest::prelude::*;
use xir::ir::Module;
use xir_ast::{ast_to_xir, structured_order, xir_to_ast, Arenas};

/// The module printed with its blocks in structured order and every value
/// and block name dropped: equal texts mean equal instruction sequences.
fn canonical(m: &Module) -> String {
    let mut m = m.clone();
    for fid in m.func_ids().collect::<Vec<_>>() {
        let order = structured_order(&m, fid).expect("structured");
        let f = m.func_mut(fid);
        f.set_layout(order);
        f.renumber_blocks_by_layout();
        for a in f.args.iter_mut() {
            a.md.name = None;
        }
        for b in f.blocks().to_vec() {
            f.set_block_name(b, None);
        }
        let insts: Vec<_> = f.all_insts().map(|(_, i)| i).collect();
        for i in insts {
            f.set_inst_name(i, None);
        }
    }
    xir::text::print_module(&m)
}

fn round_trip(m: &Module) -> Module {
    let arenas = Arenas::default();
    let ast = xir_to_ast(&arenas, m).unwrap_or_else(|e| panic!("xir2ast: {e}\n{}", xir::text::print_module(m)));
    let back = ast_to_xir(&ast).unwrap_or_else(|e| panic!("ast2xir: {e}\n{}", xir_ast::print_module(&ast)));
    let diags = xir::verify::verify_module(&back);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}\n{}", xir::text::print_module(&back));
    back
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_round_trip_exactly(p in xir_testgen::programs::program()) {
        let back = round_trip(&p.module);
        prop_assert_eq!(canonical(&back), canonical(&p.module));
        let k = back.find_function(&p.module.func(p.kernel).name).expect("kernel kept");
        let before = xir::interp::run_kernel(&p.module, p.kernel, &p.inputs).expect("runs");
        let after = xir::interp::run_kernel(&back, k, &p.inputs).expect("runs after the round trip");
        prop_assert_eq!(before, after);
    }
}

#[test]
fn corpus_kernels_run_the_same_and_reach_a_fixpoint() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "xir") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let m = xir::text::parse_module(&text, &path.display().to_string()).expect("parses");
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let once = round_trip(&m);
        let twice = round_trip(&once);
        assert_eq!(canonical(&twice), canonical(&once), "{name}: no fixpoint after one round trip");
        let inputs_path = path.with_extension("inputs.json");
        let inputs: xir::interp::Inputs =
            serde_json::from_str(&std::fs::read_to_string(&inputs_path).expect("inputs")).expect("inputs parse");
        let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
        let k2 = once.find_function(&m.func(k).name).expect("kernel kept");
        let before = xir::interp::run_kernel(&m, k, &inputs).expect("runs");
        let after = xir::interp::run_kernel(&once, k2, &inputs).expect("runs after the round trip");
        assert_eq!(before, after, "{name}: results differ after the round trip");
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} corpus kernels");
}
