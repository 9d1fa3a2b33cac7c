//! The structured-form control passes (`lower_break_continue`,
//! `destructure_cfg`, `early_return_elimination`, `lower_switch`,
//! `canonicalize_one_shot_loops`): each on the whole corpus (verifier,
//! dialect check and interpreter equality) and on focused fixtures.

mod control_support;

use control_support::{check_passes, corpus};
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
