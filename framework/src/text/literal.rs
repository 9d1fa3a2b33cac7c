//! Types and constant literals of the text format, and the exact number
//! conversions behind them: integers must fit their type, floats keep their
//! bits (hex for NaN payloads, f16 and fp8), decimal fp8 rounds to nearest
//! even by enumerating the 256 codes. Nesting is depth-limited.

use half::f16;

use super::lexer::Tok;
use super::parser::{PResult, Parser};
use super::{type_to_string, MAX_DEPTH};
use crate::ir::{Const, ConstData, ConstValue, FloatFormat, Type, TypeId};

const SCALARS: &[(&str, Type)] = &[
    ("void", Type::Void),
    ("bool", Type::Bool),
    ("i8", Type::Int { bits: 8, signed: true }),
    ("u8", Type::Int { bits: 8, signed: false }),
    ("i16", Type::Int { bits: 16, signed: true }),
    ("u16", Type::Int { bits: 16, signed: false }),
    ("i32", Type::Int { bits: 32, signed: true }),
    ("u32", Type::Int { bits: 32, signed: false }),
    ("i64", Type::Int { bits: 64, signed: true }),
    ("u64", Type::Int { bits: 64, signed: false }),
    ("f16", Type::Float(FloatFormat::F16)),
    ("f32", Type::Float(FloatFormat::F32)),
    ("f64", Type::Float(FloatFormat::F64)),
    ("fp8e4m3", Type::Float(FloatFormat::E4M3)),
    ("fp8e5m2", Type::Float(FloatFormat::E5M2)),
    ("byte_buffer", Type::ByteBuffer),
    ("bindless_array", Type::BindlessArray),
    ("accel", Type::Accel),
    ("ray_query_all", Type::RayQuery { any_hit: false }),
    ("ray_query_any", Type::RayQuery { any_hit: true }),
];

const PARAMETRIC: &[&str] = &["vec", "mat", "array", "struct", "buffer", "texture2d", "texture3d"];

/// Whether an identifier begins a type (the parser's rule; editors color
/// by it).
pub fn is_type_keyword(s: &str) -> bool {
    matches!(
        s,
        "void"
            | "bool"
            | "i8"
            | "u8"
            | "i16"
            | "u16"
            | "i32"
            | "u32"
            | "i64"
            | "u64"
            | "f16"
            | "f32"
            | "f64"
            | "fp8e4m3"
            | "fp8e5m2"
            | "byte_buffer"
            | "bindless_array"
            | "accel"
            | "ray_query_all"
            | "ray_query_any"
            | "vec"
            | "mat"
            | "array"
            | "struct"
            | "buffer"
            | "texture2d"
            | "texture3d"
    )
}

impl<'a> Parser<'a> {
    pub(super) fn ty(&mut self) -> PResult<TypeId> {
        self.ty_at(0)
    }

    fn ty_at(&mut self, depth: u32) -> PResult<TypeId> {
        let Tok::Ident(kw) = self.tok.tok else { return Err(self.unexpected("a type")) };
        if depth > MAX_DEPTH {
            return Err(self.error(self.tok.span, format!("types nest deeper than {MAX_DEPTH} levels")));
        }
        if let Some((_, t)) = SCALARS.iter().find(|(n, _)| *n == kw) {
            self.advance();
            return Ok(self.module.types.intern(t.clone()));
        }
        if !PARAMETRIC.contains(&kw) {
            return Err(self.unexpected("a type"));
        }
        self.advance();
        self.expect_punct('<')?;
        let t = match kw {
            "struct" => {
                if self.tok.tok != Tok::Ident("align") {
                    return Err(self.unexpected("`align`"));
                }
                self.advance();
                let align = self.u32_literal("a struct alignment")?;
                self.expect_punct('>')?;
                self.expect_punct('{')?;
                let mut fields = Vec::new();
                if !self.is_punct('}') {
                    loop {
                        fields.push(self.ty_at(depth + 1)?);
                        if self.is_punct(',') {
                            self.advance();
                        } else {
                            break;
                        }
                    }
                }
                self.expect_punct('}')?;
                return Ok(self.module.types.intern(Type::Struct { fields, align }));
            }
            "vec" | "mat" | "array" => {
                let elem = self.ty_at(depth + 1)?;
                self.expect_punct(',')?;
                let span = self.tok.span;
                let n = self.uint_literal("a length")?;
                let small =
                    || u8::try_from(n).map_err(|_| self.error(span, format!("expected a count below 256, found {n}")));
                match kw {
                    "vec" => Type::Vector { elem, lanes: small()? },
                    "mat" => Type::Matrix { elem, dim: small()? },
                    _ => Type::Array { elem, len: n },
                }
            }
            "buffer" => Type::Buffer(self.ty_at(depth + 1)?),
            _ => Type::Texture { dim: if kw == "texture3d" { 3 } else { 2 }, elem: self.ty_at(depth + 1)? },
        };
        self.expect_punct('>')?;
        Ok(self.module.types.intern(t))
    }

    /// The literal of a constant of type `ty` (the type already read).
    pub(super) fn const_literal(&mut self, ty: TypeId, depth: u32) -> PResult<Const> {
        let span = self.tok.span;
        if depth > MAX_DEPTH {
            return Err(self.error(span, format!("constants nest deeper than {MAX_DEPTH} levels")));
        }
        let t = self.module.types.get(ty).clone();
        let scalar =
            |p: &mut Self, bits: u64| Ok(p.module.consts.intern(ConstData { ty, value: ConstValue::Scalar(bits) }));
        let members: Vec<TypeId> = match t {
            Type::Bool => {
                let b = match self.tok.tok {
                    Tok::Ident("true") => 1,
                    Tok::Ident("false") => 0,
                    _ => return Err(self.unexpected("`true` or `false`")),
                };
                self.advance();
                return scalar(self, b);
            }
            Type::Int { bits, signed } => {
                let Tok::Number(text) = self.tok.tok else { return Err(self.unexpected("an integer literal")) };
                let v = parse_int(text, bits as u32, signed).map_err(|m| self.error(span, m))?;
                self.advance();
                return scalar(self, v);
            }
            Type::Float(fmt) => {
                let text = match self.tok.tok {
                    Tok::Number(t) | Tok::Ident(t @ ("inf" | "nan")) => t,
                    _ => return Err(self.unexpected("a float literal")),
                };
                let v = parse_float(text, fmt).map_err(|m| self.error(span, m))?;
                self.advance();
                return scalar(self, v);
            }
            Type::Vector { elem, lanes } => vec![elem; lanes as usize],
            Type::Matrix { elem, dim } => {
                let col = self.module.types.vector(elem, dim);
                vec![col; dim as usize]
            }
            Type::Struct { fields, .. } => fields,
            Type::Array { elem, len } => return self.array_literal(ty, elem, len, depth),
            _ => {
                let name = type_to_string(&self.module.types, ty);
                return Err(self.error(span, format!("expected a type with constants, found {name}")));
            }
        };
        self.expect_punct('[')?;
        let mut out = Vec::with_capacity(members.len());
        for (k, &m) in members.iter().enumerate() {
            if k > 0 {
                if self.is_punct(']') {
                    let name = type_to_string(&self.module.types, ty);
                    let msg = format!("expected {} members for {name}, found {k}", members.len());
                    return Err(self.error(self.tok.span, msg));
                }
                self.expect_punct(',')?;
            }
            out.push(self.const_literal(m, depth + 1)?);
        }
        if !self.is_punct(']') {
            let name = type_to_string(&self.module.types, ty);
            return Err(self.unexpected(&format!("`]` after {} members of {name}", members.len())));
        }
        self.advance();
        Ok(self.module.consts.intern(ConstData { ty, value: ConstValue::Composite(out) }))
    }

    fn array_literal(&mut self, ty: TypeId, elem: TypeId, len: u64, depth: u32) -> PResult<Const> {
        self.expect_punct('[')?;
        let mut out = Vec::new();
        if !self.is_punct(']') {
            loop {
                if out.len() as u64 == len {
                    let name = type_to_string(&self.module.types, ty);
                    return Err(self.unexpected(&format!("`]` after {len} members of {name}")));
                }
                out.push(self.const_literal(elem, depth + 1)?);
                if self.is_punct(',') {
                    self.advance();
                } else {
                    break;
                }
            }
        }
        if (out.len() as u64) < len {
            let name = type_to_string(&self.module.types, ty);
            let msg = format!("expected {len} members for {name}, found {}", out.len());
            return Err(self.error(self.tok.span, msg));
        }
        self.expect_punct(']')?;
        Ok(self.module.consts.intern(ConstData { ty, value: ConstValue::Composite(out) }))
    }
}

/// An unsigned decimal or `0x` hex number.
pub(super) fn parse_uint(text: &str) -> Result<u64, String> {
    let r = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => text.parse::<u64>(),
    };
    r.map_err(|_| format!("expected an unsigned integer, found `{text}`"))
}

/// A signed decimal (`-5`, `18446744073709551615`) or hex-bits integer.
fn parse_i128(text: &str) -> Result<(i128, bool), String> {
    if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16)
            .map(|v| (v as i128, true))
            .map_err(|_| format!("expected a hex integer, found `{text}`"));
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected an integer literal, found `{text}`"));
    }
    text.parse::<i128>().map(|v| (v, false)).map_err(|_| format!("integer literal `{text}` is out of range"))
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// An integer literal of an integer type, as the type's bits.
pub(super) fn parse_int(text: &str, bits: u32, signed: bool) -> Result<u64, String> {
    let (v, hex) = parse_i128(text)?;
    let name = format!("{}{bits}", if signed { 'i' } else { 'u' });
    let (lo, hi) =
        if hex || !signed { (0i128, mask(bits) as i128) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
    if v < lo || v > hi {
        return Err(format!("integer literal `{text}` does not fit {name}"));
    }
    Ok(v as u64 & mask(bits))
}

/// A `case` literal: checked against an integer selector's width and
/// signedness when known, else any 64-bit pattern.
pub(super) fn case_bits(text: &str, int: Option<(u32, bool)>) -> Result<u64, String> {
    match int {
        Some((bits, signed)) => parse_int(text, bits, signed).map_err(|m| m.replace("integer literal", "case literal")),
        None => {
            let (v, _) = parse_i128(text)?;
            if v < i64::MIN as i128 || v > u64::MAX as i128 {
                return Err(format!("case literal `{text}` does not fit 64 bits"));
            }
            Ok(v as u64)
        }
    }
}

/// A float literal as the format's bits: hex bits, `inf`/`-inf`/`nan`, or
/// decimal rounded to nearest even.
pub(super) fn parse_float(text: &str, fmt: FloatFormat) -> Result<u64, String> {
    let width = fmt.bits();
    let name = match fmt {
        FloatFormat::F16 => "f16",
        FloatFormat::F32 => "f32",
        FloatFormat::F64 => "f64",
        FloatFormat::E4M3 => "fp8e4m3",
        FloatFormat::E5M2 => "fp8e5m2",
    };
    if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        let v = u64::from_str_radix(h, 16).map_err(|_| format!("expected hex float bits, found `{text}`"))?;
        if v & !mask(width) != 0 {
            return Err(format!("hex literal `{text}` does not fit {name} ({width} bits)"));
        }
        return Ok(v);
    }
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let value = match body {
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            let ok = body.starts_with(|c: char| c.is_ascii_digit())
                && body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
            if !ok {
                return Err(format!("expected a float literal, found `{text}`"));
            }
            0.0
        }
    };
    let overflow = || format!("float literal `{text}` overflows {name}");
    let bad = || format!("expected a float literal, found `{text}`");
    let special = body == "inf" || body == "nan";
    let signed = |v: f64| if neg { -v } else { v };
    match fmt {
        FloatFormat::F32 => {
            let v: f32 = if special { signed(value) as f32 } else { text.parse().map_err(|_| bad())? };
            if v.is_infinite() && !special {
                return Err(overflow());
            }
            Ok(v.to_bits() as u64)
        }
        FloatFormat::F64 => {
            let v: f64 = if special { signed(value) } else { text.parse().map_err(|_| bad())? };
            if v.is_infinite() && !special {
                return Err(overflow());
            }
            Ok(v.to_bits())
        }
        FloatFormat::F16 => {
            let v: f64 = if special { signed(value) } else { text.parse().map_err(|_| bad())? };
            let h = f16::from_f64(v);
            if h.is_infinite() && !special {
                return Err(overflow());
            }
            Ok(h.to_bits() as u64)
        }
        FloatFormat::E4M3 | FloatFormat::E5M2 => {
            let v: f64 = if special { signed(value) } else { text.parse().map_err(|_| bad())? };
            fp8_encode(v, fmt).ok_or_else(
                || {
                    if v.is_infinite() {
                        format!("{name} has no infinity")
                    } else {
                        overflow()
                    }
                },
            )
        }
    }
}

/// The value of an OCP FP8 code.
pub fn fp8_decode(code: u8, fmt: FloatFormat) -> f64 {
    let (ebits, mbits) = if fmt == FloatFormat::E4M3 { (4, 3) } else { (5, 2) };
    let bias = (1i32 << (ebits - 1)) - 1;
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((code >> mbits) & ((1 << ebits) - 1)) as i32;
    let m = (code & ((1 << mbits) - 1)) as i32;
    let emax = (1 << ebits) - 1;
    if fmt == FloatFormat::E4M3 && e == emax && m == (1 << mbits) - 1 {
        return f64::NAN;
    }
    if fmt == FloatFormat::E5M2 && e == emax {
        return if m == 0 { sign * f64::INFINITY } else { f64::NAN };
    }
    let frac = m as f64 / (1 << mbits) as f64;
    if e == 0 {
        sign * frac * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + frac) * 2f64.powi(e - bias)
    }
}

/// Round `v` to the nearest FP8 code (ties to even); `None` when out of the
/// finite range (or infinite for E4M3, which has no infinity).
pub fn fp8_encode(v: f64, fmt: FloatFormat) -> Option<u64> {
    let sign = if v.is_sign_negative() { 0x80u8 } else { 0 };
    if v.is_nan() {
        return Some(if fmt == FloatFormat::E4M3 { 0x7f } else { 0x7e });
    }
    if v.is_infinite() {
        return (fmt == FloatFormat::E5M2).then_some((0x7c | sign) as u64);
    }
    let a = v.abs();
    let mut best: Option<(u8, f64)> = None;
    for code in 0u8..0x80 {
        let d = fp8_decode(code, fmt);
        if !d.is_finite() {
            continue;
        }
        let err = (d - a).abs();
        let better = match best {
            None => true,
            Some((b, e)) => err < e || (err == e && code & 1 == 0 && b & 1 == 1),
        };
        if better {
            best = Some((code, err));
        }
    }
    let (code, _) = best?;
    let max = (0u8..0x80).map(|c| fp8_decode(c, fmt)).filter(|d| d.is_finite()).fold(0.0, f64::max);
    if a > max {
        return None;
    }
    Some((code | sign) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_keywords_match_the_tables() {
        for (n, _) in SCALARS {
            assert!(is_type_keyword(n), "{n}");
        }
        for n in PARAMETRIC {
            assert!(is_type_keyword(n), "{n}");
        }
        assert!(!is_type_keyword("add") && !is_type_keyword("case"));
    }

    #[test]
    fn fp8_round_trips_every_finite_code() {
        for fmt in [FloatFormat::E4M3, FloatFormat::E5M2] {
            for code in 0u8..=255 {
                let v = fp8_decode(code, fmt);
                if v.is_finite() {
                    assert_eq!(fp8_encode(v, fmt), Some(code as u64), "{fmt:?} {code:#x}");
                }
            }
        }
        assert_eq!(fp8_encode(448.0, FloatFormat::E4M3), Some(0x7e));
        assert_eq!(fp8_encode(1.0, FloatFormat::E4M3), Some(0x38));
        assert_eq!(fp8_encode(449.0, FloatFormat::E4M3), None);
    }

    #[test]
    fn ints_must_fit() {
        assert_eq!(parse_int("-1", 8, true), Ok(0xff));
        assert_eq!(parse_int("0xff", 8, true), Ok(0xff));
        assert!(parse_int("128", 8, true).is_err());
        assert!(parse_int("-1", 8, false).is_err());
        assert_eq!(parse_int("18446744073709551615", 64, false), Ok(u64::MAX));
        assert_eq!(parse_int("-9223372036854775808", 64, true), Ok(1 << 63));
    }

    #[test]
    fn floats_keep_bits() {
        assert_eq!(parse_float("-0.0", FloatFormat::F32), Ok(0x8000_0000));
        assert_eq!(parse_float("0x7fc00001", FloatFormat::F32), Ok(0x7fc0_0001));
        assert_eq!(parse_float("1.0", FloatFormat::F16), Ok(0x3c00));
        assert!(parse_float("1e39", FloatFormat::F32).is_err());
        assert!(parse_float("0x1ffff", FloatFormat::F16).is_err());
    }
}
