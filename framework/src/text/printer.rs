//! The XIR text printer (docs/text-format.md). It is generic over the spec:
//! an instruction prints its spec's operands, block roles, variadic blocks
//! (`case` literals or phi incomings) and text payload, never per-opcode
//! code. It is total: malformed in-memory IR (dangling ids, void values used
//! as operands) still prints, with `!`-marked placeholders that the parser
//! rejects, so verifier diagnostics can be shown on any IR.

use std::borrow::Cow;
use std::fmt::Write;

use rustc_hash::{FxHashMap, FxHashSet};

use super::lexer::escape_str;
use super::{is_ident, sanitize_name};
use crate::ir::{
    sign_extend, Block, ConstValue, FloatFormat, Function, FunctionKind, Inst, MetadataFields, Module, Payload, Type,
    TypeId, TypeTable, Value,
};

/// Print a whole module.
pub fn print_module(m: &Module) -> String {
    let fnames = function_names(m);
    let mut out = String::with_capacity(m.functions.iter().map(|f| f.inst_capacity()).sum::<usize>() * 32 + 64);
    for (i, f) in m.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        Printer { m, f, index: Some(i), fnames: &fnames, names: FnNames::new(f), out: &mut out }.function();
    }
    out
}

/// Print one function as it appears in `print_module` (for diagnostics).
pub fn print_function(m: &Module, f: &Function) -> String {
    let fnames = function_names(m);
    let mut out = String::new();
    let index = m.functions.iter().position(|g| std::ptr::eq(g, f));
    Printer { m, f, index, fnames: &fnames, names: FnNames::new(f), out: &mut out }.function();
    out
}

/// The text spelling of a type.
pub fn type_to_string(types: &TypeTable, ty: TypeId) -> String {
    let mut s = String::new();
    write_type(types, ty, &mut s, 0);
    s
}

/// Write a type's spelling (`vec<f32, 3>`, `struct<align 4>{f32, u32}`).
pub fn write_type(types: &TypeTable, ty: TypeId, out: &mut String, depth: u32) {
    if !types.contains(ty) || depth > super::MAX_DEPTH {
        let _ = write!(out, "!{ty}");
        return;
    }
    let t = types.get(ty);
    match t {
        Type::Int { bits, signed } if !matches!(bits, 8 | 16 | 32 | 64) => {
            let _ = write!(out, "{}{bits}", if *signed { 'i' } else { 'u' });
        }
        Type::Vector { elem, lanes } => {
            out.push_str("vec<");
            write_type(types, *elem, out, depth + 1);
            let _ = write!(out, ", {lanes}>");
        }
        Type::Matrix { elem, dim } => {
            out.push_str("mat<");
            write_type(types, *elem, out, depth + 1);
            let _ = write!(out, ", {dim}>");
        }
        Type::Array { elem, len } => {
            out.push_str("array<");
            write_type(types, *elem, out, depth + 1);
            let _ = write!(out, ", {len}>");
        }
        Type::Struct { fields, align } => {
            let _ = write!(out, "struct<align {align}>{{");
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_type(types, *f, out, depth + 1);
            }
            out.push('}');
        }
        Type::Buffer(elem) => {
            out.push_str("buffer<");
            write_type(types, *elem, out, depth + 1);
            out.push('>');
        }
        Type::Texture { dim, elem } => {
            let _ = write!(out, "texture{dim}d<");
            write_type(types, *elem, out, depth + 1);
            out.push('>');
        }
        _ => out.push_str(types.kind_name(ty)),
    }
}

/// Write a scalar literal of type `ty` from its bits.
pub fn write_scalar(types: &TypeTable, ty: TypeId, bits: u64, out: &mut String) {
    match types.get(ty) {
        Type::Bool => out.push_str(if bits != 0 { "true" } else { "false" }),
        Type::Int { bits: w, signed } => {
            let _ = write!(out, "{}", sign_extend(bits, *w as u32, *signed));
        }
        Type::Float(FloatFormat::F32) => {
            let v = f32::from_bits(bits as u32);
            if v.is_nan() {
                let _ = write!(out, "0x{:08x}", bits as u32);
            } else {
                let _ = write!(out, "{v:?}");
            }
        }
        Type::Float(FloatFormat::F64) => {
            let v = f64::from_bits(bits);
            if v.is_nan() {
                let _ = write!(out, "0x{bits:016x}");
            } else {
                let _ = write!(out, "{v:?}");
            }
        }
        Type::Float(FloatFormat::F16) => {
            let _ = write!(out, "0x{:04x}", bits as u16);
        }
        Type::Float(_) => {
            let _ = write!(out, "0x{:02x}", bits as u8);
        }
        _ => {
            let _ = write!(out, "0x{bits:x}");
        }
    }
}

/// Unique printed names of the module's functions, by `FuncId` index.
fn function_names(m: &Module) -> Vec<String> {
    let mut seen = Uniquer::default();
    let mut out = Vec::with_capacity(m.functions.len());
    for f in &m.functions {
        let name = seen.unique(Cow::Borrowed(f.name.as_str()));
        out.push(function_name(&name));
    }
    out
}

/// `name` as written after `@`: bare when it is an identifier, else quoted.
fn function_name(name: &str) -> String {
    let mut s = String::new();
    if is_ident(name) {
        s.push_str(name);
    } else {
        escape_str(name, &mut s);
    }
    s
}

/// Names already given in one scope (a module's functions, a function's
/// values, a function's blocks), and how to make a new one unique.
#[derive(Default)]
struct Uniquer<'a> {
    seen: FxHashSet<Cow<'a, str>>,
    /// Per base name, the smallest suffix `k` for which `base.k` may still
    /// be free. The set only grows, so the first free suffix of a base
    /// never decreases: resuming from here gives the same names as probing
    /// from 1, in total time linear in the names given.
    next: FxHashMap<Cow<'a, str>, u64>,
    /// Candidate names tried so far (the work, for tests).
    probes: u64,
}

impl<'a> Uniquer<'a> {
    /// `base`, or `base.1`, `base.2`, ... whichever is not yet taken.
    fn unique(&mut self, base: Cow<'a, str>) -> Cow<'a, str> {
        self.probes += 1;
        if self.seen.insert(base.clone()) {
            return base;
        }
        let k = self.next.entry(base.clone()).or_insert(1);
        loop {
            self.probes += 1;
            let cand = format!("{base}.{k}");
            *k += 1;
            if self.seen.insert(Cow::Owned(cand.clone())) {
                return Cow::Owned(cand);
            }
        }
    }

    /// Take `name` as given (it must not be taken yet); false when it was.
    fn insert(&mut self, name: String) -> bool {
        self.probes += 1;
        self.seen.insert(Cow::Owned(name))
    }
}

/// Instructions in layout order, skipping dangling block or instruction ids
/// (so that corrupt IR still prints).
pub(super) fn placed_insts(f: &Function) -> impl Iterator<Item = Inst> + '_ {
    f.blocks()
        .iter()
        .filter(|b| f.block_exists(**b))
        .flat_map(move |&b| f.block(b).insts().iter().copied().filter(|i| f.inst_exists(*i)))
}

/// How one local value or block is spelled.
#[derive(Clone, Debug)]
enum Label<'f> {
    None,
    Num(u32),
    Name(Cow<'f, str>),
}

/// Printed names of a function's arguments, results and blocks.
struct FnNames<'f> {
    args: Vec<Label<'f>>,
    insts: Vec<Label<'f>>,
    blocks: Vec<Label<'f>>,
}

fn named(name: Option<&str>) -> Option<Cow<'_, str>> {
    name.and_then(sanitize_name)
}

impl<'f> FnNames<'f> {
    fn new(f: &'f Function) -> Self {
        let mut seen = Uniquer::default();
        let mut next = 0u32;
        let mut label = |name: Option<&'f str>| match named(name) {
            Some(n) => Label::Name(seen.unique(n)),
            None => {
                next += 1;
                Label::Num(next - 1)
            }
        };
        let args = f.args.iter().map(|a| label(a.md.name.as_deref())).collect();
        let mut insts = vec![Label::None; f.inst_capacity()];
        for i in placed_insts(f) {
            let d = f.inst(i);
            if d.ty != TypeTable::VOID {
                insts[i.index()] = label(f.inst_name(i));
            }
        }
        let mut seen = Uniquer::default();
        let mut blocks = vec![Label::None; f.block_capacity()];
        let owned: Vec<Block> = f.blocks().iter().copied().filter(|b| f.block_exists(*b)).collect();
        for &b in &owned {
            if let Some(n) = named(f.block_name(b)) {
                if matches!(blocks[b.index()], Label::None) {
                    blocks[b.index()] = Label::Name(seen.unique(n));
                }
            }
        }
        let mut k = 0u32;
        for &b in &owned {
            if matches!(blocks[b.index()], Label::None) {
                let name = loop {
                    let cand = format!("bb{k}");
                    k += 1;
                    if seen.insert(cand.clone()) {
                        break cand;
                    }
                };
                blocks[b.index()] = Label::Name(Cow::Owned(name));
            }
        }
        FnNames { args, insts, blocks }
    }
}

fn write_label(out: &mut String, l: Option<&Label<'_>>, sigil: char, fallback: &str, id: usize) {
    out.push(sigil);
    match l {
        Some(Label::Num(n)) => {
            let _ = write!(out, "{n}");
        }
        Some(Label::Name(s)) => out.push_str(s),
        Some(Label::None) | None => {
            let _ = write!(out, "!{fallback}{id}");
        }
    }
}

struct Printer<'a, 'f> {
    m: &'a Module,
    f: &'f Function,
    /// The function's position in the module, when it belongs to it.
    index: Option<usize>,
    fnames: &'a [String],
    names: FnNames<'f>,
    out: &'a mut String,
}

impl Printer<'_, '_> {
    fn comments(&mut self, md: &MetadataFields, indent: &str) {
        for c in &md.comments {
            for line in c.split('\n') {
                self.out.push_str(indent);
                self.out.push_str("//");
                if !line.is_empty() {
                    self.out.push(' ');
                    self.out.push_str(line);
                }
                self.out.push('\n');
            }
        }
    }

    fn location(&mut self, md: &MetadataFields) {
        if let Some(loc) = &md.location {
            self.out.push_str(" !loc(");
            escape_str(&loc.file, self.out);
            let _ = write!(self.out, ", {}, {})", loc.line, loc.col);
        }
    }

    fn ty(&mut self, ty: TypeId) {
        write_type(&self.m.types, ty, self.out, 0);
    }

    fn block_ref(&mut self, b: Block) {
        write_label(self.out, self.names.blocks.get(b.index()), '^', "bb", b.index());
    }

    fn function(&mut self) {
        let f = self.f;
        self.comments(&f.md, "");
        let keyword = match f.kind {
            FunctionKind::Kernel { .. } => "kernel",
            FunctionKind::Callable => "callable",
            FunctionKind::External => "extern",
        };
        let name = self.index.and_then(|i| self.fnames.get(i)).cloned().unwrap_or_else(|| function_name(&f.name));
        let _ = write!(self.out, "{keyword} @{name}(");
        for (i, a) in f.args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            write_label(self.out, self.names.args.get(i), '%', "arg", i);
            self.out.push_str(": ");
            if a.kind == crate::ir::ArgKind::Reference {
                self.out.push_str("ref ");
            }
            self.ty(a.ty);
        }
        self.out.push(')');
        match f.kind {
            FunctionKind::Kernel { block_size: [x, y, z], whole_blocks, noalias } => {
                if f.ret != TypeTable::VOID {
                    self.out.push_str(" -> ");
                    self.ty(f.ret);
                }
                let _ = write!(self.out, " block_size({x}, {y}, {z})");
                if whole_blocks {
                    self.out.push_str(" whole_blocks");
                }
                if noalias {
                    self.out.push_str(" noalias");
                }
            }
            _ => {
                self.out.push_str(" -> ");
                self.ty(f.ret);
            }
        }
        self.location(&f.md);
        if !f.md.curve_basis.is_empty() {
            let names: Vec<&str> = f.md.curve_basis.iter().map(|b| b.name()).collect();
            let _ = write!(self.out, " !curve_basis({})", names.join(", "));
        }
        if f.is_external() && f.blocks().is_empty() {
            self.out.push('\n');
            return;
        }
        self.out.push_str(" {\n");
        for &b in f.blocks() {
            if !f.block_exists(b) {
                continue;
            }
            let data = f.block(b);
            self.comments(&f.block_md(b), "");
            self.block_ref(b);
            self.out.push(':');
            self.location(&f.block_md(b));
            self.out.push('\n');
            for &i in data.insts() {
                if f.inst_exists(i) {
                    self.inst(i);
                }
            }
        }
        self.out.push_str("}\n");
    }

    fn inst(&mut self, i: Inst) {
        let f = self.f;
        let d = f.inst(i);
        // The name is printed from `self.names` (uniqued); the rest here.
        let md = f.inst_fields(i);
        self.comments(md, "  ");
        self.out.push_str("  ");
        if d.ty != TypeTable::VOID {
            write_label(self.out, self.names.insts.get(i.index()), '%', "inst", i.index());
            self.out.push_str(" = ");
        }
        let spec = &xir_spec::spec().op(d.opcode).spec;
        self.out.push_str(d.opcode.name());
        let mut first = true;
        let mut sep = |out: &mut String| {
            out.push_str(if first { " " } else { ", " });
            first = false;
        };
        if spec.payload.as_deref() == Some("text") {
            if let Payload::Text(t) = f.payload(i) {
                sep(self.out);
                escape_str(t, self.out);
            }
        }
        let incoming = spec.variadic_blocks.as_deref() == Some("incoming");
        if incoming {
            let n = d.operands.len().max(d.blocks.len());
            for k in 0..n {
                sep(self.out);
                self.out.push('[');
                match d.operands.get(k) {
                    Some(&v) => self.value(v),
                    None => self.out.push_str("!missing"),
                }
                self.out.push_str(", ");
                match d.blocks.get(k) {
                    Some(&b) => self.block_ref(b),
                    None => self.out.push_str("^!missing"),
                }
                self.out.push(']');
            }
        } else {
            for &v in &d.operands {
                sep(self.out);
                self.value(v);
            }
            for (k, &b) in d.blocks.iter().enumerate() {
                sep(self.out);
                match spec.blocks.get(k) {
                    Some(role) => {
                        self.out.push_str(role);
                        self.out.push(' ');
                    }
                    None => {
                        self.out.push_str("case ");
                        self.case_literal(d.operands.first().copied(), f.cases(i).get(k - spec.blocks.len()));
                        self.out.push(' ');
                    }
                }
                self.block_ref(b);
            }
        }
        if d.ty != TypeTable::VOID {
            self.out.push_str(" : ");
            self.ty(d.ty);
        }
        self.location(md);
        if let Some(s) = md.spill {
            let _ = write!(self.out, " !spill({})", s.name());
        }
        self.out.push('\n');
    }

    /// A case literal in the selector's type: signed decimal for signed
    /// selectors, unsigned decimal otherwise.
    fn case_literal(&mut self, selector: Option<Value>, bits: Option<&u64>) {
        let Some(&bits) = bits else {
            self.out.push_str("!missing");
            return;
        };
        let ty = selector.map(|v| self.value_type(v));
        match ty.map(|t| self.m.types.get(t)) {
            Some(Type::Int { bits: w, signed }) => {
                let _ = write!(self.out, "{}", sign_extend(bits, *w as u32, *signed));
            }
            _ => {
                let _ = write!(self.out, "{bits}");
            }
        }
    }

    /// The type of a value, guarded against dangling ids.
    fn value_type(&self, v: Value) -> TypeId {
        let t = match v {
            Value::Inst(i) if self.f.inst_exists(i) => self.f.inst(i).ty,
            Value::Arg(a) if (a as usize) < self.f.args.len() => self.f.args[a as usize].ty,
            Value::Const(c) if self.m.consts.contains(c) => self.m.consts.get(c).ty,
            Value::Undef(t) => t,
            Value::Reg(_) | Value::Func(_) => self.m.value_type(v),
            _ => TypeTable::VOID,
        };
        if self.m.types.contains(t) {
            t
        } else {
            TypeTable::VOID
        }
    }

    fn value(&mut self, v: Value) {
        match v {
            Value::Inst(i) => write_label(self.out, self.names.insts.get(i.index()), '%', "inst", i.index()),
            Value::Arg(a) => write_label(self.out, self.names.args.get(a as usize), '%', "arg", a as usize),
            Value::Const(c) => {
                if !self.m.consts.contains(c) {
                    let _ = write!(self.out, "!{c}");
                    return;
                }
                let ty = self.m.consts.get(c).ty;
                self.ty(ty);
                self.out.push(' ');
                self.const_literal(c, 0);
            }
            Value::Undef(t) => {
                self.out.push_str("undef ");
                self.ty(t);
            }
            Value::Reg(r) => {
                self.out.push('$');
                self.out.push_str(r.name());
            }
            Value::Func(g) => match self.fnames.get(g.index()) {
                Some(n) => {
                    self.out.push('@');
                    self.out.push_str(n);
                }
                None => {
                    let _ = write!(self.out, "@!{g}");
                }
            },
        }
    }

    /// A constant's literal without its type; composites nest in brackets.
    fn const_literal(&mut self, c: crate::ir::Const, depth: u32) {
        if !self.m.consts.contains(c) || depth > super::MAX_DEPTH {
            let _ = write!(self.out, "!{c}");
            return;
        }
        let data = self.m.consts.get(c);
        match &data.value {
            ConstValue::Scalar(bits) if self.m.types.contains(data.ty) => {
                write_scalar(&self.m.types, data.ty, *bits, self.out)
            }
            ConstValue::Scalar(bits) => {
                let _ = write!(self.out, "0x{bits:x}");
            }
            ConstValue::Composite(members) => {
                self.out.push('[');
                for (k, &mc) in members.iter().enumerate() {
                    if k > 0 {
                        self.out.push_str(", ");
                    }
                    self.const_literal(mc, depth + 1);
                }
                self.out.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naming n duplicates tries about 2n candidates (the quadratic
    /// version tried n^2 / 2) and gives the first free suffix each time.
    #[test]
    fn duplicate_names_cost_linear_probes() {
        let n = 10_000u64;
        let mut u = Uniquer::default();
        assert!(u.insert("x.2".to_string()));
        let names: Vec<String> = (0..n).map(|_| u.unique(Cow::Borrowed("x")).into_owned()).collect();
        assert_eq!(names[..4], ["x", "x.1", "x.3", "x.4"]);
        assert_eq!(names[n as usize - 1], format!("x.{n}"));
        assert!(u.probes <= 2 * n + 2, "{} probes", u.probes);
    }
}
