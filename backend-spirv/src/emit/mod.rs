//! Emission: turns the checked module and the frozen plans into a SPIR-V
//! module with rspirv. One [`Emitter`] holds the builder and the module-level
//! caches; the submodules add `impl Emitter` blocks by concern:
//! `types` (logical and laid-out types), `constants` (exact-bit constants),
//! `globals` (descriptors, push constants, builtins, shared memory),
//! `function` (functions and structured control flow from the plan),
//! `instructions` (dispatch, memory, aggregates, casts, calls), `arith`
//! (arithmetic, GLSL.std.450 math, matrices, contraction), `atomics`,
//! `print` (debug printf and the printer records), `bindless` (the buffer
//! heap, bindless metadata and `NonUniform`), `sampling` (the sampler and
//! texture heaps, bindless texture reads, sizes and samples), `bytes` (byte-buffer access at
//! alignment 1, masked CAS stores), `constant_ubo` (placed array constants
//! read from the constant-data uniform block), `subgroup` (warp operations as
//! `OpGroupNonUniform*`), `debug` (`-g`: `OpString` / `OpSource` / `OpLine`
//! from `!loc`, `OpName`s from XIR names).
//!
//! **Invariant:** the emitter never repairs: every input it cannot lower
//! exactly was rejected by the handoff or a plan, so an unexpected shape here
//! is an internal error (`EmitError`), reported as a diagnostic.

mod arith;
mod atomics;
mod bindless;
pub(crate) mod bytes;
mod constant_ubo;
pub(crate) mod constants;
mod debug;
mod fp8;
mod function;
mod globals;
mod instructions;
mod memory;
mod narrow_caps;
pub mod print;
pub(crate) mod ray_query;
mod sampling;
mod subgroup;
mod subword;
mod texture;
mod types;

use std::collections::BTreeSet;

use rspirv::dr::{Builder, Instruction, Operand};
use rspirv::spirv::{self, Capability, Word};
use rustc_hash::FxHashMap;
use xir::{Const, FuncId, Inst, Module, TypeId, Value};

use crate::handoff::HandedOff;
use crate::plan::Plans;
use crate::CompileOptions;

pub use types::{ScalarKind, Shape};

/// An internal emission failure (a plan or handoff gap), with its location.
#[derive(Debug, Clone)]
pub struct EmitError {
    pub func: Option<FuncId>,
    pub inst: Option<Inst>,
    pub message: String,
}

pub type EResult<T> = Result<T, EmitError>;

pub(crate) fn err<T>(message: impl Into<String>) -> EResult<T> {
    Err(EmitError { func: None, inst: None, message: message.into() })
}

/// Per-function emission state.
#[derive(Default)]
pub(crate) struct FnState {
    pub func: Option<FuncId>,
    /// SPIR-V ids of instruction results (preallocated for the whole function).
    pub values: FxHashMap<Inst, Word>,
    /// Argument values: parameters or push-constant loads.
    pub args: FxHashMap<u32, Word>,
    /// Storage class of pointer values (lvalues), by SPIR-V id.
    pub ptr_class: FxHashMap<Word, spirv::StorageClass>,
    /// Ids that are memory object declarations (variables, pointer parameters).
    pub mem_objects: rustc_hash::FxHashSet<Word>,
    /// Function-storage variables to place at the top of the first block.
    pub locals: Vec<Instruction>,
    /// Labels of the physical blocks of the plan.
    pub labels: Vec<Word>,
    /// Forwarding Phi result ids.
    pub forwards: Vec<Word>,
    /// Multiplies whose emission is folded into an FMA (fast math).
    pub fused_mul: rustc_hash::FxHashSet<Inst>,
    /// The add that consumes each fused multiply.
    pub fma_of: FxHashMap<Inst, Inst>,
    /// The `OpLine` in force (debug info only).
    pub line: debug::LineInForce,
}

pub struct Emitter<'a> {
    pub(crate) m: &'a Module,
    pub(crate) b: Builder,
    pub(crate) opts: &'a CompileOptions,
    pub(crate) plans: &'a Plans,
    pub(crate) glsl: Word,
    pub(crate) caps: BTreeSet<u32>,
    pub(crate) exts: BTreeSet<&'static str>,
    pub(crate) logical: FxHashMap<TypeId, Word>,
    pub(crate) storage: FxHashMap<TypeId, Word>,
    pub(crate) consts: FxHashMap<(Word, u64), Word>,
    pub(crate) composites: FxHashMap<Const, Word>,
    pub(crate) splats: FxHashMap<(Word, Vec<Word>), Word>,
    pub(crate) undefs: FxHashMap<Word, Word>,
    pub(crate) func_ids: FxHashMap<FuncId, Word>,
    pub(crate) globals: globals::Globals,
    pub(crate) ray: ray_query::RayState,
    pub(crate) bindless: bindless::BindlessState,
    pub(crate) sampling: sampling::SamplingState,
    pub(crate) ubo: constant_ubo::UboState,
    pub(crate) fs: FnState,
    pub(crate) debug: debug::DebugState,
    /// Set while one volatile buffer access is lowered: every `OpLoad` /
    /// `OpStore` appended then gets the `Volatile` memory operand (the
    /// lowering's loads and stores all touch the buffer's element words).
    pub(crate) volatile: bool,
}

impl<'a> Emitter<'a> {
    /// An emitter for a handed-off kernel (emission takes nothing else).
    pub fn new(handed: &HandedOff<'a>, opts: &'a CompileOptions, plans: &'a Plans) -> Self {
        let m = handed.module();
        let mut b = Builder::new();
        b.set_version(1, 5);
        b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::GLSL450);
        let glsl = b.ext_inst_import("GLSL.std.450");
        let mut e = Emitter {
            m,
            b,
            opts,
            plans,
            glsl,
            caps: BTreeSet::new(),
            exts: BTreeSet::new(),
            logical: FxHashMap::default(),
            storage: FxHashMap::default(),
            consts: FxHashMap::default(),
            composites: FxHashMap::default(),
            splats: FxHashMap::default(),
            undefs: FxHashMap::default(),
            func_ids: FxHashMap::default(),
            globals: globals::Globals::default(),
            ray: ray_query::RayState::default(),
            bindless: bindless::BindlessState::default(),
            sampling: sampling::SamplingState::default(),
            ubo: constant_ubo::UboState::default(),
            fs: FnState::default(),
            debug: debug::DebugState::default(),
            volatile: false,
        };
        e.cap(Capability::Shader);
        e
    }

    pub(crate) fn cap(&mut self, c: Capability) {
        self.caps.insert(c as u32);
    }

    /// Emit the whole module for the planned kernel and return its words.
    pub fn run(mut self) -> EResult<Vec<u32>> {
        use rspirv::binary::Assemble;
        self.declare_debug_sources();
        self.declare_globals()?;
        self.declare_accels()?;
        self.declare_bindless()?;
        self.declare_sampling()?;
        self.declare_constant_ubo()?;
        for &fid in &self.plans.callgraph.order {
            let id = self.b.id();
            self.func_ids.insert(fid, id);
        }
        for &fid in &self.plans.callgraph.order {
            self.emit_function(fid).map_err(|mut e| {
                e.func.get_or_insert(fid);
                e
            })?;
        }
        self.emit_main()?;
        let narrow = narrow_caps::required(self.b.module_ref(), &self.caps);
        self.caps.extend(narrow);
        for c in std::mem::take(&mut self.caps) {
            let cap: Capability = Capability::from_u32(c).expect("capability recorded from the enum");
            self.b.capability(cap);
        }
        for x in std::mem::take(&mut self.exts) {
            self.b.extension(x);
        }
        Ok(self.b.module().assemble())
    }

    /// Append one instruction to the current block; returns its result id.
    pub(crate) fn op(
        &mut self,
        op: spirv::Op,
        ty: Option<Word>,
        id: Option<Word>,
        mut operands: Vec<Operand>,
    ) -> EResult<Word> {
        if self.volatile && matches!(op, spirv::Op::Load | spirv::Op::Store) {
            operands.push(Operand::MemoryAccess(spirv::MemoryAccess::VOLATILE));
        }
        let rid = match (ty, id) {
            (Some(_), Some(i)) => Some(i),
            (Some(_), None) => Some(self.b.id()),
            (None, _) => None,
        };
        let inst = Instruction::new(op, ty, rid, operands);
        self.b.insert_into_block(rspirv::dr::InsertPoint::End, inst).map_err(|e| EmitError {
            func: None,
            inst: None,
            message: format!("rspirv: {e:?}"),
        })?;
        Ok(rid.unwrap_or(0))
    }

    /// A GLSL.std.450 extended instruction.
    pub(crate) fn glsl(
        &mut self,
        ty: Word,
        id: Option<Word>,
        inst: spirv::GlslStd450Op,
        args: &[Word],
    ) -> EResult<Word> {
        let set = self.glsl;
        let mut ops = vec![Operand::IdRef(set), Operand::LiteralExtInstInteger(inst as u32)];
        ops.extend(args.iter().map(|&a| Operand::IdRef(a)));
        self.op(spirv::Op::ExtInst, Some(ty), id, ops)
    }

    pub(crate) fn decorate(&mut self, id: Word, d: spirv::Decoration, lits: &[u32]) {
        self.b.decorate(id, d, lits.iter().map(|&l| Operand::LiteralBit32(l)));
    }

    /// The SPIR-V id of an operand value.
    pub(crate) fn val(&mut self, v: Value) -> EResult<Word> {
        match v {
            Value::Inst(i) => match self.fs.values.get(&i) {
                Some(&w) => Ok(w),
                None => err(format!("value {i} has no SPIR-V id (not planned)")),
            },
            Value::Arg(a) => match self.fs.args.get(&a) {
                Some(&w) => Ok(w),
                None => err(format!("argument {a} is not a value in this function")),
            },
            Value::Const(c) => self.constant_value(c),
            Value::Undef(t) => {
                let ty = self.ty(t)?;
                Ok(self.undef(ty))
            }
            Value::Reg(r) => self.register(r),
            Value::Func(_) => err("a function is not a value"),
        }
    }

    pub(crate) fn undef(&mut self, ty: Word) -> Word {
        if let Some(&u) = self.undefs.get(&ty) {
            return u;
        }
        let id = self.b.id();
        self.b.module_mut().types_global_values.push(Instruction::new(spirv::Op::Undef, Some(ty), Some(id), vec![]));
        self.undefs.insert(ty, id);
        id
    }

    /// XIR type of a value in the current function.
    pub(crate) fn vty(&self, v: Value) -> TypeId {
        let f = self.m.func(self.fs.func.expect("inside a function"));
        f.value_type(self.m, v)
    }
}
