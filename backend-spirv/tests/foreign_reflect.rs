//! Reflection of foreign SPIR-V modules (`reflect.rs`): naga's SPIR-V of
//! small WGSL shaders (each layout as the WGSL rules place it, read back
//! from the decorations), hand-assembled modules for what naga does not
//! emit (`LocalSizeId`, specialization constants, the `WorkgroupSize`
//! built-in, push constants, samplers), and malformed words (refused, never
//! a panic).

use xir_frontend::oracle::{naga_spirv, Language};
use xir_spirv::abi::TexelKind;
use xir_spirv::reflect::{reflect, DataType, ImageLayout, Member, Reflection, Scalar, StructLayout, VariableKind};

const F32: Scalar = Scalar::Float { bits: 32 };
const U32: Scalar = Scalar::Int { bits: 32, signed: false };
const I32: Scalar = Scalar::Int { bits: 32, signed: true };

fn wgsl(src: &str) -> Vec<u32> {
    naga_spirv(src, Language::Wgsl, "test.wgsl").unwrap_or_else(|e| panic!("{e}"))
}

fn reflect_wgsl(src: &str) -> Reflection {
    reflect(&wgsl(src), None).unwrap_or_else(|e| panic!("{e}"))
}

fn asm(text: &str) -> Vec<u32> {
    use spirv_tools::assembler::{Assembler, AssemblerOptions};
    let a = spirv_tools::assembler::create(Some(spirv_tools::TargetEnv::Vulkan_1_1));
    a.assemble(text, AssemblerOptions::default()).unwrap_or_else(|e| panic!("assembly: {e}")).as_words().to_vec()
}

fn member(offset: u32, ty: DataType) -> Member {
    Member { name: None, offset, ty }
}

fn named(name: &str, offset: u32, ty: DataType) -> Member {
    Member { name: Some(name.into()), offset, ty }
}

fn wrapper(ty: DataType) -> StructLayout {
    StructLayout { name: None, members: vec![member(0, ty)] }
}

fn runtime(elem: DataType, stride: u32) -> DataType {
    DataType::Array { elem: Box::new(elem), len: None, stride }
}

/// (name, set, binding, kind) of the used variables.
fn summary(r: &Reflection) -> Vec<(String, u32, u32, VariableKind)> {
    r.variables.iter().map(|v| (v.name.clone(), v.set, v.binding, v.kind.clone())).collect()
}

#[test]
fn a_runtime_array_of_f32_is_naga_s_one_member_block() {
    let r = reflect_wgsl(
        "@group(0) @binding(0) var<storage, read_write> x: array<f32>;
         @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) { x[id.x] *= 2.0; }",
    );
    assert_eq!(r.entry_point, "main");
    assert_eq!(r.workgroup_size, [64, 1, 1]);
    let kind = VariableKind::StorageBuffer(wrapper(runtime(DataType::Scalar(F32), 4)));
    assert_eq!(summary(&r), [("x".to_string(), 0, 0, kind)]);
    assert!(!r.variables[0].non_writable && !r.variables[0].non_readable);
    assert!(r.unused.is_empty());
}

#[test]
fn a_runtime_array_of_vec4_has_stride_16_and_read_only_is_non_writable() {
    let r = reflect_wgsl(
        "@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
         @group(0) @binding(4) var<storage, read_write> o: array<vec3<f32>>;
         @compute @workgroup_size(8, 2)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) { o[id.x] = v[id.x].xyz; }",
    );
    assert_eq!(r.workgroup_size, [8, 2, 1]);
    let vec = |lanes| DataType::Vector { scalar: F32, lanes };
    assert_eq!(
        summary(&r),
        [
            ("v".to_string(), 0, 3, VariableKind::StorageBuffer(wrapper(runtime(vec(4), 16)))),
            ("o".to_string(), 0, 4, VariableKind::StorageBuffer(wrapper(runtime(vec(3), 16)))),
        ]
    );
    assert!(r.variables[0].non_writable);
    assert!(!r.variables[1].non_writable);
}

#[test]
fn a_struct_with_mixed_members_is_laid_out_by_its_offsets() {
    let r = reflect_wgsl(
        "struct Particle { pos: vec3<f32>, mass: f32, vel: vec2<f32>, id: u32, m: mat2x2<f32>, k: i32 }
         @group(0) @binding(0) var<storage, read_write> ps: array<Particle>;
         @compute @workgroup_size(1) fn main() { ps[0].mass += 1.0; }",
    );
    let particle = StructLayout {
        name: Some("Particle".into()),
        members: vec![
            named("pos", 0, DataType::Vector { scalar: F32, lanes: 3 }),
            named("mass", 12, DataType::Scalar(F32)),
            named("vel", 16, DataType::Vector { scalar: F32, lanes: 2 }),
            named("id", 24, DataType::Scalar(U32)),
            named("m", 32, DataType::Matrix { scalar: F32, columns: 2, rows: 2, stride: 8, row_major: false }),
            named("k", 48, DataType::Scalar(I32)),
        ],
    };
    let kind = VariableKind::StorageBuffer(wrapper(runtime(DataType::Struct(particle.clone()), 64)));
    assert_eq!(summary(&r), [("ps".to_string(), 0, 0, kind)]);
    assert_eq!(particle.extent(), 52);
}

#[test]
fn a_uniform_struct_keeps_its_std140_offsets() {
    let r = reflect_wgsl(
        "struct Params { scale: f32, offset: vec3<f32>, n: u32, m: mat4x4<f32> }
         @group(1) @binding(2) var<uniform> p: Params;
         @group(0) @binding(0) var<storage, read_write> out: array<f32>;
         @compute @workgroup_size(1) fn main() { out[0] = p.scale + p.offset.y + f32(p.n) + p.m[1][2]; }",
    );
    let params = StructLayout {
        name: Some("Params".into()),
        members: vec![
            named("scale", 0, DataType::Scalar(F32)),
            named("offset", 16, DataType::Vector { scalar: F32, lanes: 3 }),
            named("n", 28, DataType::Scalar(U32)),
            named("m", 32, DataType::Matrix { scalar: F32, columns: 4, rows: 4, stride: 16, row_major: false }),
        ],
    };
    let out = VariableKind::StorageBuffer(wrapper(runtime(DataType::Scalar(F32), 4)));
    assert_eq!(
        summary(&r),
        [
            ("out".to_string(), 0, 0, out),
            ("p".to_string(), 1, 2, VariableKind::UniformBuffer(wrapper(DataType::Struct(params)))),
        ]
    );
}

#[test]
fn a_fixed_array_has_its_length_and_stride() {
    let r = reflect_wgsl(
        "@group(0) @binding(0) var<uniform> lut: array<vec4<u32>, 8>;
         @group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 16>;
         @compute @workgroup_size(1) fn main() { atomicAdd(&hist[lut[2].x & 15u], 1u); }",
    );
    let lut = DataType::Array { elem: Box::new(DataType::Vector { scalar: U32, lanes: 4 }), len: Some(8), stride: 16 };
    let hist = DataType::Array { elem: Box::new(DataType::Scalar(U32)), len: Some(16), stride: 4 };
    assert_eq!(
        summary(&r),
        [
            ("lut".to_string(), 0, 0, VariableKind::UniformBuffer(wrapper(lut))),
            ("hist".to_string(), 0, 1, VariableKind::StorageBuffer(wrapper(hist))),
        ]
    );
}

#[test]
fn two_bind_groups_and_an_unused_binding() {
    let r = reflect_wgsl(
        "@group(0) @binding(0) var<storage, read> a: array<u32>;
         @group(1) @binding(0) var<storage, read_write> b: array<u32>;
         @group(1) @binding(5) var<storage, read_write> spare: array<u32>;
         @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3<u32>) { b[id.x] = a[id.x]; }",
    );
    let names: Vec<_> = r.variables.iter().map(|v| (v.name.as_str(), v.set, v.binding)).collect();
    assert_eq!(names, [("a", 0, 0), ("b", 1, 0)]);
    let unused: Vec<_> = r.unused.iter().map(|v| (v.name.as_str(), v.set, v.binding)).collect();
    assert_eq!(unused, [("spare", 1, 5)]);
    assert!(r.variable("spare").is_some() && r.variable("nothing").is_none());
}

#[test]
fn a_storage_texture_is_a_storage_image() {
    let r = reflect_wgsl(
        "@group(0) @binding(0) var img: texture_storage_2d<rgba32float, read_write>;
         @group(0) @binding(1) var ids: texture_storage_3d<rgba32uint, write>;
         @compute @workgroup_size(1) fn main() {
             textureStore(img, vec2<i32>(0, 0), textureLoad(img, vec2<i32>(1, 0)) * 2.0);
             textureStore(ids, vec3<i32>(0, 0, 0), vec4<u32>(1u));
         }",
    );
    let f = ImageLayout { dim: 2, texel: TexelKind::F32, format: rspirv::spirv::ImageFormat::Rgba32f };
    let u = ImageLayout { dim: 3, texel: TexelKind::U32, format: rspirv::spirv::ImageFormat::Rgba32ui };
    assert_eq!(
        summary(&r),
        [
            ("img".to_string(), 0, 0, VariableKind::StorageImage(f)),
            ("ids".to_string(), 0, 1, VariableKind::StorageImage(u)),
        ]
    );
    assert!(r.variables[1].non_readable);
}

#[test]
fn a_texture_read_without_a_sampler_is_a_sampled_image() {
    let r = reflect_wgsl(
        "@group(0) @binding(0) var src: texture_2d<f32>;
         @group(0) @binding(1) var vol: texture_3d<i32>;
         @group(0) @binding(2) var<storage, read_write> out: array<f32>;
         @compute @workgroup_size(1) fn main() {
             out[0] = textureLoad(src, vec2<i32>(1, 0), 0).x + f32(textureLoad(vol, vec3<i32>(0), 0).y);
         }",
    );
    let unknown = rspirv::spirv::ImageFormat::Unknown;
    let f = ImageLayout { dim: 2, texel: TexelKind::F32, format: unknown };
    let i = ImageLayout { dim: 3, texel: TexelKind::I32, format: unknown };
    assert_eq!(
        summary(&r)[..2],
        [
            ("src".to_string(), 0, 0, VariableKind::SampledImage(f)),
            ("vol".to_string(), 0, 1, VariableKind::SampledImage(i)),
        ]
    );
    assert_eq!(VariableKind::SampledImage(f).descriptor_name(), "sampled image");
}

#[test]
fn glsl_anonymous_blocks_are_named_by_their_member() {
    let src = "#version 450
layout(local_size_x = 4, local_size_y = 2) in;
layout(std430, set = 0, binding = 0) buffer Data { float v[]; };
layout(std140, set = 0, binding = 1) uniform Params { float s; } params;
void main() { v[gl_GlobalInvocationID.x] *= params.s; }
";
    let words = naga_spirv(src, Language::Glsl, "k.comp").unwrap();
    let r = reflect(&words, None).unwrap();
    assert_eq!(r.workgroup_size, [4, 2, 1]);
    let names: Vec<_> = r.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["v", "params"]);
}

/// naga wraps a GLSL uniform block in an unnamed block of its own and names
/// neither variable: the wrapped block is looked into, so an anonymous
/// block of one member is keyed by it and one of several by its name, as
/// the front end names them.
#[test]
fn naga_s_wrapped_anonymous_blocks_are_named_as_the_front_end_names_them() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Data { float v[]; };
layout(std140, set = 0, binding = 1) uniform Scale { float k; };
layout(std140, set = 0, binding = 2) uniform Params { float a; float b; };
void main() { v[0] = k * a + b; }
";
    let words = naga_spirv(src, Language::Glsl, "k.comp").unwrap();
    let r = reflect(&words, None).unwrap();
    let names: Vec<_> = r.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["v", "k", "Params"]);
}

#[test]
fn several_entry_points_need_a_name() {
    let words = wgsl(
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;
         @compute @workgroup_size(2) fn first() { x[0] = 1u; }
         @compute @workgroup_size(8, 8) fn second() { x[1] = 2u; }",
    );
    let e = reflect(&words, None).unwrap_err();
    assert_eq!(e.to_string(), "the module has several GLCompute entry points (`first`, `second`); choose one by name");
    let r = reflect(&words, Some("second")).unwrap();
    assert_eq!((r.entry_point.as_str(), r.workgroup_size), ("second", [8, 8, 1]));
    let e = reflect(&words, Some("third")).unwrap_err();
    assert_eq!(e.to_string(), "no GLCompute entry point `third`; the module has `first`, `second`");
}

/// A compute module with one storage buffer `x` of u32 at set 0 binding 0;
/// `decls` adds global declarations, `modes` execution modes, names and
/// decorations (one string: the lines are sorted into their sections), `body` code.
fn module(decls: &str, modes: &str, body: &str) -> String {
    let lines = |p: &str| modes.lines().map(str::trim).filter(|l| l.starts_with(p)).collect::<Vec<_>>().join("\n");
    let (exec, names, decos) = (lines("OpExecutionMode"), lines("OpName"), lines("OpDecorate"));
    let members = lines("OpMemberDecorate");
    format!(
        "OpCapability Shader
         OpMemoryModel Logical GLSL450
         OpEntryPoint GLCompute %main \"main\"
         {exec}
         OpName %x \"x\"
         {names}
         {decos}
         {members}
         OpDecorate %rta ArrayStride 4
         OpDecorate %blk Block
         OpMemberDecorate %blk 0 Offset 0
         OpDecorate %x DescriptorSet 0
         OpDecorate %x Binding 0
         %void = OpTypeVoid
         %fn = OpTypeFunction %void
         %u32 = OpTypeInt 32 0
         %c0 = OpConstant %u32 0
         %rta = OpTypeRuntimeArray %u32
         %blk = OpTypeStruct %rta
         %pblk = OpTypePointer StorageBuffer %blk
         %pu32 = OpTypePointer StorageBuffer %u32
         %x = OpVariable %pblk StorageBuffer
         {decls}
         %main = OpFunction %void None %fn
         %entry = OpLabel
         %p = OpAccessChain %pu32 %x %c0 %c0
         {body}
         OpReturn
         OpFunctionEnd"
    )
}

#[test]
fn local_size_id_is_refused_for_vulkan_1_2() {
    // Vulkan allows LocalSizeId only with maintenance4 (1.3), which the runner's device does not enable.
    let words = asm(&module(
        "%c4 = OpConstant %u32 4
         %c1 = OpConstant %u32 1",
        "OpExecutionModeId %main LocalSizeId %c4 %c1 %c1",
        "OpStore %p %c0",
    ));
    let e = reflect(&words, None).unwrap_err().to_string();
    assert!(e.starts_with("the module fails SPIRV-Tools validation for Vulkan 1.2: "), "{e}");
    assert!(e.contains("LocalSizeId mode is not allowed by the current environment"), "{e}");
}

#[test]
fn the_workgroup_size_builtin_overrides_local_size() {
    let words = asm(&module(
        "%v3 = OpTypeVector %u32 3
         %c2 = OpConstant %u32 2
         %c1 = OpConstant %u32 1
         %s16 = OpSpecConstant %u32 16
         %wg = OpSpecConstantComposite %v3 %s16 %c2 %c1",
        "OpExecutionMode %main LocalSize 1 1 1
         OpDecorate %wg BuiltIn WorkgroupSize",
        "OpStore %p %c0",
    ));
    assert_eq!(reflect(&words, None).unwrap().workgroup_size, [16, 2, 1]);
}

#[test]
fn a_workgroup_size_computed_by_spec_constant_op_is_refused() {
    let words = asm(&module(
        "%v3 = OpTypeVector %u32 3
         %c1 = OpConstant %u32 1
         %s2 = OpSpecConstant %u32 2
         %s4 = OpSpecConstantOp %u32 IAdd %s2 %s2
         %wg = OpSpecConstantComposite %v3 %s4 %c1 %c1",
        "OpExecutionMode %main LocalSize 1 1 1
         OpDecorate %wg BuiltIn WorkgroupSize",
        "OpStore %p %c0",
    ));
    let e = reflect(&words, None).unwrap_err().to_string();
    assert!(e.starts_with("a WorkgroupSize component %"), "{e}");
    assert!(e.ends_with("is SpecConstantOp, not an integer constant this runner can evaluate"), "{e}");
}

#[test]
fn a_push_constant_block_is_described() {
    let words = asm(&module(
        "%pcs = OpTypeStruct %u32
         %ppcs = OpTypePointer PushConstant %pcs
         %ppcu = OpTypePointer PushConstant %u32
         %pc = OpVariable %ppcs PushConstant",
        "OpExecutionMode %main LocalSize 1 1 1
         OpName %pc \"pc\"
         OpDecorate %pcs Block
         OpMemberDecorate %pcs 0 Offset 0",
        "%q = OpAccessChain %ppcu %pc %c0
         %v = OpLoad %u32 %q
         OpStore %p %v",
    ));
    let r = reflect(&words, None).expect("described");
    let push = r.push_constants.expect("a push-constant block");
    assert_eq!(push.name, "pc");
    assert_eq!(push.layout.members.len(), 1);
    assert_eq!(push.layout.members[0].offset, 0);
    assert!(r.variables.iter().all(|v| v.name != "pc"), "not a descriptor variable");
}

/// An anonymous push-constant block is keyed as an anonymous descriptor
/// block is (its single member), through naga's wrapper or glslang's block.
#[test]
fn an_anonymous_push_constant_block_is_keyed_by_its_member() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Data { float v[]; } data;
layout(push_constant) uniform PC { float scale; };
void main() { data.v[gl_GlobalInvocationID.x] *= scale; }
";
    let words = naga_spirv(src, Language::Glsl, "k.comp").unwrap();
    let push = reflect(&words, None).unwrap().push_constants.expect("a push-constant block");
    assert_eq!(push.name, "scale");
}

#[test]
fn samplers_are_refused_by_name() {
    let words = asm(&module(
        "%samp = OpTypeSampler
         %psamp = OpTypePointer UniformConstant %samp
         %s = OpVariable %psamp UniformConstant",
        "OpExecutionMode %main LocalSize 1 1 1
         OpName %s \"smp\"
         OpDecorate %s DescriptorSet 0
         OpDecorate %s Binding 1",
        "%v = OpLoad %samp %s
         OpStore %p %c0",
    ));
    let e = reflect(&words, None).unwrap_err().to_string();
    assert!(e.starts_with("variable `smp` (%"), "{e}");
    assert!(e.ends_with("samplers and combined image-samplers are not supported (images only)"), "{e}");
}

#[test]
fn a_module_without_a_workgroup_size_is_refused_by_the_validator() {
    let words = asm(&module("", "", "OpStore %p %c0"));
    let e = reflect(&words, None).unwrap_err().to_string();
    assert!(e.starts_with("the module fails SPIRV-Tools validation for Vulkan 1.2: "), "{e}");
    assert!(e.contains("VUID-StandaloneSpirv-LocalSize-06426"), "{e}");
}

#[test]
fn malformed_words_are_refused_never_a_panic() {
    assert_eq!(reflect(&[1, 2, 3], None).unwrap_err().to_string(), "not a SPIR-V module: 3 words, a header alone is 5");
    assert_eq!(
        reflect(&[0x0302_2307, 0, 0, 0, 0], None).unwrap_err().to_string(),
        "not a SPIR-V module: the first word is 0x03022307, not the magic number 0x07230203"
    );
    // Random damage to a valid module (rspirv's decoder alone panics on some
    // of these: a string operand running past its instruction).
    let good = wgsl(
        "@group(0) @binding(0) var<uniform> a: f32;
         @group(0) @binding(1) var<storage, read_write> y: array<f32>;
         @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3<u32>) { y[id.x] *= a; }",
    );
    let mut seed = 0x5eed_u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as u32
    };
    let mut refused = 0;
    for _ in 0..3000 {
        let mut w = good.clone();
        for _ in 0..1 + next() % 3 {
            let k = next() as usize % w.len();
            match next() % 4 {
                0 => w[k] = next(),
                1 => w[k] ^= 1 << (next() % 32),
                2 => w[k] = next() % 64,
                _ => w.truncate(k.max(1)),
            }
        }
        let outcome = std::panic::catch_unwind(|| reflect(&w, None));
        match outcome {
            Ok(Err(_)) => refused += 1,
            Ok(Ok(_)) => {}
            Err(_) => panic!("reflect panicked on {w:?}"),
        }
    }
    assert!(refused > 1000, "only {refused} of 3000 damaged modules were refused");
}

#[test]
fn naga_s_layout_on_workgroup_arrays_is_removed_only_there() {
    // naga decorates `array<u32, 64>` with ArrayStride in Workgroup memory too,
    // which SPIRV-Tools refuses (VUID-StandaloneSpirv-None-10684).
    let src = "@group(0) @binding(0) var<storage, read_write> x: array<u32>;
         var<workgroup> tmp: array<u32, 64>;
         @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) li: u32) {
             tmp[li] = x[li]; workgroupBarrier(); x[li] = tmp[63u - li];
         }";
    let words = wgsl(src);
    let e = xir_spirv::validate::validate(&words).unwrap_err();
    assert!(e.breaks("VUID-StandaloneSpirv-None-10684"), "{e}");
    let r = reflect(&words, None).unwrap();
    xir_spirv::validate::validate(&r.words).unwrap();
    let strides = |w: &[u32]| xir_spirv::disassemble(w).lines().filter(|l| l.contains("ArrayStride")).count();
    assert_eq!((strides(&words), strides(&r.words)), (2, 1), "the buffer's runtime array keeps its stride");
    let kind = VariableKind::StorageBuffer(wrapper(runtime(DataType::Scalar(U32), 4)));
    assert_eq!(summary(&r), [("x".to_string(), 0, 0, kind)]);
    // A module the validator takes runs as given.
    let plain = wgsl(
        "@group(0) @binding(0) var<storage, read_write> x: array<u32>;
         @compute @workgroup_size(1) fn main() { x[0] = 1u; }",
    );
    assert_eq!(reflect(&plain, None).unwrap().words, plain);
}

#[test]
fn a_type_shared_by_workgroup_memory_and_a_buffer_stays_refused() {
    let words = wgsl(
        "@group(0) @binding(0) var<storage, read_write> x: array<u32, 64>;
         var<workgroup> tmp: array<u32, 64>;
         @compute @workgroup_size(64) fn main(@builtin(local_invocation_index) li: u32) {
             tmp[li] = x[li]; workgroupBarrier(); x[li] = tmp[63u - li];
         }",
    );
    let e = reflect(&words, None).unwrap_err().to_string();
    assert!(e.starts_with("the module fails SPIRV-Tools validation for Vulkan 1.2: "), "{e}");
    assert!(e.contains("VUID-StandaloneSpirv-None-10684"), "{e}");
}

#[test]
fn words_from_bytes_takes_either_byte_order() {
    use xir_spirv::reflect::{is_spirv, words_from_bytes};
    let words = [0x0723_0203u32, 0x0001_0300, 7, 9, 0];
    let le: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let be: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    assert!(is_spirv(&le) && is_spirv(&be) && !is_spirv(b"kern") && !is_spirv(&le[..3]));
    assert_eq!(words_from_bytes(&le).unwrap(), words);
    assert_eq!(words_from_bytes(&be).unwrap(), words);
    assert_eq!(
        words_from_bytes(&le[..19]).unwrap_err().to_string(),
        "a SPIR-V module is a whole number of 4-byte words; this one has 19 bytes"
    );
    assert_eq!(
        words_from_bytes(b"{}").unwrap_err().to_string(),
        "not a SPIR-V module: it starts with the bytes [7b 7d], not the magic number 0x07230203"
    );
}
