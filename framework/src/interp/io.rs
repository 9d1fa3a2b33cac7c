//! The JSON formats of the interpreter (`docs/inputs-format.md`): kernel
//! inputs (dispatch size and arguments by name) and outputs (every buffer
//! argument, printed lines), the element encoding shared by both, and the
//! bit-exact output comparison used by differential tests.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::ir::{Module, Type, TypeId, TypeTable};

use super::arith::{from_f64, mask, sext, to_f64, R};
use super::memory::{decode, encode, Buf};
use super::value::{scalar_kind, Sk, Val};

/// Inputs of one kernel run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// Threads dispatched in each dimension (the caller may override it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<[u32; 3]>,
    /// One entry per kernel argument, by its name (`%name` without `%`;
    /// an unnamed argument by its position, `"0"`, `"1"`, ...).
    #[serde(default)]
    pub args: BTreeMap<String, Json>,
}

impl Inputs {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
    pub fn with_dispatch(mut self, d: [u32; 3]) -> Self {
        self.dispatch = Some(d);
        self
    }
    pub fn with_arg(mut self, name: &str, value: Json) -> Self {
        self.args.insert(name.to_string(), value);
        self
    }
}

/// Results of one kernel run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outputs {
    /// Every buffer argument by name, final contents in the element encoding
    /// (`byte_buffer`: `{"bytes": [...]}`).
    #[serde(default)]
    pub buffers: BTreeMap<String, Json>,
    /// Lines printed by `print`, in execution order.
    #[serde(default)]
    pub printed: Vec<String>,
    /// In a precision run (`Options::precision`): per typed buffer, the
    /// elements Vulkan may compute differently, each with the bound of
    /// every scalar leaf in the element's JSON order (0: exact,
    /// `f64::INFINITY`: any value). Not part of the JSON.
    #[serde(skip)]
    pub bounds: BTreeMap<String, BTreeMap<usize, Vec<f64>>>,
}

/// The first difference between two outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Buffer name, or `$printed` for the printed lines.
    pub buffer: String,
    /// Element (or byte, or line) index.
    pub index: usize,
    /// `null` where one side has no such element.
    pub left: Json,
    pub right: Json,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`[{}]: {} != {}", self.buffer, self.index, self.left, self.right)
    }
}

pub(crate) fn elements(j: &Json) -> Vec<Json> {
    match j {
        Json::Array(a) => a.clone(),
        Json::Object(o) => match o.get("bytes").or_else(|| o.get("texels")).or_else(|| o.get("slots")) {
            Some(Json::Array(a)) => a.clone(),
            _ => vec![j.clone()],
        },
        other => vec![other.clone()],
    }
}

impl Outputs {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("outputs serialize")
    }

    /// The first element that differs (bit-exact through the encoding)
    /// and that `tolerance(left, right)` does not accept; buffers in name
    /// order, then printed lines.
    pub fn first_mismatch(&self, other: &Outputs, tolerance: impl Fn(&Json, &Json) -> bool) -> Option<Mismatch> {
        let names: std::collections::BTreeSet<&String> = self.buffers.keys().chain(other.buffers.keys()).collect();
        for name in names {
            let l = self.buffers.get(name).map(elements).unwrap_or_default();
            let r = other.buffers.get(name).map(elements).unwrap_or_default();
            for k in 0..l.len().max(r.len()) {
                let (a, b) = (l.get(k).cloned().unwrap_or(Json::Null), r.get(k).cloned().unwrap_or(Json::Null));
                if a != b && (a.is_null() || b.is_null() || !tolerance(&a, &b)) {
                    return Some(Mismatch { buffer: name.clone(), index: k, left: a, right: b });
                }
            }
        }
        let (l, r) = (&self.printed, &other.printed);
        for k in 0..l.len().max(r.len()) {
            let (a, b) = (l.get(k), r.get(k));
            if a != b {
                let j = |s: Option<&String>| s.map(|s| Json::String(s.clone())).unwrap_or(Json::Null);
                return Some(Mismatch { buffer: "$printed".into(), index: k, left: j(a), right: j(b) });
            }
        }
        None
    }
}

/// The float an output element encodes (`"nan"` and `"0x..."` NaNs,
/// `"inf"`, `"-inf"`, `"-0.0"` included); `None` for anything else.
pub fn json_float(j: &Json) -> Option<f64> {
    match j {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "nan" | "-nan" => Some(f64::NAN),
            s if s.starts_with("0x") => Some(f64::NAN),
            s => s.parse::<f64>().ok(),
        },
        _ => None,
    }
}

/// Whether an output element in this encoding is a NaN: `"nan"`, `"-nan"`
/// or a hex bit pattern that is a NaN at its width (4, 8 or 16 digits).
pub fn is_nan_json(j: &Json) -> bool {
    let Json::String(s) = j else { return false };
    if s == "nan" || s == "-nan" {
        return true;
    }
    let Some(hex) = s.strip_prefix("0x") else { return false };
    let Ok(bits) = u64::from_str_radix(hex, 16) else { return false };
    match hex.len() {
        4 => bits & 0x7c00 == 0x7c00 && bits & 0x03ff != 0,
        8 => f32::from_bits(bits as u32).is_nan(),
        16 => f64::from_bits(bits).is_nan(),
        _ => false,
    }
}

/// The comparison every interpreter-vs-device check starts from: equal bit
/// for bit (element-wise through vectors, aggregates and JSON objects such
/// as bindless slots or whole `xir-run` outputs), or both NaN.
/// Neither IEEE 754 (payload propagation is a "should") nor Vulkan specifies
/// the payload of a NaN an operation produces, and devices differ (NVIDIA
/// returns 0x7fffffff); signed zeros and everything else must match exactly.
pub fn same_value(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same_value(p, q)))
        }
        _ => a == b || (is_nan_json(a) && is_nan_json(b)),
    }
}

/// Tolerance for `Outputs::first_mismatch`: accepts two floats (or vectors
/// of them, lane by lane) within `rel` relative or `abs` absolute error
/// (integers must still be equal),
/// any two NaNs whatever their payloads, and zeros of either sign. For
/// device results of transcendental operations, which Vulkan only bounds.
pub fn close(rel: f64, abs: f64) -> impl Fn(&Json, &Json) -> bool {
    move |a, b| close_values(a, b, rel, abs)
}

fn close_values(a: &Json, b: &Json, rel: f64, abs: f64) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p == q || close_values(p, q, rel, abs))
        }
        // Integers (and bools) must match exactly.
        (Json::Number(x), Json::Number(y)) if !x.is_f64() || !y.is_f64() => x == y,
        _ => match (json_float(a), json_float(b)) {
            (Some(x), Some(y)) if x.is_nan() || y.is_nan() => x.is_nan() && y.is_nan(),
            (Some(x), Some(y)) if x.is_infinite() || y.is_infinite() => x == y,
            (Some(x), Some(y)) => (x - y).abs() <= abs.max(rel * x.abs().max(y.abs())),
            _ => false,
        },
    }
}

fn canonical_nan(sk: Sk) -> u64 {
    match sk {
        Sk::F16 => 0x7e00,
        Sk::F32 => 0x7fc0_0000,
        Sk::F64 => 0x7ff8_0000_0000_0000,
        Sk::E4M3 => 0x7f,
        _ => 0x7e,
    }
}

fn parse_hex(s: &str, bits: u32) -> R<u64> {
    let v = u64::from_str_radix(&s[2..], 16).map_err(|e| format!("bad bit pattern `{s}`: {e}"))?;
    if mask(v, bits) != v {
        return Err(format!("bit pattern `{s}` does not fit in {bits} bits"));
    }
    Ok(v)
}

fn scalar_from_json(sk: Sk, j: &Json) -> R<u64> {
    match sk {
        Sk::Bool => j.as_bool().map(|b| b as u64).ok_or_else(|| format!("expected true or false, found {j}")),
        Sk::Int { bits, signed } => {
            let v: i128 = match j {
                Json::Number(n) => n
                    .as_i64()
                    .map(|x| x as i128)
                    .or_else(|| n.as_u64().map(|x| x as i128))
                    .ok_or_else(|| format!("expected an integer, found {n}"))?,
                Json::String(s) if s.starts_with("0x") => return parse_hex(s, bits),
                Json::String(s) => s.parse::<i128>().map_err(|_| format!("expected an integer, found \"{s}\""))?,
                _ => return Err(format!("expected an integer, found {j}")),
            };
            let (lo, hi) =
                if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
            if v < lo || v > hi {
                return Err(format!("{v} does not fit in {}{bits}", if signed { "i" } else { "u" }));
            }
            Ok(mask(v as u64, bits))
        }
        _ => match j {
            Json::Number(n) => Ok(from_f64(sk, n.as_f64().ok_or("bad number")?)),
            Json::String(s) => match s.as_str() {
                "nan" => Ok(canonical_nan(sk)),
                "-nan" => Ok(canonical_nan(sk) | (1 << (sk.bits() - 1))),
                "inf" | "+inf" => Ok(from_f64(sk, f64::INFINITY)),
                "-inf" => Ok(from_f64(sk, f64::NEG_INFINITY)),
                s if s.starts_with("0x") => parse_hex(s, sk.bits()),
                s => s.parse::<f64>().map(|v| from_f64(sk, v)).map_err(|_| format!("expected a float, found \"{s}\"")),
            },
            _ => Err(format!("expected a float, found {j}")),
        },
    }
}

fn scalar_to_json(sk: Sk, b: u64) -> Json {
    const EXACT: i128 = 1 << 53;
    match sk {
        Sk::Bool => Json::Bool(b != 0),
        Sk::Int { bits, signed } => {
            let v = if signed { sext(b, bits) as i128 } else { b as i128 };
            if v.abs() <= EXACT {
                if signed {
                    Json::from(v as i64)
                } else {
                    Json::from(v as u64)
                }
            } else {
                Json::String(v.to_string())
            }
        }
        _ => {
            let v = to_f64(sk, b).unwrap_or(0.0);
            let s = if v.is_nan() {
                if b == canonical_nan(sk) {
                    "nan".to_string()
                } else {
                    format!("0x{:0w$x}", b, w = (sk.bits() / 4) as usize)
                }
            } else if v.is_infinite() {
                if v > 0.0 { "inf" } else { "-inf" }.to_string()
            } else if v == 0.0 && v.is_sign_negative() {
                "-0.0".to_string()
            } else {
                return serde_json::Number::from_f64(v).map(Json::Number).unwrap_or(Json::Null);
            };
            Json::String(s)
        }
    }
}

/// A value of type `ty` from its JSON encoding.
pub(crate) fn val_from_json(types: &TypeTable, ty: TypeId, j: &Json) -> R<Val> {
    let list = |n: usize| -> R<&Vec<Json>> {
        match j {
            Json::Array(a) if a.len() == n => Ok(a),
            // An object names its members, which XIR's structs do not:
            // say how a struct is written instead of only what was wrong.
            Json::Object(_) if matches!(types.get(ty), Type::Struct { .. }) => Err(format!(
                "expected an array of {n} members, found {j} (a struct is the list of its members' values in \
                 declaration order, not an object: docs/inputs-format.md)"
            )),
            _ if matches!(types.get(ty), Type::Struct { .. }) => {
                Err(format!("expected a struct: an array of its {n} members' values in declaration order, found {j}"))
            }
            _ => Err(format!("expected an array of {n} members, found {j}")),
        }
    };
    match types.get(ty) {
        Type::Bool | Type::Int { .. } | Type::Float(_) => {
            Ok(Val::S(scalar_from_json(scalar_kind(types, ty).ok_or("not a scalar")?, j)?))
        }
        Type::Vector { elem, lanes } => {
            Ok(Val::agg(list(*lanes as usize)?.iter().map(|x| val_from_json(types, *elem, x)).collect::<R<_>>()?))
        }
        Type::Matrix { elem, dim } => {
            let n = *dim as usize;
            let column = |c: &Json| -> R<Val> {
                match c {
                    Json::Array(a) if a.len() == n => {
                        Ok(Val::agg(a.iter().map(|x| val_from_json(types, *elem, x)).collect::<R<_>>()?))
                    }
                    _ => Err(format!("expected a matrix column of {n} members, found {c}")),
                }
            };
            Ok(Val::agg(list(n)?.iter().map(column).collect::<R<_>>()?))
        }
        Type::Array { elem, len } => {
            Ok(Val::agg(list(*len as usize)?.iter().map(|x| val_from_json(types, *elem, x)).collect::<R<_>>()?))
        }
        Type::Struct { fields, .. } => Ok(Val::agg(
            list(fields.len())?.iter().zip(fields).map(|(x, f)| val_from_json(types, *f, x)).collect::<R<_>>()?,
        )),
        _ => Err(format!("values of type {} cannot be given as input", types.kind_name(ty))),
    }
}

/// The JSON encoding of a value of type `ty`.
pub(crate) fn val_to_json(types: &TypeTable, ty: TypeId, v: &Val) -> Json {
    match (types.get(ty), v) {
        (Type::Vector { elem, .. } | Type::Array { elem, .. }, Val::A(m)) => {
            Json::Array(m.iter().map(|x| val_to_json(types, *elem, x)).collect())
        }
        (Type::Matrix { elem, .. }, Val::A(m)) => Json::Array(
            m.iter()
                .map(|c| match c {
                    Val::A(l) => Json::Array(l.iter().map(|x| val_to_json(types, *elem, x)).collect()),
                    _ => Json::Null,
                })
                .collect(),
        ),
        (Type::Struct { fields, .. }, Val::A(m)) => {
            Json::Array(fields.iter().zip(m.iter()).map(|(f, x)| val_to_json(types, *f, x)).collect())
        }
        (_, Val::S(b) | Val::E(b, _)) => scalar_kind(types, ty).map(|sk| scalar_to_json(sk, *b)).unwrap_or(Json::Null),
        _ => Json::Null,
    }
}

/// The `len` of a `fill` shorthand, bounded so a typo cannot exhaust memory.
fn fill_len(o: &serde_json::Map<String, Json>) -> R<u64> {
    const MAX: u64 = 1 << 26;
    let len = o.get("len").and_then(Json::as_u64).ok_or("`fill` needs a `len`")?;
    if len > MAX {
        return Err(format!("`len` {len} exceeds the interpreter's limit of {MAX} elements"));
    }
    Ok(len)
}

/// Buffer elements from a JSON array or `{"fill": v, "len": n}`.
pub(crate) fn buffer_from_json(types: &TypeTable, elem: TypeId, j: &Json) -> R<Vec<Val>> {
    match j {
        Json::Array(a) => a
            .iter()
            .enumerate()
            .map(|(k, x)| val_from_json(types, elem, x).map_err(|e| format!("element {k}: {e}")))
            .collect(),
        Json::Object(o) if o.contains_key("fill") => {
            let len = fill_len(o)?;
            let v = val_from_json(types, elem, &o["fill"]).map_err(|e| format!("`fill`: {e}"))?;
            Ok(vec![v; len as usize])
        }
        _ => Err(format!("expected a buffer (array or {{\"fill\", \"len\"}}), found {j}")),
    }
}

/// Byte-buffer contents from `{"bytes": [...]}`, a plain array of bytes, or
/// `{"fill": b, "len": n}`.
pub(crate) fn bytes_from_json(j: &Json) -> R<Vec<u8>> {
    let byte = |x: &Json| -> R<u8> {
        x.as_u64().filter(|&b| b < 256).map(|b| b as u8).ok_or_else(|| format!("expected a byte, found {x}"))
    };
    match j {
        Json::Array(a) => a.iter().map(byte).collect(),
        Json::Object(o) if o.contains_key("bytes") => bytes_from_json(&o["bytes"]),
        Json::Object(o) if o.contains_key("fill") => {
            let len = fill_len(o)?;
            Ok(vec![byte(&o["fill"])?; len as usize])
        }
        _ => Err(format!("expected a byte_buffer ({{\"bytes\": [...]}}), found {j}")),
    }
}

fn texel_from_json(types: &TypeTable, elem: TypeId, j: &Json) -> R<Val> {
    match j {
        Json::Array(a) if a.len() == 4 => {
            Ok(Val::agg(a.iter().map(|x| val_from_json(types, elem, x)).collect::<R<_>>()?))
        }
        _ => Err(format!("expected a texel of 4 lanes, found {j}")),
    }
}

fn texel_to_json(types: &TypeTable, elem: TypeId, v: &Val) -> Json {
    match v {
        Val::A(m) => Json::Array(m.iter().map(|x| val_to_json(types, elem, x)).collect()),
        _ => Json::Null,
    }
}

/// A texture from `{"size": [w, h(, d)], "texels": [[r, g, b, a], ...]}`
/// (x fastest) or `{"size": [...], "fill": [r, g, b, a]}`, with an optional
/// mip chain: `"mips": [[texels of level 1], [level 2], ...]` (each level
/// `max(1, size >> l)` per dimension), or with `fill`, `"levels": n` filled
/// alike. Returns the level-0 size, the level count and every level's
/// texels, level 0 first.
pub(crate) fn texture_from_json(types: &TypeTable, dim: u8, elem: TypeId, j: &Json) -> R<([u32; 3], u32, Vec<Val>)> {
    use super::sampling::{level_texels, max_levels};
    let sz = j.get("size").and_then(Json::as_array).ok_or("a texture needs `size`")?;
    if sz.len() != dim as usize {
        return Err(format!("a {dim}D texture needs {dim} sizes, found {}", sz.len()));
    }
    let mut size = [1u32; 3];
    for (k, s) in sz.iter().enumerate() {
        size[k] = s.as_u64().and_then(|v| u32::try_from(v).ok()).ok_or_else(|| format!("bad texture size {s}"))?;
    }
    super::limits::check_texture_size(dim, &size[..dim as usize])?;
    let mips = j.get("mips").map(|m| m.as_array().ok_or("`mips` must be an array of levels")).transpose()?;
    let levels = match (mips, j.get("levels")) {
        (Some(_), Some(_)) => return Err("a texture takes `mips` or `levels`, not both".into()),
        (Some(m), None) => m.len() as u64 + 1,
        (None, Some(l)) => l.as_u64().filter(|&l| l >= 1).ok_or("`levels` must be a positive integer")?,
        (None, None) => 1,
    };
    let most = max_levels(dim as usize, &size) as u64;
    if levels > most {
        return Err(format!("{levels} mip levels for a texture of size {:?} (at most {most})", &size[..dim as usize]));
    }
    let levels = levels as u32;
    let texels: u64 = (0..levels).map(|l| level_texels(dim as usize, &size, l) as u64).sum();
    const MAX: u64 = super::limits::MAX_TEXTURE_TEXELS;
    if texels > MAX {
        return Err(format!("a texture of {texels} texels exceeds the interpreter's limit of {MAX}"));
    }
    let mut data = Vec::new();
    for l in 0..levels {
        let n = level_texels(dim as usize, &size, l);
        if let Some(f) = j.get("fill") {
            data.extend(std::iter::repeat_n(texel_from_json(types, elem, f)?, n));
            continue;
        }
        let t = if l == 0 { j.get("texels") } else { mips.and_then(|m| m.get(l as usize - 1)) };
        let t = t.and_then(Json::as_array).ok_or("a texture needs `texels` or `fill`")?;
        if t.len() != n {
            let at = if l == 0 { String::new() } else { format!(" at mip level {l}") };
            return Err(format!("{} texels given for a texture of {n}{at}", t.len()));
        }
        for x in t {
            data.push(texel_from_json(types, elem, x)?);
        }
    }
    Ok((size, levels, data))
}

/// The output encoding of a texture (`mips` only when it has more than one level).
pub(crate) fn texture_to_json(
    types: &TypeTable,
    elem: TypeId,
    dim: u8,
    size: [u32; 3],
    levels: u32,
    data: &[Val],
) -> Json {
    use super::sampling::level_texels;
    let mut at = 0;
    let mut level = |l: u32| {
        let n = level_texels(dim as usize, &size, l).min(data.len() - at);
        let out: Vec<Json> = data[at..at + n].iter().map(|v| texel_to_json(types, elem, v)).collect();
        at += n;
        Json::Array(out)
    };
    let mut j = serde_json::json!({ "size": size[..dim as usize].to_vec(), "texels": level(0) });
    if levels > 1 {
        j["mips"] = Json::Array((1..levels).map(level).collect());
    }
    j
}

/// The output encoding of a resource.
pub(crate) fn buf_to_json(types: &TypeTable, b: &Buf) -> Json {
    match b {
        Buf::Typed { elem, data } => Json::Array(data.iter().map(|v| val_to_json(types, *elem, v)).collect()),
        Buf::Bytes(bytes) => serde_json::json!({ "bytes": bytes }),
        Buf::Texture { elem, dim, size, levels, data } => texture_to_json(types, *elem, *dim, *size, *levels, data),
        Buf::Bindless(slots) => {
            // An alias shows the contents of the slot it shares (never itself an alias).
            fn shared<'s>(slots: &'s [Option<Buf>], s: &'s Option<Buf>) -> Option<&'s Buf> {
                match s {
                    Some(Buf::Alias(k)) => slots[*k].as_ref(),
                    s => s.as_ref(),
                }
            }
            let slot = |s: &Option<Buf>| match shared(slots, s) {
                None => Json::Null,
                Some(t @ Buf::Texture { elem, .. }) => {
                    // A slot's texel type is not in the signature: name it.
                    let mut j = buf_to_json(types, t);
                    j["elem"] = Json::String(types.kind_name(*elem).to_string());
                    j
                }
                Some(b) => buf_to_json(types, b),
            };
            serde_json::json!({ "slots": slots.iter().map(slot).collect::<Vec<_>>() })
        }
        Buf::Alias(k) => serde_json::json!({ "alias": k }),
        Buf::Accel(a) => super::ray::accel_to_json(a),
    }
}

fn scalar_by_name(name: &str) -> Option<Sk> {
    Some(match name {
        "bool" => Sk::Bool,
        "f16" => Sk::F16,
        "f32" => Sk::F32,
        "f64" => Sk::F64,
        "fp8e4m3" => Sk::E4M3,
        "fp8e5m2" => Sk::E5M2,
        _ => {
            let signed = name.starts_with('i');
            if !signed && !name.starts_with('u') {
                return None;
            }
            let bits: u32 = name[1..].parse().ok().filter(|b| [8, 16, 32, 64].contains(b))?;
            Sk::Int { bits, signed }
        }
    })
}

/// Bindless slots from `{"slots": [slot, ...]}`; a slot is `null`, a byte
/// buffer (`{"bytes": [...]}`, or `{"u32": [...]}` with any scalar type name
/// as key, stored little-endian), a texture (`{"elem": "f32", "size":
/// [...], "texels": [...]}`), or `{"alias": k}`: the same buffer as the
/// earlier buffer slot `k` (in the outputs, both show its contents).
pub(crate) fn bindless_from_json(types: &TypeTable, j: &Json) -> R<Vec<Option<Buf>>> {
    let slots = j.get("slots").and_then(Json::as_array).ok_or("a bindless array needs `slots`")?;
    let mut out = Vec::with_capacity(slots.len());
    for (k, s) in slots.iter().enumerate() {
        let slot = (|| -> R<Option<Buf>> {
            let Json::Object(o) = s else {
                return if s.is_null() { Ok(None) } else { Err(format!("expected a slot object, found {s}")) };
            };
            if let Some(e) = o.get("elem") {
                let elem = match e.as_str() {
                    Some("f32") => TypeTable::F32,
                    Some("i32") => TypeTable::I32,
                    Some("u32") => TypeTable::U32,
                    _ => return Err(format!("texture texels are f32, i32 or u32, not {e}")),
                };
                let dim = o.get("size").and_then(Json::as_array).map(|a| a.len() as u8).unwrap_or(0);
                let (size, levels, data) = texture_from_json(types, dim, elem, s)?;
                return Ok(Some(Buf::Texture { elem, dim, size, levels, data }));
            }
            if o.contains_key("bytes") || o.contains_key("fill") {
                return Ok(Some(Buf::Bytes(bytes_from_json(s)?)));
            }
            if let Some(a) = o.get("alias") {
                let target = a.as_u64().filter(|&t| (t as usize) < k).ok_or("`alias` names an earlier slot")?;
                return match out.get(target as usize) {
                    Some(Some(Buf::Bytes(_))) => Ok(Some(Buf::Alias(target as usize))),
                    _ => Err(format!("`alias` {target}: slot {target} is not a buffer")),
                };
            }
            let (name, vals) = o.iter().next().ok_or("empty slot object")?;
            let sk = scalar_by_name(name).ok_or_else(|| format!("unknown slot key `{name}`"))?;
            let vals = vals.as_array().ok_or_else(|| format!("`{name}` needs an array"))?;
            let n = (sk.bits() as usize).div_ceil(8);
            let mut bytes = Vec::with_capacity(n * vals.len());
            for v in vals {
                bytes.extend_from_slice(&scalar_from_json(sk, v)?.to_le_bytes()[..n]);
            }
            Ok(Some(Buf::Bytes(bytes)))
        })()
        .map_err(|e| format!("slot {k}: {e}"))?;
        out.push(slot);
    }
    Ok(out)
}

/// Why buffer contents do not convert between the JSON encoding and host
/// bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostBytesError {
    /// The JSON is not a buffer of the element type (the reader's message,
    /// which names the element).
    #[error("{0}")]
    Json(String),
    /// Element `element` does not encode or decode.
    #[error("{message}")]
    Element { element: usize, message: String },
    #[error("buffer element type has size zero")]
    ZeroSizeElement,
}

/// Device runners report input problems as messages about an argument.
impl From<HostBytesError> for String {
    fn from(e: HostBytesError) -> String {
        e.to_string()
    }
}

/// Host-layout bytes of buffer elements given in the JSON encoding (for
/// device runners uploading the same inputs).
pub fn buffer_to_host_bytes(m: &Module, elem: TypeId, j: &Json) -> Result<Vec<u8>, HostBytesError> {
    let vals = buffer_from_json(&m.types, elem, j).map_err(HostBytesError::Json)?;
    let (size, _) = m.types.size_align(elem);
    let mut out = vec![0u8; size as usize * vals.len()];
    for (k, v) in vals.iter().enumerate() {
        encode(&m.types, elem, v, &mut out[k * size as usize..])
            .map_err(|message| HostBytesError::Element { element: k, message })?;
    }
    Ok(out)
}

/// The JSON encoding of buffer elements stored in host layout (for device
/// runners reading results back).
pub fn buffer_from_host_bytes(m: &Module, elem: TypeId, bytes: &[u8]) -> Result<Json, HostBytesError> {
    let (size, _) = m.types.size_align(elem);
    if size == 0 {
        return Err(HostBytesError::ZeroSizeElement);
    }
    let n = bytes.len() / size as usize;
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let v = decode(&m.types, elem, &bytes[k * size as usize..])
            .map_err(|message| HostBytesError::Element { element: k, message })?;
        out.push(val_to_json(&m.types, elem, &v));
    }
    Ok(Json::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_value_takes_any_nan_for_any_nan_through_arrays_and_objects() {
        let a = json!({"buffers": {"y": [0.0, "nan", "0xffc00000", "-0.0"]}, "printed": []});
        let b = json!({"buffers": {"y": [0.0, "0x7fffffff", "0x7fffffff", "-0.0"]}, "printed": []});
        assert!(same_value(&a, &b));
        // Signed zeros, missing keys and extra keys still differ.
        let c = json!({"buffers": {"y": [0.0, "nan", "nan", 0.0]}, "printed": []});
        assert!(!same_value(&a, &c));
        assert!(!same_value(&a, &json!({"buffers": {"y": [0.0, "nan", "nan", "-0.0"]}})));
        assert!(!same_value(&json!({"x": 1}), &json!({"y": 1})));
    }

    #[test]
    fn a_struct_given_as_an_object_says_how_a_struct_is_written() {
        let mut types = TypeTable::default();
        let v3 = types.vector(TypeTable::F32, 3);
        let st = types.intern(Type::Struct { fields: vec![v3, TypeTable::U32], align: 16 });
        let ok = val_from_json(&types, st, &json!([[1.0, 2.0, 3.0], 4])).expect("a list of members");
        assert_eq!(ok.members().expect("members").len(), 2);
        let e = val_from_json(&types, st, &json!({"pos": [1.0, 2.0, 3.0], "alive": 4})).expect_err("an object");
        assert_eq!(
            e,
            "expected an array of 2 members, found {\"alive\":4,\"pos\":[1.0,2.0,3.0]} (a struct is the list of its \
             members' values in declaration order, not an object: docs/inputs-format.md)"
        );
        // A struct written as anything else says what a struct is.
        let e = val_from_json(&types, st, &json!(0)).expect_err("a number for a struct");
        assert_eq!(e, "expected a struct: an array of its 2 members' values in declaration order, found 0");
        // A buffer's `fill` says it is the fill that is wrong.
        let e = buffer_from_json(&types, st, &json!({"fill": 0, "len": 4})).expect_err("a number as a struct fill");
        assert_eq!(e, "`fill`: expected a struct: an array of its 2 members' values in declaration order, found 0");
        // Elsewhere the message stays as it was.
        let e = val_from_json(&types, v3, &json!({"x": 1.0})).expect_err("an object for a vector");
        assert_eq!(e, "expected an array of 3 members, found {\"x\":1.0}");
    }
}
