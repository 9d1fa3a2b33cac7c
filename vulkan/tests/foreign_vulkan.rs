//! The foreign runner (`vulkan::run_foreign_on`) on naga's SPIR-V of small
//! WGSL and GLSL kernels (`xir_frontend::oracle::naga_spirv`), with exact
//! expected outputs, and its refusals. Skips loudly only when no Vulkan
//! device exists.

mod common;

use serde_json::{json, Value as Json};
use xir::interp::{Inputs, Outputs};
use xir_frontend::oracle::{naga_spirv, Language};
use xir_vulkan::{run_foreign_on, Device, RunError};

fn wgsl(src: &str) -> Vec<u32> {
    naga_spirv(src, Language::Wgsl, "test.wgsl").unwrap_or_else(|e| panic!("{e}"))
}

fn inputs(dispatch: Option<[u32; 3]>, args: Json) -> Inputs {
    let mut i = Inputs::new();
    i.dispatch = dispatch;
    for (k, v) in args.as_object().expect("args object") {
        i.args.insert(k.clone(), v.clone());
    }
    i
}

fn run(device: &Device, words: &[u32], i: &Inputs) -> Outputs {
    match run_foreign_on(device, words, None, i, None) {
        Ok((o, _)) => o,
        Err(e) => panic!("run failed: {e}"),
    }
}

fn refusal(device: &Device, words: &[u32], i: &Inputs) -> RunError {
    match run_foreign_on(device, words, None, i, None) {
        Ok((o, _)) => panic!("expected a refusal, got {}", o.to_json()),
        Err(e) => e,
    }
}

fn buffers(o: &Outputs) -> Json {
    serde_json::to_value(&o.buffers).unwrap()
}

const SAXPY: &str = "
@group(0) @binding(0) var<uniform> a: f32;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    y[id.x] = a * x[id.x] + y[id.x];
}";

#[test]
fn saxpy_with_a_uniform_scalar() {
    let Some(device) = common::vulkan_device() else { return };
    let i = inputs(Some([8, 1, 1]), json!({"a": 2.5, "x": [1, 2, 3, 4, 5, 6, 7, 8], "y": {"fill": 1, "len": 8}}));
    let o = run(&device, &wgsl(SAXPY), &i);
    assert_eq!(
        buffers(&o),
        json!({"a": 2.5, "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
               "y": [3.5, 6.0, 8.5, 11.0, 13.5, 16.0, 18.5, 21.0]})
    );
    assert!(o.printed.is_empty());
    // Special values keep the interpreter's spelling, bit for bit.
    let i = inputs(Some([4, 1, 1]), json!({"a": 1, "x": ["inf", "-0.0", 1, "nan"], "y": [0, "-0.0", "0x7f800001", 1]}));
    let o = run(&device, &wgsl(SAXPY), &i);
    assert_eq!(o.buffers["y"][0], json!("inf"));
    assert_eq!(o.buffers["y"][1], json!("-0.0"));
    // 1 * NaN + 1 is a NaN; which one (its payload) is the device's to
    // choose (lavapipe keeps the canonical one, the H200 gives 0x7fffffff).
    assert!(xir::interp::is_nan_json(&o.buffers["y"][3]), "{}", o.buffers["y"][3]);
}

#[test]
fn without_a_dispatch_one_workgroup_runs_and_an_override_wins() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(SAXPY);
    let i = inputs(None, json!({"a": 1, "x": [1, 1, 1, 1, 1, 1, 1, 1], "y": [0, 0, 0, 0, 0, 0, 0, 0]}));
    let o = run(&device, &words, &i);
    assert_eq!(o.buffers["y"], json!([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]));
    let i = i.with_dispatch([4, 1, 1]);
    let (o, _) = run_foreign_on(&device, &words, None, &i, Some([8, 1, 1])).unwrap();
    assert_eq!(o.buffers["y"], json!([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]));
}

#[test]
fn an_atomic_histogram() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(
        "@group(0) @binding(0) var<storage, read> data: array<u32>;
         @group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 8>;
         @compute @workgroup_size(32)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) { atomicAdd(&hist[data[id.x] % 8u], 1u); }",
    );
    let data: Vec<u32> = (0..128u32).map(|k| (k * k + 3 * k) % 11).collect();
    let mut want = [0u32; 8];
    for d in &data {
        want[(*d % 8) as usize] += 1;
    }
    let i = inputs(Some([128, 1, 1]), json!({"data": data, "hist": [0, 0, 0, 0, 0, 0, 0, 100]}));
    let o = run(&device, &words, &i);
    want[7] += 100;
    assert_eq!(o.buffers["hist"], json!(want));
}

#[test]
fn a_workgroup_shared_reduction() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(
        "@group(0) @binding(0) var<storage, read> values: array<u32>;
         @group(0) @binding(1) var<storage, read_write> sums: array<u32>;
         var<workgroup> tmp: array<u32, 64>;
         @compute @workgroup_size(64)
         fn main(@builtin(local_invocation_index) li: u32, @builtin(global_invocation_id) gid: vec3<u32>,
                 @builtin(workgroup_id) wid: vec3<u32>) {
             tmp[li] = values[gid.x];
             workgroupBarrier();
             var stride = 32u;
             while (stride > 0u) {
                 if (li < stride) { tmp[li] += tmp[li + stride]; }
                 workgroupBarrier();
                 stride = stride / 2u;
             }
             if (li == 0u) { sums[wid.x] = tmp[0]; }
         }",
    );
    let values: Vec<u32> = (0..256u32).map(|k| k * 7 % 13).collect();
    let want: Vec<u32> = values.chunks(64).map(|c| c.iter().sum()).collect();
    let i = inputs(Some([256, 1, 1]), json!({"values": values, "sums": [0, 0, 0, 0]}));
    let o = run(&device, &words, &i);
    assert_eq!(o.buffers["sums"], json!(want));
}

#[test]
fn a_struct_buffer_and_a_uniform_struct() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(
        "struct Particle { pos: vec3<f32>, mass: f32, vel: vec2<f32>, id: u32, m: mat2x2<f32>, k: i32 }
         struct Params { dt: f32, count: u32 }
         @group(0) @binding(0) var<storage, read_write> ps: array<Particle>;
         @group(0) @binding(1) var<uniform> params: Params;
         @compute @workgroup_size(2)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) {
             let i = id.x;
             if (i >= params.count) { return; }
             var p = ps[i];
             p.pos += vec3<f32>(p.vel, 0.0) * params.dt;
             p.mass += 1.0;
             p.id = p.id * 2u;
             p.m = transpose(p.m);
             p.k = -p.k;
             ps[i] = p;
         }",
    );
    let i = inputs(
        Some([4, 1, 1]),
        json!({
            "params": [0.5, 3],
            "ps": [
                [[1, 2, 3], 10, [2, 4], 7, [[1, 2], [3, 4]], 5],
                [[0, 0, 0], 0.25, [-2, 8], 0, [[0, 1], [1, 0]], -6],
                [[1, 1, 1], 1, [1, 1], 1, [[1, 0], [0, 1]], 1],
                [[9, 9, 9], 9, [9, 9], 9, [[9, 9], [9, 9]], 9]
            ]
        }),
    );
    let o = run(&device, &words, &i);
    assert_eq!(
        buffers(&o),
        json!({
            "params": [0.5, 3],
            "ps": [
                [[2.0, 4.0, 3.0], 11.0, [2.0, 4.0], 14, [[1.0, 3.0], [2.0, 4.0]], -5],
                [[-1.0, 4.0, 0.0], 1.25, [-2.0, 8.0], 0, [[0.0, 1.0], [1.0, 0.0]], 6],
                [[1.5, 1.5, 1.0], 2.0, [1.0, 1.0], 2, [[1.0, 0.0], [0.0, 1.0]], -1],
                [[9.0, 9.0, 9.0], 9.0, [9.0, 9.0], 9, [[9.0, 9.0], [9.0, 9.0]], 9]
            ]
        })
    );
}

#[test]
fn a_storage_image() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(
        "@group(0) @binding(0) var img: texture_storage_2d<rgba32float, read_write>;
         @compute @workgroup_size(2, 2)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) {
             let c = vec2<i32>(id.xy);
             textureStore(img, c, textureLoad(img, c) * 2.0 + vec4<f32>(f32(id.x), f32(id.y), 0.0, 1.0));
         }",
    );
    let texels = json!([[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]);
    let i = inputs(Some([2, 2, 1]), json!({"img": {"size": [2, 2], "texels": texels}}));
    let o = run(&device, &words, &i);
    assert_eq!(
        o.buffers["img"],
        json!({"size": [2, 2], "texels": [[2.0, 2.0, 2.0, 3.0], [5.0, 4.0, 4.0, 5.0], [6.0, 7.0, 6.0, 7.0],
                                          [9.0, 9.0, 8.0, 9.0]]})
    );
}

const TWO_GROUPS: &str = "
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(2) @binding(1) var<storage, read_write> b: array<u32>;
@group(2) @binding(5) var<storage, read_write> spare: array<u32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { b[id.x] = a[id.x] + 1u; }";

#[test]
fn two_bind_groups_with_an_empty_set_between_and_an_unused_variable() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(TWO_GROUPS);
    let i = inputs(Some([4, 1, 1]), json!({"a": [1, 2, 3, 4], "b": [0, 0, 0, 0]}));
    assert_eq!(buffers(&run(&device, &words, &i)), json!({"a": [1, 2, 3, 4], "b": [2, 3, 4, 5]}));
    // An unused variable may be given: it is not bound and comes back as given.
    let i = inputs(Some([4, 1, 1]), json!({"a": [1, 2, 3, 4], "b": [0, 0, 0, 0], "spare": [9]}));
    assert_eq!(buffers(&run(&device, &words, &i)), json!({"a": [1, 2, 3, 4], "b": [2, 3, 4, 5], "spare": [9]}));
}

#[test]
fn a_glsl_compute_shader() {
    let Some(device) = common::vulkan_device() else { return };
    let src = "#version 450
layout(local_size_x = 2, local_size_y = 2) in;
layout(std430, set = 0, binding = 0) buffer Data { int v[]; };
layout(std140, set = 0, binding = 1) uniform Params { int scale; ivec2 size; } params;
void main() {
    uint i = gl_GlobalInvocationID.y * uint(params.size.x) + gl_GlobalInvocationID.x;
    v[i] = v[i] * params.scale - int(i);
}
";
    let words = naga_spirv(src, Language::Glsl, "k.comp").unwrap();
    let i = inputs(Some([2, 4, 1]), json!({"v": [1, 2, 3, 4, 5, 6, 7, 8], "params": [3, [2, 4]]}));
    let o = run(&device, &words, &i);
    assert_eq!(o.buffers["v"], json!([3, 5, 7, 9, 11, 13, 15, 17]));
}

#[test]
fn sixteen_bit_buffers_run_or_are_refused_by_feature_name() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(
        "enable f16;
         @group(0) @binding(0) var<storage, read_write> h: array<f16>;
         @compute @workgroup_size(4)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) { h[id.x] = h[id.x] * 2.0h; }",
    );
    let i = inputs(Some([4, 1, 1]), json!({"h": [1, 0.5, "inf", 65504]}));
    let needed = [xir_spirv::Feature::Float16, xir_spirv::Feature::StorageBuffer16BitAccess];
    if needed.iter().all(|f| device.enabled.contains(*f)) {
        let o = run(&device, &words, &i);
        assert_eq!(o.buffers["h"], json!([2.0, 1.0, "inf", "inf"]));
    } else {
        let e = refusal(&device, &words, &i).to_string();
        assert!(e.starts_with("foreign SPIR-V: OpCapability "), "{e}");
    }
}

#[test]
fn a_dispatch_that_is_not_a_multiple_of_the_workgroup_size_is_refused() {
    let Some(device) = common::vulkan_device() else { return };
    let i = inputs(Some([6, 1, 1]), json!({"a": 1, "x": [1, 1, 1, 1, 1, 1], "y": [0, 0, 0, 0, 0, 0]}));
    assert_eq!(
        refusal(&device, &wgsl(SAXPY), &i).to_string(),
        "ABI mismatch: dispatch [6, 1, 1] is not a multiple of the workgroup size [4, 1, 1]: 6 threads along x for \
         workgroups of 4 (a foreign module has no bound check of its own, so the runner does not round up)"
    );
}

#[test]
fn missing_and_unknown_inputs_are_refused() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(SAXPY);
    let i = inputs(Some([4, 1, 1]), json!({"a": 1, "x": [1, 1, 1, 1]}));
    assert_eq!(
        refusal(&device, &words, &i).to_string(),
        "ABI mismatch: no input for `y` (storage buffer, set 0 binding 2)"
    );
    let i = inputs(Some([4, 1, 1]), json!({"a": 1, "x": [1, 1, 1, 1], "y": [0, 0, 0, 0], "z": [0]}));
    assert_eq!(
        refusal(&device, &words, &i).to_string(),
        "ABI mismatch: input `z` names no descriptor variable of entry point `main` (it uses `a`, `x`, `y`)"
    );
    let i = inputs(Some([4, 1, 1]), json!({"a": [1], "x": [1, 1, 1, 1], "y": [0, 0, 0, true]}));
    assert_eq!(
        refusal(&device, &words, &i).to_string(),
        "ABI mismatch: `a` (uniform buffer): expected a float, found [1]"
    );
    let i = inputs(Some([4, 1, 1]), json!({"a": 1, "x": [1, 1, 1, 1], "y": [0, 0, 0, true]}));
    assert_eq!(
        refusal(&device, &words, &i).to_string(),
        "ABI mismatch: `y` (storage buffer): element 3: expected a float, found true"
    );
    let i = inputs(Some([4, 1, 1]), json!({"a": 1, "x": [1, 1, 1, 1], "y": []}));
    assert_eq!(
        refusal(&device, &words, &i).to_string(),
        "ABI mismatch: `y` (storage buffer): an empty buffer cannot be bound (a Vulkan descriptor covers at least \
         one byte)"
    );
}

#[test]
fn malformed_words_are_refused_and_push_constants_are_pushed() {
    let Some(device) = common::vulkan_device() else { return };
    let e = run_foreign_on(&device, &[0x0723_0203, 1], None, &Inputs::new(), None).unwrap_err();
    assert_eq!(e.to_string(), "foreign SPIR-V: not a SPIR-V module: 2 words, a header alone is 5");
    // naga's GLSL front end writes push constants; its validator needs the capability.
    let src = "#version 450
layout(local_size_x = 1) in;
layout(push_constant) uniform PC { float k; uint n; } pc;
layout(std430, binding = 0) buffer Data { float v[]; };
void main() { v[0] = pc.k * float(pc.n); }
";
    let module = naga::front::glsl::Frontend::default()
        .parse(&naga::front::glsl::Options::from(naga::ShaderStage::Compute), src)
        .unwrap();
    let caps = naga::valid::Capabilities::IMMEDIATES;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps).validate(&module).unwrap();
    let words = naga::back::spv::write_vec(&module, &info, &xir_frontend::oracle::writer_options(), None).unwrap();
    // The block is an input keyed by its name, its value `[member, ...]`, and comes back as given.
    let o = run(&device, &words, &inputs(None, json!({"pc": [1.5, 4], "v": [0]})));
    assert_eq!(buffers(&o), json!({"pc": [1.5, 4], "v": [6.0]}));
    let e = run_foreign_on(&device, &words, None, &inputs(None, json!({"v": [0]})), None).unwrap_err();
    assert_eq!(e.to_string(), "ABI mismatch: no input for `pc` (push constants)");
}

#[test]
fn subgroup_operations_run_when_the_device_has_them() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(
        "@group(0) @binding(0) var<storage, read_write> ok: array<u32>;
         @compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(subgroup_size) n: u32) {
             ok[id.x] = select(0u, 1u, subgroupAdd(1u) == n);
         }",
    );
    let i = inputs(Some([64, 1, 1]), json!({"ok": {"fill": 7, "len": 64}}));
    match run_foreign_on(&device, &words, None, &i, None) {
        Ok((o, _)) => assert_eq!(o.buffers["ok"], json!(vec![1; 64])),
        // A device without subgroup arithmetic in compute shaders: refused by name.
        Err(e) => {
            let e = e.to_string();
            assert!(e.starts_with("foreign SPIR-V: OpCapability GroupNonUniform"), "{e}");
            assert!(e.contains("subgroup operations in compute shaders"), "{e}");
        }
    }
}

const HEADER: &str = "
struct Counted { count: u32, scale: vec2<f32>, items: array<f32> }
@group(0) @binding(0) var<storage, read_write> c: Counted;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    c.items[id.x] = c.items[id.x] * c.scale.x + c.scale.y;
    if (id.x == 0u) { c.count = arrayLength(&c.items); }
}";

/// A block of several members is taken whole (`[member, ...]`) or member
/// by member under the front end's keys (`c.count`, ...: a member that is
/// not an array a one-element list), and comes back in the form given.
#[test]
fn a_block_is_taken_whole_or_member_by_member() {
    let Some(device) = common::vulkan_device() else { return };
    let words = wgsl(HEADER);
    let whole = inputs(Some([4, 1, 1]), json!({"c": [7, [2, 1], [1, 2, 3, 4]]}));
    assert_eq!(buffers(&run(&device, &words, &whole)), json!({"c": [4, [2.0, 1.0], [3.0, 5.0, 7.0, 9.0]]}));
    let split = json!({"c.count": [7], "c.scale": {"fill": [2, 1], "len": 1}, "c.items": [1, 2, 3, 4]});
    assert_eq!(
        buffers(&run(&device, &words, &inputs(Some([4, 1, 1]), split))),
        json!({"c.count": [4], "c.scale": [[2.0, 1.0]], "c.items": [3.0, 5.0, 7.0, 9.0]})
    );
    let missing = inputs(Some([4, 1, 1]), json!({"c.count": [7], "c.items": [1, 2, 3, 4]}));
    assert_eq!(
        refusal(&device, &words, &missing).to_string(),
        "ABI mismatch: no input for `c.scale`: `c` is given member by member, and every member must be"
    );
    let long = inputs(Some([4, 1, 1]), json!({"c.count": [7, 8], "c.scale": [[2, 1]], "c.items": [1, 2, 3, 4]}));
    assert_eq!(
        refusal(&device, &words, &long).to_string(),
        "ABI mismatch: `c.count`: a value that is not an array takes a one-element list, `[v]` or `{\"fill\": v, \
         \"len\": 1}` (the front end holds it as a one-element buffer), not a list of 2"
    );
}
