//! The Vulkan runner on a hand-assembled kernel (independent of the code
//! generator): storage buffers at set 0, dispatch size in push constants,
//! the bounds check, readback. Skips loudly only when no Vulkan device exists.

mod common;

use common::vulkan_device;
use rspirv::{binary::Assemble, dr::Builder, dr::Operand, spirv::*};
use spirv_tools::val::Validator;
use xir_spirv::abi::{BufferStorage, KernelAbi, Property, PropertyKind, Role, DESCRIPTOR_SET, NO_BINDING};
use xir_vulkan::{dispatch, group_counts, RunError};

/// out[i] = in[i] * 2 + push.k for i < dispatch_size.x
fn doubling_kernel() -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 5);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let fn_void = b.type_function(void, []);
    let u32_t = b.type_int(32, 0);
    let v3 = b.type_vector(u32_t, 3);
    let bool_t = b.type_bool();
    let p_in_v3 = b.type_pointer(None, StorageClass::Input, v3);
    let gid = b.variable(p_in_v3, None, StorageClass::Input, None);
    b.decorate(gid, Decoration::BuiltIn, [Operand::BuiltIn(BuiltIn::GlobalInvocationId)]);
    let rta = b.type_runtime_array(u32_t);
    b.decorate(rta, Decoration::ArrayStride, [Operand::LiteralBit32(4)]);
    let blk = b.type_struct([rta]);
    b.decorate(blk, Decoration::Block, []);
    b.member_decorate(blk, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
    let p_sb_blk = b.type_pointer(None, StorageClass::StorageBuffer, blk);
    let p_sb_u32 = b.type_pointer(None, StorageClass::StorageBuffer, u32_t);
    let input = b.variable(p_sb_blk, None, StorageClass::StorageBuffer, None);
    let output = b.variable(p_sb_blk, None, StorageClass::StorageBuffer, None);
    for (v, binding) in [(input, 0u32), (output, 1)] {
        b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(DESCRIPTOR_SET)]);
        b.decorate(v, Decoration::Binding, [Operand::LiteralBit32(binding)]);
    }
    let pc = b.type_struct([v3, u32_t]);
    b.decorate(pc, Decoration::Block, []);
    b.member_decorate(pc, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
    b.member_decorate(pc, 1, Decoration::Offset, [Operand::LiteralBit32(16)]);
    let p_pc = b.type_pointer(None, StorageClass::PushConstant, pc);
    let p_pc_v3 = b.type_pointer(None, StorageClass::PushConstant, v3);
    let p_pc_u32 = b.type_pointer(None, StorageClass::PushConstant, u32_t);
    let pcv = b.variable(p_pc, None, StorageClass::PushConstant, None);
    let c0 = b.constant_bit32(u32_t, 0);
    let c1 = b.constant_bit32(u32_t, 1);
    let c2 = b.constant_bit32(u32_t, 2);
    let main = b.begin_function(void, None, FunctionControl::NONE, fn_void).unwrap();
    b.begin_block(None).unwrap();
    let g = b.load(v3, None, gid, None, []).unwrap();
    let x = b.composite_extract(u32_t, None, g, [0]).unwrap();
    let pds = b.access_chain(p_pc_v3, None, pcv, [c0]).unwrap();
    let ds = b.load(v3, None, pds, None, []).unwrap();
    let n = b.composite_extract(u32_t, None, ds, [0]).unwrap();
    let inb = b.u_less_than(bool_t, None, x, n).unwrap();
    let body = b.id();
    let done = b.id();
    b.selection_merge(done, SelectionControl::NONE).unwrap();
    b.branch_conditional(inb, body, done, []).unwrap();
    b.begin_block(Some(body)).unwrap();
    let src = b.access_chain(p_sb_u32, None, input, [c0, x]).unwrap();
    let v = b.load(u32_t, None, src, None, []).unwrap();
    let pk = b.access_chain(p_pc_u32, None, pcv, [c1]).unwrap();
    let k = b.load(u32_t, None, pk, None, []).unwrap();
    let dbl = b.i_mul(u32_t, None, v, c2).unwrap();
    let r = b.i_add(u32_t, None, dbl, k).unwrap();
    let dst = b.access_chain(p_sb_u32, None, output, [c0, x]).unwrap();
    b.store(dst, r, None, []).unwrap();
    b.branch(done).unwrap();
    b.begin_block(Some(done)).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::GLCompute, main, "main", [gid, input, output, pcv]);
    b.execution_mode(main, ExecutionMode::LocalSize, [64, 1, 1]);
    b.module().assemble()
}

fn abi() -> KernelAbi {
    let buf = |arg, binding| Property {
        kind: PropertyKind::StorageBuffer,
        role: Role::Buffer,
        arg_index: Some(arg),
        set: DESCRIPTOR_SET,
        binding,
        storage: BufferStorage::Typed { stride: 4 },
    };
    KernelAbi {
        entry_point: "main".into(),
        block_size: [64, 1, 1],
        push_constant_size: 20,
        whole_blocks: false,
        noalias: false,
        properties: vec![
            Property {
                kind: PropertyKind::ConstantValue { offset: 0, size: 12 },
                role: Role::DispatchSize,
                arg_index: None,
                set: DESCRIPTOR_SET,
                binding: NO_BINDING,
                storage: BufferStorage::NotABuffer,
            },
            buf(0, 0),
            Property {
                kind: PropertyKind::ConstantValue { offset: 16, size: 4 },
                role: Role::PushValue,
                arg_index: Some(1),
                set: DESCRIPTOR_SET,
                binding: NO_BINDING,
                storage: BufferStorage::NotABuffer,
            },
            buf(2, 1),
        ],
    }
}

#[test]
fn runs_a_hand_built_kernel_and_respects_the_bounds_check() {
    let Some(dev) = vulkan_device() else { return };
    let words = doubling_kernel();
    spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2)).validate(&words, None).expect("valid module");
    let n = 100u32; // not a multiple of the block size: the tail must be skipped
    let input: Vec<u8> = (0..128u32).flat_map(|i| i.to_le_bytes()).collect();
    let output = vec![0xffu8; 128 * 4];
    let mut push = Vec::new();
    push.extend_from_slice(&[n, 1, 1, 0].map(u32::to_le_bytes).concat());
    push.extend_from_slice(&7u32.to_le_bytes());
    let abi = abi();
    let groups = group_counts([n, 1, 1], abi.block_size);
    assert_eq!(groups, [2, 1, 1]);
    // Run twice on one device: objects are created and destroyed per dispatch.
    for _ in 0..2 {
        let (out, timing) = dispatch(&dev, &words, &abi, &[input.clone(), output.clone()], &push, groups).unwrap();
        let got: Vec<u32> = out[1].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        for i in 0..128u32 {
            let want = if i < n { i * 2 + 7 } else { u32::MAX };
            assert_eq!(got[i as usize], want, "element {i} on {}", dev.name);
        }
        assert_eq!(out[0], input, "the input buffer is unchanged");
        if let Some(ns) = timing.dispatch_ns {
            assert!(ns >= 0.0);
        }
    }
}

#[test]
fn mismatched_buffers_are_an_error_not_a_crash() {
    let Some(dev) = vulkan_device() else { return };
    let err = dispatch(&dev, &doubling_kernel(), &abi(), &[vec![0; 16]], &[], [1, 1, 1]).unwrap_err();
    assert!(matches!(err, RunError::Abi(_)), "{err}");
    // Words that are no module are refused before the driver sees them (the limits check reads them first).
    let err = dispatch(&dev, &[0x0723_0203, 1, 2], &abi(), &[vec![0; 16], vec![0; 16]], &[], [1, 1, 1]).unwrap_err();
    assert!(matches!(&err, RunError::Abi(m) if m.contains("the SPIR-V does not load")), "{err}");
}
