//! `Dialect::refines` compares index sets; it must say exactly what the
//! dialects' opcode, type and invariant sets say, for every pair.

#[test]
fn refines_agrees_with_the_named_sets() {
    let spec = xir_spec::spec();
    let mut refining_pairs = 0;
    for a in &spec.dialects {
        for b in &spec.dialects {
            let by_names =
                a.ops.is_subset(&b.ops) && a.types.is_subset(&b.types) && b.invariants.is_subset(&a.invariants);
            assert_eq!(a.refines(b), by_names, "`{}` refines `{}`", a.name, b.name);
            assert_eq!(a.refinement_gaps(b).is_empty(), by_names, "gaps of `{}` against `{}`", a.name, b.name);
            refining_pairs += usize::from(by_names);
        }
    }
    // Reflexive pairs alone would be `dialects.len()`: the spec has chains.
    assert!(refining_pairs > spec.dialects.len());
}
