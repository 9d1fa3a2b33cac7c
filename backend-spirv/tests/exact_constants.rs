//! Exact-bit constants and switch literal widths, checked on the word
//! stream of the module as emitted (preset 0).

mod common;

use common::*;
use rspirv::spirv::Op as SOp;

const CONSTS: &str = r#"
kernel @consts(%u: buffer<u64>, %d: buffer<f64>, %f: buffer<f32>, %h: buffer<f16>) block_size(1, 1, 1) {
^entry:
  buffer.write %u, u32 0, u64 1
  buffer.write %d, u32 0, f64 0x7ff0000000000123
  buffer.write %f, u32 0, f32 -0.0
  buffer.write %f, u32 1, f32 0x7fc00abc
  buffer.write %h, u32 0, f16 0x3c01
  return
}
"#;

/// (result type id, operand words) of every OpConstant, from the raw words.
fn raw_constants(words: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let mut out = Vec::new();
    let mut k = 5;
    while k < words.len() {
        let wc = (words[k] >> 16) as usize;
        let op = words[k] & 0xffff;
        if op == SOp::Constant as u32 {
            out.push((words[k + 1], words[k + 3..k + wc].to_vec()));
        }
        k += wc.max(1);
    }
    out
}

fn type_id(m: &SpvModule, op: SOp, width: u32) -> u32 {
    m.types_global_values
        .iter()
        .find(|i| i.class.opcode == op && i.operands[0] == Operand::LiteralBit32(width))
        .and_then(|i| i.result_id)
        .expect("type declared")
}

#[test]
fn wide_constants_take_two_words_and_float_payloads_are_exact() {
    let out = compile_all_presets(CONSTS);
    let w = &out.words_unoptimized;
    let m = load(w);
    let u64t = type_id(&m, SOp::TypeInt, 64);
    let f64t = type_id(&m, SOp::TypeFloat, 64);
    let f32t = type_id(&m, SOp::TypeFloat, 32);
    let f16t = type_id(&m, SOp::TypeFloat, 16);
    let consts = raw_constants(w);
    assert!(consts.contains(&(u64t, vec![1, 0])), "u64 1 must be the two words [1, 0]: {consts:?}");
    assert!(consts.contains(&(f64t, vec![0x123, 0x7ff00000])), "f64 NaN payload: {consts:?}");
    assert!(consts.contains(&(f32t, vec![0x8000_0000])), "f32 -0.0: {consts:?}");
    assert!(consts.contains(&(f32t, vec![0x7fc0_0abc])), "f32 NaN payload: {consts:?}");
    assert!(consts.contains(&(f16t, vec![0x3c01])), "f16 bits in the low half of one word: {consts:?}");
    for (t, ws) in &consts {
        let expect = if *t == u64t || *t == f64t { 2 } else { 1 };
        assert_eq!(ws.len(), expect, "literal width of a constant of type %{t}");
    }
}

const SWITCHES: &str = r#"
kernel @sw(%a: buffer<i32>, %b: buffer<u64>, %c: buffer<i16>, %out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %a, u32 0 : i32
  switch %x, merge ^m1, default ^m1, case -3 ^c1, case 7 ^c2
^c1:
  buffer.write %out, u32 0, u32 1
  br target ^m1
^c2:
  buffer.write %out, u32 0, u32 2
  br target ^m1
^m1:
  %y = buffer.read %b, u32 0 : u64
  switch %y, merge ^m2, default ^d2, case 4294967296 ^c3, case 18446744073709551615 ^c4
^c3:
  buffer.write %out, u32 1, u32 3
  br target ^m2
^c4:
  buffer.write %out, u32 1, u32 4
  br target ^m2
^d2:
  br target ^m2
^m2:
  %z = buffer.read %c, u32 0 : i16
  switch %z, merge ^m3, default ^m3, case -1 ^c5
^c5:
  buffer.write %out, u32 2, u32 5
  br target ^m3
^m3:
  return
}
"#;

#[test]
fn switch_literals_have_the_selector_width() {
    let out = compile_all_presets(SWITCHES);
    let w = &out.words_unoptimized;
    let mut switches = Vec::new();
    let mut k = 5;
    while k < w.len() {
        let wc = (w[k] >> 16) as usize;
        if w[k] & 0xffff == SOp::Switch as u32 {
            switches.push(w[k + 3..k + wc].to_vec()); // after selector and default: (literal words, label)*
        }
        k += wc.max(1);
    }
    assert_eq!(switches.len(), 3, "{}", out.disassembly_unoptimized());
    // i32: one literal word per case, -3 as two's complement.
    assert_eq!(switches[0].len(), 4);
    assert_eq!((switches[0][0], switches[0][2]), (0xffff_fffd, 7));
    // u64: two literal words (low, high) per case.
    assert_eq!(switches[1].len(), 6);
    assert_eq!(&switches[1][0..2], &[0, 1]);
    assert_eq!(&switches[1][3..5], &[0xffff_ffff, 0xffff_ffff]);
    // i16: one word, sign-extended.
    assert_eq!(switches[2].len(), 2);
    assert_eq!(switches[2][0], 0xffff_ffff);
}
