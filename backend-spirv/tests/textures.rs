//! Storage-image textures: the exact capabilities each texture operation adds
//! (and nothing else), the image declarations and their ABI properties, the
//! handoff's refusal of a texel that is not exactly four lanes, and the
//! artifact round trip of a texture kernel. The runtime side (texels in and
//! out of lavapipe against the interpreter) is `tests/corpus/texture_rw.xir`
//! in `tests/tests/vulkan_corpus.rs`; the runner's refusals are
//! `vulkan/tests/textures_vulkan.rs`.

mod common;

use std::collections::BTreeSet;

use common::*;
use xir_spirv::abi::{Role, TexelKind, LOCAL_SET};
use xir_spirv::artifact::{decode, LoadRequirements, ShaderArtifact};
use xir_spirv::{Feature, PropertyKind};

fn kernel(args: &str, body: &str) -> String {
    format!(
        "kernel @k({args}, %o: buffer<u32>) block_size(1, 1, 1) {{\n^entry:\n  %c2 = aggregate u32 0, u32 1 : vec<u32, 2>\n  \
         %c3 = aggregate i32 0, i32 1, i32 1 : vec<i32, 3>\n{body}  buffer.write %o, u32 0, u32 1\n  return\n}}\n"
    )
}

fn caps(src: &str) -> BTreeSet<String> {
    let out = compile_with(src, &opts(0, false));
    xir_spirv::capabilities(&out.words).into_iter().map(|c| format!("{c:?}")).collect()
}

/// The capabilities `body` adds over the same kernel without it.
fn added(args: &str, body: &str) -> BTreeSet<String> {
    let base = caps(&kernel(args, ""));
    let with = caps(&kernel(args, body));
    assert!(base.is_subset(&with), "{base:?} vs {with:?}");
    with.difference(&base).cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn each_texture_operation_adds_exactly_its_capability() {
    let t2 = "%t: texture2d<f32>";
    let write = "  texture.write %t, %c2, vec<f32, 4> [1.0, 2.0, 3.0, 4.0]\n";
    let read = "  %v = texture.read %t, %c2 : vec<f32, 4>\n  %x = extract %v, u32 0 : f32\n  %u = cast.static %x : u32\n  buffer.write %o, u32 1, %u\n";
    let size =
        "  %s = texture.size %t, u32 0 : vec<u32, 2>\n  %w = extract %s, u32 0 : u32\n  buffer.write %o, u32 1, %w\n";
    assert_eq!(added(t2, write), set(&["StorageImageWriteWithoutFormat"]));
    assert_eq!(added(t2, read), set(&["StorageImageReadWithoutFormat"]));
    assert_eq!(added(t2, size), set(&["ImageQuery"]));
    let t3 = "%t: texture3d<u32>";
    let rw3 = "  %v = texture.read %t, %c3 : vec<u32, 4>\n  texture.write %t, %c3, %v\n";
    assert_eq!(added(t3, rw3), set(&["StorageImageReadWithoutFormat", "StorageImageWriteWithoutFormat"]));
    // An unused texture argument declares its image and needs no capability at all.
    assert_eq!(added(t2, ""), set(&[]));
    assert!(caps(&kernel(t2, write)).iter().all(|c| !c.contains("Image1D") && !c.contains("Sampled")));
}

#[test]
fn texture_features_follow_the_capabilities() {
    let out = compile_with(
        &kernel("%t: texture2d<i32>", "  texture.write %t, %c2, vec<i32, 4> [1, 2, 3, 4]\n"),
        &opts(0, false),
    );
    assert!(out.features.contains(Feature::StorageImageWriteWithoutFormat));
    assert!(!out.features.contains(Feature::StorageImageReadWithoutFormat));
    let missing = xir_spirv::FeatureSet::all();
    let mut no_write = missing;
    no_write.remove(Feature::StorageImageWriteWithoutFormat);
    assert_eq!(out.features.missing_from(&no_write), vec![Feature::StorageImageWriteWithoutFormat]);
}

const MIXED: &str = include_str!("kernels/textures_mixed.xir");

#[test]
fn textures_are_set0_storage_images_in_argument_order() {
    let out = compile_all_presets(MIXED);
    let descriptors: Vec<_> = out.abi.descriptors().map(|p| (p.kind, p.role, p.arg_index, p.set, p.binding)).collect();
    assert_eq!(
        descriptors,
        vec![
            (PropertyKind::StorageImage { dim: 2, texel: TexelKind::F32 }, Role::Texture, Some(0), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(1), LOCAL_SET, 1),
            (PropertyKind::StorageImage { dim: 3, texel: TexelKind::I32 }, Role::Texture, Some(2), LOCAL_SET, 2),
        ]
    );
    let dis = out.disassembly_unoptimized();
    assert_eq!(count(&dis, "OpTypeImage"), 2, "{dis}");
    assert!(dis.contains("2D 0 0 0 2 Unknown") && dis.contains("3D 0 0 0 2 Unknown"), "{dis}");
    assert_eq!(count(&dis, "OpImageRead"), 2, "{dis}");
    assert_eq!(count(&dis, "OpImageWrite"), 2, "{dis}");
    // One pointer type and one variable per image.
    assert_eq!(count(&dis, "UniformConstant"), 4, "{dis}");
}

#[test]
fn texel_writes_of_other_than_four_lanes_are_refused_before_emission() {
    for (texel, want) in [("vec<f32, 3> [1.0, 2.0, 3.0]", "4-lane"), ("vec<i32, 4> [1, 2, 3, 4]", "4-lane")] {
        let e =
            compile_err(&kernel("%t: texture2d<f32>", &format!("  texture.write %t, %c2, {texel}\n")), &opts(0, false));
        assert!(e.contains(want), "{texel}: {e}");
        assert!(!e.contains("emit"), "refused before emission: {e}");
    }
}

#[test]
fn a_texture_kernel_artifact_round_trips() {
    let m = parse(MIXED);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert_eq!(back, art);
    assert!(back.features.contains(Feature::StorageImageReadWithoutFormat));
    // A texture property whose texel kind disagrees with the saved argument type is refused.
    let mut w = art.clone();
    w.abi.properties[1].kind = PropertyKind::StorageImage { dim: 2, texel: TexelKind::U32 };
    assert!(w.encode().is_err());
    let mut w = art.clone();
    w.abi.properties[1].kind = PropertyKind::StorageImage { dim: 3, texel: TexelKind::F32 };
    assert!(w.encode().is_err());
}
