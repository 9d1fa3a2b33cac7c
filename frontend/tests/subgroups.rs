//! WGSL subgroup built-ins: what they lower to, and what the lowered
//! kernel computes on the interpreter (lane-exact). The kernel
//! `tests/kernels/subgroups.wgsl` covers every built-in against naga's own
//! module on Vulkan (`tests/tests/shaders.rs`); here is what naga cannot be
//! compared on: a read past the subgroup, which WGSL leaves indeterminate
//! and XIR defines as the reading lane's own value.

use xir_frontend::{compile, to_ast, Language, Overrides, Source};

const SHADER: &str = "\
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = gid.x * 3u;
    out[gid.x] = subgroupShuffleDown(v, 2u) + subgroupInclusiveAdd(v) + subgroupBallot().x;
}
";

fn source(text: &str) -> Source<'_> {
    Source { path: "subgroups.wgsl", text, language: Language::Wgsl }
}

fn run(text: &str, threads: u32) -> Result<Vec<u64>, String> {
    let module = compile(&source(text), &Overrides::new()).map_err(|d| d.to_string())?;
    let kernel = module.func_ids().find(|&f| module.func(f).is_kernel()).expect("a kernel");
    let inputs = format!(r#"{{"dispatch": [{threads}, 1, 1], "args": {{"out": {{"fill": 0, "len": {threads}}}}}}}"#);
    let inputs: xir::interp::Inputs = serde_json::from_str(&inputs).expect("inputs");
    let outputs = xir::interp::run_kernel(&module, kernel, &inputs).map_err(|e| e.to_string())?;
    let json = serde_json::to_value(&outputs).expect("outputs");
    Ok(json["buffers"]["out"].as_array().expect("out").iter().map(|v| v.as_u64().expect("u32")).collect())
}

#[test]
fn subgroup_built_ins_lower_to_warp_operations() {
    let arenas = xir_ast::Arenas::default();
    let m = to_ast(&arenas, &source(SHADER), &Overrides::new()).unwrap_or_else(|d| panic!("{d}"));
    let want = "\
kernel void main(buffer<u32> out) block_size(32, 1, 1) whole_blocks noalias {
    let u32 v = $dispatch_id.x * 3u32;
    let u32 _t1 = $warp_lane_id + 2u32;
    let u32 _t2 = warp.read_lane(v, select(_t1 < $warp_size, _t1, $warp_lane_id));
    let u32 _t3 = warp.prefix_sum(v) + v;
    let vec<u32, 4> _t4 = warp.active_bit_mask(true);
    buffer.write(out, min($dispatch_id.x, buffer.size(out) - 1u32), _t2 + _t3 + _t4.x);
}
";
    assert_eq!(xir_ast::print_module(&m), want);
}

#[test]
fn a_shuffle_past_the_subgroup_reads_the_lane_itself() {
    // One subgroup of 32 lanes (the interpreter's default size).
    let got = run(SHADER, 32).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<u64> = (0..32u64)
        .map(|lane| {
            let source = if lane + 2 < 32 { lane + 2 } else { lane };
            let inclusive = 3 * lane * (lane + 1) / 2;
            (3 * source + inclusive + u64::from(u32::MAX)) % (1 << 32)
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_read_of_an_inactive_lane_inside_the_subgroup_is_reported() {
    // Eight threads in a block: lanes 8..31 of the subgroup never run, and
    // lanes 6 and 7 read lanes 8 and 9 (WGSL: an indeterminate value).
    let shader = SHADER.replace("workgroup_size(32)", "workgroup_size(8)");
    let err = run(&shader, 8).expect_err("reads an inactive lane");
    assert!(
        err.contains(":6:18: error: [interp] `warp.read_lane` reads lane 8, which is not active at this operation"),
        "{err}"
    );
}
