//! End-to-end: XIR text in `xir.spirv` form to validated SPIR-V at every
//! optimizer preset, with the kernel ABI.

mod common;

use common::*;
use xir_spirv::abi::Role;
use xir_spirv::{BufferStorage, PropertyKind};

const SAXPY: &str = include_str!("../../tests/corpus/saxpy.xir");

#[test]
fn saxpy_validates_at_every_preset_with_its_abi() {
    let out = compile_all_presets(SAXPY);
    let abi = &out.abi;
    assert_eq!(abi.entry_point, "main");
    assert_eq!(abi.block_size, [64, 1, 1]);
    // dispatch size (16 bytes) + f32 a
    assert_eq!(abi.push_constant_size, 20);
    let kinds: Vec<_> = abi.properties.iter().map(|p| (p.kind, p.role, p.arg_index, p.binding)).collect();
    assert_eq!(
        kinds,
        vec![
            (PropertyKind::ConstantValue { offset: 0, size: 12 }, Role::DispatchSize, None, u32::MAX),
            (PropertyKind::ConstantValue { offset: 16, size: 4 }, Role::PushValue, Some(0), u32::MAX),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(1), 0),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(2), 1),
        ]
    );
    assert_eq!(abi.properties[2].storage, BufferStorage::Typed { stride: 4 });
    let dis = out.disassembly();
    assert!(dis.contains("OpEntryPoint GLCompute"), "{dis}");
    assert!(dis.contains("LocalSize 64 1 1"), "{dis}");
    assert_eq!(count(&dis, "OpSelectionMerge"), 2, "kernel if + entry bounds check:\n{dis}");
    assert_eq!(count(&dis, "NoContraction"), 2, "{dis}");
    // IEEE signed zeros / Inf / NaN are requested (Vulkan may flush -0.0 otherwise).
    assert!(dis.contains("SignedZeroInfNanPreserve 32"), "{dis}");
    assert!(out.features.contains(xir_spirv::Feature::SignedZeroInfNanPreserve));
}

#[test]
fn value_arguments_get_host_aligned_push_constant_slots() {
    let src = r#"
kernel @k(%flag: bool, %v: vec<f32, 3>, %s: struct<align 8>{u32, f64}, %n: u16, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = extract %v, u32 1 : f32
  %y = select %flag, %x, f32 0.0 : f32
  %d = extract %s, u32 1 : f64
  %df = cast.static %d : f32
  %nf = cast.static %n : f32
  %r = add %y, %df : f32
  %r2 = add %r, %nf : f32
  buffer.write %out, u32 0, %r2
  return
}
"#;
    let out = compile_all_presets(src);
    let slots: Vec<_> = out
        .abi
        .properties
        .iter()
        .filter_map(|p| match (p.kind, p.role) {
            (PropertyKind::ConstantValue { offset, size }, Role::PushValue) => {
                Some((p.arg_index.unwrap(), offset, size))
            }
            _ => None,
        })
        .collect();
    // bool as a 0/1 word @16; vec3 (16 bytes, align 16) @32; struct{u32, f64} (16, align 8) @48; u16 @64
    assert_eq!(slots, vec![(0, 16, 4), (1, 32, 16), (2, 48, 16), (3, 64, 2)]);
    assert_eq!(out.abi.push_constant_size, 68);
    assert!(out.features.contains(xir_spirv::Feature::StoragePushConstant16));
    let buf = out.abi.descriptors().next().unwrap();
    assert_eq!((buf.arg_index, buf.binding), (Some(4), 0));
}
