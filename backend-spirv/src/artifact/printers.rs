//! The printer-records section: one record per `print` site (its id, the
//! brace-dialect format string and the types of its arguments), read by a
//! bounded, non-fatal parser. A record the parser cannot accept is an error
//! value naming the record; nothing here panics, recurses on input, or hands
//! artifact text to the general XIR parser (docs/artifact.md, "Printers").
//!
//! The format dialect: `{}` is one argument, `{{` and `}}` are literal
//! braces, any other brace is malformed. Argument types are the printable
//! subset: scalars, `vec<S, N>` (N = 2..4) and `mat<F, N>` of a float.

use super::wire::{Reader, Writer};
use super::{ArtifactError, Section};

/// Most records in one artifact.
pub const MAX_RECORDS: u32 = 4096;
/// Longest format string, in bytes.
pub const MAX_FORMAT_LEN: u32 = 4096;
/// Most arguments of one record.
pub const MAX_PRINT_ARGS: u32 = 64;
/// Longest argument type spelling, in bytes.
pub const MAX_PRINT_TYPE_LEN: u32 = 32;

/// One persisted print site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrinterRecord {
    /// The id the shader passes with its values; strictly increasing within an artifact.
    pub id: u32,
    pub format: String,
    /// Argument types in XIR spelling (`f32`, `vec<u32, 3>`, `mat<f32, 2>`).
    pub arg_types: Vec<String>,
}

const SCALARS: [&str; 13] =
    ["bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "fp8e4m3"];
const FLOATS: [&str; 3] = ["f16", "f32", "f64"];

/// Why a type spelling is not printable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrintTypeError {
    #[error("type spelling of {0} bytes")]
    TooLong(usize),
    #[error("`vec<` without `, N>`")]
    VecWithoutLanes,
    #[error("`mat<` without `, N>`")]
    MatWithoutDim,
    #[error("`{0}` is not a printable type")]
    NotPrintable(String),
}

/// A brace that neither opens `{}` nor is doubled, at byte `at`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("stray `{brace}` at byte {at}")]
pub struct FormatStringError {
    pub brace: char,
    pub at: usize,
}

/// Accept a printable type spelling, or say why not.
pub fn check_print_type(s: &str) -> Result<(), PrintTypeError> {
    if s.len() > MAX_PRINT_TYPE_LEN as usize {
        return Err(PrintTypeError::TooLong(s.len()));
    }
    if SCALARS.contains(&s) || s == "fp8e5m2" {
        return Ok(());
    }
    let inner = |prefix: &str| s.strip_prefix(prefix).and_then(|r| r.strip_suffix('>'));
    let (elem, n, allowed): (&str, &str, &[&str]) = if let Some(r) = inner("vec<") {
        let (e, n) = r.split_once(", ").ok_or(PrintTypeError::VecWithoutLanes)?;
        (e, n, &SCALARS)
    } else if let Some(r) = inner("mat<") {
        let (e, n) = r.split_once(", ").ok_or(PrintTypeError::MatWithoutDim)?;
        (e, n, &FLOATS)
    } else {
        return Err(PrintTypeError::NotPrintable(s.to_string()));
    };
    if !allowed.contains(&elem) || !matches!(n, "2" | "3" | "4") {
        return Err(PrintTypeError::NotPrintable(s.to_string()));
    }
    Ok(())
}

/// One piece of a brace-dialect format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Literal text (`{{` and `}}` already read as one brace).
    Text(String),
    /// A `{}`: the next argument.
    Arg,
}

/// The pieces of a brace-dialect format string, or where it is malformed.
pub fn pieces(fmt: &str) -> Result<Vec<Piece>, FormatStringError> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut it = fmt.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match (c, it.peek().map(|p| p.1)) {
            ('{', Some('{')) | ('}', Some('}')) => {
                it.next();
                text.push(c);
            }
            ('{', Some('}')) => {
                it.next();
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Arg);
            }
            ('{' | '}', _) => return Err(FormatStringError { brace: c, at: i }),
            _ => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// The number of `{}` placeholders of a brace-dialect format string.
pub fn count_placeholders(fmt: &str) -> Result<usize, FormatStringError> {
    Ok(pieces(fmt)?.iter().filter(|p| **p == Piece::Arg).count())
}

fn check_record(r: &PrinterRecord) -> Result<(), String> {
    let n = count_placeholders(&r.format).map_err(|e| e.to_string())?;
    if n != r.arg_types.len() {
        return Err(format!("{n} placeholders for {} arguments", r.arg_types.len()));
    }
    r.arg_types.iter().try_for_each(|t| check_print_type(t).map_err(|e| e.to_string()))
}

pub fn encode(records: &[PrinterRecord]) -> Result<Vec<u8>, ArtifactError> {
    let bad = |i: usize, m: String| ArtifactError::Printer { record: i, reason: m };
    if records.len() > MAX_RECORDS as usize {
        return Err(bad(records.len(), format!("more than {MAX_RECORDS} records")));
    }
    let mut w = Writer::default();
    w.u32(records.len() as u32);
    let mut last: Option<u32> = None;
    for (i, r) in records.iter().enumerate() {
        check_record(r).map_err(|m| bad(i, m))?;
        if last.is_some_and(|l| r.id <= l) {
            return Err(bad(i, format!("id {} is not above the previous id", r.id)));
        }
        if r.format.len() > MAX_FORMAT_LEN as usize || r.arg_types.len() > MAX_PRINT_ARGS as usize {
            return Err(bad(i, "format or argument list over its limit".into()));
        }
        last = Some(r.id);
        w.u32(r.id);
        w.string(&r.format);
        w.u32(r.arg_types.len() as u32);
        for t in &r.arg_types {
            w.string(t);
        }
    }
    Ok(w.bytes)
}

pub fn decode(bytes: &[u8]) -> Result<Vec<PrinterRecord>, ArtifactError> {
    let mut r = Reader::new(bytes, Section::Printers);
    let n = r.count("printer record", MAX_RECORDS)?;
    let mut out: Vec<PrinterRecord> = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        let id = r.u32()?;
        let format = r.string("a format string", MAX_FORMAT_LEN)?.to_string();
        let k = r.count("print argument", MAX_PRINT_ARGS)?;
        let mut arg_types = Vec::with_capacity(k as usize);
        for _ in 0..k {
            arg_types.push(r.string("a print argument type", MAX_PRINT_TYPE_LEN)?.to_string());
        }
        let rec = PrinterRecord { id, format, arg_types };
        check_record(&rec).map_err(|m| ArtifactError::Printer { record: i, reason: m })?;
        if out.last().is_some_and(|l| id <= l.id) {
            return Err(ArtifactError::Printer { record: i, reason: format!("id {id} is not above the previous id") });
        }
        out.push(rec);
    }
    r.finish()?;
    Ok(out)
}
