//! The argument block: value arguments that do not fit in 128 bytes of push
//! constants are packed host-layout into the backend-owned `_Global` storage
//! buffer (set 0, binding 0, `NonWritable`, never `Aliased`/`Coherent`),
//! recorded in the ABI by its role, persisted by the artifact, and filled by
//! the Vulkan runner (`vulkan/tests/argument_block_vulkan.rs`).

mod common;

use common::*;
use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, Op};
use xir_spirv::abi::{Role, LOCAL_SET, NO_BINDING};
use xir_spirv::artifact::{self, decode, ArtifactError, LoadRequirements, RawHeader, ShaderArtifact, HEADER_LEN};
use xir_spirv::{BufferStorage, Feature, PropertyKind};

/// 2 x 64 + 2 + 16 + 4 bytes of values: over 128 with the dispatch size.
const BIG: &str = include_str!("kernels/argument_block_big.xir");

const SMALL: &str = r#"
kernel @k(%a: mat<f32, 4>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %c = extract %a, u32 0 : vec<f32, 4>
  %x = extract %c, u32 0 : f32
  buffer.write %out, u32 0, %x
  return
}
"#;

#[test]
fn values_over_the_push_limit_go_to_the_argument_block() {
    let out = compile_all_presets(BIG);
    let abi = &out.abi;
    assert_eq!(abi.push_constant_size, 16, "only the dispatch size stays in push constants");
    let got: Vec<_> =
        abi.properties.iter().map(|p| (p.kind, p.role, p.arg_index, p.set, p.binding, p.storage)).collect();
    let value = |arg, offset, size| {
        (
            PropertyKind::ConstantValue { offset, size },
            Role::BlockValue,
            Some(arg),
            LOCAL_SET,
            NO_BINDING,
            BufferStorage::NotABuffer,
        )
    };
    let f32_buf = BufferStorage::Typed { stride: 4 };
    assert_eq!(
        got,
        vec![
            (
                PropertyKind::ConstantValue { offset: 0, size: 12 },
                Role::DispatchSize,
                None,
                LOCAL_SET,
                NO_BINDING,
                BufferStorage::NotABuffer
            ),
            // a@0 (64), n@64 (2), b@80 (64, align 16), flag@144 (a 0/1 word), v@160 (16): 176 bytes.
            (PropertyKind::StorageBuffer, Role::ArgumentBlock, None, LOCAL_SET, 0, BufferStorage::Block { size: 176 }),
            value(0, 0, 64),
            value(1, 64, 2),
            value(2, 80, 64),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(3), LOCAL_SET, 1, f32_buf),
            value(4, 144, 4),
            value(5, 160, 16),
            (PropertyKind::StorageBuffer, Role::Buffer, Some(6), LOCAL_SET, 2, f32_buf),
        ]
    );
    // The u16 lives in a storage buffer now: 16-bit storage-buffer access, no 16-bit push constants.
    assert!(out.features.contains(Feature::StorageBuffer16BitAccess));
    assert!(!out.features.contains(Feature::StoragePushConstant16));

    // The block's variable: set 0, binding 0, NonWritable, neither Aliased nor Coherent; the user
    // buffers (two of them) are Aliased.
    let m = load(&out.words);
    let decorations = |target: u32| -> Vec<(Decoration, Vec<u32>)> {
        m.annotations
            .iter()
            .filter(|i| i.class.opcode == Op::Decorate && i.operands[0] == Operand::IdRef(target))
            .map(|i| {
                let Operand::Decoration(d) = i.operands[1] else { panic!("decoration") };
                let lits =
                    i.operands[2..]
                        .iter()
                        .filter_map(|o| if let Operand::LiteralBit32(x) = o { Some(*x) } else { None });
                (d, lits.collect())
            })
            .collect()
    };
    let storage_vars: Vec<u32> = m
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Variable
                && i.operands[0] == Operand::StorageClass(rspirv::spirv::StorageClass::StorageBuffer)
        })
        .map(|i| i.result_id.unwrap())
        .collect();
    assert_eq!(storage_vars.len(), 3);
    let mut by_binding: Vec<(u32, Vec<Decoration>)> = storage_vars
        .iter()
        .map(|&v| {
            let ds = decorations(v);
            let binding = ds.iter().find(|(d, _)| *d == Decoration::Binding).map(|(_, l)| l[0]).unwrap();
            (binding, ds.into_iter().map(|(d, _)| d).collect())
        })
        .collect();
    by_binding.sort_by_key(|b| b.0);
    let block = &by_binding[0].1;
    assert!(block.contains(&Decoration::NonWritable), "{block:?}");
    assert!(!block.contains(&Decoration::Aliased) && !block.contains(&Decoration::Coherent), "{block:?}");
    for (b, ds) in &by_binding[1..] {
        assert!(ds.contains(&Decoration::Aliased), "binding {b}: {ds:?}");
        assert!(!ds.contains(&Decoration::NonWritable), "binding {b} is written: {ds:?}");
    }
    let dis = out.disassembly_unoptimized();
    assert!(dis.contains("OpName %") && dis.contains("\"_Global\""), "{dis}");
}

#[test]
fn values_that_fit_stay_in_push_constants() {
    let out = compile_all_presets(SMALL);
    assert!(out.abi.argument_block().is_none());
    assert_eq!(out.abi.push_constant_size, 80);
    let roles: Vec<_> = out.abi.properties.iter().map(|p| p.role).collect();
    assert_eq!(roles, vec![Role::DispatchSize, Role::PushValue, Role::Buffer]);
    assert_eq!(out.abi.descriptors().next().unwrap().binding, 0);
}

fn artifact_of(src: &str) -> (ShaderArtifact, Vec<u8>) {
    let m = parse(src);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    (art, bytes)
}

#[test]
fn the_artifact_persists_the_block_and_both_sides_check_its_shape() {
    let (art, bytes) = artifact_of(BIG);
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert_eq!(back, art);
    assert_eq!(back.abi.argument_block().map(|p| p.storage), Some(BufferStorage::Block { size: 176 }));
    // Writer: a block value turned into a push value, the block moved after a buffer, a
    // buffer at the block's binding, a block value past the block's end.
    let mut edits: Vec<ShaderArtifact> = Vec::new();
    let mut w = art.clone();
    w.abi.properties[2].role = Role::PushValue;
    edits.push(w);
    let mut w = art.clone();
    w.abi.properties.swap(1, 5);
    edits.push(w);
    let mut w = art.clone();
    w.abi.properties[5].binding = 0;
    edits.push(w);
    let mut w = art.clone();
    w.abi.properties[7].kind = PropertyKind::ConstantValue { offset: 168, size: 16 };
    edits.push(w);
    for w in &edits {
        assert!(matches!(w.encode(), Err(ArtifactError::NonCanonicalAbi(_))), "{:?}", w.abi.properties);
    }
    // Reader: the same shuffle written into the section (digests recomputed) is rejected.
    let (h, _) = RawHeader::parse(&bytes).expect("header");
    let mut at = HEADER_LEN;
    let mut sections = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    let rec = |p: usize| (20 + 44 * p)..(20 + 44 * (p + 1));
    let (a, b) = (sections[0][rec(1)].to_vec(), sections[0][rec(5)].to_vec());
    sections[0][rec(1)].copy_from_slice(&b);
    sections[0][rec(5)].copy_from_slice(&a);
    let shuffled = artifact::seal(h, &sections);
    let e = decode(&shuffled, &LoadRequirements::any_xir_spirv(), None).unwrap_err();
    assert!(matches!(e, ArtifactError::NonCanonicalAbi(_)), "{e}");
}
