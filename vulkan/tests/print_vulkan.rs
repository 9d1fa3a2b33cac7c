//! Printing kernels on the Vulkan device, with their output captured: the
//! runner opens the device with the validation layer's debug printf
//! (`Device::with_printf`), the shader prints exact bits, and the host
//! formats each line from the printer records with the interpreter's
//! formatter. The captured lines must equal the interpreter's, at -O0 and
//! -O2, for integers of every width, f16/f32/f64 (-0.0, NaN, infinities,
//! subnormals, the largest finite values), vectors, matrices and bools; and
//! in the interpreter's order (a kernel without barriers: workgroups, then
//! invocations; prints in callables called from two places and in loops keep
//! each invocation's program order; constant data is bound). A printing
//! kernel is refused by the plain runner, and by a device without the capture.
//!
//! Skips (loudly) only without any Vulkan device, or without the debug-printf
//! consumer (the Khronos validation layer) on the machine.

mod common;

use common::*;
use xir_spirv::Feature;
use xir_vulkan::{Device, RunError};

const SRC: &str = r#"
kernel @k(%out: buffer<u32>, %fs: buffer<f32>, %ds: buffer<f64>, %hs: buffer<f16>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %f = buffer.read %fs, %t : f32
  %d = buffer.read %ds, %t : f64
  %h = buffer.read %hs, %t : f16
  %neg = sub u32 0, %t : u32
  %big = mul %neg, u32 2654435761 : u32
  %i8 = cast.static %neg : i8
  %u8 = cast.static %big : u8
  %i16 = cast.static %big : i16
  %u16 = cast.static %neg : u16
  %i32 = cast.static %neg : i32
  %w = cast.static %big : u64
  %w2 = mul %w, u64 4294967311 : u64
  %i64 = cast.static %w2 : i64
  %b = lt %t, u32 3 : bool
  %v = aggregate %f, %f, %f : vec<f32, 3>
  %c = aggregate %d, %d : vec<f64, 2>
  %m = aggregate %c, %c : mat<f64, 2>
  %nb = lt u32 5, %t : bool
  %bv = aggregate %b, %nb : vec<bool, 2>
  print "t={} f={} d={} h={}", %t, %f, %d, %h
  print "ints {} {} {} {} {} {} {} {}", %i8, %u8, %i16, %u16, %i32, %big, %i64, %w2
  print "{{b}}={} v={} m={} bv={} 100%", %b, %v, %m, %bv
  print "left over", %h
  buffer.write %out, %t, %big
  return
}
"#;

const INPUTS: &str = r#"{"dispatch": [8, 1, 1], "args": {
  "out": {"fill": 0, "len": 8},
  "fs": ["-0.0", "nan", "inf", "-inf", "0x00000001", 0.1, "0x7f7fffff", 1.5],
  "ds": ["-0.0", "-nan", "-inf", "inf", "0x0000000000000001", 0.1, "0x7fefffffffffffff", -2.75],
  "hs": ["-0.0", "nan", "inf", "0x0001", "0x03ff", 0.1, 65504, "-inf"]
}}"#;

/// The device with the debug-printf capture, or `None` after a loud message
/// when the machine has no Vulkan device or no debug-printf consumer.
fn printf_device() -> Option<Device> {
    match Device::with_printf() {
        Ok(d) => Some(d),
        Err(RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING VULKAN TEST: no Vulkan device ({why}) !!!!!!!!\n");
            None
        }
        Err(RunError::Printf(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING PRINT CAPTURE: no debug-printf consumer ({why}) !!!!!!!!\n");
            None
        }
        Err(e) => panic!("creating the printing device failed: {e}"),
    }
}

fn inputs() -> xir::interp::Inputs {
    xir::interp::Inputs::from_json(INPUTS).expect("inputs")
}

#[test]
fn captured_lines_equal_the_interpreters_at_o0_and_o2() {
    let Some(dev) = printf_device() else { return };
    eprintln!("device {} ({})", dev.name, dev.driver);
    assert!(dev.enabled.contains(Feature::ShaderNonSemanticInfo), "debug printf needs the non-semantic extension");
    let m = parse(SRC);
    let k = kernel_of(&m);
    let want = xir::interp::run_kernel(&m, k, &inputs()).expect("interpreter");
    assert_eq!(want.printed.len(), 32);
    // The interpreter's own text for the values that differ most from C printf.
    assert_eq!(want.printed[0], "t=0 f=-0 d=-0 h=-0");
    assert_eq!(want.printed[4], "t=1 f=NaN d=NaN h=NaN");
    assert_eq!(want.printed[12], "t=3 f=-inf d=inf h=0.00000005960464477539063");
    assert!(want.printed[16].starts_with("t=4 f=0.000000000000000000000000000000000000000000001 d=0.000"));
    assert_eq!(want.printed[20], "t=5 f=0.1 d=0.1 h=0.0999755859375");
    assert_eq!(want.printed[5], "ints -1 79 -31153 65535 -1 1640531535 7046029315489652385 7046029315489652385");
    assert_eq!(want.printed[6], "{{b}}=true v=(NaN, NaN, NaN) m=((NaN, NaN), (NaN, NaN)) bv=(true, false) 100%");
    assert!(want.printed.contains(&"t=2 f=inf d=-inf h=inf".to_string()), "{:?}", want.printed);
    for level in [0u8, 2] {
        let o = xir_spirv::CompileOptions { device_features: Some(dev.enabled), ..opts(level, false) };
        let out = xir_spirv::compile(&m, k, &o).expect("compiles for the device");
        assert_eq!(out.printers.len(), 4);
        let (got, _, cap) =
            xir_vulkan::run_kernel_printing(&dev, &m, k, (&out).into(), &out.printers, &inputs(), [8, 1, 1])
                .expect("runs on Vulkan");
        assert!(!cap.truncated, "-O{level}: the printf buffer overflowed");
        // Same lines in the same order (no barriers: workgroup, then invocation).
        assert_eq!(got.printed, want.printed, "-O{level}");
        assert_eq!(want.first_mismatch(&got, |_, _| false), None, "-O{level}");
        let threads: Vec<u32> = cap.lines.iter().map(|l| l.thread[0]).collect();
        assert_eq!(threads, (0..8).flat_map(|t| [t; 4]).collect::<Vec<_>>(), "-O{level}");
    }
}

#[test]
fn many_threads_fill_the_raised_printf_buffer() {
    let Some(dev) = printf_device() else { return };
    let src = r#"
kernel @k(%out: buffer<u32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %l = extract $thread_id, u32 0 : u32
  print "t={} l={}", %t, %l
  buffer.write %out, %t, %l
  return
}
"#;
    let m = parse(src);
    let k = kernel_of(&m);
    let n = 1024u32;
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [{n}, 1, 1], "args": {{"out": {{"fill": 0, "len": {n}}}}}}}"#
    ))
    .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    let o = xir_spirv::CompileOptions { device_features: Some(dev.enabled), ..opts(0, false) };
    let out = xir_spirv::compile(&m, k, &o).expect("compiles");
    let (got, _, cap) =
        xir_vulkan::run_kernel_printing(&dev, &m, k, (&out).into(), &out.printers, &inputs, [n, 1, 1]).expect("runs");
    // 1024 messages of 8 header + 3 + 2 words: 53 KiB, over the layer's default 1 KiB.
    eprintln!("printf buffer: {:?} bytes, {} lines", cap.buffer_size, cap.lines.len());
    match cap.buffer_size {
        Some(size) if size as usize >= 1024 * 13 * 4 + 64 => {
            assert!(!cap.truncated);
            assert_eq!(got.printed, want.printed);
        }
        // A user's settings file keeps a smaller buffer: the loss is reported, never silent.
        size => {
            eprintln!(
                "!!!!!!!! printf buffer {size:?} bytes (user settings): checking truncation is reported !!!!!!!!"
            );
            assert!(cap.truncated && got.printed.len() < want.printed.len());
        }
    }
}

#[test]
fn printing_kernels_are_refused_without_the_capture() {
    let m = parse(SRC);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    assert!(xir_vulkan::imports_debug_printf(&out.words));
    let plain =
        compile_with(&SRC.lines().filter(|l| !l.contains("print")).collect::<Vec<_>>().join("\n"), &opts(0, false));
    assert!(!xir_vulkan::imports_debug_printf(&plain.words));
    let Some(dev) = vulkan_device() else { return };
    // The plain runner never runs a printing kernel (its lines would be lost).
    let e = xir_vulkan::run_kernel(&dev, &m, k, &out.words, &out.abi, &inputs(), [8, 1, 1]).unwrap_err();
    assert!(matches!(&e, RunError::Printf(why) if why.contains("run_kernel_printing")), "{e}");
    // Nor does the printing runner on a device opened without the capture.
    let e =
        xir_vulkan::run_kernel_printing(&dev, &m, k, (&out).into(), &out.printers, &inputs(), [8, 1, 1]).unwrap_err();
    assert!(matches!(&e, RunError::Printf(why) if why.contains("with_printf")), "{e}");
    // Damaged records (from a caller, not the codec) are refused before any dispatch.
    let mut bad = out.printers.clone();
    bad[1].arg_types.pop();
    let e = xir_vulkan::run_kernel_printing(&dev, &m, k, (&out).into(), &bad, &inputs(), [8, 1, 1]).unwrap_err();
    assert!(matches!(&e, RunError::Printf(why) if why.contains("8 placeholders for 7 arguments")), "{e}");
}

#[test]
fn a_printing_kernel_with_constant_data_binds_it() {
    let Some(dev) = printf_device() else { return };
    let table: Vec<String> = (0..64).map(|i| format!("{:.1}", i as f32 * 1.5 - 7.0)).collect();
    let src = format!(
        "kernel @k(%out: buffer<f32>) block_size(16, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  \
         %j = mod %i, u32 64 : u32\n  \
         %x = extract array<f32, 64> [{}], %j : f32\n  \
         print \"table[{{}}]={{}}\", %j, %x\n  \
         buffer.write %out, %i, %x\n  return\n}}\n",
        table.join(", ")
    );
    let m = parse(&src);
    let k = kernel_of(&m);
    let inputs =
        xir::interp::Inputs::from_json(r#"{"dispatch": [32, 1, 1], "args": {"out": {"fill": 0.0, "len": 32}}}"#)
            .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    assert_eq!(want.printed[3], "table[3]=-2.5");
    let o = xir_spirv::CompileOptions { device_features: Some(dev.enabled), ..opts(2, false) };
    let out = xir_spirv::compile(&m, k, &o).expect("compiles");
    assert!(out.abi.constant_data_size() > 0, "the table is placed in the constant-data block");
    let e = xir_vulkan::run_compiled(&dev, &m, k, (&out).into(), &inputs, [32, 1, 1]).unwrap_err();
    assert!(matches!(&e, RunError::Printf(_)), "{e}");
    let (got, _, _) =
        xir_vulkan::run_kernel_printing(&dev, &m, k, (&out).into(), &out.printers, &inputs, [32, 1, 1]).expect("runs");
    assert_eq!(got.printed, want.printed);
    assert_eq!(want.first_mismatch(&got, |_, _| false), None);
}

#[test]
fn prints_in_callables_and_loops_keep_program_order_per_invocation() {
    let Some(dev) = printf_device() else { return };
    let src = r#"
callable @show(%x: f32, %k: u32) -> void {
^entry:
  print "k={} x={}", %k, %x
  return
}

kernel @k(%out: buffer<f32>) block_size(2, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %k = alloca : u32
  store %k, u32 0
  print "start {}", %t
  loop prepare ^prep, body ^body, update ^step, merge ^done
^prep:
  %kv = load %k : u32
  %more = lt %kv, %t : bool
  cond_br %more, true ^body, false ^done
^body:
  %kv1 = load %k : u32
  %f = cast.static %kv1 : f32
  %h = mul %f, f32 0.5 : f32
  call @show, %h, %kv1
  br target ^step
^step:
  %kv2 = load %k : u32
  %kn = add %kv2, u32 1 : u32
  store %k, %kn
  br target ^prep
^done:
  %tf = cast.static %t : f32
  call @show, %tf, u32 99
  print "done"
  buffer.write %out, %t, %tf
  return
}
"#;
    let m = parse(src);
    let k = kernel_of(&m);
    let inputs = xir::interp::Inputs::from_json(r#"{"dispatch": [5, 1, 1], "args": {"out": {"fill": 0.0, "len": 5}}}"#)
        .expect("inputs");
    let want = xir::interp::run_kernel(&m, k, &inputs).expect("interpreter");
    // 5 starts, 0+1+2+3+4 loop lines, 5 final calls, 5 argument-less lines.
    assert_eq!(want.printed.len(), 25);
    assert_eq!(want.printed[..5], ["start 0", "k=99 x=0", "done", "start 1", "k=0 x=0"]);
    for level in [0u8, 2] {
        let o = xir_spirv::CompileOptions { device_features: Some(dev.enabled), ..opts(level, false) };
        let out = xir_spirv::compile(&m, k, &o).expect("compiles");
        // One record per site: the kernel's two and the callable's (called from two places).
        assert_eq!(out.printers.len(), 3, "-O{level}");
        let (got, _, _) =
            xir_vulkan::run_kernel_printing(&dev, &m, k, (&out).into(), &out.printers, &inputs, [5, 1, 1])
                .expect("runs");
        assert_eq!(got.printed, want.printed, "-O{level}");
    }
}
