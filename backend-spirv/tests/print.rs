//! `print` lowered to debug printf: the exact module shape (the
//! `NonSemantic.DebugPrintf` import, `SPV_KHR_non_semantic_info`, the
//! `OpString` format `xir-print#<id> %u %u %u: %x ...` with the invocation
//! id and one 32-bit word per scalar leaf, two per 64-bit leaf), Vulkan 1.2
//! validation at every optimizer preset, the printer records (their formats
//! and types, through the artifact codec), and the rejection of an
//! unprintable value.

mod common;

use common::*;
use xir_spirv::artifact::{decode, LoadRequirements, PrinterRecord, ShaderArtifact};

const PRINTS: &str = r#"
kernel @k(%out: buffer<u32>, %x: f32) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = aggregate %x, %x, %x : vec<f32, 3>
  %b = lt %t, u32 2 : bool
  %n = cast.static %t : i8
  %h = cast.static %x : f16
  %w = cast.static %t : u64
  %s = cast.static %t : i64
  %d = cast.static %x : f64
  print "t={} v={} 100%", %t, %v
  print "b={} n={}", %b, %n, %h, %w, %s, %d
  buffer.write %out, %t, %t
  return
}
"#;

fn printf_calls(m: &SpvModule) -> Vec<(String, usize)> {
    let set = m
        .ext_inst_imports
        .iter()
        .find(|i| matches!(&i.operands[0], Operand::LiteralString(s) if s == "NonSemantic.DebugPrintf"))
        .and_then(|i| i.result_id);
    let strings: std::collections::HashMap<u32, String> = m
        .debug_string_source
        .iter()
        .filter(|i| i.class.opcode == Op::String)
        .map(|i| match &i.operands[0] {
            Operand::LiteralString(s) => (i.result_id.unwrap(), s.clone()),
            o => panic!("OpString operand {o:?}"),
        })
        .collect();
    insts(m)
        .into_iter()
        .filter(|i| i.class.opcode == Op::ExtInst && Some(i.operands[0].unwrap_id_ref()) == set)
        .map(|i| {
            assert_eq!(i.operands[1], Operand::LiteralExtInstInteger(1), "DebugPrintf is instruction 1");
            (strings[&i.operands[2].unwrap_id_ref()].clone(), i.operands.len() - 3)
        })
        .collect()
}

#[test]
fn print_is_debug_printf_with_one_argument_per_scalar() {
    for level in 0..=3u8 {
        let out = compile_with(PRINTS, &opts(level, false));
        xir_spirv::validate::validate(&out.words).expect("final module validates");
        let m = load(&out.words);
        let exts: Vec<String> = m
            .extensions
            .iter()
            .map(|i| match &i.operands[0] {
                Operand::LiteralString(s) => s.clone(),
                o => panic!("{o:?}"),
            })
            .collect();
        assert!(exts.iter().any(|e| e == "SPV_KHR_non_semantic_info"), "level {level}: {exts:?}");
        let calls = printf_calls(&m);
        assert_eq!(
            calls,
            vec![
                // u32, then vec<f32, 3>: 4 words after the invocation id.
                ("xir-print#0 %u %u %u: %x %x %x %x\n".to_string(), 3 + 4),
                // bool, i8, f16: one word each; u64, i64, f64: two each.
                ("xir-print#1 %u %u %u: %x %x %x %x %x %x %x %x %x\n".to_string(), 3 + 9)
            ],
            "level {level}"
        );
    }
}

#[test]
fn printer_records_are_persisted_one_per_site() {
    let m = parse(PRINTS);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(0, false)).expect("compiles");
    let expected = vec![
        PrinterRecord { id: 0, format: "t={} v={} 100%".into(), arg_types: vec!["u32".into(), "vec<f32, 3>".into()] },
        PrinterRecord {
            id: 1,
            format: "b={} n={} {} {} {} {}".into(),
            arg_types: vec!["bool".into(), "i8".into(), "f16".into(), "u64".into(), "i64".into(), "f64".into()],
        },
    ];
    assert_eq!(out.printers, expected);
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    let back = decode(&bytes, &LoadRequirements::for_kernel(&m, k), None).expect("decodes");
    assert_eq!(back.printers, expected);
}

#[test]
fn a_kernel_without_print_imports_no_printf_set() {
    let out = compile_with(PRINTS.replace("  print \"t={} v={} 100%\", %t, %v\n", "").as_str(), &opts(0, false));
    let m = load(&out.words);
    assert_eq!(printf_calls(&m).len(), 1);
    let src: String = PRINTS.lines().filter(|l| !l.trim_start().starts_with("print")).collect::<Vec<_>>().join("\n");
    let out = compile_with(&src, &opts(0, false));
    let m = load(&out.words);
    assert!(m
        .ext_inst_imports
        .iter()
        .all(|i| !matches!(&i.operands[0], Operand::LiteralString(s) if s.starts_with("NonSemantic"))));
    assert!(m.extensions.is_empty(), "{:?}", m.extensions);
    assert!(out.printers.is_empty());
}

#[test]
fn matrices_print_by_columns_and_aggregates_are_rejected_at_the_site() {
    let src = r#"
kernel @k(%out: buffer<f32>, %x: f32) block_size(1, 1, 1) {
^entry:
  %c = aggregate %x, %x : vec<f32, 2>
  %mm = aggregate %c, %c : mat<f32, 2>
  print "m={}", %mm
  buffer.write %out, u32 0, %x
  return
}
"#;
    let out = compile_with(src, &opts(0, false));
    let calls = printf_calls(&load(&out.words));
    assert_eq!(calls, vec![("xir-print#0 %u %u %u: %x %x %x %x\n".to_string(), 3 + 4)]);
    let bad = r#"
kernel @k(%out: buffer<f32>, %x: f32) block_size(1, 1, 1) {
^entry:
  %a = aggregate %x, %x : array<f32, 2>
  print "a={}", %a
  buffer.write %out, u32 0, %x
  return
}
"#;
    let e = compile_err(bad, &opts(0, false));
    assert!(e.contains("spirv-plan:print") && e.contains("`array<f32, 2>` is not printable"), "{e}");
}

/// Check that every printf argument is an exact 32-bit word: the invocation
/// id's lanes, then bit casts (floats, 64-bit halves through `vec2<u32>`,
/// f16 through `vec2<f16>`), zero extensions and bool selects; never a
/// float or sign conversion whose result the consumer would format.
#[test]
fn printf_arguments_are_exact_words() {
    let out = compile_with(PRINTS, &opts(0, false));
    let m = load(&out.words);
    let all = insts(&m);
    let def: std::collections::HashMap<u32, &rspirv::dr::Instruction> =
        all.iter().filter_map(|i| i.result_id.map(|r| (r, *i))).collect();
    let u32_ty = m
        .types_global_values
        .iter()
        .find(|i| i.class.opcode == Op::TypeInt && i.operands == [Operand::LiteralBit32(32), Operand::LiteralBit32(0)])
        .and_then(|i| i.result_id)
        .expect("u32 type");
    let calls: Vec<_> = all
        .iter()
        .filter(|i| i.class.opcode == Op::ExtInst && i.operands[1] == Operand::LiteralExtInstInteger(1))
        .collect();
    assert_eq!(calls.len(), 2);
    let mut seen = std::collections::BTreeSet::new();
    for c in calls {
        for (k, a) in c.operands[3..].iter().enumerate() {
            let d = def[&a.unwrap_id_ref()];
            assert_eq!(d.result_type, Some(u32_ty), "argument {k} is a u32 word: {d:?}");
            let op = d.class.opcode;
            assert!(
                matches!(op, Op::CompositeExtract | Op::Bitcast | Op::UConvert | Op::Select),
                "argument {k}: {op:?}"
            );
            if op == Op::CompositeExtract {
                // The invocation id's lanes (and %t, one of them), or a 64-bit value's halves.
                let src = def[&d.operands[0].unwrap_id_ref()].class.opcode;
                assert!(matches!(src, Op::Load | Op::Bitcast), "argument {k} extracted from {src:?}");
            }
            seen.insert(format!("{op:?}"));
        }
    }
    // f32 / f16 bit casts, u8/i8 widening, the bool select and 64-bit halves all occur.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["Bitcast", "CompositeExtract", "Select", "UConvert"]);
    // The f16 leaf is bit-cast from a `vec2<f16>` pair, never converted.
    let from_pair = |i: &&&rspirv::dr::Instruction| {
        i.class.opcode == Op::Bitcast
            && i.result_type == Some(u32_ty)
            && def[&i.operands[0].unwrap_id_ref()].class.opcode == Op::CompositeConstruct
    };
    assert_eq!(all.iter().filter(from_pair).count(), 1);
}
