//! Device limits checked before any pipeline is created (`vulkan/limits.rs`):
//! for each limit, a kernel or a resource one over the opened device's own
//! limit is refused by the limit's Vulkan name (the driver never sees it),
//! and one at the limit runs. Limits a conformant kernel of this backend
//! cannot exceed on a real device (push constants, at most 128 bytes; the
//! storage-buffer range) are lowered on the device to reach them.

mod common;

use common::*;
use serde_json::json;
use xir_vulkan::{footprint, Device, RunError, MAX_PRIVATE_BYTES};

/// Compile `src` at `level` and run it with `args` over `dispatch` threads.
fn run(dev: &Device, src: &str, level: u8, args: serde_json::Value, dispatch: [u32; 3]) -> Result<(), RunError> {
    let m = parse(src);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(level, false)).unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)));
    let j = json!({"dispatch": dispatch, "args": args});
    let inputs = xir::interp::Inputs::from_json(&j.to_string()).expect("inputs");
    xir_vulkan::run_kernel(dev, &m, k, &out.words, &out.abi, &inputs, dispatch).map(|_| ())
}

/// The refusal of `r`, which must name `name`.
fn refused(r: Result<(), RunError>, name: &str) {
    match r {
        Err(RunError::Limit(msg)) if msg.contains(name) => {}
        other => panic!("expected a refusal naming {name}, got {other:?}"),
    }
}

fn block_kernel(b: [u32; 3]) -> String {
    format!(
        "kernel @k(%out: buffer<u32>) block_size({}, {}, {}) {{\n^entry:\n  \
         %t = extract $dispatch_id, u32 0 : u32\n  buffer.write %out, %t, %t\n  return\n}}\n",
        b[0], b[1], b[2]
    )
}

fn out(len: u32) -> serde_json::Value {
    json!({"out": {"fill": 0, "len": len}})
}

#[test]
fn a_block_over_the_work_group_size_or_invocations_is_refused_by_name() {
    let Some(dev) = vulkan_device() else { return };
    let l = dev.limits;
    let inv = l.max_compute_work_group_invocations;
    for k in 0..3 {
        let mut b = [1; 3];
        b[k] = l.max_compute_work_group_size[k] + 1;
        refused(run(&dev, &block_kernel(b), 0, out(1), b), &format!("maxComputeWorkGroupSize[{k}]"));
        b[k] = l.max_compute_work_group_size[k].min(inv);
        run(&dev, &block_kernel(b), 0, out(b[0]), b).expect("at the limit");
    }
    // Every dimension within its own limit, the product one block over (or two when odd).
    let half = inv / 2;
    if half < l.max_compute_work_group_size[0] && l.max_compute_work_group_size[1] >= 2 {
        let b = [half + 1, 2, 1];
        refused(run(&dev, &block_kernel(b), 0, out(b[0]), b), "maxComputeWorkGroupInvocations");
        let b = [half, 2, 1];
        run(&dev, &block_kernel(b), 0, out(b[0]), b).expect("at the limit");
    }
}

fn shared_kernel(words: u64) -> String {
    format!(
        "kernel @k(%out: buffer<u32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %sh = alloca.shared : array<u32, {words}>\n  %t = extract $thread_id, u32 0 : u32\n  \
         %i = sub u32 {last}, %t : u32\n  %p = gep %sh, %i : u32\n  store %p, %t\n  sync_block\n  \
         %q = load %p : u32\n  %g = extract $dispatch_id, u32 0 : u32\n  buffer.write %out, %g, %q\n  return\n}}\n",
        last = words - 1
    )
}

#[test]
fn shared_memory_over_the_device_limit_is_refused_by_name() {
    let Some(dev) = vulkan_device() else { return };
    let words = u64::from(dev.limits.max_compute_shared_memory_size) / 4;
    for level in [0u8, 2] {
        refused(run(&dev, &shared_kernel(words + 1), level, out(64), [64, 1, 1]), "maxComputeSharedMemorySize");
        run(&dev, &shared_kernel(words), level, out(64), [64, 1, 1]).expect("at the limit");
    }
}

fn private_kernel(words: u64) -> String {
    format!(
        "kernel @k(%out: buffer<u32>, %i: u32) block_size(1, 1, 1) {{\n^entry:\n  \
         %a = alloca : array<u32, {words}>\n  %p = gep %a, %i : u32\n  store %p, u32 7\n  \
         %j = add %i, u32 1 : u32\n  %r = gep %a, %j : u32\n  store %r, u32 9\n  \
         %q = load %p : u32\n  buffer.write %out, u32 0, %q\n  return\n}}\n"
    )
}

#[test]
fn private_memory_over_the_runners_limit_is_refused_by_name() {
    let Some(dev) = vulkan_device() else { return };
    let args = json!({"out": [0], "i": 3});
    // 16 GiB per invocation: the driver crashed on it.
    refused(run(&dev, &private_kernel(4_294_967_295), 0, args.clone(), [1, 1, 1]), "MAX_PRIVATE_BYTES");
    let words = MAX_PRIVATE_BYTES / 4;
    let m = parse(&private_kernel(words));
    let o = xir_spirv::compile(&m, kernel_of(&m), &opts(0, false)).expect("compiles");
    assert_eq!(footprint(&o.words).unwrap().private_bytes, MAX_PRIVATE_BYTES, "the array is the only private memory");
    refused(run(&dev, &private_kernel(words + 1), 0, args.clone(), [1, 1, 1]), "MAX_PRIVATE_BYTES");
    run(&dev, &private_kernel(words), 0, args, [1, 1, 1]).expect("at the limit");
}

fn image_kernel(dim: u32) -> String {
    let (c, ty) = if dim == 3 {
        ("%c = aggregate u32 0, u32 0, u32 0 : vec<u32, 3>", "texture3d")
    } else {
        ("%c = aggregate u32 0, u32 0 : vec<u32, 2>", "texture2d")
    };
    format!(
        "kernel @k(%v: {ty}<f32>, %out: buffer<f32>) block_size(1, 1, 1) {{\n^entry:\n  {c}\n  \
         %t = texture.read %v, %c : vec<f32, 4>\n  %x = extract %t, u32 0 : f32\n  \
         buffer.write %out, u32 0, %x\n  return\n}}\n"
    )
}

#[test]
fn a_texture_over_the_image_dimension_limit_is_refused_by_name() {
    let Some(dev) = vulkan_device() else { return };
    let l = dev.limits;
    for (dim, max, name) in
        [(3, l.max_image_dimension_3d, "maxImageDimension3D"), (2, l.max_image_dimension_2d, "maxImageDimension2D")]
    {
        let size = |n: u32| if dim == 3 { json!([1, n, 1]) } else { json!([n, 1]) };
        let args = |n: u32| json!({"v": {"size": size(n), "fill": [1.5, 0, 0, 0]}, "out": [0.0]});
        refused(run(&dev, &image_kernel(dim), 0, args(max + 1), [1, 1, 1]), name);
        run(&dev, &image_kernel(dim), 0, args(max), [1, 1, 1]).expect("at the limit");
    }
}

#[test]
fn a_dispatch_over_the_work_group_count_is_refused_by_name() {
    let Some(mut dev) = vulkan_device() else { return };
    // The H200 allows 2^31 - 1 groups, too many to run at the limit in a
    // test: the limit is lowered to at most 2^16 (lavapipe's 65535 stays).
    let max = dev.limits.max_compute_work_group_count[0].min(1 << 16);
    dev.limits.max_compute_work_group_count[0] = max;
    let src = block_kernel([1, 1, 1]);
    refused(run(&dev, &src, 0, out(1), [max + 1, 1, 1]), "maxComputeWorkGroupCount[0]");
    run(&dev, &src, 0, out(max), [max, 1, 1]).expect("at the limit");
}

#[test]
fn push_constants_and_storage_buffers_over_a_lowered_limit_are_refused_by_name() {
    let Some(mut dev) = vulkan_device() else { return };
    let src = "kernel @k(%out: buffer<u32>, %a: u32, %b: u32) block_size(1, 1, 1) {\n^entry:\n  \
               %s = add %a, %b : u32\n  buffer.write %out, u32 0, %s\n  return\n}\n";
    let m = parse(src);
    let push = xir_spirv::compile(&m, kernel_of(&m), &opts(0, false)).unwrap().abi.push_constant_size;
    assert!(push > 0);
    let args = json!({"out": {"fill": 0, "len": 64}, "a": 1, "b": 2});
    let real = dev.limits;
    dev.limits.max_push_constants_size = push - 1;
    refused(run(&dev, src, 0, args.clone(), [1, 1, 1]), "maxPushConstantsSize");
    dev.limits.max_push_constants_size = push;
    run(&dev, src, 0, args.clone(), [1, 1, 1]).expect("at the limit");
    dev.limits = real;
    dev.limits.max_storage_buffer_range = 255;
    refused(run(&dev, src, 0, args.clone(), [1, 1, 1]), "maxStorageBufferRange");
    dev.limits.max_storage_buffer_range = 256;
    run(&dev, src, 0, args, [1, 1, 1]).expect("at the limit");
}

#[test]
fn a_heap_texture_over_the_image_dimension_limit_is_refused_by_name() {
    let Some(dev) = vulkan_device() else { return };
    let src = "kernel @k(%h: bindless_array, %out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n  \
               %c = aggregate u32 0, u32 0 : vec<u32, 2>\n  %t = bindless.texture2d_read %h, u32 0, %c : vec<f32, 4>\n  \
               %x = extract %t, u32 0 : f32\n  buffer.write %out, u32 0, %x\n  return\n}\n";
    let max = dev.limits.max_image_dimension_2d;
    let args =
        |n: u32| json!({"h": {"slots": [{"elem": "f32", "size": [n, 1], "fill": [1.5, 0, 0, 0]}]}, "out": [0.0]});
    match run(&dev, src, 0, args(max + 1), [1, 1, 1]) {
        Err(RunError::Abi(m)) if m.contains(&format!("exceeds the device's maxImageDimension2D of {max}")) => {}
        other => panic!("expected a refusal naming maxImageDimension2D, got {other:?}"),
    }
    run(&dev, src, 0, args(max), [1, 1, 1]).expect("at the limit");
}
