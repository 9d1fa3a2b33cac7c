//! The constant UBO on a real Vulkan device (lavapipe in CI, any device via
//! `common::vulkan_device()`): kernels that index lookup tables dynamically
//! (f32, i32, u32, vec2<u32>, vec3<f32>, vec4<i32>; u64 / f64 when the device
//! has shaderInt64 / shaderFloat64; u16 when it has the 16-bit Uniform-storage
//! feature) are compiled against the device's features at -O0 and -O2, the
//! table is checked to live in the constant-data uniform buffer, and the
//! runner's results equal the interpreter's bit for bit. Also: two tables in
//! one buffer, a whole-value use, the artifact round trip run from the
//! decoded artifact, the missing-constants refusal, and the
//! `maxUniformBufferRange` check one byte over a lowered limit.

mod common;

use common::*;
use xir_spirv::artifact::{decode, LoadRequirements, ShaderArtifact};
use xir_spirv::{CompileOptions, Feature, SpirvOutput};
use xir_vulkan::{run_compiled, Device, RunError};

/// A kernel writing `table[i % n]` (an `array<elem, n>` constant) to `out[i]`.
fn lookup(elem: &str, lits: &[String]) -> String {
    let n = lits.len();
    format!(
        "kernel @k(%out: buffer<{elem}>) block_size(64, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  %j = mod %i, u32 {n} : u32\n  \
         %x = extract array<{elem}, {n}> [{}], %j : {elem}\n  buffer.write %out, %i, %x\n  return\n}}\n",
        lits.join(", ")
    )
}

fn table(n: usize, f: impl Fn(usize) -> String) -> Vec<String> {
    (0..n).map(f).collect()
}

/// Inputs for `threads` threads with an output buffer `out` filled with `zero`.
fn inputs_for(threads: usize, zero: &str) -> xir::interp::Inputs {
    xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [{threads}, 1, 1], "args": {{"out": {{"fill": {zero}, "len": {threads}}}}}}}"#
    ))
    .expect("inputs")
}

fn compile_for(dev: &Device, m: &xir::Module, level: u8) -> SpirvOutput {
    let k = kernel_of(m);
    let o = CompileOptions { device_features: Some(dev.enabled), ..opts(level, false) };
    xir_spirv::compile(m, k, &o).unwrap_or_else(|d| panic!("{}", xir::diag::render(&d)))
}

/// Compile `src` at -O0 and -O2, check the table is in the uniform buffer, run, compare with the interpreter.
fn check_on(dev: &Device, what: &str, src: &str, threads: usize, zero: &str) {
    let m = parse(src);
    let k = kernel_of(&m);
    let inputs = inputs_for(threads, zero);
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    for level in [0u8, 2] {
        let out = compile_for(dev, &m, level);
        assert!(out.abi.constant_data().is_some(), "{what} -O{level}: not placed: {:?}", out.inline_constants);
        let (got, _) = run_compiled(dev, &m, k, (&out).into(), &inputs, [threads as u32, 1, 1])
            .unwrap_or_else(|e| panic!("{what} -O{level}: {e}"));
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "{what} -O{level}");
    }
}

#[test]
fn lookup_tables_run_like_the_interpreter() {
    let Some(dev) = vulkan_device() else { return };
    let f32s = table(300, |i| format!("{:?}", i as f32 * 1.5 - 7.0));
    check_on(&dev, "f32", &lookup("f32", &f32s), 337, "0.0");
    let i32s = table(300, |i| format!("{}", i as i32 * 37 - 5000));
    check_on(&dev, "i32", &lookup("i32", &i32s), 337, "0");
    let u32s = table(300, |i| format!("{}", (i as u32).wrapping_mul(2654435761)));
    check_on(&dev, "u32", &lookup("u32", &u32s), 337, "0");
    let v2 = table(200, |i| format!("[{}, {}]", i * 3, i * 7 + 1));
    check_on(&dev, "vec2<u32>", &lookup("vec<u32, 2>", &v2), 233, "[0, 0]");
    let v3 = table(100, |i| format!("[{:?}, {:?}, 3.5]", i as f32 * 0.25, -(i as f32)));
    check_on(&dev, "vec3<f32>", &lookup("vec<f32, 3>", &v3), 150, "[0.0, 0.0, 0.0]");
    let v4 = table(100, |i| format!("[{i}, -{i}, {}, -7]", i * 1000));
    check_on(&dev, "vec4<i32>", &lookup("vec<i32, 4>", &v4), 150, "[0, 0, 0, 0]");
    if dev.enabled.contains(Feature::Int64) {
        let u64s = table(200, |i| format!("{}", (1u64 << 40) + i as u64 * 12345));
        check_on(&dev, "u64", &lookup("u64", &u64s), 233, "0");
    } else {
        eprintln!("\n!!!!!!!! SKIPPING the u64 table: the device lacks shaderInt64 !!!!!!!!\n");
    }
    if dev.enabled.contains(Feature::Float64) {
        let f64s = table(200, |i| format!("{:?}", i as f64 * 0.1 + 1e-3));
        check_on(&dev, "f64", &lookup("f64", &f64s), 233, "0.0");
    } else {
        eprintln!("\n!!!!!!!! SKIPPING the f64 table: the device lacks shaderFloat64 !!!!!!!!\n");
    }
}

#[test]
fn a_narrow_table_runs_when_the_device_has_16_bit_uniform_storage() {
    let Some(dev) = vulkan_device() else { return };
    let needs = [Feature::UniformAndStorageBuffer16BitAccess, Feature::StorageBuffer16BitAccess, Feature::Int16];
    if let Some(f) = needs.iter().find(|f| !dev.enabled.contains(**f)) {
        eprintln!("\n!!!!!!!! SKIPPING the u16 table: the device lacks {} !!!!!!!!\n", f.vulkan_name());
        return;
    }
    let u16s = table(200, |i| format!("{}", (i * 331) % 65536));
    check_on(&dev, "u16", &lookup("u16", &u16s), 233, "0");
}

/// Two tables in one buffer (offsets 0 and 4800) and a whole-value use of the first (insert, then extract).
#[test]
fn two_tables_and_a_whole_value_use_run_like_the_interpreter() {
    let Some(dev) = vulkan_device() else { return };
    let a = table(300, |i| format!("{}", i as i32 * 3 - 450));
    let b = table(250, |i| format!("{}", i as i32 * -11));
    let src = format!(
        "kernel @k(%out: buffer<i32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  %j = mod %i, u32 300 : u32\n  %h = mod %i, u32 250 : u32\n  \
         %x = extract array<i32, 300> [{a}], %j : i32\n  %y = extract array<i32, 250> [{b}], %h : i32\n  \
         %t = insert array<i32, 300> [{a}], %y, %h : array<i32, 300>\n  \
         %k1 = add %j, u32 1 : u32\n  %k2 = mod %k1, u32 300 : u32\n  %w = extract %t, %k2 : i32\n  \
         %s = add %x, %w : i32\n  buffer.write %out, %i, %s\n  return\n}}\n",
        a = a.join(", "),
        b = b.join(", ")
    );
    let m = parse(&src);
    let out = compile_for(&dev, &m, 0);
    assert_eq!(out.abi.constant_data_size(), 4800 + 4000);
    assert!(out.disassembly().contains("OpCopyLogical"));
    check_on(&dev, "two tables", &src, 613, "0");
}

#[test]
fn a_decoded_artifact_runs_with_its_constant_data() {
    let Some(dev) = vulkan_device() else { return };
    let src = lookup("f32", &table(300, |i| format!("{:?}", i as f32 * 0.75 + 2.0)));
    let m = parse(&src);
    let k = kernel_of(&m);
    let out = compile_for(&dev, &m, 2);
    let bytes = ShaderArtifact::from_compiled(&m, k, &out).encode().expect("encodes");
    let back = decode(&bytes, &LoadRequirements::for_kernel(&m, k), Some(&dev.enabled)).expect("decodes");
    assert_eq!(back.constants, out.constants);
    let (sig, sk) = back.signature_module().expect("signature");
    let inputs = inputs_for(300, "0.0");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let (got, _) = run_compiled(&dev, &sig, sk, (&back).into(), &inputs, [300, 1, 1]).expect("runs");
    assert_eq!(want.first_mismatch(&got, |_, _| false), None);
    // Without its constant data, or with bytes it does not read, the kernel is refused before any dispatch.
    let e = xir_vulkan::run_kernel(&dev, &sig, sk, &back.words, &back.abi, &inputs, [300, 1, 1]).unwrap_err();
    assert!(matches!(&e, RunError::Abi(m) if m.contains("reads 4800 bytes of constant data, 0 given")), "{e}");
    let mut short = back.clone();
    short.constants.truncate(4784);
    let e = run_compiled(&dev, &sig, sk, (&short).into(), &inputs, [300, 1, 1]).unwrap_err();
    assert!(matches!(&e, RunError::Abi(m) if m.contains("4784 given")), "{e}");
}

#[test]
fn the_constant_data_is_refused_one_byte_over_max_uniform_buffer_range() {
    let Some(mut dev) = vulkan_device() else { return };
    let real = dev.max_uniform_buffer_range;
    assert!(real >= 16384, "Vulkan guarantees 16 KiB, the device says {real}");
    let src = lookup("f32", &table(300, |i| format!("{i}.25")));
    let m = parse(&src);
    let k = kernel_of(&m);
    let out = compile_for(&dev, &m, 0);
    assert_eq!(out.constants.len(), 4800);
    let inputs = inputs_for(300, "0.0");
    dev.max_uniform_buffer_range = 4799;
    let e = run_compiled(&dev, &m, k, (&out).into(), &inputs, [300, 1, 1]).unwrap_err();
    assert!(
        matches!(&e, RunError::Abi(m) if m.contains("4800 bytes of constant data exceed the device's maxUniformBufferRange of 4799")),
        "{e}"
    );
    dev.max_uniform_buffer_range = 4800;
    let (got, _) = run_compiled(&dev, &m, k, (&out).into(), &inputs, [300, 1, 1]).expect("runs at the limit");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    assert_eq!(want.first_mismatch(&got, |_, _| false), None);
    dev.max_uniform_buffer_range = real;
}

/// The constant data beside the bindless buffer heap: after the argument
/// descriptors in set 0 (binding 2), before the heap in set 2.
#[test]
fn the_constant_data_sits_between_the_arguments_and_the_heaps() {
    let Some(dev) = vulkan_device() else { return };
    let lut = table(256, |i| format!("{}", (i as u32).wrapping_mul(40503) ^ 0x5a5a));
    let src = format!(
        "kernel @k(%h: bindless_array, %o: buffer<u32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %t = extract $dispatch_id, u32 0 : u32\n  %x = bindless.buffer_read %h, u32 0, %t : u32\n  \
         %j = bit_and %x, u32 255 : u32\n  %y = extract array<u32, 256> [{}], %j : u32\n  \
         buffer.write %o, %t, %y\n  return\n}}\n",
        lut.join(", ")
    );
    let m = parse(&src);
    let k = kernel_of(&m);
    let out = compile_for(&dev, &m, 0);
    let shape: Vec<_> = out.abi.properties.iter().map(|p| (p.role, p.set, p.binding)).collect();
    use xir_spirv::abi::{Role, NO_BINDING};
    assert_eq!(
        shape,
        vec![
            (Role::DispatchSize, 0, NO_BINDING),
            (Role::BindlessMetadata, 0, 0),
            (Role::Buffer, 0, 1),
            (Role::ConstantData, 0, 2),
            (Role::Heap, 2, 0)
        ]
    );
    if let Some(f) = [Feature::StorageBufferArrayNonUniformIndexing, Feature::BufferHeapBindingFlags]
        .into_iter()
        .find(|f| !dev.enabled.contains(*f))
    {
        eprintln!("\n!!!!!!!! SKIPPING the bindless run: {} lacks {} !!!!!!!!\n", dev.name, f.vulkan_name());
        return;
    }
    let words: Vec<String> = (0..40).map(|i| format!("{}", i * 97 + 3)).collect();
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [40, 1, 1], "args": {{"h": {{"slots": [{{"u32": [{}]}}]}}, "o": {{"fill": 0, "len": 40}}}}}}"#,
        words.join(", ")
    ))
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    for level in [0u8, 2] {
        let out = compile_for(&dev, &m, level);
        let (got, _) = run_compiled(&dev, &m, k, (&out).into(), &inputs, [40, 1, 1]).expect("runs");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}");
    }
}
