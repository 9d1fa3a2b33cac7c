//! The generic, whole-module verifier: every function (used or not) and every
//! owned block (reachable or orphan) is checked. It reports every error it
//! finds, each naming the broken rule, the function, block and instruction,
//! and the text position when the IR came from text; [`render_on_ir`]
//! shows them under the printed lines they are about.
//!
//! The opcode-specific rules are not written per opcode: each opcode's entry
//! in `ir-spec/spec/opcodes.ron` names operand classes, a result rule and
//! constraints, and the tables in [`classes`], [`results`], [`constraints`]
//! and [`types`] implement each name once. [`check_spec_names`] proves every
//! name the spec uses has an implementation.
//!
//! # Invariants checked
//!
//! Module level:
//! - `type-ids`: every type's members refer to types defined earlier in the
//!   table (so type graphs are acyclic); then each type satisfies its kind's
//!   `rules` from `types.ron` (`type:<rule>`).
//! - `const-ids`, `const-shape`: constants have valid types, scalar constants
//!   fit their width, composites list one member of the right type per slot.
//! - `function-names`: function names are unique.
//!
//! Per function:
//! - `signature`: argument kinds agree with their types (resource types are
//!   resource arguments and only they; reference arguments are data),
//!   kernels return `void` and have a non-zero block size, externals have no
//!   blocks, kernels and callables have a body.
//! - `layout`: every layout block id exists and appears once; each placed
//!   instruction is listed by exactly one block, the one its `parent` names.
//! - `ids`: operand values, block operands and result types refer to
//!   existing entities; a used instruction is placed and has a result; a
//!   special register's type is interned; `undef` is not `void`.
//! - `use-lists`: the recorded use lists equal the operand slots.
//! - `operand-count`, `block-count`, `payload`: the shape the spec declares
//!   (`operands` + `variadic`, `blocks` + `variadic_blocks`, `payload`).
//! - `operand:<class>`: each operand belongs to its spec operand class;
//!   only `lvalue`, `gep_base`, `atomic_base` and `value_or_lvalue` admit an
//!   lvalue (an `alloca`, `gep` or reference argument): every other class
//!   takes values, so a variable is never read as one.
//! - `result:<rule>`: the result type follows the spec's result rule.
//! - `<constraint>`: every named constraint of the opcode (e.g.
//!   `store_exact_type`, `gep_path`, `call_signature`, `cases_unique`).
//! - `terminator`: every block ends with exactly one terminator, last.
//! - `block-ownership`: every block an instruction names is owned.
//! - `phi-first`: Phis precede every other instruction of their block.
//! - `phi-predecessors`: a Phi has one incoming per CFG predecessor edge, no
//!   more, no less; duplicated edges carry the same value.
//! - `ssa-dominance`: every use is dominated by its definition. A Phi's use
//!   counts at the end of its incoming block. Uses in unreachable blocks
//!   follow the *unreachable-region* rule: the definition is an argument or
//!   global, an earlier instruction of the same block, an instruction of a
//!   reachable block, or an instruction of an unreachable block that
//!   dominates the use's block in the dominator forest of the unreachable
//!   blocks (rooted at those without unreachable predecessors). This admits
//!   dead code left behind by folding while ruling out every non-Phi
//!   definition cycle, so operand walks terminate on all verified IR.
//! - `structured-roles`: loop roles (`prepare`, `body`, `update`, `merge`;
//!   `body`, `merge`) are pairwise distinct, and no role block is the block
//!   holding the construct or the function's entry block.
//!
//! # Not yet checked
//! - that Break/Continue target the *innermost* enclosing construct (the
//!   `structured_roles_wellformed` dialect invariant checks the targets are
//!   a merge / continue block of some construct);
//! - region nesting of structured constructs (arms escaping their merge);
//! - result types of `accel.instance_*`, `bindless.buffer_read`,
//!   `byte_buffer.read`, `warp.active_*` with explicit results (any data type
//!   is accepted);
//! - the shape of ray structs passed to `ray.trace_*` beyond "a struct";
//! - recursion among callables.

pub mod classes;
pub mod constraints;
mod constraints_ops;
mod ids;
mod render;
pub mod results;
mod spec_names;
mod structure;
pub mod types;
mod violation;

pub use render::render_on_ir;
pub use spec_names::check_spec_names;
pub use violation::{Related, Violation};

use xir_spec::{OpInfo, Trait};

use crate::diag::{Diagnostic, Rule};
use crate::ir::{Block, FuncId, Function, Inst, InstCore, Module, Type, TypeId, TypeTable, Value};

/// Verify the whole module; an empty list means it is valid.
pub fn verify_module(m: &Module) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let types_ok = ids::check_types(m, &mut diags);
    if !types_ok {
        // Later checks index the type table through member ids.
        return diags;
    }
    ids::check_consts(m, &mut diags);
    let mut seen = rustc_hash::FxHashMap::default();
    for (fid, f) in m.func_ids().zip(&m.functions) {
        if let Some(prev) = seen.insert(f.name.as_str(), fid) {
            diags.push(
                Diagnostic::error(
                    Rule::FunctionNames,
                    format!("function `@{}` is defined twice ({prev} and {fid})", f.name),
                )
                .in_function(&f.name)
                .with_span(f.span)
                .with_label(m.func(prev).span, format!("`@{}` is first defined here, as {prev}", f.name)),
            );
        }
        verify_function(m, fid, &mut diags);
    }
    diags
}

/// Verify one function of `m`, appending to `diags`.
pub fn verify_function(m: &Module, fid: FuncId, diags: &mut Vec<Diagnostic>) {
    let f = m.func(fid);
    structure::check_signature(m, f, diags);
    if !structure::check_layout(f, diags) {
        return;
    }
    let mut shape_ok = true;
    let mut use_ok = true;
    for (_, i) in f.all_insts() {
        if !ids::check_inst_ids(m, f, i, diags) {
            shape_ok = false;
            use_ok = false;
            continue;
        }
        let cx = InstCx::new(m, f, i);
        if !check_inst(&cx, diags) {
            shape_ok = false;
        }
    }
    if use_ok {
        ids::check_use_lists(f, diags);
    }
    let cfg_ok = structure::check_terminators(f, diags) & structure::check_block_ownership(f, diags);
    if cfg_ok && shape_ok {
        structure::check_cfg_rules(f, diags);
    }
}

/// One instruction under check, with typed access for the rule tables.
/// Built only after the instruction's ids were validated.
pub struct InstCx<'a> {
    pub module: &'a Module,
    pub func: &'a Function,
    pub inst: Inst,
    pub data: &'a InstCore,
    pub info: &'static OpInfo,
}

impl<'a> InstCx<'a> {
    pub fn new(module: &'a Module, func: &'a Function, inst: Inst) -> Self {
        let data = func.inst(inst);
        InstCx { module, func, inst, data, info: xir_spec::spec().op(data.opcode) }
    }
    pub fn types(&self) -> &'a TypeTable {
        &self.module.types
    }
    pub fn ty(&self, v: Value) -> TypeId {
        self.func.value_type(self.module, v)
    }
    /// Type of operand `k`.
    pub fn op_ty(&self, k: usize) -> TypeId {
        self.ty(self.data.operands[k])
    }
    pub fn result(&self) -> TypeId {
        self.data.ty
    }
    pub fn get(&self, t: TypeId) -> &'a Type {
        self.module.types.get(t)
    }
    /// Operands after the fixed ones (the variadic tail).
    pub fn variadic(&self) -> &'a [Value] {
        let n = self.info.spec.operands.len().min(self.data.operands.len());
        &self.data.operands[n..]
    }
    pub fn name(&self, t: TypeId) -> String {
        type_name(&self.module.types, t)
    }
    pub fn has(&self, t: Trait) -> bool {
        self.info.has(t)
    }
    /// A diagnostic at this instruction.
    pub fn diag(&self, rule: impl Into<Rule>, message: String) -> Diagnostic {
        inst_diag(self.func, self.inst, rule, message)
    }
    /// A diagnostic at this instruction for a rule-table violation, with a
    /// secondary label at the place the violation names (see [`Related`]).
    pub fn violation(&self, rule: impl Into<Rule>, message: String, v: &Violation) -> Diagnostic {
        let d = self.diag(rule, message);
        match v.related.and_then(|r| violation::label(self, r)) {
            Some((span, text)) => d.with_label(Some(span), text),
            None => d,
        }
    }
}

/// A diagnostic located at instruction `i` of `f`.
pub fn inst_diag(f: &Function, i: Inst, rule: impl Into<Rule>, message: String) -> Diagnostic {
    let mut diag = Diagnostic::error(rule, message).in_function(&f.name).at_inst(i).with_span(f.inst_span(i));
    diag.block = f.parent(i);
    diag
}

/// A diagnostic located at block `b` of `f`.
pub fn block_diag(f: &Function, b: Block, rule: impl Into<Rule>, message: String) -> Diagnostic {
    let span = if f.block_exists(b) { f.block(b).span } else { None };
    Diagnostic::error(rule, message).in_function(&f.name).at_block(b).with_span(span)
}

/// Run the spec-driven checks of one instruction. False when its shape is
/// too broken for CFG-level checks to make sense of it.
fn check_inst(cx: &InstCx, diags: &mut Vec<Diagnostic>) -> bool {
    let spec = &cx.info.spec;
    let d = cx.data;
    let op = d.opcode;
    let nfixed = spec.operands.len();
    let count_ok = if spec.variadic.is_some() { d.operands.len() >= nfixed } else { d.operands.len() == nfixed };
    if !count_ok {
        let want = if spec.variadic.is_some() { format!("at least {nfixed}") } else { nfixed.to_string() };
        diags.push(cx.diag(Rule::OperandCount, format!("`{op}` takes {want} operands, found {}", d.operands.len())));
    }
    let nroles = spec.blocks.len();
    let blocks_ok = match spec.variadic_blocks.as_deref() {
        None => d.blocks.len() == nroles,
        Some("cases") => d.blocks.len() == nroles + cx.func.cases(cx.inst).len(),
        Some("incoming") => d.blocks.len() == d.operands.len(),
        Some(_) => true, // reported by check_spec_names
    };
    if !blocks_ok {
        let roles = spec.blocks.join(", ");
        let tail = spec.variadic_blocks.as_deref().map(|v| format!(" plus one per {v}")).unwrap_or_default();
        diags.push(
            cx.diag(Rule::BlockCount, format!("`{op}` takes blocks [{roles}]{tail}, found {} blocks", d.blocks.len())),
        );
    }
    let payload_ok = match (spec.payload.as_deref(), cx.func.payload(cx.inst)) {
        (_, crate::ir::Payload::None) => spec.payload.as_deref() != Some("cases"),
        (Some("cases"), crate::ir::Payload::Cases(_)) => true,
        (Some("text"), crate::ir::Payload::Text(_)) => true,
        _ => false,
    };
    if !payload_ok {
        diags.push(cx.diag(
            Rule::Payload,
            format!(
                "`{op}` payload must be {}, found {:?}",
                spec.payload.as_deref().unwrap_or("none"),
                cx.func.payload(cx.inst)
            ),
        ));
    }
    if !(count_ok && blocks_ok && payload_ok) {
        return false;
    }
    // Operand classes.
    let rules = spec_names::op_rules(op);
    let mut classes_ok = true;
    for (k, &v) in d.operands.iter().enumerate() {
        let o = spec.operands.get(k).or(spec.variadic.as_ref()).expect("count checked");
        let class = rules.operands.get(k).copied().or(rules.variadic).expect("count checked");
        match class {
            Some(class) if (class.test)(cx, v) => {}
            Some(class) => {
                classes_ok = false;
                let ty = cx.name(cx.ty(v));
                let found = if cx.func.is_lvalue(v) { "an lvalue (a variable)" } else { "a value" };
                diags.push(cx.diag(
                    Rule::named(&format!("operand:{}", o.class)),
                    format!("`{op}` operand {k} (`{}`) must be {}, found {found} of type `{ty}`", o.name, class.doc),
                ));
            }
            None => {
                classes_ok = false;
                diags.push(cx.diag(Rule::Spec, format!("operand class `{}` has no implementation", o.class)));
            }
        }
    }
    if !classes_ok {
        // Result rules and constraints assume the operand classes hold.
        return true;
    }
    match rules.result {
        Some(rule) => {
            if let Err(v) = rule(cx) {
                let rule = Rule::named(&format!("result:{}", spec.result));
                diags.push(cx.violation(rule, format!("`{op}` result: {}", v.message), &v));
            }
        }
        None => diags.push(cx.diag(Rule::Spec, format!("result rule `{}` has no implementation", spec.result))),
    }
    for &(c, rule) in &rules.constraints {
        match rule {
            Some(rule) => {
                if let Err(v) = rule(cx) {
                    diags.push(cx.violation(Rule::named(c), format!("`{op}`: {}", v.message), &v));
                }
            }
            None => diags.push(cx.diag(Rule::Spec, format!("constraint `{c}` has no implementation"))),
        }
    }
    true
}

/// The type ids a type refers to (members, elements).
pub fn type_members(ty: &Type) -> Vec<TypeId> {
    ids::members(ty)
}

/// The text-format spelling of a type (`vec<f32, 3>`), for messages.
pub fn type_name(t: &TypeTable, id: TypeId) -> String {
    if !t.contains(id) {
        return format!("<invalid {id}>");
    }
    let n = |x: TypeId| type_name(t, x);
    match t.get(id) {
        Type::Vector { elem, lanes } => format!("vec<{}, {lanes}>", n(*elem)),
        Type::Matrix { elem, dim } => format!("mat<{}, {dim}>", n(*elem)),
        Type::Array { elem, len } => format!("array<{}, {len}>", n(*elem)),
        Type::Struct { fields, align } => {
            let f: Vec<String> = fields.iter().map(|x| n(*x)).collect();
            format!("struct<align {align}>{{{}}}", f.join(", "))
        }
        Type::Buffer(e) => format!("buffer<{}>", n(*e)),
        Type::Texture { dim, elem } => format!("texture{dim}d<{}>", n(*elem)),
        _ => t.kind_name(id).to_string(),
    }
}
