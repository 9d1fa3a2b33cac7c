//! Ray queries: the interpreter's software traversal (exact hit records
//! computed by hand for a small scene), `lower_ray_query_loop` (refusal of
//! malformed constructs; its exact outputs are file tests,
//! `tests/filetests/lower_ray_query_loop/`), the whole `spirv-legalize` pipeline on ray-query
//! kernels, and a property test over random scenes (`XIR_PROPTEST_CASES`
//! raises its 64 cases).

mod control_support;

use control_support::{check, check_passes, count_op, parse, run, run_pass};
use xir::pipeline::{Loader, PassManager, RunOptions};
use xir::text::print_module;
use xir_passes::control::lower_ray_query;

const KERNEL: &str = include_str!("../../tests/ray/ray_query_loop.xir");
const INPUTS: &str = include_str!("../../tests/ray/ray_query_loop.inputs.json");

/// The numbers of an output buffer (the JSON value type is not named here:
/// this crate does not depend on serde_json).
macro_rules! numbers {
    ($j:expr, $t:ty) => {
        $j.as_array().expect("array").iter().map(|x| x.as_f64().expect("number") as $t).collect::<Vec<$t>>()
    };
}

// Check that the software traversal gives the hand-computed hits: rays along
// -z from z = 10 at x = -1.5, -0.5, 0.5, 1.5. The opaque triangle at z = 0
// (t = 10) is hit only by |x| = 0.5; the non-opaque triangle 0 at z = 2
// (t = 8) by all and is committed (even primitive); triangle 1 at z = 3
// (t = 7) only for x > 0 and is seen but not committed (odd); the AABB at
// z in [4, 5] only for x = 1.5, committed at t = 5.5; the instance at z = 9
// has mask 2 and is never visited by a ray of mask 1.
#[test]
fn interpreter_traverses_the_scene_exactly() {
    let m = parse(KERNEL);
    let out = run(&m, "ray_query_loop", INPUTS);
    assert_eq!(numbers!(out.buffers["t_out"], f32), vec![8.0, 8.0, 8.0, 5.5]);
    // kind << 16 | instance << 8 | triangle candidates seen
    let tri = |inst: u32, seen: u32| 1 << 16 | inst << 8 | seen;
    assert_eq!(numbers!(out.buffers["hit_out"], u32), vec![tri(1, 1), tri(1, 1), tri(1, 2), 2 << 16 | 2 << 8 | 2]);
}

const TRACE: &str = r#"
kernel @trace(%scene: accel, %t_out: buffer<f32>, %any_out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %xf = cast.static %x : f32
  %ox = mul %xf, f32 3.0 : f32
  %origin = aggregate %ox, f32 0.0, f32 10.0 : array<f32, 3>
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %hit = ray.trace_closest %scene, %ray, u32 255 : struct<align 8>{u32, u32, vec<f32, 2>, f32}
  %t = extract %hit, u32 3 : f32
  buffer.write %t_out, %x, %t
  %prim = extract %hit, u32 1 : u32
  %any = ray.trace_any %scene, %ray, u32 255 : bool
  %anyu = cast.static %any : u32
  %k = shl %prim, u32 4 : u32
  %r = bit_or %k, %anyu : u32
  buffer.write %any_out, %x, %r
  return
}
"#;

// Check closest-hit against any-hit: the farther triangle (z = 1) comes
// first in traversal order, the nearer (z = 2) second; closest hit must
// report the nearer one (t = 8, prim 1) for the ray at x = 0, even though
// any-hit stops at the first; the ray at x = 3 misses (inst/prim ~0,
// t = t_max, any = false). Non-opaque geometry is forced opaque; the
// procedural box in front (z in [5, 6]) is ignored.
#[test]
fn trace_closest_finds_the_nearer_later_primitive_and_any_hit_stops() {
    let m = parse(TRACE);
    check(&m, "xir.structured");
    let out = run(&m, "trace", TRACE_INPUTS);
    assert_eq!(numbers!(out.buffers["t_out"], f32), vec![8.0, 100.0]);
    assert_eq!(numbers!(out.buffers["any_out"], u32), vec![1 << 4 | 1, 0xffff_fff0]);
}

const TRACE_INPUTS: &str = r#"{"args": {"scene": {"instances": [{"opaque": false, "triangles": [
    [[-1, -1, 1], [1, -1, 1], [0, 1, 1]], [[-1, -1, 2], [1, -1, 2], [0, 1, 2]]]},
    {"aabbs": [[-1, -1, 5, 1, 1, 6]]}]},
    "t_out": [0, 0], "any_out": [0, 0]}}"#;

// Check that a trace whose result is not the triangle-hit record is refused.
#[test]
fn trace_closest_with_a_foreign_record_is_refused() {
    let src = TRACE.replace(
        "%hit = ray.trace_closest %scene, %ray, u32 255 : struct<align 8>{u32, u32, vec<f32, 2>, f32}",
        "%hit = ray.trace_closest %scene, %ray, u32 255 : struct<align 4>{u32, u32, f32, f32}",
    );
    let src = src.replace("%t = extract %hit, u32 3 : f32", "%t = extract %hit, u32 2 : f32");
    let mut m = parse(&src);
    let e = run_pass(&mut m, lower_ray_query::decl()).expect_err("must refuse");
    assert!(e.diagnostics[0].message.contains("triangle-hit record"), "{:?}", e.diagnostics);
    assert_eq!(count_op(&m, "ray.trace_closest"), 1);
}

// Check that bad accel inputs are located errors, not panics.
#[test]
fn malformed_accel_inputs_are_rejected() {
    let m = parse(TRACE);
    let k = m.find_function("trace").unwrap();
    for (scene, want) in [
        (r#"{"instances": [{"triangles": [[[0, 0, 0], [1, 0, 0]]]}]}"#, "a triangle is three vertices"),
        (r#"{"instances": [{"aabbs": [[0, 0, 0, 1, 1, 1]], "transform": [2,0,0,0,0,1,0,0,0,0,1,0]}]}"#, "identity"),
        (r#"{"instances": [{"colour": 1}]}"#, "unknown key `colour`"),
        (r#"[]"#, "instances"),
    ] {
        let inputs = format!(r#"{{"args": {{"scene": {scene}, "t_out": [0, 0], "any_out": [0, 0]}}}}"#);
        let inputs = xir::interp::Inputs::from_json(&inputs).unwrap();
        let e = xir::interp::run_kernel(&m, k, &inputs).expect_err(scene);
        assert!(e.message.contains(want), "{scene}: {}", e.message);
        assert!(e.message.contains("argument `scene`"), "{}", e.message);
    }
}

/// Run `spirv-legalize` (at -O0 and -O2, verifying each step) on `src` and
/// compare interpreter outputs; returns the -O0 result.
pub fn legalize(src: &str, kernel: &str, inputs: &str) -> xir::Module {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../pipelines/spirv-legalize.ron")).unwrap();
    let pre = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../pipelines/pre-autodiff.ron")).unwrap();
    assert!(
        text.contains("Include(\"pre-autodiff\")") && pre.contains("Pass(\"lower_ray_query_loop\")"),
        "spirv-legalize does not lower ray-query loops"
    );
    let m = parse(src);
    let before = run(&m, kernel, inputs);
    let mut reg = xir::pass::PassRegistry::new();
    reg.declare_hook("callable_specialization", "target policy for callables");
    xir_passes::register_all(&mut reg);
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../pipelines/spirv-legalize.ron"));
    let p =
        Loader::new(&reg).load_text("spirv-legalize.ron".into(), Some(path), &text).unwrap_or_else(|f| panic!("{f}"));
    let mut first = None;
    for level in [0u8, 2] {
        let mut m = m.clone();
        let opts = RunOptions { verify_each: true, opt_level: level, ..RunOptions::default() };
        let mut log = Vec::new();
        if let Err(e) = PassManager::new(&p, opts).run(&mut m, &mut log) {
            panic!("-O{level}: {e}\n{}", String::from_utf8_lossy(&log));
        }
        check(&m, "xir.restructured.audited");
        assert_eq!(count_op(&m, "ray_query.loop") + count_op(&m, "ray_query.dispatch"), 0);
        assert_eq!(count_op(&m, "ray.trace_closest"), 0);
        let after = run(&m, kernel, inputs);
        assert!(before.first_mismatch(&after, |_, _| false).is_none(), "-O{level}:\n{}", print_module(&m));
        // At -O2 loop rotation may peel the proceed (one before the loop,
        // one at the end of each iteration): still a proceed per step.
        let proceeds = count_op(&m, "ray_query.proceed");
        assert!(proceeds == 1 || level > 0 && proceeds == 2, "-O{level}:\n{}", print_module(&m));
        assert!(before.first_mismatch(&after, |_, _| false).is_none(), "{}", print_module(&m));
        first.get_or_insert(m);
    }
    first.expect("ran")
}

// Check that the whole mandatory legalization (ray-query lowering first)
// takes both ray-query kernels to the SPIR-V handoff's structural dialect
// with the same results.
#[test]
fn spirv_legalize_pipeline_runs_on_ray_query_kernels() {
    legalize(KERNEL, "ray_query_loop", INPUTS);
    legalize(TRACE, "trace", TRACE_INPUTS);
}

const FREE_DISPATCH: &str = r#"
kernel @k(%scene: accel) block_size(1, 1, 1) {
^entry:
  %ray = aggregate array<f32, 3> [0.0, 0.0, 0.0], f32 0.0, array<f32, 3> [0.0, 0.0, 1.0], f32 1.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %q = ray_query.pipeline %scene, %ray, u32 255 : ray_query_any
  ray_query.dispatch %q, exit ^a, on_surface ^b, on_procedural ^b
^a:
  return
^b:
  return
}
"#;

const LOOP_WITHOUT_DISPATCH: &str = r#"
kernel @k(%scene: accel) block_size(1, 1, 1) {
^entry:
  ray_query.loop dispatch ^d, merge ^m
^d:
  br target ^m
^m:
  return
}
"#;

// Check that malformed ray-query constructs are refused, located at the
// construct, and that the module is left unchanged.
#[test]
fn malformed_constructs_are_refused_unchanged() {
    for (src, want) in [
        (FREE_DISPATCH, "`ray_query.dispatch` outside the dispatch block"),
        (LOOP_WITHOUT_DISPATCH, "does not end in `ray_query.dispatch`"),
    ] {
        let mut m = parse(src);
        let before = print_module(&m);
        let e = run_pass(&mut m, lower_ray_query::decl()).expect_err("must refuse");
        assert_eq!(e.diagnostics.len(), 1, "{:?}", e.diagnostics);
        let d = &e.diagnostics[0];
        assert!(d.message.contains(want), "{}", d.message);
        assert!(d.inst.is_some() && d.span.is_some(), "not located: {d:?}");
        assert_eq!(print_module(&m), before);
    }
}

const PHIS: &str = r#"
kernel @phis(%scene: accel, %t_out: buffer<f32>, %hit_out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %xf = cast.static %x : f32
  %ox = sub %xf, f32 1.5 : f32
  %origin = aggregate %ox, f32 0.1, f32 10.0 : array<f32, 3>
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %q = ray_query.pipeline %scene, %ray, u32 1 : ray_query_all
  ray_query.loop dispatch ^dispatch, merge ^merge
^dispatch:
  %n = phi [u32 0, ^entry], [%n1, ^surface], [%n2, ^procedural] : u32
  ray_query.dispatch %q, exit ^exit, on_surface ^surface, on_procedural ^procedural
^surface:
  %seen = phi [%n, ^dispatch] : u32
  %n1 = add %seen, u32 1 : u32
  ray_query.object_write %q, u32 0
  br target ^dispatch
^procedural:
  %n2 = add %n, u32 100 : u32
  ray_query.object_write %q, u32 1, f32 5.5
  br target ^dispatch
^exit:
  buffer.write %hit_out, %x, %n
  br target ^merge
^merge:
  %hit = ray_query.object_read %q, u32 3 : struct<align 8>{u32, u32, vec<f32, 2>, u32, f32}
  %t = extract %hit, u32 4 : f32
  buffer.write %t_out, %x, %t
  return
}
"#;

// Check the Phi fixture's results (each thread counts its candidates:
// triangles + 100 per box) and that they survive the whole legalization;
// the lowering's exact output is tests/filetests/lower_ray_query_loop/phis_rewired.xir.
#[test]
fn phis_of_the_dispatch_block_and_handlers_survive_legalization() {
    let out = run(&parse(PHIS), "phis", INPUTS);
    assert_eq!(numbers!(out.buffers["hit_out"], u32), vec![1, 1, 2, 102]);
    legalize(PHIS, "phis", INPUTS);
}

const PROP: &str = r#"
kernel @prop(%scene: accel, %t_out: buffer<f32>, %hit_out: buffer<u32>) block_size(8, 1, 1) {
^entry:
  %x = extract $dispatch_id, u32 0 : u32
  %xf = cast.static %x : f32
  %ox = sub %xf, f32 3.5 : f32
  %origin = aggregate %ox, f32 0.25, f32 10.0 : array<f32, 3>
  %ray = aggregate %origin, f32 0.0, array<f32, 3> [0.0, 0.0, -1.0], f32 100.0 : struct<align 16>{array<f32, 3>, f32, array<f32, 3>, f32}
  %q = ray_query.pipeline %scene, %ray, u32 1 : ray_query_all
  ray_query.loop dispatch ^dispatch, merge ^merge
^dispatch:
  ray_query.dispatch %q, exit ^exit, on_surface ^surface, on_procedural ^procedural
^surface:
  %cand = ray_query.object_read %q, u32 2 : struct<align 8>{u32, u32, vec<f32, 2>, f32}
  %prim = extract %cand, u32 1 : u32
  %low = bit_and %prim, u32 1 : u32
  %even = eq %low, u32 0 : bool
  if %even, true ^commit, false ^surface_done, merge ^surface_done
^commit:
  ray_query.object_write %q, u32 0
  br target ^surface_done
^surface_done:
  br target ^dispatch
^procedural:
  %c = ray_query.object_read %q, u32 3 : struct<align 8>{u32, u32, vec<f32, 2>, u32, f32}
  %ct = extract %c, u32 4 : f32
  %nearer = lt f32 5.5, %ct : bool
  if %nearer, true ^generate, false ^procedural_done, merge ^procedural_done
^generate:
  ray_query.object_write %q, u32 1, f32 5.5
  br target ^procedural_done
^procedural_done:
  br target ^dispatch
^exit:
  br target ^merge
^merge:
  %hit = ray_query.object_read %q, u32 3 : struct<align 8>{u32, u32, vec<f32, 2>, u32, f32}
  %t = extract %hit, u32 4 : f32
  buffer.write %t_out, %x, %t
  %inst = extract %hit, u32 0 : u32
  %prim2 = extract %hit, u32 1 : u32
  %kind = extract %hit, u32 3 : u32
  %k24 = shl %kind, u32 24 : u32
  %i8 = bit_and %inst, u32 255 : u32
  %k8 = shl %i8, u32 8 : u32
  %p8 = bit_and %prim2, u32 255 : u32
  %a = bit_or %k24, %k8 : u32
  %packed = bit_or %a, %p8 : u32
  buffer.write %hit_out, %x, %packed
  return
}
"#;

/// A random scene: instances of triangles (random translation, opacity,
/// mask) or boxes, as accel input JSON.
fn scene() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let coord = || (-8i32..=8).prop_map(|v| v as f32 * 0.5);
    let vertex = move || [coord(), coord(), coord()];
    let triangle = move || [vertex(), vertex(), vertex()];
    let tris = proptest::collection::vec(triangle(), 1..4).prop_map(|ts| format!("\"triangles\": {ts:?}"));
    let boxes = proptest::collection::vec((coord(), coord(), coord(), 0.5f32..3.0), 1..3).prop_map(|bs| {
        let b: Vec<[f32; 6]> = bs.iter().map(|&(x, y, z, e)| [x, y, z, x + e, y + e, z + e]).collect();
        format!("\"aabbs\": {b:?}")
    });
    let instance =
        (prop_oneof![tris.clone(), tris, boxes], any::<bool>(), prop_oneof![Just(1u32), Just(2), Just(255)], -2i32..=2)
            .prop_map(|(geo, opaque, mask, tz)| {
                let transform = if geo.contains("aabbs") {
                    String::new()
                } else {
                    format!("\"transform\": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, {tz}], ")
                };
                format!("{{{transform}\"opaque\": {opaque}, \"mask\": {mask}, {geo}}}")
            });
    proptest::collection::vec(instance, 1..5).prop_map(|is| format!("{{\"instances\": [{}]}}", is.join(", ")))
}

// Check, over random scenes, that lowering the ray-query loop and the
// closest-hit trace, alone and inside the whole spirv-legalize pipeline,
// keeps every thread's hit record (a differential test of the lowering,
// which also exercises the software traversal on many geometries).
#[test]
fn random_scenes_give_the_same_hits_after_lowering() {
    use proptest::test_runner::{Config, TestRunner};
    let cases = std::env::var("XIR_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let trace_src = TRACE.replace("block_size(2, 1, 1)", "block_size(8, 1, 1)");
    // Threads that missed, hit a triangle, hit a box: each must occur.
    let kinds = [std::cell::Cell::new(0usize), std::cell::Cell::new(0), std::cell::Cell::new(0)];
    runner
        .run(&scene(), |scene| {
            let inputs = format!(r#"{{"args": {{"scene": {scene}, "t_out": {{"fill": 0, "len": 8}}, "hit_out": {{"fill": 0, "len": 8}}}}}}"#);
            let out = run(&parse(PROP), "prop", &inputs);
            for h in numbers!(out.buffers["hit_out"], u32) {
                let k = &kinds[(h >> 24) as usize];
                k.set(k.get() + 1);
            }
            check_passes(PROP, &[lower_ray_query::decl()], &["xir.structured"], "prop", &inputs);
            legalize(PROP, "prop", &inputs);
            let inputs = format!(r#"{{"args": {{"scene": {scene}, "t_out": {{"fill": 0, "len": 8}}, "any_out": {{"fill": 0, "len": 8}}}}}}"#);
            check_passes(&trace_src, &[lower_ray_query::decl()], &["xir.structured"], "trace", &inputs);
            legalize(&trace_src, "trace", &inputs);
            Ok(())
        })
        .unwrap();
    let kinds = kinds.map(|k| k.get());
    assert!(kinds.iter().all(|&k| k > 0), "misses / triangle hits / box hits: {kinds:?}");
}
