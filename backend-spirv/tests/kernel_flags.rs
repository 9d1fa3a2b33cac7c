//! The kernel flags the WGSL / GLSL front end sets. `whole_blocks`: no
//! entry bound check, the kernel body is the entry point, the dispatch size
//! is `NumWorkgroups * LocalSize`, no push-constant block without value
//! arguments. `noalias`: no buffer is decorated `Aliased`. The ABI (and the
//! artifact) says both. The device half is
//! `vulkan/tests/whole_blocks_vulkan.rs`.

mod common;

use common::*;
use xir_spirv::abi::Role;
use xir_spirv::artifact::{decode, ArtifactError, LoadRequirements, ShaderArtifact};

const WHOLE: &str = include_str!("kernels/whole_blocks.xir");
const WHOLE_VALUE: &str = include_str!("kernels/whole_blocks_value.xir");

#[test]
fn a_whole_blocks_kernel_has_no_entry_check_and_no_wrapper() {
    for level in 0..=3u8 {
        let out = compile_with(WHOLE, &opts(level, false));
        let dis = out.disassembly();
        assert!(out.abi.whole_blocks);
        assert_eq!(count(&dis, "OpFunction "), 1, "-O{level}: the body is the entry point:\n{dis}");
        assert_eq!(count(&dis, "OpFunctionCall"), 0, "-O{level}:\n{dis}");
        assert_eq!(count(&dis, "OpSelectionMerge"), 0, "-O{level}: no bound check:\n{dis}");
        assert_eq!(count(&dis, "OpAll"), 0, "-O{level}:\n{dis}");
        assert_eq!(count(&dis, "PushConstant"), 0, "-O{level}: nothing lives in push constants:\n{dis}");
        assert_eq!(count(&dis, "BuiltIn NumWorkgroups"), 1, "-O{level}:\n{dis}");
        // The ABI keeps its layout: the dispatch size is still the first property.
        assert_eq!(out.abi.properties[0].role, Role::DispatchSize);
        assert_eq!(out.abi.push_constant_size, 16, "the dispatch size, padded");
    }
    compile_all_presets(WHOLE);
}

#[test]
fn the_same_kernel_checked_at_entry_keeps_its_wrapper() {
    let checked = WHOLE.replace(" whole_blocks", "");
    let out = compile_with(&checked, &opts(0, false));
    let dis = out.disassembly();
    assert!(!out.abi.whole_blocks);
    assert_eq!(count(&dis, "OpFunction "), 2, "{dis}");
    assert_eq!(count(&dis, "OpAll"), 1, "{dis}");
    assert_eq!(count(&dis, "BuiltIn NumWorkgroups"), 0, "{dis}");
    assert_eq!(count(&dis, "OpVariable"), 4, "push block, buffer, two builtins:\n{dis}");
    assert_eq!(count(&dis, "PushConstant"), 3, "type, pointer and variable:\n{dis}");
}

#[test]
fn value_arguments_keep_the_push_constant_layout() {
    let out = compile_all_presets(WHOLE_VALUE);
    let dis = out.disassembly();
    assert!(out.abi.whole_blocks);
    // The block is `{ uvec3 dispatch size; u32 a }` at offsets 0 and 16, as for a checked kernel.
    assert!(dis.contains("OpMemberDecorate %") && dis.contains(" 1 Offset 16"), "{dis}");
    assert_eq!(out.abi.push_constant_size, 20);
    let checked = compile_with(&WHOLE_VALUE.replace(" whole_blocks", ""), &opts(0, false));
    assert_eq!(out.abi.properties, checked.abi.properties);
    assert_eq!(count(&dis, "OpAll"), 0, "{dis}");
}

fn artifact_of(src: &str) -> (ShaderArtifact, Vec<u8>) {
    let m = parse(src);
    let k = kernel_of(&m);
    let out = compile_with(src, &opts(2, false));
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    (art, bytes)
}

/// The dispatch size's role parameter (word 4 of the first record, word 9 of the section).
fn dispatch_role_parameter(bytes: &[u8]) -> u32 {
    let (_, s) = split(bytes);
    u32::from_le_bytes(s[0][36..40].try_into().expect("four bytes"))
}

#[test]
fn the_artifact_records_whole_blocks_and_refuses_other_role_parameters() {
    let any = LoadRequirements::any_xir_spirv();
    let (art, bytes) = artifact_of(WHOLE);
    assert_eq!(dispatch_role_parameter(&bytes), 1);
    let back = decode(&bytes, &any, None).expect("decodes");
    assert!(back.abi.whole_blocks);
    assert_eq!(back, art);
    let (sig, k) = back.signature_module().expect("signature");
    assert!(matches!(sig.func(k).kind, xir::FunctionKind::Kernel { whole_blocks: true, .. }));
    let (checked, bytes) = artifact_of(&WHOLE.replace(" whole_blocks", ""));
    assert_eq!(dispatch_role_parameter(&bytes), 0);
    assert!(!decode(&bytes, &any, None).expect("decodes").abi.whole_blocks);
    assert!(!checked.abi.whole_blocks);
    // One over the known flags (1 whole blocks, 2 noalias): 4 has no meaning.
    let bad = reseal(&bytes, |_, s| s[0][36..40].copy_from_slice(&4u32.to_le_bytes()));
    let e = decode(&bad, &any, None).expect_err("role parameter 4");
    assert!(matches!(e, ArtifactError::Malformed { .. }), "{e}");
    assert!(e.to_string().contains("role parameter 4"), "{e}");
}

/// Two buffers, one written: `Aliased` on both unless the kernel is `noalias`.
const TWO_BUFFERS: &str = r#"
kernel @k(%src: buffer<u32>, %dst: buffer<u32>) block_size(4, 1, 1) FLAGS {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %src, %i : u32
  buffer.write %dst, %i, %v
  return
}
"#;

#[test]
fn a_noalias_kernel_declares_no_aliased_buffer_and_its_abi_says_so() {
    let any = LoadRequirements::any_xir_spirv();
    for (flags, aliased, param) in [("", 2, 0), ("noalias", 0, 2), ("whole_blocks noalias", 0, 3)] {
        let src = TWO_BUFFERS.replace("FLAGS", flags);
        for level in [0u8, 2] {
            let out = compile_with(&src, &opts(level, false));
            let dis = out.disassembly();
            assert_eq!(count(&dis, "Aliased"), aliased, "`{flags}` -O{level}:\n{dis}");
            assert_eq!(out.abi.noalias, flags.contains("noalias"));
        }
        let (art, bytes) = artifact_of(&src);
        assert_eq!(dispatch_role_parameter(&bytes), param, "`{flags}`");
        let back = decode(&bytes, &any, None).expect("decodes");
        assert_eq!(back, art);
        let (sig, k) = back.signature_module().expect("signature");
        assert!(
            matches!(sig.func(k).kind, xir::FunctionKind::Kernel { noalias, .. } if noalias == flags.contains("noalias"))
        );
    }
    // A single buffer aliases nothing either way.
    let one = compile_with(&WHOLE.replace("whole_blocks", ""), &opts(0, false));
    assert_eq!(count(&one.disassembly(), "Aliased"), 0);
}
