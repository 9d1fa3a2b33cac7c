//! Bindless textures and sampling in the SPIR-V backend: the sampler heap at
//! set 1 binding 0 and the 2D / 3D texture heaps after the buffer heap, only
//! when used; `NonUniform` exactly on the heap index, image, sampler and
//! sampled image of a divergent slot or selector (never for a uniform or
//! constant one); the capabilities each operation needs and no others; the
//! `samplerAnisotropy` contract of the sampler heap; the honest refusals.
//! Every module is validated by SPIRV-Tools at every preset. The device runs
//! are in `sampling_vulkan.rs`.

mod common;

use std::collections::HashSet;

use common::*;
use rspirv::spirv::{Capability, Decoration, Op};
use xir_spirv::abi::{Role, FIRST_HEAP_SET, LOCAL_SET, SAMPLER_SET};
use xir_spirv::{Feature, FeatureSet, PropertyKind};

/// A kernel over bindless arrays `%a`, `%b` and outputs; `%s` is a uniform u32, `%t` the (divergent) thread.
fn kernel(body: &str) -> String {
    format!(
        "kernel @k(%a: bindless_array, %b: bindless_array, %o: buffer<vec<f32, 4>>, %n: buffer<u32>, %s: u32) \
         block_size(4, 1, 1) {{\n^entry:\n  %t = extract $dispatch_id, u32 0 : u32\n{body}  return\n}}\n"
    )
}

const UV2: &str = "vec<f32, 2> [0.5, 0.25]";
const UV3: &str = "vec<f32, 3> [0.5, 0.25, 0.75]";

fn sample2(slot: &str, sel: &str) -> String {
    format!("  %x = texture.sample %a, {slot}, {UV2}, {sel} : vec<f32, 4>\n  buffer.write %o, %t, %x\n")
}

fn descriptors(out: &xir_spirv::SpirvOutput) -> Vec<(PropertyKind, Role, Option<u32>, u32, u32)> {
    out.abi.descriptors().map(|p| (p.kind, p.role, p.arg_index, p.set, p.binding)).collect()
}

fn capabilities(words: &[u32]) -> Vec<Capability> {
    load(words)
        .capabilities
        .iter()
        .filter_map(|i| match i.operands.first() {
            Some(Operand::Capability(c)) => Some(*c),
            _ => None,
        })
        .collect()
}

fn decorated(words: &[u32], d: Decoration) -> HashSet<u32> {
    load(words)
        .annotations
        .iter()
        .filter(|i| i.class.opcode == Op::Decorate && i.operands.get(1) == Some(&Operand::Decoration(d)))
        .map(|i| i.operands[0].unwrap_id_ref())
        .collect()
}

/// The id of the global named `name`.
fn named(words: &[u32], name: &str) -> u32 {
    load(words)
        .debug_names
        .iter()
        .find(|i| matches!(i.operands.get(1), Some(Operand::LiteralString(s)) if s == name))
        .map(|i| i.operands[0].unwrap_id_ref())
        .unwrap_or_else(|| panic!("no global named {name}"))
}

/// Result ids of the instructions with opcode `op`.
fn results(words: &[u32], op: Op) -> Vec<u32> {
    let m = load(words);
    insts(&m).iter().filter(|i| i.class.opcode == op).filter_map(|i| i.result_id).collect()
}

#[test]
fn the_sampler_heap_is_set_1_binding_0_and_texture_heaps_follow_the_buffer_heap() {
    let body = format!(
        "{}  %r = bindless.texture3d_read %b, u32 0, vec<u32, 3> [0, 0, 0] : vec<f32, 4>\n  buffer.write %o, %t, %r\n\
         \x20 %w = bindless.buffer_read %b, u32 1, %t : u32\n  buffer.write %n, %t, %w\n",
        sample2("%s", "u32 0")
    );
    let out = compile_all_presets(&kernel(&body));
    assert_eq!(
        descriptors(&out),
        vec![
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(0), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(1), LOCAL_SET, 1),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(2), LOCAL_SET, 2),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 3),
            (PropertyKind::SamplerHeap, Role::Heap, None, SAMPLER_SET, 0),
            (PropertyKind::BufferHeap, Role::Heap, None, FIRST_HEAP_SET, 0),
            (PropertyKind::Texture2dHeap, Role::Heap, None, FIRST_HEAP_SET + 1, 0),
            (PropertyKind::Texture3dHeap, Role::Heap, None, FIRST_HEAP_SET + 2, 0),
        ]
    );
    let dis = out.disassembly_unoptimized();
    // The sampler heap: an array of 16 samplers at set 1, binding 0.
    let m = load(&out.words_unoptimized);
    let var = named(&out.words_unoptimized, "_SamplerHeap");
    let sets: Vec<_> = m
        .annotations
        .iter()
        .filter(|i| i.operands[0] == Operand::IdRef(var))
        .map(|i| (i.operands[1].clone(), i.operands.get(2).cloned()))
        .collect();
    assert!(sets.contains(&(Operand::Decoration(Decoration::DescriptorSet), Some(Operand::LiteralBit32(1)))));
    assert!(sets.contains(&(Operand::Decoration(Decoration::Binding), Some(Operand::LiteralBit32(0)))));
    assert_eq!(count(&dis, "OpTypeSampler"), 1, "{dis}");
    assert!(dis.contains("OpTypeImage %float 2D 0 0 0 1 Unknown") || count(&dis, "2D 0 0 0 1 Unknown") == 1, "{dis}");
    assert_eq!(count(&dis, "3D 0 0 0 1 Unknown"), 1, "{dis}");
    assert_eq!(count(&dis, "DescriptorSet 3"), 1, "{dis}");
    assert_eq!(count(&dis, "DescriptorSet 4"), 1, "{dis}");

    // Reads only, no sample: no sampler heap; the 2D heap alone takes the first heap set.
    let out = compile_all_presets(&kernel(
        "  %r = bindless.texture2d_read %a, %s, vec<i32, 2> [1, 0] : vec<f32, 4>\n  buffer.write %o, %t, %r\n",
    ));
    assert_eq!(
        descriptors(&out),
        vec![
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(0), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(2), LOCAL_SET, 1),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 2),
            (PropertyKind::Texture2dHeap, Role::Heap, None, FIRST_HEAP_SET, 0),
        ]
    );
    assert_eq!(count(&out.disassembly_unoptimized(), "OpTypeSampler"), 0);
}

#[test]
fn a_divergent_slot_decorates_exactly_the_heap_index_image_and_sampled_image() {
    let out = compile_all_presets(&kernel(&sample2("%t", "u32 1")));
    let w = &out.words_unoptimized;
    let nonuniform = decorated(w, Decoration::NonUniform);
    let m = load(w);
    let all = insts(&m);
    let heap = named(w, "_Texture2dHeap");
    let heap_chain = all
        .iter()
        .find(|i| i.class.opcode == Op::AccessChain && i.operands[0] == Operand::IdRef(heap))
        .expect("the heap access chain");
    let index = heap_chain.operands[1].unwrap_id_ref();
    let image_load = all
        .iter()
        .find(|i| i.class.opcode == Op::Load && i.operands[0] == Operand::IdRef(heap_chain.result_id.unwrap()))
        .unwrap();
    let sampled = results(w, Op::SampledImage);
    let want: HashSet<u32> =
        [index, heap_chain.result_id.unwrap(), image_load.result_id.unwrap(), sampled[0]].into_iter().collect();
    assert_eq!(nonuniform, want);
    // Never on a constant (the metadata walk's 0 and the constant selector).
    let consts: HashSet<u32> = m
        .types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::Constant | Op::ConstantComposite))
        .filter_map(|i| i.result_id)
        .collect();
    assert!(nonuniform.is_disjoint(&consts));
    let caps = capabilities(w);
    assert!(caps.contains(&Capability::ShaderNonUniform));
    assert!(caps.contains(&Capability::SampledImageArrayNonUniformIndexing));
    assert!(out.features.contains(Feature::SampledImageArrayNonUniformIndexing));
}

#[test]
fn a_uniform_or_constant_slot_and_selector_have_no_nonuniform() {
    for (slot, sel) in [("%s", "%s"), ("u32 1", "u32 3"), ("%s", "u32 2")] {
        let out = compile_all_presets(&kernel(&sample2(slot, sel)));
        let w = &out.words_unoptimized;
        assert!(decorated(w, Decoration::NonUniform).is_empty(), "slot {slot}, selector {sel}");
        let caps = capabilities(w);
        assert!(!caps.contains(&Capability::ShaderNonUniform), "{caps:?}");
        assert!(!caps.contains(&Capability::SampledImageArrayNonUniformIndexing), "{caps:?}");
        assert!(!out.features.contains(Feature::SampledImageArrayNonUniformIndexing));
    }
}

#[test]
fn a_divergent_selector_decorates_the_sampler_index_sampler_and_sampled_image() {
    let out = compile_all_presets(&kernel(&sample2("%s", "%t")));
    let w = &out.words_unoptimized;
    let m = load(w);
    let all = insts(&m);
    let sampler_load = all
        .iter()
        .find(|i| i.class.opcode == Op::SampledImage)
        .map(|i| i.operands[1].unwrap_id_ref())
        .expect("a sampled image");
    let load = all.iter().find(|i| i.result_id == Some(sampler_load)).unwrap();
    let chain_id = load.operands[0].unwrap_id_ref();
    let chain = all.iter().find(|i| i.result_id == Some(chain_id)).unwrap();
    let sel = chain.operands[1].unwrap_id_ref();
    let want: HashSet<u32> = [sel, chain_id, sampler_load, results(w, Op::SampledImage)[0]].into_iter().collect();
    assert_eq!(decorated(w, Decoration::NonUniform), want);
}

#[test]
fn each_operation_declares_the_capabilities_it_needs_and_no_others() {
    let only = |body: &str| {
        let out = compile_all_presets(&kernel(body));
        let mut caps = capabilities(&out.words_unoptimized);
        caps.retain(|c| {
            !matches!(c, Capability::Shader | Capability::SignedZeroInfNanPreserve | Capability::RoundingModeRTE)
        });
        caps.sort_by_key(|c| *c as u32);
        caps
    };
    use Capability::*;
    // A uniform read: the heap only; no ImageQuery, no storage-image capabilities.
    let read = "  %r = bindless.texture2d_read %a, %s, vec<u32, 2> [0, 1] : vec<f32, 4>\n  buffer.write %o, %t, %r\n";
    assert_eq!(only(read), vec![RuntimeDescriptorArray]);
    // A size query: ImageQuery too.
    let size = "  %z = bindless.texture3d_size %a, %s, u32 1 : vec<u32, 3>\n  %e = extract %z, u32 2 : u32\n  buffer.write %n, %t, %e\n";
    let mut want = vec![RuntimeDescriptorArray, ImageQuery];
    want.sort_by_key(|c| *c as u32);
    assert_eq!(only(size), want);
    // Samples (implicit level, explicit level, gradients): the heap only.
    for body in [
        sample2("%s", "u32 5"),
        format!("  %x = texture.sample_level %a, %s, {UV3}, f32 1.5, u32 8 : vec<f32, 4>\n  buffer.write %o, %t, %x\n"),
        format!(
            "  %x = texture.sample_grad %a, %s, {UV2}, {UV2}, {UV2}, u32 9 : vec<f32, 4>\n  buffer.write %o, %t, %x\n"
        ),
    ] {
        assert_eq!(only(&body), vec![RuntimeDescriptorArray], "{body}");
    }
    // The lowering of each sample: explicit LOD (0.0 for `texture.sample`, no implicit derivatives) or Grad.
    let dis = compile_all_presets(&kernel(&sample2("%s", "u32 0"))).disassembly_unoptimized();
    assert_eq!(count(&dis, "OpImageSampleExplicitLod"), 1, "{dis}");
    assert!(dis.lines().any(|l| l.contains("OpImageSampleExplicitLod") && l.contains(" Lod ")), "{dis}");
    let grad = format!(
        "  %x = texture.sample_grad %a, %s, {UV2}, {UV2}, {UV2}, u32 9 : vec<f32, 4>\n  buffer.write %o, %t, %x\n"
    );
    let dis = compile_all_presets(&kernel(&grad)).disassembly_unoptimized();
    assert!(dis.lines().any(|l| l.contains("OpImageSampleExplicitLod") && l.contains(" Grad ")), "{dis}");
    assert_eq!(count(&dis, "OpImageSampleImplicitLod"), 0);
    let dis = compile_all_presets(&kernel(read)).disassembly_unoptimized();
    assert!(dis.lines().any(|l| l.contains("OpImageFetch") && l.contains(" Lod ")), "{dis}");
}

#[test]
fn anisotropy_is_required_by_an_anisotropic_or_dynamic_selector_only() {
    let needs = |sel: &str| {
        let out = compile_with(&kernel(&sample2("%s", sel)), &opts(2, false));
        out.features.contains(Feature::SamplerAnisotropy)
    };
    assert!(!needs("u32 0"), "point");
    assert!(!needs("u32 11"), "linear_linear, zero border");
    assert!(needs("u32 12"), "anisotropic, edge");
    assert!(needs("u32 15"), "anisotropic, zero border");
    assert!(needs("%s"), "a uniform but dynamic selector may be anisotropic");
    assert!(needs("%t"), "a divergent selector may be anisotropic");
    // A read-only kernel has no sampler heap and needs nothing.
    let out = compile_with(
        &kernel("  %r = bindless.texture2d_read %a, %s, vec<u32, 2> [0, 1] : vec<f32, 4>\n  buffer.write %o, %t, %r\n"),
        &opts(0, false),
    );
    assert!(!out.features.contains(Feature::SamplerAnisotropy));
    assert!(out.features.contains(Feature::BufferHeapBindingFlags), "the texture heap's binding flags");
    // Against a device without samplerAnisotropy: refused at the sample, naming the feature; a
    // non-anisotropic constant selector still compiles.
    let mut dev = FeatureSet::all();
    dev.remove(Feature::SamplerAnisotropy);
    let o = xir_spirv::CompileOptions { device_features: Some(dev), ..opts(0, false) };
    let e = compile_err(&kernel(&sample2("%s", "u32 13")), &o);
    assert!(e.contains("samplerAnisotropy") && e.contains(":4:3:"), "{e}");
    let e = compile_err(&kernel(&sample2("%s", "%s")), &o);
    assert!(e.contains("not a constant"), "{e}");
    compile_with(&kernel(&sample2("%s", "u32 10")), &o);
}

#[test]
fn unsupported_texture_operations_are_refused_with_their_reason() {
    let o = opts(0, false);
    let write = "  bindless.texture2d_write %a, %s, vec<u32, 2> [0, 0], vec<f32, 4> [1.0, 2.0, 3.0, 4.0]\n";
    let e = compile_err(&kernel(write), &o);
    assert!(e.contains("no storage-image heap"), "{e}");
    let int_read = "  %r = bindless.texture2d_read %a, %s, vec<u32, 2> [0, 0] : vec<i32, 4>\n";
    let e = compile_err(&kernel(int_read), &o);
    assert!(e.contains("f32 sampled images") && e.contains(":4:3:"), "{e}");
    let e = compile_err(&kernel(&sample2("%s", "u32 16")), &o);
    assert!(e.contains("sampler selector 16"), "{e}");
    let half_uv =
        "  %x = texture.sample %a, %s, vec<f16, 2> [0.5, 0.5], u32 0 : vec<f32, 4>\n  buffer.write %o, %t, %x\n";
    let e = compile_err(&kernel(half_uv), &o);
    assert!(e.contains("f32 coordinates"), "{e}");
}

#[test]
fn a_sampling_kernel_artifact_round_trips_and_its_heaps_are_checked_against_the_module() {
    use xir_spirv::artifact::{decode, LoadRequirements, ShaderArtifact};
    let body = format!(
        "{}  %r = bindless.texture3d_read %b, %t, vec<u32, 3> [0, 0, 0] : vec<f32, 4>\n  buffer.write %o, %t, %r\n",
        sample2("%t", "%s")
    );
    let m = parse(&kernel(&body));
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(2, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let back = decode(&art.encode().expect("encodes"), &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert_eq!(back, art);
    assert!(back.abi.properties.iter().any(|p| p.kind == PropertyKind::SamplerHeap));
    assert!(back.features.contains(Feature::SamplerAnisotropy), "a dynamic selector");
    // A 2D heap declared as the 3D one (a canonical shape): the module's variable does not match it.
    let m2 = parse(&kernel(&sample2("%s", "u32 0")));
    let out2 = xir_spirv::compile(&m2, kernel_of(&m2), &opts(0, false)).expect("compiles");
    let mut w = ShaderArtifact::from_compiled(&m2, kernel_of(&m2), &out2);
    for p in w.abi.properties.iter_mut().filter(|p| p.kind == PropertyKind::Texture2dHeap) {
        p.kind = PropertyKind::Texture3dHeap;
    }
    w.abi.check_shape().expect("still canonical");
    let e = w.encode().unwrap_err().to_string();
    assert!(e.contains("Texture3dHeap"), "{e}");
    // Without the sampler heap property, the module's sampler variable is not an ABI descriptor.
    let mut w = art.clone();
    w.abi.properties.retain(|p| p.kind != PropertyKind::SamplerHeap);
    let e = w.encode().unwrap_err().to_string();
    assert!(e.contains("set 1, binding 0"), "{e}");
}

// Requirements come from reachable code only: a sample with a dynamic selector
// and a bindless buffer read in an orphan block declare no metadata, no heap,
// and require neither `samplerAnisotropy` nor the heap binding flags; the same
// block reached from the entry declares and requires all of them.
#[test]
fn unreachable_bindless_operations_declare_and_require_nothing() {
    let dead = "  %u = extract $dispatch_id, u32 0 : u32\n  \
                %x = texture.sample %a, u32 0, vec<f32, 2> [0.5, 0.25], %u : vec<f32, 4>\n  \
                buffer.write %o, %u, %x\n  %w = bindless.buffer_read %b, u32 1, %u : u32\n  \
                buffer.write %n, %u, %w\n";
    let orphan = kernel(&format!("  buffer.write %n, %t, %t\n  return\n^dead:\n{dead}"));
    let out = compile_all_presets(&orphan);
    assert_eq!(
        descriptors(&out),
        vec![
            (PropertyKind::StorageBuffer, Role::Buffer, Some(2), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 1),
        ]
    );
    for f in [Feature::SamplerAnisotropy, Feature::BufferHeapBindingFlags, Feature::RuntimeDescriptorArray] {
        assert!(!out.features.contains(f), "{} from unreachable code: {:?}", f.vulkan_name(), out.features);
    }
    let reached = kernel(&format!("  br target ^dead\n^dead:\n{dead}  return\n^orphan:\n  buffer.write %n, %t, %t\n"));
    let out = compile_all_presets(&reached);
    assert_eq!(
        descriptors(&out),
        vec![
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(0), LOCAL_SET, 0),
            (PropertyKind::StorageBuffer, Role::BindlessMetadata, Some(1), LOCAL_SET, 1),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(2), LOCAL_SET, 2),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 3),
            (PropertyKind::SamplerHeap, Role::Heap, None, SAMPLER_SET, 0),
            (PropertyKind::BufferHeap, Role::Heap, None, FIRST_HEAP_SET, 0),
            (PropertyKind::Texture2dHeap, Role::Heap, None, FIRST_HEAP_SET + 1, 0),
        ]
    );
    assert!(
        out.features.contains(Feature::SamplerAnisotropy) && out.features.contains(Feature::BufferHeapBindingFlags)
    );
}
