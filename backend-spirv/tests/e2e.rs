//! End-to-end: XIR text in `xir.spirv` form to validated SPIR-V at every
//! optimizer preset, with the kernel ABI.

mod common;

use common::*;
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
    let kinds: Vec<_> = abi.properties.iter().map(|p| (p.kind, p.arg_index, p.binding)).collect();
    assert_eq!(
        kinds,
        vec![
            (PropertyKind::DispatchSize { offset: 0 }, None, u32::MAX),
            (PropertyKind::PushConstantValue { offset: 16, size: 4 }, Some(0), u32::MAX),
            (PropertyKind::StorageBuffer, Some(1), 0),
            (PropertyKind::StorageBuffer, Some(2), 1),
        ]
    );
    assert_eq!(abi.properties[2].storage, BufferStorage::Typed { stride: 4 });
    let dis = out.disassembly();
    assert!(dis.contains("OpEntryPoint GLCompute"), "{dis}");
    assert!(dis.contains("LocalSize 64 1 1"), "{dis}");
    assert_eq!(count(&dis, "OpSelectionMerge"), 2, "kernel if + entry bounds check:\n{dis}");
    assert_eq!(count(&dis, "NoContraction"), 2, "{dis}");
}
