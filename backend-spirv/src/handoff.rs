//! The fail-closed SPIR-V handoff: the single check between legalized XIR
//! and emission. Nothing is emitted unless it passes.
//!
//! Two scopes, kept apart (see the reference, "Dialect boundary"):
//! - generic validity is whole-module: the module must lie in
//!   `xir.restructured.audited` (verifier, structured roles, reducibility, no
//!   spill markers, no self-referential Phis) and satisfy the `xir.spirv`
//!   invariants `positive_array_lengths`, `phi_first_in_block` and
//!   `exact_typed_memory`, so what passes is in the dialect the `spirv`
//!   pipeline declares;
//! - everything backend-specific looks only at the kernel-reachable call
//!   graph and each function's structural closure: opcodes must be in the
//!   `xir.spirv` op set and classified Supported or SemanticNoOp
//!   (`classify.ron`), types classified Supported with positive array
//!   lengths, and the semantic limits below hold.
//!
//! Semantic limits checked here (each with a focused diagnostic):
//! - buffers have a typed or word layout (`plan::layout`: word-ABI leaves
//!   naturally aligned, a `bool` one host byte); byte-buffer values hold no
//!   `bool`;
//! - GLSL.std.450 transcendentals only on 16/32-bit floats;
//! - `cast.bitwise` between scalars/vectors of equal total width;
//! - atomics on buffers (typed storage) or shared memory, on 32/64-bit
//!   integers, or float exchange, compare-exchange, add/sub, min, max (the
//!   planner lowers or refuses each by the device's features);
//! - calls pass only Function-storage pointers and no resources (call sites
//!   that need more are specialized by `callable_specialization` first);
//! - special registers exist in Vulkan compute;
//! - warp operations only where the emitted code computes the interpreter's
//!   value: a `GroupNonUniform*` instruction (integer reductions and scans,
//!   scalar votes, shuffles of scalars and vectors, `u32` counts, ballots as
//!   `vec<u32, 4>` or `u32`), or a loop over the lanes for `f32` reductions
//!   and scans (`plan::warp_fold`); other float widths are refused.
//!
//! Fail closed by construction: [`check`] is the only way to a
//! [`HandedOff`], and planning and emission take nothing else. The witness
//! borrows the module, so the module cannot change between the check and
//! emission. It runs once per compilation: [`run_pipeline`] runs a pipeline
//! whose last step is the `spirv_handoff` pass and keeps that step's
//! verdict, so the driver that emits next does not check again.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashSet;
use xir::diag::Rule;
use xir::pipeline::{PassManager, Pipeline, RunError, RunOptions, RunReport, Step};
use xir::verify::{inst_diag, type_name};
use xir::{ArgKind, Diagnostic, FuncId, Function, Module, Opcode, SpecialRegister, Type, TypeId, Value};

use crate::abi::BufferStorage;
use crate::classify::{self, Support};
use crate::plan::callgraph::{plan_call_graph, structural_closure};
use crate::plan::features::{atomic_space, float_op, is_atomic, AtomicSpace};
use crate::plan::layout;

const RULE: &str = "spirv-handoff";

/// A kernel that passed the handoff, with the module it was checked in:
/// what [`crate::plan::plan_all`], [`crate::emit::Emitter`] and
/// [`crate::compile_handed_off`] take. Only [`check`] makes one (directly,
/// or through [`Handoffs`]).
#[derive(Clone, Copy, Debug)]
pub struct HandedOff<'m> {
    module: &'m Module,
    kernel: FuncId,
}

impl<'m> HandedOff<'m> {
    /// The checked module.
    pub fn module(&self) -> &'m Module {
        self.module
    }
    /// The checked kernel.
    pub fn kernel(&self) -> FuncId {
        self.kernel
    }
}

/// Run the handoff for `kernel`: the witness that it may be emitted, or why not.
pub fn check(m: &Module, kernel: FuncId) -> Result<HandedOff<'_>, Vec<Diagnostic>> {
    let diags = diagnostics(m, kernel);
    if diags.is_empty() {
        Ok(HandedOff { module: m, kernel })
    } else {
        Err(diags)
    }
}

/// What the `spirv_handoff` pass found in one run: the kernels it passed.
/// Shared between the pass object a pipeline holds and [`run_pipeline`].
pub(crate) type Verdict = Arc<Mutex<Option<Vec<FuncId>>>>;

/// A module after [`run_pipeline`], borrowed: the kernels the pipeline's own
/// `spirv_handoff` step passed are handed off without a second check.
pub struct Handoffs<'m> {
    module: &'m Module,
    passed: Vec<FuncId>,
}

impl<'m> Handoffs<'m> {
    /// A module no pipeline handed off: each kernel is checked when asked for.
    pub fn new(module: &'m Module) -> Self {
        Handoffs { module, passed: Vec::new() }
    }
    /// The module as the pipeline left it.
    pub fn module(&self) -> &'m Module {
        self.module
    }
    /// Whether the pipeline's own handoff step passed `kernel` (so
    /// [`Handoffs::kernel`] does not check it again).
    pub fn passed_by_pipeline(&self, kernel: FuncId) -> bool {
        self.passed.contains(&kernel)
    }
    /// Hand `kernel` off: free when the pipeline's handoff step passed it
    /// (nothing ran after that step, and the module has been borrowed
    /// read-only since), [`check`] otherwise.
    pub fn kernel(&self, kernel: FuncId) -> Result<HandedOff<'m>, Vec<Diagnostic>> {
        if self.passed.contains(&kernel) {
            Ok(HandedOff { module: self.module, kernel })
        } else {
            check(self.module, kernel)
        }
    }
}

/// Run `pipeline` on `module`, as [`PassManager::run`] does, and keep the
/// verdict of its final `spirv_handoff` step (the `spirv` pipeline's last
/// step) for [`Handoffs::kernel`]. The step's pass object is swapped for
/// one that records; a pipeline without such a final step runs unchanged,
/// and its kernels are checked when handed off.
pub fn run_pipeline<'m>(
    pipeline: &mut Pipeline,
    options: RunOptions,
    module: &'m mut Module,
    log: &mut dyn std::io::Write,
) -> Result<(RunReport, Handoffs<'m>), Box<RunError>> {
    let verdict = final_handoff_step(&mut pipeline.steps).map(|step| {
        let verdict = Verdict::default();
        step.pass = crate::passes::recording_handoff(verdict.clone());
        verdict
    });
    let report = PassManager::new(pipeline, options).run(module, log)?;
    // Only a run that reached the step (a bisect limit may stop before it)
    // left a verdict; the pipeline's output check after it changes nothing.
    let passed = verdict.and_then(|v| v.lock().ok().and_then(|mut v| v.take())).unwrap_or_default();
    Ok((report, Handoffs { module, passed }))
}

/// The pipeline's last pass step when it is `spirv_handoff`, looking into
/// trailing `Include`s (not into opt groups or fixed points, which may skip
/// or repeat it).
fn final_handoff_step(steps: &mut [Step]) -> Option<&mut xir::pipeline::PassStep> {
    match steps.last_mut()? {
        Step::Pass(p) if p.name == crate::passes::HANDOFF.name => Some(p),
        Step::Include { steps, .. } => final_handoff_step(steps),
        _ => None,
    }
}

/// The handoff's findings for `kernel`; empty means it may be emitted.
pub(crate) fn diagnostics(m: &Module, kernel: FuncId) -> Vec<Diagnostic> {
    let diags = module_diagnostics(m);
    if !diags.is_empty() {
        return diags;
    }
    kernel_diagnostics(m, kernel)
}

/// The whole-module half of the handoff: generic validity, which every
/// kernel of the module shares (so a module of many kernels is checked
/// once, not once per kernel).
pub(crate) fn module_diagnostics(m: &Module) -> Vec<Diagnostic> {
    let spec = xir_spec::spec();
    let parent = spec.dialect("xir.restructured.audited").expect("built-in dialect");
    let mut diags: Vec<Diagnostic> =
        xir::dialect::check_module(m, parent).into_iter().filter(|d| d.is_error()).collect();
    if !diags.is_empty() {
        return diags;
    }
    for inv in ["phi_first_in_block", "exact_typed_memory"] {
        if let Some(pred) = xir::dialect::invariants::lookup(inv) {
            for mut d in pred(m) {
                d.rule = Rule::named(&format!("dialect:xir.spirv:{inv}"));
                diags.push(d);
            }
        }
    }
    diags
}

/// The backend-specific half of the handoff for `kernel`, over its call
/// graph; it assumes [`module_diagnostics`] found nothing.
pub(crate) fn kernel_diagnostics(m: &Module, kernel: FuncId) -> Vec<Diagnostic> {
    let spec = xir_spec::spec();
    if kernel.index() >= m.functions.len() || !m.func(kernel).is_kernel() {
        return vec![Diagnostic::error(RULE, format!("{kernel} is not a kernel of this module"))];
    }
    // Curve primitives have no lowering: a kernel that says its scenes may
    // hold them is refused, not compiled to miss every curve hit.
    let k = m.func(kernel);
    if !k.md.curve_basis.is_empty() {
        let names: Vec<&str> = k.md.curve_basis.iter().map(|b| b.name()).collect();
        let message = format!(
            "`@{}` declares curve primitives ({}), which the SPIR-V backend's ray queries do not handle",
            k.name,
            names.join(", ")
        );
        return vec![Diagnostic::error(Rule::named(&format!("{RULE}:curve-basis")), message)
            .in_function(&k.name)
            .with_span(k.span)];
    }
    let mut diags = Vec::new();
    let cg = match plan_call_graph(m, kernel) {
        Ok(cg) => cg,
        Err(errs) => {
            return errs
                .into_iter()
                .map(|(f, msg)| {
                    Diagnostic::error(Rule::named(&format!("{RULE}:callgraph")), msg).in_function(&m.func(f).name)
                })
                .collect()
        }
    };
    let dialect = spec.dialect("xir.spirv").expect("built-in dialect");
    for &fid in &cg.order {
        let f = m.func(fid);
        entry_phis(f, &mut diags);
        let mut cx = Cx { m, f, diags: &mut diags, seen: FxHashSet::default() };
        for a in &f.args {
            cx.check_type(a.ty, None);
        }
        cx.check_type(f.ret, None);
        for b in structural_closure(f).blocks {
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                if !dialect.ops.contains(d.opcode) {
                    cx.err(i, "opcode", format!("`{}` is not allowed in dialect `xir.spirv`", d.opcode));
                    continue;
                }
                if let Support::Unsupported(why) = classify::opcode(d.opcode) {
                    cx.err(i, "opcode", format!("`{}` is not supported by the SPIR-V backend: {why}", d.opcode));
                    continue;
                }
                cx.check_type(d.ty, Some(i));
                for &v in &d.operands {
                    if !matches!(v, Value::Func(_)) {
                        let vt = f.value_type(m, v);
                        cx.check_type(vt, Some(i));
                    }
                    if let Value::Reg(r) = v {
                        cx.check_register(i, r);
                    }
                    if let Some(n) = v.as_const().and_then(|c| crate::emit::constants::oversized(m, c)) {
                        let max = crate::emit::constants::MAX_COMPOSITE_MEMBERS;
                        let msg = format!(
                            "a constant of {n} members that are not all zero: an OpConstantComposite holds at most \
                             {max} (its word count is 16 bits)"
                        );
                        cx.err(i, "constant", msg);
                    }
                }
                cx.check_semantics(i);
            }
        }
    }
    diags
}

/// An `OpPhi` needs a parent block for each incoming, and the entry block
/// has no predecessors (SPIR-V forbids branching to it): a Phi there has
/// nothing to select from, so it is refused here, located, instead of failing
/// the final validation.
fn entry_phis(f: &Function, diags: &mut Vec<Diagnostic>) {
    let Some(entry) = f.body() else { return };
    for &i in f.block(entry).insts() {
        if f.opcode(i) == Opcode::Phi {
            let msg = "`phi` in the entry block: the entry block has no predecessors to select from".to_string();
            diags.push(inst_diag(f, i, Rule::named(&format!("{RULE}:entry-phi")), msg));
        }
    }
}

struct Cx<'a> {
    m: &'a Module,
    f: &'a Function,
    diags: &'a mut Vec<Diagnostic>,
    seen: FxHashSet<TypeId>,
}

impl Cx<'_> {
    fn err(&mut self, i: xir::Inst, what: &str, msg: String) {
        self.diags.push(inst_diag(self.f, i, Rule::named(&format!("{RULE}:{what}")), msg));
    }

    fn err_at(&mut self, at: Option<xir::Inst>, what: &str, msg: String) {
        match at {
            Some(i) => self.err(i, what, msg),
            None => self.diags.push(
                Diagnostic::error(Rule::named(&format!("{RULE}:{what}")), msg)
                    .in_function(&self.f.name)
                    .with_span(self.f.span),
            ),
        }
    }

    /// Type kinds must be Supported; arrays must have a positive length.
    fn check_type(&mut self, ty: TypeId, at: Option<xir::Inst>) {
        if !self.seen.insert(ty) {
            return;
        }
        let t = &self.m.types;
        let kind = t.kind_name(ty);
        if let Support::Unsupported(why) = classify::type_kind(kind) {
            let msg = format!("type `{}` is not supported by the SPIR-V backend: {why}", type_name(t, ty));
            self.err_at(at, "type", msg);
            return;
        }
        if let Type::Array { len: 0, .. } = t.get(ty) {
            let msg = format!("array type `{}` has length 0; OpTypeArray needs a positive length", type_name(t, ty));
            self.err_at(at, "type", msg);
        }
        for member in xir::verify::type_members(t.get(ty)) {
            self.check_type(member, at);
        }
    }

    fn check_register(&mut self, i: xir::Inst, r: SpecialRegister) {
        let ok = matches!(
            r,
            SpecialRegister::ThreadId
                | SpecialRegister::BlockId
                | SpecialRegister::DispatchId
                | SpecialRegister::DispatchSize
                | SpecialRegister::BlockSize
                | SpecialRegister::WarpLaneId
                | SpecialRegister::WarpSize
                | SpecialRegister::WarpId
                | SpecialRegister::WarpCount
        );
        if !ok {
            self.err(
                i,
                "register",
                format!("special register `${}` does not exist in Vulkan compute kernels", r.name()),
            );
        }
    }

    fn check_semantics(&mut self, i: xir::Inst) {
        let (m, f) = (self.m, self.f);
        let t = &m.types;
        let d = f.inst(i);
        let op_ty = |k: usize| f.value_type(m, d.operands[k]);
        let spec = xir_spec::spec().op(d.opcode);
        if (spec.has(xir::Trait::Transcendental) || d.opcode == Opcode::Exp10)
            && !matches!(d.opcode, Opcode::Sqrt | Opcode::Rsqrt)
        {
            let bits = t.scalar_bits(t.scalar_of(d.ty));
            if bits != 32 && bits != 16 {
                self.err(
                    i,
                    "float-width",
                    format!(
                        "`{}` on {bits}-bit floats: GLSL.std.450 provides it only for 16- and 32-bit floats",
                        d.opcode
                    ),
                );
            }
        }
        self.check_fp8_use(i);
        match d.opcode {
            Opcode::CastBitwise => {
                let from = op_ty(0);
                let ok = |ty: TypeId| {
                    t.is_scalar(ty) && !t.is_bool(ty)
                        || matches!(t.get(ty), Type::Vector { elem, .. } if !t.is_bool(*elem))
                };
                let width = |ty: TypeId| t.scalar_bits(t.scalar_of(ty)) * t.lanes(ty);
                if !ok(from) || !ok(d.ty) || width(from) != width(d.ty) {
                    self.err(i, "cast", format!("`cast.bitwise` from `{}` to `{}`: OpBitcast needs non-bool scalars or vectors of equal total width", type_name(t, from), type_name(t, d.ty)));
                }
            }
            Opcode::BufferRead
            | Opcode::BufferWrite
            | Opcode::BufferVolatileRead
            | Opcode::BufferVolatileWrite
            | Opcode::BufferSize => {
                if let Type::Buffer(elem) = t.get(op_ty(0)) {
                    if let Err(e) = layout::plan_buffer(t, *elem) {
                        self.err(i, "layout", e.to_string());
                    }
                }
            }
            Opcode::BufferWritePart => {
                if let Type::Buffer(elem) = t.get(op_ty(0)) {
                    let path = &d.operands[3..];
                    match layout::plan_buffer(t, *elem) {
                        Err(e) => self.err(i, "layout", e.to_string()),
                        Ok(BufferStorage::Words { .. }) => {
                            if let Err(e) = layout::part_access(t, *elem, &layout::constant_path(m, path)) {
                                self.err(i, "layout", e.to_string());
                            }
                        }
                        Ok(_) => {
                            if let Err(e) = crate::plan::aggregate::plan_indices(m, f, *elem, path) {
                                self.err(i, "index", format!("`{}` index walk: {e}", d.opcode));
                            }
                        }
                    }
                }
            }
            Opcode::ByteBufferRead | Opcode::ByteBufferWrite => {
                let vt = if d.opcode == Opcode::ByteBufferRead { d.ty } else { op_ty(2) };
                if t.is_bool(vt) {
                    self.err(i, "layout", "`bool` has no byte-buffer representation".into());
                } else if let Err(e) = crate::plan::byte_access::byte_leaves(m, vt) {
                    self.err(i, "layout", format!("byte-buffer value: {e}"));
                }
            }
            Opcode::Alloca | Opcode::AllocaShared if !t.is_data(d.ty) => {
                self.err(i, "alloca", format!("`{}` of non-data type `{}`", d.opcode, type_name(t, d.ty)));
            }
            Opcode::Gep | Opcode::Extract | Opcode::Insert => {
                let first = if d.opcode == Opcode::Insert { 2 } else { 1 };
                if let Err(e) = crate::plan::aggregate::plan_indices(m, f, op_ty(0), &d.operands[first..]) {
                    self.err(i, "index", format!("`{}` index walk: {e}", d.opcode));
                }
            }
            Opcode::Call => self.check_call(i),
            op if is_atomic(op) => self.check_atomic(i),
            op if crate::plan::features::is_warp_op(op) => self.check_warp(i),
            _ => {}
        }
    }

    /// FP8 values are for transport and conversion only (XIR defines no FP8
    /// arithmetic, and the backend carries them as `u8` bits): any other
    /// instruction with an FP8 scalar in an operand or its result is refused.
    fn check_fp8_use(&mut self, i: xir::Inst) {
        let (m, f) = (self.m, self.f);
        let t = &m.types;
        let d = f.inst(i);
        let transport = matches!(
            d.opcode,
            Opcode::CastStatic
                | Opcode::CastBitwise
                | Opcode::Select
                | Opcode::Phi
                | Opcode::Aggregate
                | Opcode::Extract
                | Opcode::Insert
                | Opcode::Shuffle
                | Opcode::Load
                | Opcode::Store
                | Opcode::BufferRead
                | Opcode::BufferWrite
                | Opcode::BufferWritePart
                | Opcode::BufferVolatileRead
                | Opcode::BufferVolatileWrite
                | Opcode::Call
                | Opcode::Return
        );
        if transport {
            return;
        }
        let is_fp8 = |ty: TypeId| matches!(t.get(t.scalar_of(ty)), Type::Float(f) if f.bits() == 8);
        let mut tys = vec![d.ty];
        tys.extend(d.operands.iter().filter(|v| !matches!(v, Value::Func(_))).map(|&v| f.value_type(m, v)));
        if let Some(&ty) = tys.iter().find(|&&ty| is_fp8(ty)) {
            let msg = format!(
                "`{}` on `{}`: FP8 values are for transport and conversion only (XIR has no FP8 arithmetic); cast to f16 or f32 first",
                d.opcode,
                type_name(t, ty)
            );
            self.err(i, "fp8", msg);
        }
    }

    fn check_atomic(&mut self, i: xir::Inst) {
        let (m, f) = (self.m, self.f);
        let t = &m.types;
        let d = f.inst(i);
        let space = atomic_space(f, d.operands[0]);
        match space {
            AtomicSpace::Local => {
                return self.err(
                    i,
                    "atomic",
                    "atomics on function-local memory: Vulkan atomics need buffer or shared storage".into(),
                )
            }
            AtomicSpace::Buffer => {
                if let Type::Buffer(elem) = t.get(f.value_type(m, d.operands[0])) {
                    if !matches!(layout::plan_buffer(t, *elem), Ok(BufferStorage::Typed { .. })) {
                        return self.err(
                            i,
                            "atomic",
                            format!(
                                "atomic on `buffer<{}>`, whose layout needs the word ABI; atomics need typed storage",
                                type_name(t, *elem)
                            ),
                        );
                    }
                }
            }
            AtomicSpace::Shared => {}
        }
        let ty = d.ty;
        let bits = t.scalar_bits(ty);
        match t.get(ty) {
            Type::Int { .. } if bits == 32 || bits == 64 => {}
            // Lowered by the device's features (`plan/float_atomics.rs`), or refused there.
            Type::Float(_) if matches!(bits, 16 | 32 | 64) && float_op(d.opcode).is_some() => {}
            _ => self.err(
                i,
                "atomic",
                format!(
                    "`{}` on `{}`: supported atomics are 32/64-bit integer operations and float exchange, compare-exchange, add/sub, min and max",
                    d.opcode,
                    type_name(t, ty)
                ),
            ),
        }
    }

    /// Warp operations: only what a `GroupNonUniform*` instruction computes
    /// exactly as the interpreter does (docs/vulkan.md, "Subgroups").
    fn check_warp(&mut self, i: xir::Inst) {
        let (m, f) = (self.m, self.f);
        let t = &m.types;
        let d = f.inst(i);
        let op = d.opcode;
        let x = d.operands.first().map(|&v| f.value_type(m, v));
        let is_float = x.is_some_and(|x| t.is_float(t.scalar_of(x)));
        let is_vector = x.is_some_and(|x| matches!(t.get(x), Type::Vector { .. }));
        let name = |ty: TypeId| type_name(t, ty);
        match op {
            _ if is_float && crate::plan::warp_fold::is_fold(op) && !crate::plan::warp_fold::is_f32_fold(m, f, i) => {
                self.err(i, "warp", format!("`{op}` on `{}`: float reductions and scans compile for `f32` only (a loop over the lanes in XIR's lane order, or with fast math the group instruction); the emitter widens f16 and FP8 arithmetic, and f64's rounding is not modelled", name(d.ty)))
            }
            Opcode::WarpActiveCountBits | Opcode::WarpActiveAll | Opcode::WarpActiveAny if is_vector => self.err(
                i,
                "warp",
                format!("`{op}` of a bool vector: the subgroup vote and ballot instructions take one `bool` per lane"),
            ),
            Opcode::WarpReadLane | Opcode::WarpReadFirstActiveLane
                if x.is_some_and(|x| !t.is_scalar(x) && !is_vector) =>
            {
                self.err(i, "warp", format!("`{op}` of `{}`: OpGroupNonUniformShuffle / BroadcastFirst take scalars and vectors only; read the members one by one", name(x.unwrap_or(d.ty))))
            }
            _ => {}
        }
        let u32_result = d.ty == xir::TypeTable::U32;
        match op {
            Opcode::WarpActiveCountBits | Opcode::WarpPrefixCountBits if !u32_result => self.err(
                i,
                "warp",
                format!("`{op}` with result `{}`: OpGroupNonUniformBallotBitCount counts in a `u32`; cast the count", name(d.ty)),
            ),
            Opcode::WarpActiveBitMask
                if !u32_result && !matches!(t.get(d.ty), Type::Vector { elem, lanes: 4 } if *elem == xir::TypeTable::U32) =>
            {
                self.err(i, "warp", format!("`{op}` with result `{}`: a ballot is a `vec<u32, 4>` (lane k is bit k % 32 of word k / 32), or its first word as a `u32`", name(d.ty)))
            }
            _ => {}
        }
    }

    fn check_call(&mut self, i: xir::Inst) {
        let (m, f) = (self.m, self.f);
        let d = f.inst(i);
        let Some(Value::Func(g)) = d.operands.first().copied() else { return };
        let callee = m.func(g);
        for (k, &a) in d.operands[1..].iter().enumerate() {
            let Some(formal) = callee.args.get(k) else { continue };
            match formal.kind {
                ArgKind::Resource => self.err(i, "call", format!("argument {k} of @{} is a resource: run `callable_specialization` to inline this call site", callee.name)),
                ArgKind::Reference if atomic_space(f, a) == AtomicSpace::Shared => self.err(i, "call", format!("argument {k} of @{} points to shared memory: run `callable_specialization` to inline this call site", callee.name)),
                _ => {}
            }
        }
    }
}
