//! The JSON interchange form of a module, through serde.
//!
//! `to_json` writes a *compacted* module: every type and constant of the
//! tables, and per function only the owned blocks (in layout order) and their
//! live instructions, renumbered so that block `k` is the `k`-th block and
//! instruction `n` the `n`-th instruction in layout order (blocks list their
//! instructions inline). Spans are not written: they point into a text file.
//!
//! `from_json` reads that form and validates every id (types, constants,
//! blocks, instructions, arguments, functions), opcode shapes and the type
//! graph (members refer to earlier entries, so it is acyclic) *before*
//! building anything, then rebuilds the use lists. Syntax errors carry
//! serde_json's `line:col`; bad ids carry the JSON path of the field.
//!
//! Guarantees: `print(from_json(to_json(m))) == print(m)`, and
//! `to_json(from_json(j)) == j` for a compacted `j`.

use serde::{Deserialize, Serialize};

use super::check_shape;
use crate::diag::{Diagnostic, Rule};
use crate::ir::{
    ArgData, Block, ConstData, ConstValue, Function, FunctionKind, Inst, InstData, Metadata, Module, Span, Type,
    TypeId, Value,
};

/// The version tag written in every document.
pub const FORMAT: &str = "xir-json-1";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleJson {
    format: String,
    types: Vec<Type>,
    consts: Vec<ConstData>,
    functions: Vec<FunctionJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionJson {
    name: String,
    kind: FunctionKind,
    ret: TypeId,
    args: Vec<ArgData>,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    md: Metadata,
    blocks: Vec<BlockJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockJson {
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    md: Metadata,
    insts: Vec<InstData>,
}

/// Ids that cannot be expressed in the compacted form (a reference to a
/// removed instruction or unowned block) are written as this out-of-range
/// id, so that reading the document reports them instead of guessing.
const DANGLING: u32 = u32::MAX;

/// Serialize `m` in compacted form (pretty-printed JSON).
pub fn to_json(m: &Module) -> String {
    let doc = ModuleJson {
        format: FORMAT.to_string(),
        types: m.types.iter().map(|(_, t)| t.clone()).collect(),
        consts: m.consts.iter().map(|(_, c)| c.clone()).collect(),
        functions: m.functions.iter().map(compact_function).collect(),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

fn compact_function(f: &Function) -> FunctionJson {
    let mut block_map = vec![DANGLING; f.block_capacity()];
    for (k, &b) in f.blocks().iter().enumerate() {
        if let Some(slot) = block_map.get_mut(b.index()) {
            *slot = k as u32;
        }
    }
    let mut inst_map = vec![DANGLING; f.inst_capacity()];
    for (n, i) in super::printer::placed_insts(f).enumerate() {
        if let Some(slot) = inst_map.get_mut(i.index()) {
            *slot = n as u32;
        }
    }
    let remap_block = |b: Block| Block(block_map.get(b.index()).copied().unwrap_or(DANGLING));
    let blocks = f
        .blocks()
        .iter()
        .filter(|b| f.block_exists(**b))
        .map(|&b| {
            let data = f.block(b);
            let insts = data
                .insts()
                .iter()
                .filter(|i| f.inst_exists(**i))
                .map(|&i| {
                    let mut d = f.inst_data(i);
                    d.span = None;
                    for v in d.operands.iter_mut() {
                        if let Value::Inst(x) = v {
                            *x = Inst(inst_map.get(x.index()).copied().unwrap_or(DANGLING));
                        }
                    }
                    for b in d.blocks.iter_mut() {
                        *b = remap_block(*b);
                    }
                    d
                })
                .collect();
            BlockJson { md: f.block_md(b).to_metadata(), insts }
        })
        .collect();
    FunctionJson { name: f.name.clone(), kind: f.kind, ret: f.ret, args: f.args.clone(), md: f.md.clone(), blocks }
}

/// Read a module from its JSON form; `file` names the source in diagnostics.
pub fn from_json(src: &str, file: &str) -> Result<Module, Vec<Diagnostic>> {
    let doc: ModuleJson = serde_json::from_str(src).map_err(|e| {
        let span = (e.line() > 0).then(|| Span::new(e.line() as u32, e.column() as u32));
        vec![Diagnostic::error(Rule::Parse, strip_position(&e.to_string())).with_file(file).with_span(span)]
    })?;
    let errors = validate(&doc);
    if !errors.is_empty() {
        return Err(errors.into_iter().map(|m| Diagnostic::error(Rule::Parse, m).with_file(file)).collect());
    }
    Ok(build(doc))
}

/// serde_json appends " at line L column C"; the span carries that.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(k) => msg[..k].to_string(),
        None => msg.to_string(),
    }
}

/// Every id check, reported as `path: message`. Stops after 100 errors.
fn validate(doc: &ModuleJson) -> Vec<String> {
    let mut errs = Vec::new();
    let mut err = |path: String, msg: String| {
        if errs.len() < 100 {
            errs.push(format!("{path}: {msg}"));
        }
    };
    if doc.format != FORMAT {
        err("format".into(), format!("expected `{FORMAT}`, found `{}`", doc.format));
    }
    let nt = doc.types.len();
    let type_ok = |t: TypeId, before: usize| t.index() < before;
    for (k, t) in doc.types.iter().enumerate() {
        let path = format!("types[{k}]");
        let refs: Vec<TypeId> = match t {
            Type::Vector { elem, .. } | Type::Matrix { elem, .. } | Type::Array { elem, .. } => vec![*elem],
            Type::Buffer(elem) | Type::Texture { elem, .. } => vec![*elem],
            Type::Struct { fields, .. } => fields.clone(),
            _ => vec![],
        };
        match t {
            Type::Int { bits, .. } if !matches!(bits, 8 | 16 | 32 | 64) => {
                err(path.clone(), format!("expected an integer width of 8, 16, 32 or 64, found {bits}"))
            }
            Type::Texture { dim, .. } if !matches!(dim, 2 | 3) => {
                err(path.clone(), format!("expected a texture dimension of 2 or 3, found {dim}"))
            }
            _ => {}
        }
        for r in refs {
            if !type_ok(r, nt) {
                err(path.clone(), format!("type id {} out of range ({nt} types)", r.0));
            } else if !type_ok(r, k) {
                err(path.clone(), format!("refers to type {} which does not come before it (cycle)", r.0));
            }
        }
    }
    let nc = doc.consts.len();
    for (k, c) in doc.consts.iter().enumerate() {
        let path = format!("consts[{k}]");
        if !type_ok(c.ty, nt) {
            err(format!("{path}.ty"), format!("type id {} out of range ({nt} types)", c.ty.0));
            continue;
        }
        let ty = &doc.types[c.ty.index()];
        match (&c.value, ty) {
            (ConstValue::Scalar(bits), Type::Bool) if *bits > 1 => {
                err(format!("{path}.value"), format!("expected 0 or 1 for bool, found {bits}"))
            }
            (ConstValue::Scalar(bits), Type::Int { bits: w, .. }) if *w < 64 && bits >> w != 0 => {
                err(format!("{path}.value"), format!("bits {bits:#x} do not fit {w} bits"))
            }
            (ConstValue::Scalar(bits), Type::Float(f)) if f.bits() < 64 && bits >> f.bits() != 0 => {
                err(format!("{path}.value"), format!("bits {bits:#x} do not fit {} bits", f.bits()))
            }
            (ConstValue::Scalar(_), Type::Bool | Type::Int { .. } | Type::Float(_)) => {}
            (
                ConstValue::Composite(ms),
                Type::Vector { .. } | Type::Matrix { .. } | Type::Array { .. } | Type::Struct { .. },
            ) => {
                let want = match ty {
                    Type::Vector { lanes, .. } => *lanes as u64,
                    Type::Matrix { dim, .. } => *dim as u64,
                    Type::Array { len, .. } => *len,
                    Type::Struct { fields, .. } => fields.len() as u64,
                    _ => 0,
                };
                if ms.len() as u64 != want {
                    err(format!("{path}.value"), format!("expected {want} members, found {}", ms.len()));
                }
                for (j, m) in ms.iter().enumerate() {
                    if m.index() >= k {
                        let why = if m.index() >= nc { "out of range" } else { "does not come before it (cycle)" };
                        err(format!("{path}.value.Composite[{j}]"), format!("const id {} {why}", m.0));
                    }
                }
            }
            (v, _) => {
                let what = if matches!(v, ConstValue::Scalar(_)) { "scalar" } else { "composite" };
                err(format!("{path}.value"), format!("a {what} constant cannot have type {ty:?}"))
            }
        }
    }
    let nf = doc.functions.len();
    for (fk, f) in doc.functions.iter().enumerate() {
        let fpath = format!("functions[{fk}]");
        if !type_ok(f.ret, nt) {
            err(format!("{fpath}.ret"), format!("type id {} out of range ({nt} types)", f.ret.0));
        }
        for (a, arg) in f.args.iter().enumerate() {
            if !type_ok(arg.ty, nt) {
                err(format!("{fpath}.args[{a}].ty"), format!("type id {} out of range ({nt} types)", arg.ty.0));
            }
        }
        let nb = f.blocks.len();
        let ni: usize = f.blocks.iter().map(|b| b.insts.len()).sum();
        for (bk, b) in f.blocks.iter().enumerate() {
            for (ik, d) in b.insts.iter().enumerate() {
                let ipath = format!("{fpath}.blocks[{bk}].insts[{ik}]");
                if !type_ok(d.ty, nt) {
                    err(format!("{ipath}.ty"), format!("type id {} out of range ({nt} types)", d.ty.0));
                }
                if let Err(m) = check_shape(d.opcode, d.operands.len(), d.blocks.len(), &d.payload) {
                    err(ipath.clone(), m.to_string());
                }
                for (ok, v) in d.operands.iter().enumerate() {
                    let bad = match *v {
                        Value::Inst(i) if i.index() >= ni => {
                            Some(format!("inst id {} out of range ({ni} instructions)", i.0))
                        }
                        Value::Arg(a) if a as usize >= f.args.len() => {
                            Some(format!("argument {a} out of range ({} arguments)", f.args.len()))
                        }
                        Value::Const(c) if c.index() >= nc => {
                            Some(format!("const id {} out of range ({nc} constants)", c.0))
                        }
                        Value::Undef(t) if !type_ok(t, nt) => {
                            Some(format!("type id {} out of range ({nt} types)", t.0))
                        }
                        Value::Func(g) if g.index() >= nf => {
                            Some(format!("function id {} out of range ({nf} functions)", g.0))
                        }
                        _ => None,
                    };
                    if let Some(m) = bad {
                        err(format!("{ipath}.operands[{ok}]"), m);
                    }
                }
                for (j, b) in d.blocks.iter().enumerate() {
                    if b.index() >= nb {
                        err(format!("{ipath}.blocks[{j}]"), format!("block id {} out of range ({nb} blocks)", b.0));
                    }
                }
            }
        }
    }
    errs
}

/// Build the module from a validated document. Type and constant ids are
/// remapped through interning, so documents with duplicate or reordered
/// table entries still read correctly.
fn build(doc: ModuleJson) -> Module {
    let mut m = Module::new();
    let mut tmap: Vec<TypeId> = Vec::with_capacity(doc.types.len());
    for t in doc.types {
        let r = |x: TypeId, tmap: &[TypeId]| tmap[x.index()];
        let t = match t {
            Type::Vector { elem, lanes } => Type::Vector { elem: r(elem, &tmap), lanes },
            Type::Matrix { elem, dim } => Type::Matrix { elem: r(elem, &tmap), dim },
            Type::Array { elem, len } => Type::Array { elem: r(elem, &tmap), len },
            Type::Buffer(elem) => Type::Buffer(r(elem, &tmap)),
            Type::Texture { dim, elem } => Type::Texture { dim, elem: r(elem, &tmap) },
            Type::Struct { fields, align } => {
                Type::Struct { fields: fields.iter().map(|f| r(*f, &tmap)).collect(), align }
            }
            t => t,
        };
        tmap.push(m.types.intern(t));
    }
    let mut cmap = Vec::with_capacity(doc.consts.len());
    for c in doc.consts {
        let value = match c.value {
            ConstValue::Composite(ms) => ConstValue::Composite(ms.iter().map(|x| cmap[x.index()]).collect()),
            v => v,
        };
        cmap.push(m.consts.intern(ConstData { ty: tmap[c.ty.index()], value }));
    }
    let remap = |v: Value| match v {
        Value::Const(c) => Value::Const(cmap[c.index()]),
        Value::Undef(t) => Value::Undef(tmap[t.index()]),
        v => v,
    };
    for fj in doc.functions {
        let mut f = Function::new(fj.name, fj.kind, tmap[fj.ret.index()]);
        f.md = fj.md;
        for a in fj.args {
            f.add_arg(tmap[a.ty.index()], a.kind, a.md);
        }
        let blocks: Vec<Block> = fj.blocks.iter().map(|_| f.add_block()).collect();
        for (b, bj) in blocks.iter().zip(fj.blocks) {
            f.set_block_md(*b, bj.md);
            for mut d in bj.insts {
                d.ty = tmap[d.ty.index()];
                for v in d.operands.iter_mut() {
                    *v = remap(*v);
                }
                f.append_inst(*b, d);
            }
        }
        f.rebuild_uses();
        f.shrink_to_fit();
        m.add_function(f);
    }
    m
}
