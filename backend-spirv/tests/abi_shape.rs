//! The descriptor ABI is one canonical property list that the artifact
//! writer and reader both check: each non-canonical shape below is refused by
//! `ShaderArtifact::encode` (edited ABI) and by `artifact::decode` (the same
//! edit made to the section bytes, digests recomputed), and descriptor lookup
//! skips the descriptor-free values wherever they stand.

mod common;

use common::*;
use xir_spirv::abi::{Property, PropertyKind, Role, NO_BINDING};
use xir_spirv::artifact::{self, decode, ArtifactError, LoadRequirements, RawHeader, ShaderArtifact, HEADER_LEN};
use xir_spirv::BufferStorage;

/// Properties: dispatch size, `%s` (push value), `%x` (binding 0), `%n` (push value), `%y` (binding 1).
const KERNEL: &str = r#"
kernel @k(%s: f32, %x: buffer<f32>, %n: u32, %y: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %x, %i : f32
  %w = mul %v, %s : f32
  %j = add %i, %n : u32
  buffer.write %y, %j, %w
  return
}
"#;

fn real() -> (ShaderArtifact, Vec<u8>) {
    let m = parse(KERNEL);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    (art, bytes)
}

const WORDS: usize = 11;

/// Edit the properties section of `bytes` as u32 words and re-seal (all digests correct).
fn reseal_props(bytes: &[u8], edit: impl FnOnce(&mut Vec<u32>)) -> Vec<u8> {
    let (h, _) = RawHeader::parse(bytes).expect("header");
    let mut at = HEADER_LEN;
    let mut s = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    let mut words: Vec<u32> = s[0].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    edit(&mut words);
    s[0] = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    artifact::seal(h, &s)
}

/// Word index of `field` of property record `p`.
fn at(p: usize, field: usize) -> usize {
    5 + WORDS * p + field
}

fn rejected_on_decode(b: &[u8]) -> ArtifactError {
    decode(b, &LoadRequirements::any_xir_spirv(), None).expect_err("non-canonical properties decode")
}

#[test]
fn descriptor_lookup_skips_values_wherever_they_stand() {
    let (art, bytes) = real();
    let roles: Vec<_> = art.abi.properties.iter().map(|p| p.role).collect();
    assert_eq!(roles, vec![Role::DispatchSize, Role::PushValue, Role::Buffer, Role::PushValue, Role::Buffer]);
    let d: Vec<_> = art.abi.descriptors().map(|p| (p.arg_index, p.binding)).collect();
    assert_eq!(d, vec![(Some(1), 0), (Some(3), 1)]);
    assert_eq!(art.abi.values().count(), 3);
    assert_eq!(decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes"), art);
}

#[test]
fn shuffled_order_is_rejected_by_writer_and_reader() {
    let (art, bytes) = real();
    for (a, b) in [(1, 2), (2, 4), (0, 1), (3, 4)] {
        let mut w = art.clone();
        w.abi.properties.swap(a, b);
        assert!(matches!(w.encode(), Err(ArtifactError::NonCanonicalAbi(_))), "writer, swap {a} {b}");
        let shuffled = reseal_props(&bytes, |ws| {
            for f in 0..WORDS {
                ws.swap(at(a, f), at(b, f));
            }
        });
        let e = rejected_on_decode(&shuffled);
        assert!(matches!(e, ArtifactError::NonCanonicalAbi(_)), "reader, swap {a} {b}: {e}");
    }
}

#[test]
fn unknown_kinds_roles_and_storages_fail_closed() {
    let (_, bytes) = real();
    for (field, value) in [(0, 99), (0, 0), (3, 99), (3, 0), (8, 4), (4, 1)] {
        let b = reseal_props(&bytes, |ws| ws[at(2, field)] = value);
        let e = rejected_on_decode(&b);
        assert!(matches!(e, ArtifactError::Malformed { .. }), "word {field} = {value}: {e}");
    }
}

#[test]
fn non_canonical_shapes_are_rejected_by_writer_and_reader() {
    let (art, bytes) = real();
    let sampler_heap_at = |set: u32| Property {
        kind: PropertyKind::SamplerHeap,
        role: Role::Heap,
        arg_index: None,
        set,
        binding: 0,
        storage: BufferStorage::NotABuffer,
    };
    // (what, edit of the ABI, edit of the section words)
    type AbiEdit = Box<dyn Fn(&mut Vec<Property>)>;
    type WordEdit = Box<dyn Fn(&mut Vec<u32>)>;
    let cases: Vec<(&str, AbiEdit, WordEdit)> = vec![
        ("a value with a binding", Box::new(|p| p[1].binding = 0), Box::new(|w| w[at(1, 7)] = 0)),
        ("a buffer with a value's role", Box::new(|p| p[2].role = Role::PushValue), Box::new(|w| w[at(2, 3)] = 2)),
        ("a buffer outside set 0", Box::new(|p| p[2].set = 2), Box::new(|w| w[at(2, 6)] = 2)),
        (
            "a block value without an argument block",
            Box::new(|p| p[3].role = Role::BlockValue),
            Box::new(|w| w[at(3, 3)] = 3),
        ),
        (
            "the sampler heap outside set 1",
            Box::new(move |p| p.push(sampler_heap_at(2))),
            Box::new(|w| {
                w[4] += 1;
                w.extend([4, 0, 0, 8, 0, u32::MAX, 2, 0, 0, 0, 0]);
            }),
        ),
        ("a value with no argument", Box::new(|p| p[3].arg_index = None), Box::new(|w| w[at(3, 5)] = u32::MAX)),
        (
            "a value overlapping the dispatch size",
            Box::new(|p| p[1].kind = PropertyKind::ConstantValue { offset: 8, size: 4 }),
            Box::new(|w| w[at(1, 1)] = 8),
        ),
    ];
    for (what, abi_edit, word_edit) in cases {
        let mut w = art.clone();
        abi_edit(&mut w.abi.properties);
        assert!(matches!(w.encode(), Err(ArtifactError::NonCanonicalAbi(_))), "writer: {what}");
        let e = rejected_on_decode(&reseal_props(&bytes, word_edit));
        assert!(matches!(e, ArtifactError::NonCanonicalAbi(_)), "reader: {what}: {e}");
    }
    // The edits are not vacuous: the same pushes at a canonical place are accepted by the shape check.
    let mut ok = art.abi.clone();
    ok.properties.push(sampler_heap_at(1));
    ok.check_shape().expect("sampler heap at set 1 is canonical");
    assert_eq!(ok.properties[1].binding, NO_BINDING);
}

#[test]
fn a_module_binding_the_abi_does_not_describe_is_rejected() {
    let (_, bytes) = real();
    let (h, _) = RawHeader::parse(&bytes).expect("header");
    let mut at = HEADER_LEN;
    let sections = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    let words: Vec<u32> = sections[2].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    // OpDecorate %var Binding 1 (word count 4, opcode 71; Binding = 33).
    let k = words.windows(4).position(|w| w[0] == (4 << 16) | 71 && w[2] == 33 && w[3] == 1).expect("binding 1");
    for (value, ok) in [(1u32, true), (7, false), (0, false)] {
        let mut w = words.clone();
        w[k + 3] = value;
        let mut s = sections.clone();
        s[2] = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let b = artifact::seal(h.clone(), &s);
        let r = decode(&b, &LoadRequirements::any_xir_spirv(), None);
        match (ok, r) {
            (true, Ok(_)) => {}
            (false, Err(ArtifactError::NonCanonicalAbi(m))) => assert!(m.contains("module interface"), "{m}"),
            (ok, r) => panic!("binding {value} (accept: {ok}): {r:?}"),
        }
    }
}
