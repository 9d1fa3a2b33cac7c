//! A property test of the memory optimizations on random programs over one
//! aggregate slot (`array<vec<u32, 2>, 3>`, private or shared, initialized
//! or not): element, whole and dynamically indexed loads and stores, gep
//! chains and a call passed the slot. The differential test's generator
//! only makes scalar slots, so this is where `sroa`, `trace_gep` and
//! `transpose_gep` meet random input.

mod opt_support;

use opt_support::*;

/// One access of the random aggregate-slot programs: `slot` is
/// `array<vec<u32, 2>, 3>`; paths are constant or read from the input.
#[derive(Clone, Debug)]
enum Access {
    StoreLane { elem: u8, lane: u8, chained: bool, value: u32 },
    StoreElem { elem: u8, value: u32 },
    StoreWhole { value: u32 },
    StoreDynamic { value: u32 },
    LoadLane { elem: u8, lane: u8, chained: bool },
    LoadElem { elem: u8 },
    LoadWhole,
    LoadDynamic,
    Call,
}

fn access() -> impl proptest::strategy::Strategy<Value = Access> {
    use proptest::prelude::*;
    prop_oneof![
        (0u8..3, 0u8..2, any::<bool>(), 0u32..100).prop_map(|(elem, lane, chained, value)| Access::StoreLane {
            elem,
            lane,
            chained,
            value
        }),
        (0u8..3, 0u32..100).prop_map(|(elem, value)| Access::StoreElem { elem, value }),
        (0u32..100).prop_map(|value| Access::StoreWhole { value }),
        (0u32..100).prop_map(|value| Access::StoreDynamic { value }),
        (0u8..3, 0u8..2, any::<bool>()).prop_map(|(elem, lane, chained)| Access::LoadLane { elem, lane, chained }),
        (0u8..3).prop_map(|elem| Access::LoadElem { elem }),
        Just(Access::LoadWhole),
        Just(Access::LoadDynamic),
        Just(Access::Call),
    ]
}

/// The XIR text of one random program: the slot is initialized whole (or
/// not, when `init` is false: reads of uninitialized parts then fail alike
/// before and after), every loaded `u32` is summed into `%out[0]`.
fn aggregate_program(init: bool, shared: bool, accesses: &[Access]) -> String {
    let ty = "array<vec<u32, 2>, 3>";
    let mut s = format!(
        "callable @peek(%r: ref {ty}) -> u32 {{\n^entry:\n  %v = load %r : {ty}\n  %x = extract %v, u32 2, u32 1 : u32\n  return %x\n}}\n\n\
         kernel @k(%in: buffer<u32>, %out: buffer<u32>) block_size(1, 1, 1) {{\n^entry:\n  %d = buffer.read %in, u32 0 : u32\n"
    );
    s += &format!("  %a = {} : {ty}\n", if shared { "alloca.shared" } else { "alloca" });
    if init {
        s += &format!("  store %a, {ty} [[1, 2], [3, 4], [5, 6]]\n");
    }
    let mut acc = "u32 0".to_string();
    for (n, a) in accesses.iter().enumerate() {
        let lane_addr = |s: &mut String, elem: u8, lane: u8, chained: bool| {
            if chained {
                *s += &format!("  %e{n} = gep %a, u32 {elem} : vec<u32, 2>\n  %p{n} = gep %e{n}, u32 {lane} : u32\n");
            } else {
                *s += &format!("  %p{n} = gep %a, u32 {elem}, u32 {lane} : u32\n");
            }
        };
        let mut loaded = None;
        match a {
            Access::StoreLane { elem, lane, chained, value } => {
                lane_addr(&mut s, *elem, *lane, *chained);
                s += &format!("  store %p{n}, u32 {value}\n");
            }
            Access::StoreElem { elem, value } => {
                s += &format!("  %p{n} = gep %a, u32 {elem} : vec<u32, 2>\n  store %p{n}, vec<u32, 2> [{value}, 7]\n");
            }
            Access::StoreWhole { value } => s += &format!("  store %a, {ty} [[{value}, 1], [2, 3], [4, {value}]]\n"),
            Access::StoreDynamic { value } => {
                s += &format!("  %p{n} = gep %a, %d, u32 1 : u32\n  store %p{n}, u32 {value}\n");
            }
            Access::LoadLane { elem, lane, chained } => {
                lane_addr(&mut s, *elem, *lane, *chained);
                s += &format!("  %l{n} = load %p{n} : u32\n");
                loaded = Some(format!("%l{n}"));
            }
            Access::LoadElem { elem } => {
                s += &format!("  %p{n} = gep %a, u32 {elem} : vec<u32, 2>\n  %w{n} = load %p{n} : vec<u32, 2>\n");
                s += &format!("  %l{n} = extract %w{n}, u32 1 : u32\n");
                loaded = Some(format!("%l{n}"));
            }
            Access::LoadWhole => {
                s += &format!("  %w{n} = load %a : {ty}\n  %l{n} = extract %w{n}, u32 1, u32 0 : u32\n");
                loaded = Some(format!("%l{n}"));
            }
            Access::LoadDynamic => {
                s += &format!("  %p{n} = gep %a, %d, u32 0 : u32\n  %l{n} = load %p{n} : u32\n");
                loaded = Some(format!("%l{n}"));
            }
            Access::Call => {
                s += &format!("  %l{n} = call @peek, %a : u32\n");
                loaded = Some(format!("%l{n}"));
            }
        }
        if let Some(v) = loaded {
            s += &format!("  %acc{n} = add {acc}, {v} : u32\n");
            acc = format!("%acc{n}");
        }
    }
    s += &format!("  buffer.write %out, u32 0, {acc}\n  return\n}}\n");
    s
}

/// Property: on random element / whole / dynamic accesses of an aggregate
/// slot (private or shared, initialized or not), every memory pass — and
/// all of them in a row followed by mem2reg — keeps the interpreter's
/// results, including which programs fail.
#[test]
fn mem_opt_passes_keep_random_aggregate_programs() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let cases = std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let strategy = (any::<bool>(), any::<bool>(), 0u32..3, prop::collection::vec(access(), 1..12));
    let sequences: &[&[(&str, Option<&str>)]] = &[
        &[("sroa", Some("(decompose_vectors: true, aggressive: true)"))],
        &[("sroa", None)],
        &[("trace_gep", None)],
        &[("transpose_gep", None)],
        &[("transpose_gep", Some("(dynamic_indices: false)"))],
        &[("local_store_forward", None)],
        &[("local_load_elimination", None)],
        &[("dead_store_elimination", None)],
        &[
            ("trace_gep", None),
            ("sroa", Some("(decompose_vectors: true)")),
            ("local_store_forward", None),
            ("local_load_elimination", None),
            ("dead_store_elimination", None),
            ("transpose_gep", None),
            ("destructure_cfg", None),
            ("mem2reg", None),
        ],
    ];
    runner
        .run(&strategy, |(init, shared, d, accesses)| {
            let src = aggregate_program(init, shared, &accesses);
            let inp = inputs(&format!(r#"{{"args": {{"in": [{d}], "out": [0]}}}}"#));
            let m0 = parse(&src);
            let before = interp(&m0, &inp);
            for seq in sequences {
                let mut m = m0.clone();
                for (pass, opts) in *seq {
                    run_pass(&mut m, pass, *opts, false);
                }
                let after = interp(&m, &inp);
                // A failing program may only fail the same way; a refinement
                // (a failing read made defined) is allowed.
                if before.is_ok() && after != before {
                    return Err(TestCaseError::fail(format!(
                        "{seq:?} changed {before:?} into {after:?}\ninput:\n{src}\noutput:\n{}",
                        xir::text::print_module(&m)
                    )));
                }
            }
            Ok(())
        })
        .unwrap();
}
