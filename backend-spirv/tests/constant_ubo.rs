//! The constant UBO end to end at the module and artifact level.
//!
//! Planner on a parsed kernel: the large array constant a kernel indexes is
//! found in first-use order, placed at offset 0 with its std140 layout, and
//! every element the interpreter reads through the constant equals the
//! element the serialized std140 bytes hold at `index * 16`; the small
//! constant beside it stays inline (under the threshold), and a 16 KiB + 1
//! element table is kept inline with a reason.
//!
//! Exact modules: a 300-element f32 table indexed dynamically is one
//! `Uniform` `Block` variable (set 0, the ABI's `ConstantData` binding,
//! `NonWritable`, `Offset` 0, `ArrayStride` 16) read by an access chain, with
//! no 300-element `OpConstantComposite`; a whole-value use loads it and
//! converts it with `OpCopyLogical`; a table over 16 KiB, a phi incoming
//! table and (without the Uniform-storage feature) narrow tables stay
//! inline with the planner's reason.
//!
//! Artifacts: the constant-data section holds exactly the serialized bytes,
//! its size is checked against the ABI's block on write and on read, and
//! every single-bit flip of an artifact with constant data is rejected.

mod common;

use common::*;
use rspirv::spirv::{Decoration, StorageClass};
use xir_spirv::artifact::{
    self, decode, ArtifactError, LoadRequirements, RawHeader, Section, ShaderArtifact, HEADER_LEN,
};
use xir_spirv::plan::constant_ubo::{candidates, plan_constants, PORTABLE_UBO_RANGE};
use xir_spirv::{CompileOptions, Feature, FeatureSet, SpirvOutput};

fn kernel(n: usize) -> String {
    let table: Vec<String> = (0..n).map(|i| format!("{:.1}", i as f32 * 1.5 - 7.0)).collect();
    format!(
        "kernel @k(%out: buffer<f32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  \
         %j = mod %i, u32 {n} : u32\n  \
         %x = extract array<f32, {n}> [{}], %j : f32\n  \
         %y = extract array<f32, 2> [1.0, 2.0], u32 1 : f32\n  \
         %z = add %x, %y : f32\n  \
         buffer.write %out, %i, %z\n  return\n}}\n",
        table.join(", ")
    )
}

fn order(m: &xir::Module) -> Vec<(xir::FuncId, Vec<xir::Block>)> {
    let k = kernel_of(m);
    let handed = xir_spirv::handoff::check(m, k).expect("hands off");
    let plans = xir_spirv::plan::plan_all(&handed, None, false).expect("plans");
    plans.callgraph.order.iter().map(|f| (*f, plans.closures[f].blocks.clone())).collect()
}

#[test]
fn a_kernel_table_is_placed_and_its_bytes_match_the_interpreter() {
    let n = 200;
    let m = parse(&kernel(n));
    let cands = candidates(&m, &order(&m));
    assert_eq!(cands.len(), 2, "the table and the small constant");
    let plan = plan_constants(&m, &cands, PORTABLE_UBO_RANGE);
    assert_eq!(plan.placed.len(), 1);
    assert!(plan.inline.is_empty(), "the small constant is no candidate: {:?}", plan.inline);
    let p = &plan.placed[0];
    assert_eq!((p.offset, p.layout.len, p.layout.stride, p.layout.size), (0, n as u64, 16, 16 * n as u64));
    assert_eq!(p.constant, cands[0]);
    let inputs = xir::interp::Inputs::from_json(&format!(
        r#"{{"dispatch": [{n}, 1, 1], "args": {{"out": [{}]}}}}"#,
        vec!["0.0"; n].join(", ")
    ))
    .expect("inputs");
    let out = xir::interp::run_kernel(&m, kernel_of(&m), &inputs).expect("interpreter");
    let got = out.buffers["out"].as_array().expect("array").clone();
    for (i, v) in got.iter().enumerate() {
        let from_ubo = f32::from_le_bytes(plan.bytes[i * 16..i * 16 + 4].try_into().unwrap());
        assert_eq!(v.as_f64().expect("number") as f32, from_ubo + 2.0, "element {i}");
    }
}

#[test]
fn one_element_over_16_kib_stays_inline() {
    for (n, placed) in [(1024usize, true), (1025, false)] {
        let m = parse(&kernel(n));
        let plan = plan_constants(&m, &candidates(&m, &order(&m)), PORTABLE_UBO_RANGE);
        assert_eq!(plan.placed.len() == 1, placed, "{n} elements");
        if !placed {
            assert!(plan.inline[0].1.contains("exceed the portable uniform-buffer range"), "{:?}", plan.inline);
        }
    }
}

/// The table literal of `kernel(n)`, element `i`.
fn table_value(i: usize) -> f32 {
    i as f32 * 1.5 - 7.0
}

/// The `Uniform` variables of a module.
fn uniform_vars(m: &SpvModule) -> Vec<&rspirv::dr::Instruction> {
    m.types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable && i.operands[0] == Operand::StorageClass(StorageClass::Uniform))
        .collect()
}

/// The literal operands of decoration `d` on `id` (member decorations when `member` is given).
fn decoration(m: &SpvModule, id: u32, member: Option<u32>, d: Decoration) -> Option<Vec<u32>> {
    m.annotations.iter().find_map(|a| {
        let ops = &a.operands;
        let (target, rest) = match (a.class.opcode, member) {
            (Op::Decorate, None) => (ops[0].unwrap_id_ref(), &ops[1..]),
            (Op::MemberDecorate, Some(k)) if ops[1] == Operand::LiteralBit32(k) => (ops[0].unwrap_id_ref(), &ops[2..]),
            _ => return None,
        };
        (target == id && rest[0] == Operand::Decoration(d))
            .then(|| rest[1..].iter().map(|o| if let Operand::LiteralBit32(v) = o { *v } else { u32::MAX }).collect())
    })
}

fn def(m: &SpvModule, id: u32) -> &rspirv::dr::Instruction {
    m.types_global_values.iter().find(|i| i.result_id == Some(id)).expect("defined")
}

/// The largest `OpConstantComposite` operand count in a module.
fn largest_composite(m: &SpvModule) -> usize {
    m.types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::ConstantComposite)
        .map(|i| i.operands.len())
        .max()
        .unwrap_or(0)
}

#[test]
fn a_300_element_table_is_read_from_one_uniform_block() {
    for level in [0u8, 2] {
        let out = compile_with(&kernel(300), &opts(level, false));
        let m = load(&out.words);
        let vars = uniform_vars(&m);
        assert_eq!(vars.len(), 1, "-O{level}: one Uniform variable\n{}", out.disassembly());
        let var = vars[0].result_id.unwrap();
        let cd = out.abi.constant_data().expect("the ABI has the constant data");
        assert_eq!((cd.set, cd.binding, out.abi.constant_data_size()), (0, 1, 4800));
        assert_eq!(decoration(&m, var, None, Decoration::DescriptorSet), Some(vec![0]));
        assert_eq!(decoration(&m, var, None, Decoration::Binding), Some(vec![1]));
        assert_eq!(decoration(&m, var, None, Decoration::NonWritable), Some(vec![]));
        // The pointee: a Block struct whose member 0 at Offset 0 is array<f32, 300> with ArrayStride 16.
        let ptr = def(&m, vars[0].result_type.unwrap());
        let st = def(&m, ptr.operands[1].unwrap_id_ref());
        assert_eq!(st.class.opcode, Op::TypeStruct);
        assert_eq!(decoration(&m, st.result_id.unwrap(), None, Decoration::Block), Some(vec![]));
        assert_eq!(decoration(&m, st.result_id.unwrap(), Some(0), Decoration::Offset), Some(vec![0]));
        let arr = def(&m, st.operands[0].unwrap_id_ref());
        assert_eq!(arr.class.opcode, Op::TypeArray);
        assert_eq!(const_values(&m)[&arr.operands[1].unwrap_id_ref()], 300);
        assert_eq!(decoration(&m, arr.result_id.unwrap(), None, Decoration::ArrayStride), Some(vec![16]));
        // Read through an access chain (member, dynamic index) and a load; never spelled inline.
        let chains = insts(&m)
            .into_iter()
            .filter(|i| i.class.opcode == Op::AccessChain && i.operands[0] == Operand::IdRef(var))
            .count();
        assert_eq!(chains, 1, "-O{level}");
        assert!(largest_composite(&m) < 300, "-O{level}: the table is spelled inline");
        if level == 0 {
            // The small constant beside it stays inline.
            assert_eq!(largest_composite(&m), 2);
        }
        assert_eq!(out.constants.len(), 4800);
        for i in 0..300 {
            let b = &out.constants[16 * i..16 * i + 16];
            assert_eq!(f32::from_le_bytes(b[..4].try_into().unwrap()), table_value(i), "element {i}");
            assert!(b[4..].iter().all(|&x| x == 0), "padding of element {i}");
        }
        assert!(out.inline_constants.is_empty(), "{:?}", out.inline_constants);
    }
}

#[test]
fn a_table_over_16_kib_stays_inline_with_the_reason() {
    let at = compile_with(&kernel(1024), &opts(0, false));
    assert_eq!((at.abi.constant_data_size(), at.constants.len()), (16384, 16384));
    let out = compile_with(&kernel(1025), &opts(0, false));
    let m = load(&out.words);
    assert!(uniform_vars(&m).is_empty());
    assert!(out.abi.constant_data().is_none() && out.constants.is_empty());
    assert_eq!(largest_composite(&m), 1025, "the table is inline");
    assert_eq!(out.inline_constants.len(), 1);
    let (ty, why) = &out.inline_constants[0];
    assert_eq!(ty, "array<f32, 1025>");
    assert!(why.contains("16400 std140 bytes") && why.contains("uniform-buffer range of 16384 bytes"), "{why}");
}

/// A whole-value use (an `insert` into the table) loads the member and converts it to the logical array.
#[test]
fn a_whole_value_use_loads_the_table_and_copies_it_logically() {
    let table: Vec<String> = (0..100).map(|i| format!("{i}")).collect();
    let src = format!(
        "kernel @k(%out: buffer<i32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  %j = mod %i, u32 100 : u32\n  \
         %t = insert array<i32, 100> [{}], i32 -1, %j : array<i32, 100>\n  \
         %k = add %j, u32 1 : u32\n  %k2 = mod %k, u32 100 : u32\n  \
         %x = extract %t, %k2 : i32\n  %y = extract %t, %j : i32\n  %z = add %x, %y : i32\n  \
         buffer.write %out, %i, %z\n  return\n}}\n",
        table.join(", ")
    );
    let out = compile_with(&src, &opts(0, false));
    let m = load(&out.words);
    assert_eq!(uniform_vars(&m).len(), 1);
    let dis = out.disassembly();
    assert_eq!(count(&dis, "OpCopyLogical"), 1, "{dis}");
    assert!(largest_composite(&m) < 100);
    assert_eq!(out.constants.len(), 1600);
}

/// Narrow tables: placed only when the target enables the matching Uniform-storage feature.
#[test]
fn narrow_tables_need_the_uniform_storage_feature() {
    let cases = [
        // (element, length, feature, its Vulkan name, the std140 bytes of element 7)
        (
            "u16",
            200usize,
            Feature::UniformAndStorageBuffer16BitAccess,
            "uniformAndStorageBuffer16BitAccess",
            &[7, 0][..],
        ),
        ("f16", 200, Feature::UniformAndStorageBuffer16BitAccess, "uniformAndStorageBuffer16BitAccess", &[0, 0x47]),
        ("i8", 300, Feature::UniformAndStorageBuffer8BitAccess, "uniformAndStorageBuffer8BitAccess", &[7]),
    ];
    for (elem, n, feature, name, seventh) in cases {
        let table: Vec<String> = (0..n).map(|i| format!("{}", i % 100)).collect();
        let src = format!(
            "kernel @k(%out: buffer<{elem}>) block_size(64, 1, 1) {{\n^entry:\n  \
             %i = extract $dispatch_id, u32 0 : u32\n  %j = mod %i, u32 {n} : u32\n  \
             %x = extract array<{elem}, {n}> [{}], %j : {elem}\n  buffer.write %out, %i, %x\n  return\n}}\n",
            table.join(", ")
        );
        let mut without = FeatureSet::all();
        without.remove(feature);
        for (device, placed) in [(Some(FeatureSet::all()), true), (Some(without), false), (None, false)] {
            let o = CompileOptions { device_features: device, ..opts(0, false) };
            let out = compile_with(&src, &o);
            let m = load(&out.words);
            let what = format!("{elem} with {:?}", device.map(|d| d.contains(feature)));
            assert_eq!(uniform_vars(&m).len(), usize::from(placed), "{what}");
            assert_eq!(out.features.contains(feature), placed, "{what}: {:?}", out.features);
            if placed {
                assert_eq!(out.constants.len(), 16 * n, "{what}");
                assert_eq!(&out.constants[16 * 7..16 * 7 + seventh.len()], seventh, "{what}");
                assert!(out.constants[16 * 7 + seventh.len()..16 * 8].iter().all(|&b| b == 0), "{what}");
            } else {
                assert!(out.abi.constant_data().is_none() && out.constants.is_empty(), "{what}");
                assert_eq!(largest_composite(&m), n, "{what}: inline");
                let why = &out.inline_constants[0].1;
                assert!(why.contains(name) && why.contains("does not enable"), "{what}: {why}");
            }
        }
    }
}

#[test]
fn a_phi_incoming_table_stays_inline_with_the_reason() {
    let lits = |k: usize| (0..100).map(|i| format!("{}.5", i + k)).collect::<Vec<_>>().join(", ");
    let src = format!(
        "kernel @k(%out: buffer<f32>) block_size(64, 1, 1) {{\n^entry:\n  \
         %i = extract $dispatch_id, u32 0 : u32\n  %c = gt %i, u32 8 : bool\n  \
         if %c, true ^a, false ^b, merge ^m\n^a:\n  br target ^m\n^b:\n  br target ^m\n^m:\n  \
         %t = phi [array<f32, 100> [{}], ^a], [array<f32, 100> [{}], ^b] : array<f32, 100>\n  \
         %j = mod %i, u32 100 : u32\n  %x = extract %t, %j : f32\n  buffer.write %out, %i, %x\n  return\n}}\n",
        lits(0),
        lits(1)
    );
    let out = compile_with(&src, &opts(0, false));
    assert!(out.abi.constant_data().is_none() && out.constants.is_empty());
    assert_eq!(out.inline_constants.len(), 2);
    for (_, why) in &out.inline_constants {
        assert!(why.contains("phi incoming value"), "{why}");
    }
}

/// The artifact of `kernel(n)`: the compiled output, the artifact and its bytes.
fn artifact_of(n: usize) -> (SpirvOutput, ShaderArtifact, Vec<u8>) {
    let m = parse(&kernel(n));
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    (out, art, bytes)
}

/// Edit a real artifact's sections and re-seal it (every digest correct).
fn reseal(bytes: &[u8], edit: impl FnOnce(&mut [Vec<u8>; 5])) -> Vec<u8> {
    let (h, _) = RawHeader::parse(bytes).expect("header parses");
    let mut at = HEADER_LEN;
    let mut sections = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    edit(&mut sections);
    artifact::seal(h, &sections)
}

#[test]
fn the_artifact_carries_exactly_the_constant_data() {
    let (out, art, bytes) = artifact_of(64);
    assert_eq!((art.constants.len(), out.abi.constant_data_size()), (1024, 1024));
    assert_eq!(art.constants, out.constants);
    let (h, _) = RawHeader::parse(&bytes).expect("header");
    assert_eq!(h.sections[4].size, 1024, "the constants section is the serialized bytes");
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert_eq!(back, art);
    assert_eq!(back.encode().expect("re-encodes"), bytes);
    // A constants section of another size than the planned block, under correct digests.
    let short = reseal(&bytes, |s| s[4].truncate(1008));
    let long = reseal(&bytes, |s| s[4].extend_from_slice(&[0; 16]));
    let none = reseal(&bytes, |s| s[4].clear());
    for (what, b) in [("short", short), ("long", long), ("none", none)] {
        match decode(&b, &LoadRequirements::any_xir_spirv(), None) {
            Err(ArtifactError::Malformed { section: Section::Constants, reason, .. }) => {
                assert!(reason.contains("constant-data block is 1024 bytes"), "{what}: {reason}")
            }
            r => panic!("{what}: {r:?}"),
        }
    }
    // Constant data beside an ABI without a constant-data block.
    let (_, _, small) = artifact_of(8);
    let stray = reseal(&small, |s| s[4] = vec![0; 16]);
    assert!(matches!(
        decode(&stray, &LoadRequirements::any_xir_spirv(), None),
        Err(ArtifactError::Malformed { section: Section::Constants, .. })
    ));
    // The writer refuses the same mismatch.
    let mut w = art.clone();
    w.constants.pop();
    assert!(matches!(w.encode(), Err(ArtifactError::Malformed { section: Section::Constants, .. })));
}

#[test]
fn every_single_bit_flip_of_an_artifact_with_constant_data_is_rejected() {
    let (_, _, bytes) = artifact_of(64);
    let (h, _) = RawHeader::parse(&bytes).expect("header");
    let constants_at = bytes.len() - h.sections[4].size as usize;
    let mut in_constants = 0;
    for i in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[i / 8] ^= 1 << (i % 8);
        match std::panic::catch_unwind(|| decode(&b, &LoadRequirements::any_xir_spirv(), Some(&FeatureSet::all()))) {
            Ok(Err(e)) => {
                if i / 8 >= constants_at {
                    assert_eq!(e, ArtifactError::SectionDigestMismatch(Section::Constants), "bit {i}");
                    in_constants += 1;
                }
            }
            Ok(Ok(_)) => panic!("bit {i} flipped: the artifact was accepted"),
            Err(_) => panic!("bit {i} flipped: the decoder panicked"),
        }
    }
    assert_eq!(in_constants, 1024 * 8);
}
