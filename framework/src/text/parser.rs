//! The XIR text parser (docs/text-format.md): a recursive-descent reader
//! over the on-demand lexer. It checks each instruction's shape against the
//! spec (operand count, block roles in order, `case` and phi forms), resolves
//! forward references to values, blocks and functions when the enclosing
//! function (or module) ends, and records a `Span` on every function, block
//! and instruction. Typing is left to the verifier. It never panics: every
//! problem becomes a `file:line:col` diagnostic, and after a syntax error it
//! resumes at the next function so one run reports several errors.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use xir_spec::{Opcode, SpecialRegister};

use super::lexer::{Lexer, Tok, Token};
use super::literal::{case_bits, parse_uint};
use super::{is_ident, type_to_string};
use crate::diag::{Diagnostic, Rule};
use crate::ir::{
    ArgKind, Block, FuncId, Function, FunctionKind, Inst, InstData, Metadata, Module, Payload, Span, SpillKind,
    TypeTable, Value,
};

/// Boxed: the error path is cold, and a small `Result` keeps the hot path lean.
pub(super) type PResult<T> = Result<T, Box<Diagnostic>>;

/// Stop collecting after this many diagnostics (hostile inputs).
const MAX_DIAGS: usize = 100;

/// Opcode by spelling through a hash table: the generated `from_name` is a
/// 400-arm string match, the hottest part of parsing before this table.
fn opcode(name: &str) -> Option<Opcode> {
    static TABLE: OnceLock<FxHashMap<&'static str, Opcode>> = OnceLock::new();
    TABLE.get_or_init(|| Opcode::ALL.iter().map(|&op| (op.name(), op)).collect()).get(name).copied()
}

/// Parse a module from XIR text. `file` names the source in diagnostics.
pub fn parse_module(src: &str, file: &str) -> Result<Module, Vec<Diagnostic>> {
    let mut p = Parser::new(src, file);
    p.module.intern_register_types();
    p.parse();
    if p.diags.is_empty() {
        Ok(p.module)
    } else {
        Err(p.diags)
    }
}

pub(super) struct Parser<'a> {
    lex: Lexer<'a>,
    pub(super) tok: Token<'a>,
    peeked: Option<(Token<'a>, Vec<&'a str>)>,
    /// Comments directly before `tok`.
    comments: Vec<&'a str>,
    file: &'a str,
    pub(super) module: Module,
    diags: Vec<Diagnostic>,
    func_ids: FxHashMap<String, FuncId>,
    /// `@name` operands seen before the function was declared.
    func_fixups: Vec<(usize, Inst, usize, String, Span)>,
    /// The function being read, named in diagnostics.
    current: Option<String>,
    /// Byte offset just past the last token consumed (for [`Parser::extent`]).
    prev_end: usize,
}

/// Per-function state while its body is read.
struct FnState<'a> {
    f: Function,
    values: FxHashMap<&'a str, Value>,
    block_ids: FxHashMap<&'a str, usize>,
    /// Every block mentioned: name, id, first mention, whether defined.
    blocks: Vec<(&'a str, Block, Span, bool)>,
    layout: Vec<Block>,
    fixups: Vec<(Inst, usize, &'a str, Span)>,
    cases: Vec<(Inst, Vec<(&'a str, Span)>)>,
    /// Where each argument's name is written (redefinitions point there).
    arg_spans: Vec<Span>,
}

/// A reference that cannot be resolved yet.
enum Pending<'a> {
    Local(&'a str),
    Func(String),
}

/// One comma-separated item after the opcode.
#[derive(Default)]
struct Items<'a> {
    values: Vec<Value>,
    pending: Vec<(usize, Pending<'a>, Span)>,
    blocks: Vec<Block>,
    cases: Vec<(&'a str, Span)>,
    roles: usize,
    first_extra: Option<Span>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, file: &'a str) -> Self {
        let mut p = Parser {
            lex: Lexer::new(src),
            tok: Token { tok: Tok::Eof, span: Span::default(), pos: 0 },
            prev_end: 0,
            peeked: None,
            comments: Vec::new(),
            file,
            module: Module::new(),
            diags: Vec::new(),
            func_ids: FxHashMap::default(),
            func_fixups: Vec::new(),
            current: None,
        };
        p.advance();
        p
    }

    fn lex_one(&mut self, comments: &mut Vec<&'a str>) -> Token<'a> {
        loop {
            match self.lex.next_token() {
                Ok(Token { tok: Tok::Comment(c), .. }) => comments.push(c),
                Ok(t) => return t,
                Err(e) => return Token { tok: Tok::Bad(e.message), span: e.span, pos: 0 },
            }
        }
    }

    pub(super) fn advance(&mut self) {
        self.prev_end = self.tok.pos + self.tok.span.len as usize;
        self.comments.clear();
        if let Some((t, c)) = self.peeked.take() {
            self.tok = t;
            self.comments = c;
            return;
        }
        let mut comments = std::mem::take(&mut self.comments);
        self.tok = self.lex_one(&mut comments);
        self.comments = comments;
    }

    pub(super) fn peek(&mut self) -> &Tok<'a> {
        if self.peeked.is_none() {
            let mut c = Vec::new();
            let t = self.lex_one(&mut c);
            self.peeked = Some((t, c));
        }
        &self.peeked.as_ref().map(|p| &p.0).expect("peeked just filled").tok
    }

    /// `start` (a token's span, at byte `pos`) stretched to the end of the
    /// last token consumed: the extent of a whole construct.
    fn extent(&self, start: Span, pos: usize) -> Span {
        Span { len: self.prev_end.saturating_sub(pos) as u32, ..start }
    }

    fn take_comments(&mut self) -> Vec<String> {
        self.comments.drain(..).map(str::to_string).collect()
    }

    pub(super) fn error(&self, span: Span, message: impl Into<String>) -> Box<Diagnostic> {
        let mut d = Diagnostic::error(Rule::Parse, message).with_file(self.file).with_span(Some(span));
        d.function.clone_from(&self.current);
        Box::new(d)
    }

    /// `expected X, found <current token>` (or the lexer's own message).
    pub(super) fn unexpected(&self, expected: &str) -> Box<Diagnostic> {
        match &self.tok.tok {
            Tok::Bad(m) => self.error(self.tok.span, m.clone()),
            t => self.error(self.tok.span, format!("expected {expected}, found {t}")),
        }
    }

    pub(super) fn is_punct(&self, c: char) -> bool {
        self.tok.tok == Tok::Punct(c)
    }

    pub(super) fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.is_punct(c) {
            self.advance();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{c}`")))
        }
    }

    pub(super) fn expect_keyword(&mut self, kw: &str) -> PResult<()> {
        if self.tok.tok == Tok::Ident(kw) {
            self.advance();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }

    fn push_diag(&mut self, d: Diagnostic) {
        if self.diags.len() < MAX_DIAGS {
            self.diags.push(d);
        }
    }

    // ---- module ---------------------------------------------------------

    fn parse(&mut self) {
        loop {
            let is_fn = matches!(self.tok.tok, Tok::Ident("kernel" | "callable" | "extern"));
            if self.tok.tok == Tok::Eof || self.diags.len() >= MAX_DIAGS {
                break;
            }
            let r = if is_fn { self.function() } else { Err(self.unexpected("`kernel`, `callable` or `extern`")) };
            self.current = None;
            if let Err(d) = r {
                self.push_diag(*d);
                // Resume at the next function header.
                self.advance();
                while !matches!(self.tok.tok, Tok::Eof | Tok::Ident("kernel" | "callable" | "extern")) {
                    self.advance();
                }
            }
        }
        // After a failed function, indices no longer line up: only report.
        let consistent = self.module.functions.len() == self.func_ids.len();
        let names: Vec<String> = {
            let mut v: Vec<(&String, &FuncId)> = self.func_ids.iter().collect();
            v.sort_by_key(|(_, id)| **id);
            v.into_iter().map(|(n, _)| n.clone()).collect()
        };
        for (fi, inst, k, name, span) in std::mem::take(&mut self.func_fixups) {
            self.current = names.get(fi).cloned();
            match self.func_ids.get(&name) {
                Some(&id) => {
                    if consistent {
                        self.module.functions[fi].set_operand(inst, k, Value::Func(id));
                    }
                }
                None => self.push_diag(*self.error(span, format!("undefined function `@{name}`"))),
            }
        }
    }

    fn function(&mut self) -> PResult<()> {
        let span = self.tok.span;
        let comments = self.take_comments();
        let Tok::Ident(kw) = self.tok.tok else { return Err(self.unexpected("`kernel`, `callable` or `extern`")) };
        self.advance();
        let Tok::Global(name) = &self.tok.tok else { return Err(self.unexpected("a function name `@name`")) };
        let name = name.to_string();
        self.current = Some(name.clone());
        if let Some(&first) = self.func_ids.get(&name) {
            let first = self.module.functions.get(first.index()).and_then(|f| f.span);
            let e = self.error(self.tok.span, format!("redefinition of function `@{name}`"));
            return Err(Box::new(e.with_label(first, format!("`@{name}` is first defined here"))));
        }
        let index = self.func_ids.len();
        self.func_ids.insert(name.clone(), FuncId::new(index));
        self.advance();
        let mut st = FnState {
            f: Function::new(name, FunctionKind::Callable, TypeTable::VOID),
            values: FxHashMap::default(),
            block_ids: FxHashMap::default(),
            blocks: Vec::new(),
            layout: Vec::new(),
            fixups: Vec::new(),
            cases: Vec::new(),
            arg_spans: Vec::new(),
        };
        st.f.span = Some(span);
        st.f.md.comments = comments;
        self.expect_punct('(')?;
        if !self.is_punct(')') {
            loop {
                self.argument(&mut st)?;
                if self.is_punct(',') {
                    self.advance();
                } else {
                    break;
                }
            }
        }
        self.expect_punct(')')?;
        if self.tok.tok == Tok::Arrow {
            self.advance();
            st.f.ret = self.ty()?;
        } else if kw != "kernel" {
            return Err(self.unexpected("`->`"));
        }
        st.f.kind = match kw {
            "kernel" => self.kernel_kind()?,
            "callable" => FunctionKind::Callable,
            _ => FunctionKind::External,
        };
        st.f.md.location = self.opt_location()?;
        st.f.md.curve_basis = self.opt_curve_basis()?;
        if kw != "extern" || self.is_punct('{') {
            self.body(&mut st)?;
        }
        st.f.shrink_to_fit();
        self.module.functions.push(st.f);
        Ok(())
    }

    fn argument(&mut self, st: &mut FnState<'a>) -> PResult<()> {
        let Tok::Local(n) = self.tok.tok else { return Err(self.unexpected("an argument `%name: type`")) };
        let span = self.tok.span;
        let name = self.local_name(n, span)?;
        self.advance();
        self.expect_punct(':')?;
        let by_ref = self.tok.tok == Tok::Ident("ref");
        if by_ref {
            self.advance();
        }
        let ty = self.ty()?;
        let kind = if by_ref {
            ArgKind::Reference
        } else if self.module.types.is_resource(ty) {
            ArgKind::Resource
        } else {
            ArgKind::Value
        };
        let md = Metadata::with_name(name.map(str::to_string));
        let v = st.f.add_arg(ty, kind, md);
        st.arg_spans.push(span);
        if let Some(first) = st.values.insert(n, v) {
            return Err(self.redefinition(st, n, first, span));
        }
        Ok(())
    }

    /// `%n` at `span` is defined again; `first` is its first definition.
    fn redefinition(&self, st: &FnState<'a>, n: &str, first: Value, span: Span) -> Box<Diagnostic> {
        let at = match first {
            Value::Inst(i) => st.f.inst_span(i),
            Value::Arg(a) => st.arg_spans.get(a as usize).copied(),
            _ => None,
        };
        let e = self.error(span, format!("redefinition of `%{n}`"));
        Box::new(e.with_label(at, format!("`%{n}` is first defined here")))
    }

    /// `Some(name)` for a named value, `None` for a number (`%7`).
    fn local_name(&self, n: &'a str, span: Span) -> PResult<Option<&'a str>> {
        if n.bytes().all(|b| b.is_ascii_digit()) {
            Ok(None)
        } else if is_ident(n) {
            Ok(Some(n))
        } else {
            Err(self.error(span, format!("invalid value name `%{n}`: expected a number or [A-Za-z_][A-Za-z0-9_.]*")))
        }
    }

    pub(super) fn u32_literal(&mut self, what: &str) -> PResult<u32> {
        let span = self.tok.span;
        let v = self.uint_literal(what)?;
        u32::try_from(v).map_err(|_| self.error(span, format!("expected {what} that fits u32, found {v}")))
    }

    /// An unsigned decimal or hex number token (consumed on success).
    pub(super) fn uint_literal(&mut self, what: &str) -> PResult<u64> {
        let Tok::Number(t) = self.tok.tok else { return Err(self.unexpected(what)) };
        let v = parse_uint(t).map_err(|m| self.error(self.tok.span, m))?;
        self.advance();
        Ok(v)
    }

    pub(super) fn string_literal(&mut self, what: &str) -> PResult<String> {
        match &mut self.tok.tok {
            Tok::Str(s) => {
                let s = std::mem::take(s);
                self.advance();
                Ok(s)
            }
            _ => Err(self.unexpected(what)),
        }
    }

    // ---- function bodies ------------------------------------------------

    fn block_ref(&mut self, st: &mut FnState<'a>, name: &'a str, span: Span) -> Block {
        if let Some(&k) = st.block_ids.get(name) {
            return st.blocks[k].1;
        }
        let b = st.f.add_block();
        st.block_ids.insert(name, st.blocks.len());
        st.blocks.push((name, b, span, false));
        b
    }

    fn body(&mut self, st: &mut FnState<'a>) -> PResult<()> {
        self.expect_punct('{')?;
        let mut current: Option<Block> = None;
        loop {
            match self.tok.tok {
                Tok::Punct('}') => {
                    self.advance();
                    break;
                }
                Tok::Label(name) => {
                    let span = self.tok.span;
                    let comments = self.take_comments();
                    self.advance();
                    self.expect_punct(':')?;
                    let b = self.block_ref(st, name, span);
                    let k = st.block_ids[name];
                    if st.blocks[k].3 {
                        let e = self.error(span, format!("redefinition of block `^{name}`"));
                        let first = st.f.block(b).span;
                        return Err(Box::new(e.with_label(first, format!("`^{name}` is first defined here"))));
                    }
                    st.blocks[k].3 = true;
                    st.layout.push(b);
                    let location = self.opt_location()?;
                    st.f.set_block_name(b, Some(name));
                    if !comments.is_empty() || location.is_some() {
                        let md = st.f.block_md_mut(b);
                        (md.comments, md.location) = (comments, location);
                    }
                    st.f.set_block_span(b, Some(span));
                    current = Some(b);
                }
                Tok::Eof => return Err(self.unexpected("`}`")),
                _ => {
                    let Some(b) = current else { return Err(self.unexpected("a block label `^name:`")) };
                    self.instruction(st, b)?;
                }
            }
        }
        self.finish_function(st);
        Ok(())
    }

    /// Resolve what the body left pending; report what stays undefined.
    fn finish_function(&mut self, st: &mut FnState<'a>) {
        for &(name, _, span, defined) in &st.blocks {
            if !defined {
                self.push_diag(*self.error(span, format!("undefined block `^{name}`")));
            }
        }
        st.f.set_layout(std::mem::take(&mut st.layout));
        for (inst, k, name, span) in std::mem::take(&mut st.fixups) {
            match st.values.get(name) {
                Some(&v) => st.f.set_operand(inst, k, v),
                None => self.push_diag(*self.error(span, format!("undefined value `%{name}`"))),
            }
        }
        for (inst, lits) in std::mem::take(&mut st.cases) {
            let Some(&sel) = st.f.inst(inst).operands.first() else { continue };
            let ty = st.f.value_type(&self.module, sel);
            let int = match self.module.types.get(ty) {
                crate::ir::Type::Int { bits, signed } => Some((*bits as u32, *signed)),
                _ => None,
            };
            let mut bits = Vec::with_capacity(lits.len());
            for (text, span) in lits {
                match case_bits(text, int) {
                    Ok(b) => bits.push(b),
                    Err(m) => {
                        let tyname = type_to_string(&self.module.types, ty);
                        self.push_diag(*self.error(span, format!("{m} (selector type {tyname})")));
                    }
                }
            }
            st.f.set_payload(inst, Payload::Cases(bits));
        }
    }

    fn instruction(&mut self, st: &mut FnState<'a>, block: Block) -> PResult<()> {
        let span = self.tok.span;
        let pos = self.tok.pos;
        let comments = self.take_comments();
        let mut result = None;
        if let Tok::Local(n) = self.tok.tok {
            let name = self.local_name(n, span)?;
            result = Some((n, name));
            self.advance();
            self.expect_punct('=')?;
        }
        let op_span = self.tok.span;
        let Tok::Ident(opname) = self.tok.tok else { return Err(self.unexpected("an opcode")) };
        let Some(op) = opcode(opname) else {
            return Err(self.error(op_span, format!("unknown opcode `{opname}`")));
        };
        self.advance();
        let spec = &xir_spec::spec().op(op).spec;
        let mut data = InstData::new(op, TypeTable::VOID);
        let mut need_item = false;
        if spec.payload.as_deref() == Some("text") {
            if let Tok::Str(_) = self.tok.tok {
                data.payload = Payload::Text(self.string_literal("a string")?);
                if self.is_punct(',') {
                    self.advance();
                    need_item = true;
                }
            }
        }
        let mut items = Items::default();
        if need_item || self.starts_item() {
            loop {
                self.item(st, op, &mut items)?;
                if self.is_punct(',') {
                    self.advance();
                } else {
                    break;
                }
            }
        }
        self.check_items(op, op_span, &items)?;
        if self.is_punct(':') {
            self.advance();
            data.ty = self.ty()?;
        }
        loop {
            match self.tok.tok {
                Tok::Meta("loc") if data.md.location.is_none() => data.md.location = self.opt_location()?,
                Tok::Meta("spill") if data.md.spill.is_none() => {
                    self.advance();
                    self.expect_punct('(')?;
                    data.md.spill = Some(match self.tok.tok {
                        Tok::Ident("phi") => SpillKind::Phi,
                        Tok::Ident("cross_block") => SpillKind::CrossBlock,
                        _ => return Err(self.unexpected("`phi` or `cross_block`")),
                    });
                    self.advance();
                    self.expect_punct(')')?;
                }
                Tok::Meta(m @ ("loc" | "spill")) => return Err(self.error(self.tok.span, format!("duplicate `!{m}`"))),
                Tok::Meta("curve_basis") => {
                    return Err(self.error(self.tok.span, "`!curve_basis` belongs on a function header, after `!loc`"))
                }
                Tok::Meta(m) => return Err(self.error(self.tok.span, format!("unknown metadata `!{m}`"))),
                _ => break,
            }
        }
        match (result, data.ty == TypeTable::VOID) {
            (Some((n, _)), true) => {
                return Err(self.unexpected(&format!("`: type` (a non-void result type for `%{n}`)")));
            }
            (None, false) => {
                let ty = type_to_string(&self.module.types, data.ty);
                return Err(self.error(span, format!("expected `%name =` before an instruction of type {ty}")));
            }
            _ => {}
        }
        // The name is interned once the instruction exists (no `String`
        // for it); the other fields are written only when set: writing
        // through the handle allocates.
        let name = result.and_then(|r| r.1);
        if !comments.is_empty() {
            data.md.comments = comments;
        }
        data.span = Some(self.extent(span, pos));
        data.operands = items.values.into_iter().collect();
        data.blocks = items.blocks.into_iter().collect();
        if spec.payload.as_deref() == Some("cases") {
            data.payload = Payload::Cases(Vec::new());
        }
        let inst = st.f.append_inst(block, data);
        if name.is_some() {
            st.f.set_inst_name(inst, name);
        }
        for (k, p, s) in items.pending {
            match p {
                Pending::Local(n) => st.fixups.push((inst, k, n, s)),
                Pending::Func(n) => self.func_fixups.push((self.func_ids.len() - 1, inst, k, n, s)),
            }
        }
        if !items.cases.is_empty() || spec.payload.as_deref() == Some("cases") {
            st.cases.push((inst, items.cases));
        }
        if let Some((n, _)) = result {
            if let Some(first) = st.values.insert(n, Value::Inst(inst)) {
                return Err(self.redefinition(st, n, first, span));
            }
        }
        Ok(())
    }

    /// Whether the current token begins an operand, block role, `case` or
    /// phi incoming (rather than the next instruction or label).
    fn starts_item(&mut self) -> bool {
        match self.tok.tok {
            Tok::Local(_) => self.peek() != &Tok::Punct('='),
            Tok::Reg(_) | Tok::Global(_) | Tok::Punct('[') => true,
            Tok::Ident("case" | "undef") => true,
            Tok::Ident(s) if super::literal::is_type_keyword(s) => true,
            Tok::Ident(_) => self.next_is_label(),
            _ => false,
        }
    }

    fn next_is_label(&mut self) -> bool {
        matches!(self.peek(), Tok::Label(_))
    }

    fn item(&mut self, st: &mut FnState<'a>, op: Opcode, items: &mut Items<'a>) -> PResult<()> {
        let spec = &xir_spec::spec().op(op).spec;
        let incoming = spec.variadic_blocks.as_deref() == Some("incoming");
        let cases = spec.variadic_blocks.as_deref() == Some("cases");
        let name = op.name();
        let span = self.tok.span;
        let role_next = matches!(self.tok.tok, Tok::Ident(_)) && self.next_is_label();
        match self.tok.tok {
            Tok::Ident("case") => {
                if !cases {
                    return Err(self.error(span, format!("expected no `case` for `{name}`, found `case`")));
                }
                if let Some(role) = spec.blocks.get(items.roles) {
                    return Err(self.unexpected(&format!("block role `{role}`")));
                }
                self.advance();
                let Tok::Number(lit) = self.tok.tok else { return Err(self.unexpected("a case literal")) };
                items.cases.push((lit, self.tok.span));
                self.advance();
                let Tok::Label(l) = self.tok.tok else { return Err(self.unexpected("a block `^name`")) };
                let b = self.block_ref(st, l, self.tok.span);
                items.blocks.push(b);
                self.advance();
            }
            Tok::Ident(role) if role_next => {
                if incoming {
                    return Err(self.unexpected("a phi incoming `[value, ^block]`"));
                }
                if !items.cases.is_empty() {
                    return Err(self.unexpected("`case`"));
                }
                match spec.blocks.get(items.roles) {
                    Some(r) if r == role => {}
                    Some(r) => return Err(self.unexpected(&format!("block role `{r}`"))),
                    None => {
                        let found = format!("block role `{role}`");
                        return Err(
                            self.error(span, format!("expected no more block roles for `{name}`, found {found}"))
                        );
                    }
                }
                items.roles += 1;
                self.advance();
                let Tok::Label(l) = self.tok.tok else { return Err(self.unexpected("a block `^name`")) };
                let b = self.block_ref(st, l, self.tok.span);
                items.blocks.push(b);
                self.advance();
            }
            Tok::Punct('[') => {
                if !incoming {
                    return Err(self.unexpected("an operand"));
                }
                self.advance();
                self.operand(st, items)?;
                self.expect_punct(',')?;
                let Tok::Label(l) = self.tok.tok else { return Err(self.unexpected("a block `^name`")) };
                let b = self.block_ref(st, l, self.tok.span);
                items.blocks.push(b);
                self.advance();
                self.expect_punct(']')?;
            }
            _ => {
                if incoming {
                    return Err(self.unexpected("a phi incoming `[value, ^block]`"));
                }
                if items.roles > 0 || !items.cases.is_empty() {
                    return Err(self.unexpected("a block role"));
                }
                if spec.variadic.is_none() && items.values.len() == spec.operands.len() && items.first_extra.is_none() {
                    items.first_extra = Some(span);
                }
                self.operand(st, items)?;
            }
        }
        Ok(())
    }

    fn check_items(&self, op: Opcode, op_span: Span, items: &Items<'a>) -> PResult<()> {
        let spec = &xir_spec::spec().op(op).spec;
        let (n, fixed) = (items.values.len(), spec.operands.len());
        if let Some(s) = items.first_extra {
            return Err(self.error(s, format!("expected {fixed} operands for `{}`, found {n}", op.name())));
        }
        if n < fixed {
            let what = if spec.variadic.is_some() { "at least " } else { "" };
            return Err(self.error(op_span, format!("expected {what}{fixed} operands for `{}`, found {n}", op.name())));
        }
        if let Some(role) = spec.blocks.get(items.roles) {
            return Err(self.unexpected(&format!("block role `{role}`")));
        }
        Ok(())
    }

    /// One value operand, recording a fixup for forward references.
    fn operand(&mut self, st: &mut FnState<'a>, items: &mut Items<'a>) -> PResult<()> {
        let span = self.tok.span;
        let k = items.values.len();
        match &self.tok.tok {
            Tok::Local(n) => {
                let n = *n;
                self.local_name(n, span)?;
                match st.values.get(n) {
                    Some(&v) => items.values.push(v),
                    None => {
                        items.values.push(Value::Undef(TypeTable::VOID));
                        items.pending.push((k, Pending::Local(n), span));
                    }
                }
                self.advance();
            }
            Tok::Global(n) => {
                match self.func_ids.get(n.as_ref()) {
                    Some(&id) => items.values.push(Value::Func(id)),
                    None => {
                        items.values.push(Value::Undef(TypeTable::VOID));
                        items.pending.push((k, Pending::Func(n.to_string()), span));
                    }
                }
                self.advance();
            }
            Tok::Reg(r) => {
                let Some(reg) = SpecialRegister::from_name(r) else {
                    return Err(self.error(span, format!("unknown special register `${r}`")));
                };
                items.values.push(Value::Reg(reg));
                self.advance();
            }
            Tok::Ident("undef") => {
                self.advance();
                let ty = self.ty()?;
                items.values.push(Value::Undef(ty));
            }
            Tok::Ident(s) if super::literal::is_type_keyword(s) => {
                let ty = self.ty()?;
                let c = self.const_literal(ty, 0)?;
                items.values.push(Value::Const(c));
            }
            _ => return Err(self.unexpected("an operand")),
        }
        Ok(())
    }
}
