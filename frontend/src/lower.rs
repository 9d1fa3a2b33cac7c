//! A validated naga module becomes a kernel AST: one kernel per compute
//! entry point, one callable per other function.
//!
//! **Bindings.** Every storage and uniform global is a parameter of every
//! kernel, in (group, binding) order, named by the shader's variable: a
//! storage buffer is a `buffer<T>` (`array<T>`, a struct wrapping one
//! runtime array, `array<T, N>`, or a single `T` as a one-element buffer;
//! a struct with members beside its runtime array a buffer per member,
//! `NAME.member`);
//! a uniform buffer is a value parameter. Workgroup variables are shared
//! variables, private ones locals of the kernel; a helper function that
//! uses globals receives them as extra trailing parameters (resources,
//! values, or references to the caller's storage).
//!
//! **Evaluation order.** naga's expressions are a DAG evaluated at their
//! `Emit`. An expression used more than once, or named by `let`, becomes a
//! local assigned where it is emitted; a single-use expression that reads
//! memory stays inline only until the next statement with an effect, and
//! is then assigned to a local, so it reads memory when naga says it does.
//!
//! **WGSL's defined behaviours** (kept as naga's SPIR-V backend keeps them):
//! integer `/` and `%` by zero, and `MIN / -1`, divide by 1 instead (so
//! `x / 0 == x`, `x % 0 == 0`); shift amounts are masked to the width;
//! float-to-int conversion clamps to the integer's range first; indices
//! follow naga's `Restrict` bounds-check policy: an index into an array,
//! vector or matrix of length `n` becomes `min(u32(index), n - 1)`, into a
//! runtime-sized buffer `min(u32(index), arrayLength - 1)`; workgroup
//! variables are zeroed by thread (0, 0, 0) before a barrier at kernel
//! entry. Everything else naga can express and XIR cannot (textures other
//! than the ones listed, samplers, `subgroupBarrier`, ray-query operations,
//! fragment-only operations) is
//! refused with the construct's location.

use std::collections::BTreeMap;

use naga::{
    AddressSpace, ArraySize, BinaryOperator, Expression, Handle, Literal, MathFunction, RelationalFunction, ScalarKind,
    Statement, TypeInner,
};
use rustc_hash::{FxHashMap, FxHashSet};
use xir::ir::{ArgKind, FloatFormat, Span, Type, TypeId, TypeTable};
use xir_ast::*;
use xir_spec::{Opcode, SpecialRegister};

mod float_parts;
mod matrix;
mod packing;
mod subgroup;

/// A construct that cannot be translated, at a naga span.
#[derive(Debug, Clone)]
pub struct LowerError {
    pub message: String,
    pub span: naga::Span,
}

type R<T> = Result<T, LowerError>;

/// The longest storage array read as a whole value (one read per element).
const MAX_WHOLE_ARRAY: u32 = 256;

/// The most scalars of a zero constant: a variable without an initializer
/// (a local, a private, or workgroup memory, which WGSL zeroes) is zeroed
/// by one constant of its whole value, element by element (a 16 MiB
/// workgroup array of `f32` is at the limit; the largest device's shared
/// memory is 228 KiB).
pub const MAX_ZERO_SCALARS: u64 = 1 << 22;

/// The most structs of one member a binding may sit inside ([`Lowering::peel`]);
/// a whole load rebuilds each.
pub const MAX_WRAPPERS: u8 = 16;

fn unsupported<T>(span: naga::Span, message: impl Into<String>) -> R<T> {
    Err(LowerError { message: message.into(), span })
}

/// How a global reaches a function.
#[derive(Clone, Debug, PartialEq, Eq)]
enum GlobalKind {
    /// A storage buffer: one `buffer<T>`.
    Buffer(BufferKind),
    /// A storage buffer whose struct has members beside its trailing
    /// runtime array (`struct Matrix { size: vec2f, numbers: array<f32> }`):
    /// XIR buffers hold one element type, so each member is a buffer of its
    /// own, a parameter named `NAME.member` (a member that is not an array
    /// is a one-element buffer). The foreign runner takes such a block member
    /// by member under the same keys, so inputs are shared with naga's module.
    Members(Vec<(String, BufferKind)>),
    /// A uniform buffer (or push-constant block), a value parameter:
    /// the value inside `wrappers` structs of one member ([`Lowering::peel`]).
    Uniform {
        ty: TypeId,
        wrappers: u8,
    },
    Workgroup(TypeId),
    Private(TypeId),
    /// A 2D or 3D RGBA32 storage texture: `texture2d<T>` / `texture3d<T>`.
    Texture(TypeId),
}

/// How one `buffer<T>` holds a storage variable (or one member of it).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct BufferKind {
    elem: TypeId,
    /// How many structs of one member wrap the data ([`Lowering::peel`]):
    /// a place steps through member 0 of each to it.
    wrappers: u8,
    /// The length of an `array<T, N>`.
    fixed: Option<u32>,
    /// A non-array `T`, held as a one-element buffer.
    single: bool,
}

pub struct Lowering<'a, 'n> {
    arenas: &'a Arenas<'a>,
    module: &'n naga::Module,
    info: &'n naga::valid::ModuleInfo,
    /// Byte offset of each line's start, so a span's line and column cost a
    /// binary search (naga's `Span::location` rescans the source from its
    /// start, once per span: quadratic in the shader's size).
    line_starts: Vec<u32>,
    text_len: usize,
    ast: Module<'a>,
    types: FxHashMap<Handle<naga::Type>, TypeId>,
    globals: BTreeMap<Handle<naga::GlobalVariable>, GlobalKind>,
    /// Globals each naga function uses, directly or through calls.
    uses: FxHashMap<Handle<naga::Function>, Vec<Handle<naga::GlobalVariable>>>,
    funcs: FxHashMap<Handle<naga::Function>, FuncRef>,
}

impl<'a, 'n> Lowering<'a, 'n> {
    pub fn new(
        arenas: &'a Arenas<'a>,
        module: &'n naga::Module,
        info: &'n naga::valid::ModuleInfo,
        source: &'n str,
    ) -> Self {
        Lowering {
            arenas,
            module,
            info,
            line_starts: std::iter::once(0)
                .chain(source.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i as u32 + 1))
                .collect(),
            text_len: source.len(),
            ast: Module::new(),
            types: FxHashMap::default(),
            globals: BTreeMap::new(),
            uses: FxHashMap::default(),
            funcs: FxHashMap::default(),
        }
    }

    pub fn span(&self, s: naga::Span) -> Option<Span> {
        if !s.is_defined() {
            return None;
        }
        // As `naga::Span::location`: 1-based line, 1-based byte column; a
        // span past the text (a SPIR-V module has none) locates nothing.
        let range = s.to_range()?;
        if range.end > self.text_len {
            return None;
        }
        let (start, end) = (range.start as u32, range.end as u32);
        let line = self.line_starts.partition_point(|&l| l <= start);
        let column = start - self.line_starts[line - 1] + 1;
        Some(Span::with_len(line as u32, column, end - start))
    }

    /// Translate the whole module.
    pub fn lower(mut self) -> R<Module<'a>> {
        self.classify_globals()?;
        // Helper functions in naga's order: callees come before callers.
        for (h, _) in self.module.functions.iter() {
            self.uses.insert(h, used_globals(self.module, &self.info[h]));
        }
        for (h, f) in self.module.functions.iter() {
            let r = self.function(FnSource::Helper(h), f)?;
            self.funcs.insert(h, r);
        }
        let mut kernels = 0;
        for (i, ep) in self.module.entry_points.iter().enumerate() {
            if ep.stage != naga::ShaderStage::Compute {
                continue;
            }
            kernels += 1;
            self.function(FnSource::Entry(i), &ep.function)?;
        }
        if kernels == 0 {
            return unsupported(naga::Span::default(), "the shader has no compute entry point");
        }
        Ok(self.ast)
    }

    // ---- types --------------------------------------------------------

    fn ty(&mut self, h: Handle<naga::Type>) -> R<TypeId> {
        if let Some(&t) = self.types.get(&h) {
            return Ok(t);
        }
        let span = self.module.types.get_span(h);
        let inner = &self.module.types[h].inner;
        let t = self.inner(inner, span)?;
        self.types.insert(h, t);
        Ok(t)
    }

    fn scalar(&mut self, s: naga::Scalar, span: naga::Span) -> R<TypeId> {
        let t = &mut self.ast.types;
        Ok(match (s.kind, s.width) {
            (ScalarKind::Bool, _) => TypeTable::BOOL,
            (ScalarKind::Sint, w @ (1 | 2 | 4 | 8)) => t.int(w * 8, true),
            (ScalarKind::Uint, w @ (1 | 2 | 4 | 8)) => t.int(w * 8, false),
            (ScalarKind::Float, 2) => t.float(FloatFormat::F16),
            (ScalarKind::Float, 4) => TypeTable::F32,
            (ScalarKind::Float, 8) => t.float(FloatFormat::F64),
            _ => return unsupported(span, format!("scalar type {s:?}")),
        })
    }

    fn inner(&mut self, inner: &TypeInner, span: naga::Span) -> R<TypeId> {
        Ok(match *inner {
            TypeInner::Scalar(s) | TypeInner::Atomic(s) => self.scalar(s, span)?,
            TypeInner::Vector { size, scalar } => {
                let e = self.scalar(scalar, span)?;
                self.ast.types.vector(e, size as u8)
            }
            TypeInner::Matrix { columns, rows, scalar } => {
                let e = self.scalar(scalar, span)?;
                if columns == rows {
                    self.ast.types.matrix(e, columns as u8)
                } else {
                    // XIR matrices are square: a non-square one is its columns (lower/matrix.rs).
                    let column = self.ast.types.vector(e, rows as u8);
                    self.ast.types.array(column, columns as u64)
                }
            }
            TypeInner::Array { base, size: ArraySize::Constant(n), .. } => {
                let e = self.ty(base)?;
                self.ast.types.array(e, n.get() as u64)
            }
            TypeInner::Array { size: ArraySize::Dynamic, .. } => {
                return unsupported(span, "a runtime-sized array outside a storage buffer")
            }
            TypeInner::Struct { ref members, .. } => {
                let mut fields = Vec::with_capacity(members.len());
                let mut align = 1u64;
                for m in members {
                    let t = self.ty(m.ty)?;
                    align = align.max(self.ast.types.size_align(t).1);
                    fields.push(t);
                }
                self.ast.types.intern(Type::Struct { fields, align: align as u32 })
            }
            TypeInner::Pointer { base, .. } => self.ty(base)?,
            TypeInner::Image { .. } => self.texture(inner, span, "texture")?,
            _ => return unsupported(span, format!("type {}", type_kind(inner))),
        })
    }

    // ---- globals ------------------------------------------------------

    fn classify_globals(&mut self) -> R<()> {
        for (h, g) in self.module.global_variables.iter() {
            let span = self.module.global_variables.get_span(h);
            let inner = &self.module.types[g.ty].inner;
            let kind = match g.space {
                AddressSpace::Storage { .. } => self.buffer_kind(g.ty, span)?,
                // A push-constant block (GLSL `layout(push_constant)`, naga's
                // `Immediate`) is a read-only value of the dispatch, as a
                // uniform is: a value parameter of the kernel.
                AddressSpace::Uniform | AddressSpace::Immediate => {
                    let (value, wrappers) = self.peel(g.ty, span)?;
                    GlobalKind::Uniform { ty: self.ty(value)?, wrappers }
                }
                AddressSpace::WorkGroup => GlobalKind::Workgroup(self.ty(g.ty)?),
                AddressSpace::Private => GlobalKind::Private(self.ty(g.ty)?),
                AddressSpace::Handle => GlobalKind::Texture(self.texture(inner, span, name_of(&g.name))?),
                other => return unsupported(span, format!("`{}`: address space {other:?}", name_of(&g.name))),
            };
            self.globals.insert(h, kind);
        }
        Ok(())
    }

    /// XIR's textures are 2D or 3D of 32-bit float, sint or uint texels,
    /// held as RGBA32: a storage texture of such a format, or a sampled
    /// texture (`texture_2d<f32>`), which a compute kernel reads texel by
    /// texel (`textureLoad`); the runners bind it as RGBA32 of its type.
    fn texture(&mut self, inner: &TypeInner, span: naga::Span, name: &str) -> R<TypeId> {
        use naga::{ImageClass, ImageDimension, ScalarKind, StorageFormat};
        let TypeInner::Image { dim, arrayed, class } = *inner else {
            return unsupported(
                span,
                format!("`{name}`: samplers (XIR samples only its bindless textures; `textureLoad` reads a texture without one)"),
            );
        };
        if arrayed {
            return unsupported(span, format!("`{name}`: texture arrays"));
        }
        let d = match dim {
            ImageDimension::D2 => 2,
            ImageDimension::D3 => 3,
            other => return unsupported(span, format!("`{name}`: a {other:?} texture (only 2D and 3D)")),
        };
        let elem = match class {
            ImageClass::Storage { format: StorageFormat::Rgba32Float, .. }
            | ImageClass::Sampled { kind: ScalarKind::Float, multi: false } => TypeTable::F32,
            ImageClass::Storage { format: StorageFormat::Rgba32Sint, .. }
            | ImageClass::Sampled { kind: ScalarKind::Sint, multi: false } => TypeTable::I32,
            ImageClass::Storage { format: StorageFormat::Rgba32Uint, .. }
            | ImageClass::Sampled { kind: ScalarKind::Uint, multi: false } => TypeTable::U32,
            ImageClass::Storage { format, .. } => {
                return unsupported(
                    span,
                    format!("`{name}`: texel format {format:?} (only rgba32float, rgba32sint, rgba32uint)"),
                )
            }
            ImageClass::Sampled { multi: true, .. } => {
                return unsupported(span, format!("`{name}`: multisampled textures"))
            }
            ImageClass::Sampled { .. } | ImageClass::Depth { .. } | ImageClass::External => {
                return unsupported(span, format!("`{name}`: depth and external textures"))
            }
        };
        Ok(self.ast.types.intern(Type::Texture { dim: d, elem }))
    }

    fn buffer_kind(&mut self, ty: Handle<naga::Type>, span: naga::Span) -> R<GlobalKind> {
        let types = &self.module.types;
        let (value, wrappers) = self.peel(ty, span)?;
        // WGSL and GLSL allow a runtime array only as the last member.
        if let TypeInner::Struct { members, .. } = &types[value].inner {
            let is_runtime_array =
                |m: &naga::StructMember| matches!(types[m.ty].inner, TypeInner::Array { size: ArraySize::Dynamic, .. });
            if wrappers == 0 && members.last().is_some_and(is_runtime_array) {
                let mut out = Vec::with_capacity(members.len());
                for (k, m) in members.iter().enumerate() {
                    let name = m.name.clone().unwrap_or_else(|| k.to_string());
                    out.push((name, self.array_buffer(&types[m.ty].inner, span)?));
                }
                return Ok(GlobalKind::Members(out));
            }
        }
        let kind = self.array_buffer(&types[value].inner, span)?;
        Ok(GlobalKind::Buffer(BufferKind { wrappers, ..kind }))
    }

    /// What a bound variable of type `ty` stands for, as the foreign runner
    /// reads a module's block (`codec::parts`): the value inside the
    /// structs of one member that wrap it, and how many there are. Peeling
    /// every such struct makes one reading of a binding whoever wrote the
    /// blocks: naga adds a block of its own around a WGSL variable's struct
    /// and around a GLSL block, glslang writes the GLSL block as it is.
    fn peel(&self, ty: Handle<naga::Type>, span: naga::Span) -> R<(Handle<naga::Type>, u8)> {
        let (mut ty, mut n) = (ty, 0);
        while let TypeInner::Struct { members, .. } = &self.module.types[ty].inner {
            if members.len() != 1 {
                break;
            }
            if n == MAX_WRAPPERS {
                return unsupported(span, format!("a binding inside more than {MAX_WRAPPERS} structs of one member"));
            }
            (ty, n) = (members[0].ty, n + 1);
        }
        Ok((ty, n))
    }

    /// The buffer holding a value of type `inner`: its elements when it is
    /// an array, else the value as the one element.
    fn array_buffer(&mut self, inner: &TypeInner, span: naga::Span) -> R<BufferKind> {
        let (elem, fixed, single) = match *inner {
            TypeInner::Array { base, size: ArraySize::Dynamic, .. } => (self.ty(base)?, None, false),
            TypeInner::Array { base, size: ArraySize::Constant(n), .. } => (self.ty(base)?, Some(n.get()), false),
            ref other => (self.inner(other, span)?, None, true),
        };
        Ok(BufferKind { elem, wrappers: 0, fixed, single })
    }

    /// `name`, or `name_N` when a function already has it (naga's GLSL
    /// front end calls both the entry point and its body `main`). A helper
    /// never takes an entry point's name, so a kernel keeps its shader name.
    fn unique_function_name(&self, name: String, is_entry: bool) -> String {
        let taken = |n: &str| {
            self.ast.functions.iter().any(|f| f.name == n)
                || (!is_entry && self.module.entry_points.iter().any(|e| e.name == n))
        };
        if !taken(&name) {
            return name;
        }
        (1..).map(|i| format!("{name}_{i}")).find(|n| !taken(n)).expect("an unused name exists")
    }

    fn single_member_name(&self, ty: Handle<naga::Type>) -> Option<&'n str> {
        match &self.module.types[ty].inner {
            TypeInner::Struct { members, .. } if members.len() == 1 => members[0].name.as_deref(),
            _ => None,
        }
    }

    /// The kernel parameters: storage and uniform globals in binding order.
    fn binding_globals(&self) -> Vec<Handle<naga::GlobalVariable>> {
        let mut out: Vec<_> = self
            .globals
            .iter()
            .filter(|(_, k)| {
                matches!(
                    k,
                    GlobalKind::Buffer(_)
                        | GlobalKind::Members(_)
                        | GlobalKind::Uniform { .. }
                        | GlobalKind::Texture(_)
                )
            })
            .map(|(h, _)| *h)
            .collect();
        out.sort_by_key(|h| {
            let b = self.module.global_variables[*h].binding.as_ref();
            (b.map(|b| (b.group, b.binding)), h.index())
        });
        out
    }

    fn global_name(&self, h: Handle<naga::GlobalVariable>) -> String {
        let g = &self.module.global_variables[h];
        // glslang names a GLSL block without an instance name `""`.
        if let Some(n) = g.name.as_ref().filter(|n| !n.is_empty()) {
            return n.clone();
        }
        // A GLSL block without an instance name: its single member's name.
        if let Some(n) = self.single_member_name(g.ty) {
            return xir::interp::block_member_key(n);
        }
        // One of several members: the block's name (`uniform Params { .. };`
        // is `Params`), as the foreign-SPIR-V runner names it too.
        if let Some(n) = self.module.types[g.ty].name.as_ref().filter(|n| !n.is_empty()) {
            return n.clone();
        }
        // Nothing names it (a SPIR-V module without debug names): its
        // binding, as the foreign runner keys it.
        match &g.binding {
            Some(b) => format!("set{}.binding{}", b.group, b.binding),
            None => format!("global{}", h.index()),
        }
    }

    // ---- functions ----------------------------------------------------

    fn function(&mut self, src: FnSource, f: &'n naga::Function) -> R<FuncRef> {
        let (name, kind, info) = match src {
            FnSource::Entry(i) => {
                let ep = &self.module.entry_points[i];
                (
                    ep.name.clone(),
                    FunctionKind::Kernel { block_size: ep.workgroup_size, whole_blocks: true, noalias: true },
                    self.info.get_entry_point(i),
                )
            }
            FnSource::Helper(h) => (name_of(&f.name).to_string(), FunctionKind::Callable, &self.info[h]),
        };
        let fspan = match src {
            FnSource::Entry(_) => naga::Span::default(),
            FnSource::Helper(h) => self.module.functions.get_span(h),
        };
        let ret = match &f.result {
            Some(r) if matches!(src, FnSource::Helper(_)) => self.ty(r.ty)?,
            Some(_) => return unsupported(fspan, format!("entry point `{name}` returns a value")),
            None => TypeTable::VOID,
        };
        let name = self.unique_function_name(name, matches!(src, FnSource::Entry(_)));
        let mut af = Function::new(name.clone(), kind, ret);
        af.span = self.span(fspan);
        let mut args = Vec::new();
        for (i, a) in f.arguments.iter().enumerate() {
            match src {
                FnSource::Entry(_) => {
                    let reg = match &a.binding {
                        Some(naga::Binding::BuiltIn(b)) => builtin_value(*b),
                        _ => None,
                    };
                    let Some(reg) = reg else {
                        let what = match &a.binding {
                            Some(naga::Binding::BuiltIn(b)) => format!("built-in {b:?}"),
                            Some(naga::Binding::Location { location, .. }) => format!("location {location}"),
                            None => "no binding".to_string(),
                        };
                        return unsupported(
                            fspan,
                            format!("entry argument {i} of `{name}` ({what}): only compute built-ins"),
                        );
                    };
                    args.push(Arg::Builtin(reg));
                }
                FnSource::Helper(_) => {
                    let inner = &self.module.types[a.ty].inner;
                    let kind = match inner {
                        TypeInner::Pointer {
                            space: AddressSpace::Function | AddressSpace::Private | AddressSpace::WorkGroup,
                            ..
                        } => ArgKind::Reference,
                        TypeInner::Pointer { space, .. } => {
                            return unsupported(fspan, format!("a pointer argument in address space {space:?}"))
                        }
                        _ => ArgKind::Value,
                    };
                    let t = self.ty(a.ty)?;
                    let v = af.add_param(name_of(&a.name), t, kind);
                    args.push(Arg::Var(v));
                }
            }
        }
        // Globals: kernels see every binding and the workgroup / private
        // variables they use; helpers get what they use as parameters.
        let mut globals = FxHashMap::default();
        let mut members = FxHashMap::default();
        let params = match src {
            FnSource::Entry(_) => self.binding_globals(),
            FnSource::Helper(h) => self.uses[&h].clone(),
        };
        for g in params {
            let (t, k) = match self.globals[&g] {
                GlobalKind::Buffer(b) => (self.ast.types.buffer(b.elem), ArgKind::Resource),
                GlobalKind::Members(ref ms) => {
                    let ms = ms.clone();
                    let name = self.global_name(g);
                    let vars = ms
                        .iter()
                        .map(|(m, b)| {
                            let t = self.ast.types.buffer(b.elem);
                            af.add_param(format!("{name}.{m}"), t, ArgKind::Resource)
                        })
                        .collect();
                    members.insert(g, vars);
                    continue;
                }
                GlobalKind::Uniform { ty: t, .. } => (t, ArgKind::Value),
                GlobalKind::Texture(t) => (t, ArgKind::Resource),
                // Only a helper gets these as parameters (a kernel's own are variables, below).
                GlobalKind::Workgroup(t) | GlobalKind::Private(t) => (t, ArgKind::Reference),
            };
            let v = af.add_param(self.global_name(g), t, k);
            globals.insert(g, v);
        }
        if let FnSource::Entry(_) = src {
            for g in used_globals(self.module, info) {
                let (ty, kind) = match self.globals[&g] {
                    GlobalKind::Workgroup(t) => (t, VarKind::Shared),
                    GlobalKind::Private(t) => (t, VarKind::Local),
                    _ => continue,
                };
                let name = self.global_name(g);
                let span = self.span(self.module.global_variables.get_span(g));
                globals.insert(g, af.add_var(Variable { name, ty, kind, span }));
            }
        }
        let mut cx = FnCx {
            lw: self,
            f,
            info,
            af,
            args,
            globals,
            members,
            locals: FxHashMap::default(),
            exprs: FxHashMap::default(),
            pending: Vec::new(),
            temp_names: 0,
        };
        let mut prologue = Vec::new();
        cx.prologue(matches!(src, FnSource::Entry(_)), &mut prologue)?;
        let mut body = cx.block(&f.body)?;
        if f.result.is_none() {
            drop_tail_returns(cx.ar(), &mut body);
        }
        prologue.append(&mut body);
        let mut af = cx.af;
        af.body = prologue;
        Ok(self.ast.add_function(af))
    }
}

/// naga's front ends end every path through a function with a `return`
/// (`naga::proc::ensure_block_returns`), so a trailing `if` or `switch` gets
/// one at the end of each arm. In a void function such a `return` only falls
/// off the end; kept, the kernel has a return inside a selection, which
/// SPIRV-Tools' merge-return pass wraps in a one-case `switch` at -O1 and
/// up (three instructions and a block). Dropped, every arm runs on to the
/// function's one final `return`; an `else` arm left empty is no arm.
fn drop_tail_returns<'a>(ar: &'a Arenas<'a>, scope: &mut Scope<'a>) {
    let Some(&last) = scope.last() else { return };
    let kind = match &last.kind {
        StmtKind::Return(None) => {
            scope.pop();
            return;
        }
        StmtKind::Scope(inner) => {
            let mut inner = inner.clone();
            drop_tail_returns(ar, &mut inner);
            StmtKind::Scope(inner)
        }
        StmtKind::If { cond, then_body, else_body } => {
            let mut then_body = then_body.clone();
            drop_tail_returns(ar, &mut then_body);
            let else_body = else_body.clone().and_then(|mut e| {
                drop_tail_returns(ar, &mut e);
                (!e.is_empty()).then_some(e)
            });
            StmtKind::If { cond, then_body, else_body }
        }
        StmtKind::Switch { value, cases } => {
            let mut cases = cases.clone();
            for c in &mut cases {
                drop_tail_returns(ar, &mut c.body);
            }
            StmtKind::Switch { value, cases }
        }
        _ => return,
    };
    *scope.last_mut().expect("checked above") = ar.stmt(kind, last.span);
}

#[derive(Copy, Clone)]
enum FnSource {
    Entry(usize),
    Helper(Handle<naga::Function>),
}

#[derive(Copy, Clone)]
enum Arg {
    Var(VarId),
    Builtin(BuiltinValue),
}

/// A compute built-in, as registers.
#[derive(Copy, Clone, Debug)]
enum BuiltinValue {
    Reg(SpecialRegister),
    /// `num_workgroups`: dispatch size / block size.
    NumWorkgroups,
    /// `local_invocation_index`: the thread's linear index in its block.
    LocalIndex,
}

fn builtin_value(b: naga::BuiltIn) -> Option<BuiltinValue> {
    use naga::BuiltIn as B;
    Some(match b {
        B::GlobalInvocationId => BuiltinValue::Reg(SpecialRegister::DispatchId),
        B::LocalInvocationId => BuiltinValue::Reg(SpecialRegister::ThreadId),
        B::WorkGroupId => BuiltinValue::Reg(SpecialRegister::BlockId),
        // GLSL's `gl_WorkGroupSize` (WGSL has no such built-in).
        B::WorkGroupSize => BuiltinValue::Reg(SpecialRegister::BlockSize),
        B::NumWorkGroups => BuiltinValue::NumWorkgroups,
        B::LocalInvocationIndex => BuiltinValue::LocalIndex,
        B::SubgroupSize => BuiltinValue::Reg(SpecialRegister::WarpSize),
        B::SubgroupInvocationId => BuiltinValue::Reg(SpecialRegister::WarpLaneId),
        B::SubgroupId => BuiltinValue::Reg(SpecialRegister::WarpId),
        B::NumSubgroups => BuiltinValue::Reg(SpecialRegister::WarpCount),
        _ => return None,
    })
}

fn name_of(n: &Option<String>) -> &str {
    n.as_deref().unwrap_or("")
}

fn type_kind(inner: &TypeInner) -> &'static str {
    match inner {
        TypeInner::Image { .. } => "image",
        TypeInner::Sampler { .. } => "sampler",
        TypeInner::AccelerationStructure { .. } => "acceleration structure",
        TypeInner::RayQuery { .. } => "ray query",
        TypeInner::BindingArray { .. } => "binding array",
        TypeInner::ValuePointer { .. } => "value pointer",
        TypeInner::CooperativeMatrix { .. } => "cooperative matrix",
        _ => "of this kind",
    }
}

/// Globals `f` refers to, with those of the helpers it calls.
/// The globals a function uses, its callees' included, in handle order:
/// naga's analysis records them (its GLSL front end puts an expression for
/// every global into every function, so the expressions do not tell).
fn used_globals(module: &naga::Module, info: &naga::valid::FunctionInfo) -> Vec<Handle<naga::GlobalVariable>> {
    module.global_variables.iter().map(|(g, _)| g).filter(|&g| !info[g].is_empty()).collect()
}

/// Where a naga pointer points: a global buffer element, or storage the
/// AST can name (a variable path).
enum Place<'a> {
    /// A storage buffer declared as a struct wrapping its one member
    /// ([`Lowering::peel`]): `kind` is the member's.
    BufferWrapper { buffer: VarId, kind: BufferKind },
    /// A storage struct held as a buffer per member ([`GlobalKind::Members`]).
    Members { global: Handle<naga::GlobalVariable> },
    /// A storage buffer's array, not yet indexed (`fixed`: its length when
    /// declared `array<T, N>`).
    BufferArray { buffer: VarId, fixed: Option<u32> },
    /// `buffer`'s element at `index`, then `path` inside the element.
    Buffer { buffer: VarId, index: ExprRef<'a>, path: Vec<PathStep<'a>> },
    /// An AST lvalue expression.
    Storage(ExprRef<'a>),
    /// A value that cannot be written (a uniform), as an rvalue.
    Value(ExprRef<'a>),
    /// A uniform's value inside this many structs of one member (member 0
    /// of each leads to it).
    ValueWrapper(ExprRef<'a>, u8),
}

#[derive(Clone, Copy)]
enum PathStep<'a> {
    Member(u32, TypeId),
    Index(ExprRef<'a>, TypeId),
}

struct FnCx<'l, 'a, 'n> {
    lw: &'l mut Lowering<'a, 'n>,
    f: &'n naga::Function,
    info: &'n naga::valid::FunctionInfo,
    af: Function<'a>,
    args: Vec<Arg>,
    globals: FxHashMap<Handle<naga::GlobalVariable>, VarId>,
    /// The buffer of each member of a [`GlobalKind::Members`] global.
    members: FxHashMap<Handle<naga::GlobalVariable>, Vec<VarId>>,
    locals: FxHashMap<Handle<naga::LocalVariable>, VarId>,
    /// Translated expressions (trees, or a variable holding the value).
    exprs: FxHashMap<Handle<Expression>, ExprRef<'a>>,
    /// Single-use expressions that read memory and are not yet assigned.
    pending: Vec<Handle<Expression>>,
    temp_names: u32,
}

impl<'l, 'a, 'n> FnCx<'l, 'a, 'n> {
    fn ar(&self) -> &'a Arenas<'a> {
        self.lw.arenas
    }
    fn types(&mut self) -> &mut TypeTable {
        &mut self.lw.ast.types
    }
    fn espan(&self, h: Handle<Expression>) -> naga::Span {
        self.f.expressions.get_span(h)
    }
    fn mk(&self, ty: TypeId, kind: ExprKind<'a>, span: naga::Span) -> ExprRef<'a> {
        let s = self.lw.span(span);
        self.ar().expr(ty, kind, s)
    }
    fn st(&self, kind: StmtKind<'a>, span: naga::Span) -> StmtRef<'a> {
        let s = self.lw.span(span);
        self.ar().stmt(kind, s)
    }
    fn lit_u32(&self, v: u32) -> ExprRef<'a> {
        self.ar().expr(TypeTable::U32, ExprKind::Literal(v as u64), None)
    }
    fn builtin(&self, op: Opcode, ty: TypeId, args: Vec<ExprRef<'a>>, span: naga::Span) -> ExprRef<'a> {
        self.mk(ty, ExprKind::Call(Callee::Builtin(op), args), span)
    }
    fn var(&self, v: VarId) -> ExprRef<'a> {
        let ty = self.af.var(v).ty;
        self.ar().expr(ty, ExprKind::Var(v), None)
    }
    fn new_temp(&mut self, ty: TypeId, name: Option<&str>, span: naga::Span) -> VarId {
        let name = match name {
            Some(n) => n.to_string(),
            None => {
                self.temp_names += 1;
                format!("_t{}", self.temp_names)
            }
        };
        let span = self.lw.span(span);
        self.af.add_var(Variable { name, ty, kind: VarKind::Let, span })
    }

    /// `e` as an expression that may be read twice: itself when it is a
    /// variable or a literal, else a temporary bound to it.
    pub(super) fn bound(&mut self, e: ExprRef<'a>, span: naga::Span, out: &mut Scope<'a>) -> ExprRef<'a> {
        if matches!(e.kind, ExprKind::Var(_) | ExprKind::Literal(_)) {
            return e;
        }
        let v = self.new_temp(e.ty, None, span);
        out.push(self.st(StmtKind::Bind { var: v, value: e }, span));
        self.var(v)
    }

    /// Bind a statement's value (a call's, a subgroup operation's) to a
    /// temporary that stands for naga's result expression from here on.
    pub(super) fn bind_result(
        &mut self,
        value: ExprRef<'a>,
        result: Handle<Expression>,
        span: naga::Span,
        out: &mut Scope<'a>,
    ) {
        let v = self.new_temp(value.ty, None, span);
        out.push(self.st(StmtKind::Bind { var: v, value }, span));
        self.exprs.insert(result, self.var(v));
    }

    /// The type of naga expression `h`.
    fn expr_ty(&mut self, h: Handle<Expression>) -> R<TypeId> {
        let inner = self.info[h].ty.inner_with(&self.lw.module.types).clone();
        let span = self.espan(h);
        match inner {
            TypeInner::Pointer { base, .. } => self.lw.ty(base),
            TypeInner::ValuePointer { size: None, scalar, .. } => self.lw.scalar(scalar, span),
            TypeInner::ValuePointer { size: Some(n), scalar, .. } => {
                let e = self.lw.scalar(scalar, span)?;
                Ok(self.types().vector(e, n as u8))
            }
            ref other => self.lw.inner(other, span),
        }
    }

    fn is_pointer(&self, h: Handle<Expression>) -> bool {
        matches!(
            self.info[h].ty.inner_with(&self.lw.module.types),
            TypeInner::Pointer { .. } | TypeInner::ValuePointer { .. }
        )
    }

    /// Locals (zeroed or initialized) and, in a kernel, workgroup zeroing
    /// and private initial values.
    fn prologue(&mut self, is_kernel: bool, out: &mut Scope<'a>) -> R<()> {
        for (h, l) in self.f.local_variables.iter() {
            let span = self.f.local_variables.get_span(h);
            let ty = self.lw.ty(l.ty)?;
            let v = self.af.add_var(Variable {
                name: name_of(&l.name).to_string(),
                ty,
                kind: VarKind::Local,
                span: self.lw.span(span),
            });
            self.locals.insert(h, v);
            let init = match l.init {
                Some(e) => self.expr(e)?,
                None => self.zero(ty, span)?,
            };
            out.push(self.st(StmtKind::Assign { lhs: self.var(v), rhs: init }, span));
        }
        if !is_kernel {
            return Ok(());
        }
        let mut zero_shared = Vec::new();
        let globals: Vec<_> = self.globals.iter().map(|(g, v)| (*g, *v)).collect();
        for (g, v) in globals {
            let span = self.lw.module.global_variables.get_span(g);
            let ty = self.af.var(v).ty;
            match self.lw.globals[&g] {
                GlobalKind::Private(_) => {
                    let init = match self.lw.module.global_variables[g].init {
                        Some(e) => self.const_expr(e)?,
                        None => self.zero(ty, span)?,
                    };
                    out.push(self.st(StmtKind::Assign { lhs: self.var(v), rhs: init }, span));
                }
                GlobalKind::Workgroup(_) => {
                    let zero = self.zero(ty, span)?;
                    zero_shared.push(self.st(StmtKind::Assign { lhs: self.var(v), rhs: zero }, span));
                }
                _ => {}
            }
        }
        if !zero_shared.is_empty() {
            let v3 = self.types().vector(TypeTable::U32, 3);
            let tid = self.mk(v3, ExprKind::Register(SpecialRegister::ThreadId), naga::Span::default());
            let zero3 = self.mk(
                tid.ty,
                ExprKind::Constant(ConstantData::Composite(vec![ConstantData::Scalar(0); 3])),
                naga::Span::default(),
            );
            let bool3 = self.types().vector(TypeTable::BOOL, 3);
            let eq = self.mk(bool3, ExprKind::Binary(BinaryOp::Equal, tid, zero3), naga::Span::default());
            let all = self.builtin(Opcode::All, TypeTable::BOOL, vec![eq], naga::Span::default());
            out.push(
                self.st(StmtKind::If { cond: all, then_body: zero_shared, else_body: None }, naga::Span::default()),
            );
            let sync = self.builtin(Opcode::SyncBlock, TypeTable::VOID, Vec::new(), naga::Span::default());
            out.push(self.st(StmtKind::Expr(sync), naga::Span::default()));
        }
        Ok(())
    }

    fn zero(&mut self, ty: TypeId, span: naga::Span) -> R<ExprRef<'a>> {
        let scalars = scalar_count(self.types(), ty);
        if scalars > MAX_ZERO_SCALARS {
            return unsupported(
                span,
                format!(
                    "zeroing a value of {scalars} scalars (a variable is zeroed by a constant of that many; at most \
                     {MAX_ZERO_SCALARS})"
                ),
            );
        }
        let data = zero_data(self.types(), ty);
        Ok(match data {
            ConstantData::Scalar(b) => self.mk(ty, ExprKind::Literal(b), span),
            d => self.mk(ty, ExprKind::Constant(d), span),
        })
    }

    // ---- statements ---------------------------------------------------

    fn block(&mut self, b: &'n naga::Block) -> R<Scope<'a>> {
        let mut out = Vec::new();
        for (s, span) in b.span_iter() {
            self.stmt(s, *span, &mut out)?;
        }
        // naga scopes expressions to their block: a read still pending
        // here is never used, and is dropped unevaluated.
        self.pending.clear();
        Ok(out)
    }

    /// Assign every pending memory read to a local before an effect.
    fn flush(&mut self, out: &mut Scope<'a>) -> R<()> {
        for h in std::mem::take(&mut self.pending) {
            let e = self.exprs[&h];
            let span = self.espan(h);
            let v = self.new_temp(e.ty, None, span);
            out.push(self.st(StmtKind::Bind { var: v, value: e }, span));
            self.exprs.insert(h, self.var(v));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &'n Statement, span: naga::Span, out: &mut Scope<'a>) -> R<()> {
        match s {
            Statement::Emit(range) => {
                for h in range.clone() {
                    if self.is_pointer(h) {
                        continue; // places are translated where they are used
                    }
                    let e = self.expr(h)?;
                    let name = self.f.named_expressions.get(&h);
                    // A non-square matrix is read column by column (lower/matrix.rs): once, here.
                    if self.info[h].ref_count > 1 || name.is_some() || self.non_square(h).is_some() {
                        let v = self.new_temp(e.ty, name.map(|s| s.as_str()), self.espan(h));
                        // Reads inside `e` happen now.
                        self.pending.retain(|p| *p != h);
                        out.push(self.st(StmtKind::Bind { var: v, value: e }, self.espan(h)));
                        self.exprs.insert(h, self.var(v));
                    } else if self.reads_memory(h) {
                        self.pending.push(h);
                    }
                }
            }
            Statement::Block(b) => {
                self.flush(out)?;
                let body = self.block(b)?;
                out.push(self.st(StmtKind::Scope(body), span));
            }
            Statement::If { condition, accept, reject } => {
                let cond = self.expr(*condition)?;
                self.flush(out)?;
                let then_body = self.block(accept)?;
                let else_body = if reject.is_empty() { None } else { Some(self.block(reject)?) };
                out.push(self.st(StmtKind::If { cond, then_body, else_body }, span));
            }
            Statement::Switch { selector, cases } => {
                let value = self.expr(*selector)?;
                self.flush(out)?;
                let mut acases = Vec::new();
                let mut values = Vec::new();
                let mut is_default = false;
                for c in cases {
                    match c.value {
                        naga::SwitchValue::I32(v) => values.push(v as u32 as u64),
                        naga::SwitchValue::U32(v) => values.push(v as u64),
                        naga::SwitchValue::Default => is_default = true,
                    }
                    let ends = matches!(
                        c.body.last(),
                        Some(Statement::Return { .. } | Statement::Break | Statement::Continue | Statement::Kill)
                    );
                    if c.fall_through && !ends {
                        if !c.body.is_empty() {
                            return unsupported(span, "a switch case that falls through after statements");
                        }
                        continue;
                    }
                    let body = self.block(&c.body)?;
                    acases.push(SwitchCase { values: std::mem::take(&mut values), is_default, body });
                    is_default = false;
                }
                out.push(self.st(StmtKind::Switch { value, cases: acases }, span));
            }
            Statement::Loop { body, continuing, break_if } => {
                self.flush(out)?;
                let abody = self.block(body)?;
                if continuing.is_empty() && break_if.is_none() {
                    out.push(self.st(StmtKind::Loop { body: abody }, span));
                    return Ok(());
                }
                let mut update = self.block(continuing)?;
                let cond = match break_if {
                    None => self.mk(TypeTable::BOOL, ExprKind::Literal(1), span),
                    Some(c) => {
                        // `break if c`: the flag is set at the end of the
                        // update, and the loop condition reads it.
                        self.temp_names += 1;
                        let name = format!("_break{}", self.temp_names);
                        let brk = self.af.add_var(Variable {
                            name,
                            ty: TypeTable::BOOL,
                            kind: VarKind::Local,
                            span: self.lw.span(span),
                        });
                        let f = self.mk(TypeTable::BOOL, ExprKind::Literal(0), span);
                        out.push(self.st(StmtKind::Assign { lhs: self.var(brk), rhs: f }, span));
                        let c = self.expr(*c)?;
                        self.flush(&mut update)?;
                        update.push(self.st(StmtKind::Assign { lhs: self.var(brk), rhs: c }, span));
                        self.mk(TypeTable::BOOL, ExprKind::Unary(UnaryOp::Not, self.var(brk)), span)
                    }
                };
                out.push(self.st(StmtKind::For { cond, update, body: abody }, span));
            }
            Statement::Break => {
                self.flush(out)?;
                out.push(self.st(StmtKind::Break, span));
            }
            Statement::Continue => {
                self.flush(out)?;
                out.push(self.st(StmtKind::Continue, span));
            }
            Statement::Return { value } => {
                let v = value.map(|v| self.expr(v)).transpose()?;
                self.flush(out)?;
                out.push(self.st(StmtKind::Return(v), span));
            }
            Statement::ControlBarrier(flags) if *flags == naga::Barrier::SUB_GROUP => {
                // A block barrier in its place would hang (or be undefined)
                // where only some of the block's subgroups reach it.
                return unsupported(span, "`subgroupBarrier`: XIR has no subgroup barrier (a `workgroupBarrier` in uniform control flow orders more)");
            }
            Statement::ControlBarrier(_) => {
                // `sync_block` waits for the block and orders workgroup and
                // storage memory: every barrier flag naga sets (GLSL's
                // `barrier()` sets them all) over memory XIR has.
                self.flush(out)?;
                let sync = self.builtin(Opcode::SyncBlock, TypeTable::VOID, Vec::new(), span);
                out.push(self.st(StmtKind::Expr(sync), span));
            }
            Statement::Store { pointer, value } => {
                let v = self.expr(*value)?;
                let place = self.place(*pointer)?;
                self.flush(out)?;
                self.store_place(place, v, span, out)?;
            }
            Statement::Atomic { pointer, fun, value, result } => {
                let v = self.expr(*value)?;
                let op = match fun {
                    naga::AtomicFunction::Add => Opcode::AtomicFetchAdd,
                    naga::AtomicFunction::Subtract => Opcode::AtomicFetchSub,
                    naga::AtomicFunction::And => Opcode::AtomicFetchAnd,
                    naga::AtomicFunction::ExclusiveOr => Opcode::AtomicFetchXor,
                    naga::AtomicFunction::InclusiveOr => Opcode::AtomicFetchOr,
                    naga::AtomicFunction::Min => Opcode::AtomicFetchMin,
                    naga::AtomicFunction::Max => Opcode::AtomicFetchMax,
                    naga::AtomicFunction::Exchange { compare: None } => Opcode::AtomicExchange,
                    naga::AtomicFunction::Exchange { compare: Some(_) } => Opcode::AtomicCompareExchange,
                };
                let mut operands = Vec::new();
                let compare = match fun {
                    naga::AtomicFunction::Exchange { compare: Some(c) } => Some(self.expr(*c)?),
                    _ => None,
                };
                let (base, indices) = match self.place(*pointer)? {
                    Place::Buffer { buffer, index, path } => {
                        let mut idx = vec![index];
                        for p in path {
                            idx.push(match p {
                                PathStep::Member(i, _) => self.lit_u32(i),
                                PathStep::Index(e, _) => e,
                            });
                        }
                        (self.var(buffer), idx)
                    }
                    Place::Storage(e) => (e, Vec::new()),
                    _ => return unsupported(span, "an atomic on something other than an integer in storage"),
                };
                operands.push(base);
                match compare {
                    Some(c) => {
                        operands.push(c);
                        operands.push(v);
                    }
                    None => operands.push(v),
                }
                operands.extend(indices);
                self.flush(out)?;
                let scalar_ty = v.ty;
                let call = self.builtin(op, scalar_ty, operands, span);
                match result {
                    None => out.push(self.st(StmtKind::Expr(call), span)),
                    Some(r) => {
                        let old = self.new_temp(scalar_ty, None, span);
                        out.push(self.st(StmtKind::Bind { var: old, value: call }, span));
                        let value = match compare {
                            None => self.var(old),
                            Some(c) => {
                                // { old_value, exchanged }
                                let rty = self.expr_ty(*r)?;
                                let exchanged =
                                    self.mk(TypeTable::BOOL, ExprKind::Binary(BinaryOp::Equal, self.var(old), c), span);
                                self.builtin(Opcode::Aggregate, rty, vec![self.var(old), exchanged], span)
                            }
                        };
                        self.exprs.insert(*r, value);
                    }
                }
            }
            Statement::WorkGroupUniformLoad { pointer, result } => {
                self.flush(out)?;
                let sync = self.builtin(Opcode::SyncBlock, TypeTable::VOID, Vec::new(), span);
                out.push(self.st(StmtKind::Expr(sync), span));
                let value = self.load(*pointer, span)?;
                let v = self.new_temp(value.ty, None, span);
                out.push(self.st(StmtKind::Bind { var: v, value }, span));
                out.push(self.st(StmtKind::Expr(sync), span));
                self.exprs.insert(*result, self.var(v));
            }
            Statement::Call { function, arguments, result } => {
                let callee = self.lw.funcs[function];
                let target = &self.lw.module.functions[*function];
                let mut args = Vec::new();
                for (a, fa) in arguments.iter().zip(&target.arguments) {
                    if matches!(self.lw.module.types[fa.ty].inner, TypeInner::Pointer { .. }) {
                        match self.place(*a)? {
                            Place::Storage(e) => args.push(e),
                            _ => return unsupported(span, "a pointer argument to a buffer or uniform"),
                        }
                    } else {
                        args.push(self.expr(*a)?);
                    }
                }
                for g in self.lw.uses[function].clone() {
                    match self.members.get(&g) {
                        Some(vars) => args.extend(vars.iter().map(|&v| self.var(v))),
                        None => args.push(self.var(self.globals[&g])),
                    }
                }
                self.flush(out)?;
                let ret = self.lw.ast.function(callee).ret;
                let call = self.mk(ret, ExprKind::Call(Callee::Function(callee), args), span);
                match result {
                    None => out.push(self.st(StmtKind::Expr(call), span)),
                    Some(r) => self.bind_result(call, *r, span, out),
                }
            }
            Statement::Kill => return unsupported(span, "`discard` outside a fragment shader"),
            Statement::MemoryBarrier(_) => return unsupported(span, "a memory barrier without an execution barrier"),
            Statement::ImageStore { image, coordinate, array_index: None, value } => {
                // WGSL: a store outside the texture does nothing.
                let img = self.expr(*image)?;
                let c = self.expr(*coordinate)?;
                let v = self.expr(*value)?;
                self.flush(out)?;
                let cu = self.texel_coord(img, c, span);
                let size = self.texture_size(img, span);
                let bools = self.types().with_scalar(size.ty, TypeTable::BOOL);
                let inside = self.mk(bools, ExprKind::Binary(BinaryOp::Less, cu, size), span);
                let all = self.builtin(Opcode::All, TypeTable::BOOL, vec![inside], span);
                let write = self.builtin(Opcode::TextureWrite, TypeTable::VOID, vec![img, cu, v], span);
                let then_body = vec![self.st(StmtKind::Expr(write), span)];
                out.push(self.st(StmtKind::If { cond: all, then_body, else_body: None }, span));
            }
            Statement::ImageStore { .. } | Statement::ImageAtomic { .. } => {
                return unsupported(span, "texture arrays and texture atomics")
            }
            Statement::RayQuery { .. } | Statement::RayPipelineFunction(_) => return unsupported(span, "ray queries"),
            Statement::SubgroupBallot { result, predicate } => self.subgroup_ballot(*predicate, *result, span, out)?,
            Statement::SubgroupGather { mode, argument, result } => {
                self.subgroup_gather(*mode, *argument, *result, span, out)?
            }
            Statement::SubgroupCollectiveOperation { op, collective_op, argument, result } => {
                self.subgroup_collective(*op, *collective_op, *argument, *result, span, out)?
            }
            Statement::CooperativeStore { .. } => return unsupported(span, "cooperative matrices"),
        }
        Ok(())
    }

    fn reads_memory(&self, h: Handle<Expression>) -> bool {
        let mut stack = vec![h];
        let mut seen = FxHashSet::default();
        while let Some(h) = stack.pop() {
            if !seen.insert(h) {
                continue;
            }
            match &self.f.expressions[h] {
                Expression::Load { .. } | Expression::ArrayLength(_) => return true,
                e => naga_operands(e, &mut stack),
            }
        }
        false
    }

    // ---- places (pointers) --------------------------------------------

    fn place(&mut self, h: Handle<Expression>) -> R<Place<'a>> {
        let span = self.espan(h);
        match self.f.expressions[h] {
            Expression::LocalVariable(l) => Ok(Place::Storage(self.var(self.locals[&l]))),
            Expression::FunctionArgument(i) => match self.args[i as usize] {
                Arg::Var(v) => Ok(Place::Storage(self.var(v))),
                Arg::Builtin(_) => unsupported(span, "a pointer to a built-in"),
            },
            Expression::GlobalVariable(g) => {
                if let GlobalKind::Members(_) = self.lw.globals[&g] {
                    return Ok(Place::Members { global: g });
                }
                let v = self.globals[&g];
                match self.lw.globals[&g] {
                    GlobalKind::Buffer(b) => Ok(self.buffer_place(v, b)),
                    GlobalKind::Members(_) => unreachable!("handled above"),
                    GlobalKind::Uniform { wrappers: 0, .. } => Ok(Place::Value(self.var(v))),
                    GlobalKind::Uniform { wrappers, .. } => Ok(Place::ValueWrapper(self.var(v), wrappers)),
                    GlobalKind::Workgroup(_) | GlobalKind::Private(_) => Ok(Place::Storage(self.var(v))),
                    GlobalKind::Texture(_) => unsupported(span, "a pointer to a texture"),
                }
            }
            Expression::AccessIndex { base, index } => self.place_step(h, base, Step::Const(index)),
            Expression::Access { base, index } => self.place_step(h, base, Step::Dyn(index)),
            _ => unsupported(span, "a pointer of this kind"),
        }
    }

    /// Where a buffer of `kind` points before any index.
    fn buffer_place(&self, buffer: VarId, kind: BufferKind) -> Place<'a> {
        match kind {
            BufferKind { wrappers: n @ 1.., .. } => {
                Place::BufferWrapper { buffer, kind: BufferKind { wrappers: n - 1, ..kind } }
            }
            BufferKind { single: true, .. } => Place::Buffer { buffer, index: self.lit_u32(0), path: Vec::new() },
            BufferKind { fixed, .. } => Place::BufferArray { buffer, fixed },
        }
    }

    fn place_step(&mut self, h: Handle<Expression>, base: Handle<Expression>, step: Step) -> R<Place<'a>> {
        let span = self.espan(h);
        Ok(match self.place(base)? {
            Place::Members { global } => {
                let (Step::Const(k), GlobalKind::Members(kinds)) = (step, &self.lw.globals[&global]) else {
                    unreachable!("naga indexes a struct by constant members")
                };
                let kind = kinds[k as usize].1;
                self.buffer_place(self.members[&global][k as usize], kind)
            }
            Place::ValueWrapper(v, n) => match step {
                Step::Const(0) if n > 1 => Place::ValueWrapper(v, n - 1),
                Step::Const(0) => Place::Value(v),
                _ => return unsupported(span, "a member of a uniform block other than its one member"),
            },
            Place::BufferWrapper { buffer, kind } => match step {
                Step::Const(0) => self.buffer_place(buffer, kind),
                _ => return unsupported(span, "a member of a buffer's wrapper struct other than its one member"),
            },
            Place::BufferArray { buffer, fixed } => {
                let index = self.buffer_index(buffer, fixed, step, span)?;
                Place::Buffer { buffer, index, path: Vec::new() }
            }
            Place::Buffer { buffer, index, mut path } => {
                let ty = self.expr_ty(h)?;
                let base_ty = match path.last() {
                    Some(PathStep::Member(_, t) | PathStep::Index(_, t)) => *t,
                    None => self.elem_of(buffer),
                };
                path.push(match self.step(base_ty, step, span)? {
                    StepExpr::Member(i) => PathStep::Member(i, ty),
                    StepExpr::Index(e) => PathStep::Index(e, ty),
                });
                Place::Buffer { buffer, index, path }
            }
            Place::Storage(b) => {
                let ty = self.expr_ty(h)?;
                let s = self.step(b.ty, step, span)?;
                Place::Storage(self.apply(b, s, ty, span))
            }
            Place::Value(b) => {
                let ty = self.expr_ty(h)?;
                let s = self.step(b.ty, step, span)?;
                Place::Value(self.apply(b, s, ty, span))
            }
        })
    }

    fn elem_of(&self, buffer: VarId) -> TypeId {
        match self.lw.ast.types.get(self.af.var(buffer).ty) {
            Type::Buffer(e) => *e,
            _ => unreachable!("buffer parameters have buffer type"),
        }
    }

    fn apply(&self, base: ExprRef<'a>, s: StepExpr<'a>, ty: TypeId, span: naga::Span) -> ExprRef<'a> {
        match s {
            StepExpr::Member(i) => self.mk(ty, ExprKind::Member(base, i), span),
            StepExpr::Index(e) => self.mk(ty, ExprKind::Access(base, e), span),
        }
    }

    /// A step into a value of type `base_ty`: a constant member, or a
    /// dynamic index clamped to the length (naga's `Restrict` policy).
    fn step(&mut self, base_ty: TypeId, step: Step, span: naga::Span) -> R<StepExpr<'a>> {
        match step {
            Step::Const(i) => Ok(StepExpr::Member(i)),
            Step::Dyn(index) => {
                let len = match self.lw.ast.types.get(base_ty) {
                    Type::Array { len, .. } => *len,
                    Type::Vector { lanes, .. } => *lanes as u64,
                    Type::Matrix { dim, .. } => *dim as u64,
                    _ => return unsupported(span, "an index into a value that is not an array, vector or matrix"),
                };
                let i = self.expr(index)?;
                let i = self.as_u32(i, span);
                let max = self.lit_u32(len.saturating_sub(1).min(u32::MAX as u64) as u32);
                Ok(StepExpr::Index(self.builtin(Opcode::Min, TypeTable::U32, vec![i, max], span)))
            }
        }
    }

    fn buffer_index(&mut self, buffer: VarId, fixed: Option<u32>, step: Step, span: naga::Span) -> R<ExprRef<'a>> {
        let i = match step {
            Step::Const(i) => self.lit_u32(i),
            Step::Dyn(e) => {
                let e = self.expr(e)?;
                self.as_u32(e, span)
            }
        };
        let max = match fixed {
            Some(n) => self.lit_u32(n - 1),
            None => {
                let len = self.builtin(Opcode::BufferSize, TypeTable::U32, vec![self.var(buffer)], span);
                let one = self.lit_u32(1);
                self.mk(TypeTable::U32, ExprKind::Binary(BinaryOp::Sub, len, one), span)
            }
        };
        Ok(self.builtin(Opcode::Min, TypeTable::U32, vec![i, max], span))
    }

    /// `texture.size` at level 0: `vec<u32, dim>`.
    fn texture_size(&mut self, img: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let Type::Texture { dim, .. } = *self.lw.ast.types.get(img.ty) else {
            unreachable!("a texture expression has texture type")
        };
        let t = self.types().vector(TypeTable::U32, dim);
        let zero = self.lit_u32(0);
        self.builtin(Opcode::TextureSize, t, vec![img, zero], span)
    }

    /// A texel coordinate as unsigned lanes (a negative one is then past
    /// the end, as naga's bounds checks treat it).
    fn texel_coord(&mut self, img: ExprRef<'a>, c: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let Type::Texture { dim, .. } = *self.lw.ast.types.get(img.ty) else {
            unreachable!("a texture expression has texture type")
        };
        let t = self.types().vector(TypeTable::U32, dim);
        if c.ty == t {
            c
        } else {
            self.mk(t, ExprKind::Cast(CastOp::Bitwise, c), span)
        }
    }

    fn as_u32(&mut self, e: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        if e.ty == TypeTable::U32 {
            return e;
        }
        let op = if lane_bits(&self.lw.ast.types, e.ty) == 32 { CastOp::Bitwise } else { CastOp::Static };
        self.mk(TypeTable::U32, ExprKind::Cast(op, e), span)
    }

    /// The value a pointer points at, read now.
    fn load(&mut self, pointer: Handle<Expression>, span: naga::Span) -> R<ExprRef<'a>> {
        let ty = self.expr_ty(pointer)?;
        let place = self.place(pointer)?;
        self.load_place(place, ty, span)
    }

    /// Write `v` to `place`.
    fn store_place(
        &mut self,
        place: Place<'a>,
        v: ExprRef<'a>,
        span: naga::Span,
        out: &mut Vec<&'a Stmt<'a>>,
    ) -> R<()> {
        match place {
            Place::Storage(lhs) => out.push(self.st(StmtKind::Assign { lhs, rhs: v }, span)),
            Place::Buffer { buffer, index, path } if path.is_empty() => {
                let w = self.builtin(Opcode::BufferWrite, TypeTable::VOID, vec![self.var(buffer), index, v], span);
                out.push(self.st(StmtKind::Expr(w), span));
            }
            // A write to part of an element stores only that part (as
            // naga's access chain and store do): writing the whole
            // element back would race with other invocations writing
            // its other parts.
            Place::Buffer { buffer, index, path } => {
                let mut args = vec![self.var(buffer), index, v];
                args.extend(path.into_iter().map(|p| match p {
                    PathStep::Member(i, _) => self.lit_u32(i),
                    PathStep::Index(e, _) => e,
                }));
                let w = self.builtin(Opcode::BufferWritePart, TypeTable::VOID, args, span);
                out.push(self.st(StmtKind::Expr(w), span));
            }
            // A struct of one member written whole: its member written.
            Place::BufferWrapper { buffer, kind } if kind.single || kind.fixed.is_some() => {
                let member = self.mk(self.first_field(v.ty), ExprKind::Member(v, 0), span);
                self.store_place(self.buffer_place(buffer, kind), member, span, out)?;
            }
            Place::Value(_) | Place::ValueWrapper(..) => return unsupported(span, "a write to a uniform"),
            Place::BufferWrapper { .. } | Place::BufferArray { .. } | Place::Members { .. } => {
                return unsupported(span, "a write to a whole runtime-sized buffer")
            }
        }
        Ok(())
    }

    /// Whether a texture operation's mip level is absent or a constant 0.
    fn is_level_zero(&mut self, level: Option<Handle<Expression>>) -> R<bool> {
        let Some(level) = level else { return Ok(true) };
        Ok(matches!(self.expr(level)?.kind, ExprKind::Literal(0)))
    }

    /// The type of a wrapper struct's one member.
    fn first_field(&self, ty: TypeId) -> TypeId {
        match self.lw.ast.types.get(ty) {
            Type::Struct { fields, .. } => fields[0],
            _ => unreachable!("a wrapper is a struct"),
        }
    }

    /// The value of type `ty` at `place`, read now.
    fn load_place(&mut self, place: Place<'a>, ty: TypeId, span: naga::Span) -> R<ExprRef<'a>> {
        // A block of one member read whole: the member read, wrapped back.
        let wrap = |cx: &mut Self, member: ExprRef<'a>| cx.builtin(Opcode::Aggregate, ty, vec![member], span);
        Ok(match place {
            Place::Storage(e) | Place::Value(e) => e,
            Place::ValueWrapper(v, n) => {
                let inner = if n > 1 { Place::ValueWrapper(v, n - 1) } else { Place::Value(v) };
                let member = self.load_place(inner, self.first_field(ty), span)?;
                wrap(self, member)
            }
            Place::BufferWrapper { buffer, kind } if kind.single || kind.fixed.is_some() => {
                let member = self.load_place(self.buffer_place(buffer, kind), self.first_field(ty), span)?;
                wrap(self, member)
            }
            Place::BufferArray { buffer, fixed: Some(n) } if n <= MAX_WHOLE_ARRAY => {
                // `array<T, N>` in storage read whole: N element reads.
                let elem = self.elem_of(buffer);
                let reads = (0..n)
                    .map(|i| {
                        let idx = self.lit_u32(i);
                        self.builtin(Opcode::BufferRead, elem, vec![self.var(buffer), idx], span)
                    })
                    .collect();
                self.builtin(Opcode::Aggregate, ty, reads, span)
            }
            Place::BufferArray { fixed: Some(n), .. } => {
                return unsupported(
                    span,
                    format!("a load of a whole {n}-element storage array (at most {MAX_WHOLE_ARRAY})"),
                )
            }
            Place::BufferWrapper { .. } | Place::BufferArray { .. } | Place::Members { .. } => {
                return unsupported(span, "a load of a whole runtime-sized buffer")
            }
            Place::Buffer { buffer, index, path } => {
                let elem = self.elem_of(buffer);
                let mut v = self.builtin(Opcode::BufferRead, elem, vec![self.var(buffer), index], span);
                for p in path {
                    v = match p {
                        PathStep::Member(i, t) => self.mk(t, ExprKind::Member(v, i), span),
                        PathStep::Index(e, t) => self.mk(t, ExprKind::Access(v, e), span),
                    };
                }
                debug_assert_eq!(v.ty, ty);
                v
            }
        })
    }

    // ---- expressions --------------------------------------------------

    fn expr(&mut self, h: Handle<Expression>) -> R<ExprRef<'a>> {
        if let Some(&e) = self.exprs.get(&h) {
            self.pending.retain(|p| *p != h);
            return Ok(e);
        }
        let e = self.expr_uncached(h)?;
        self.exprs.insert(h, e);
        Ok(e)
    }

    fn const_expr(&mut self, h: Handle<Expression>) -> R<ExprRef<'a>> {
        let (ty, data) = self.const_data(h)?;
        Ok(match data {
            ConstantData::Scalar(b) => self.mk(ty, ExprKind::Literal(b), naga::Span::default()),
            d => self.mk(ty, ExprKind::Constant(d), naga::Span::default()),
        })
    }

    /// A global (constant) expression as constant data.
    fn const_data(&mut self, h: Handle<Expression>) -> R<(TypeId, ConstantData)> {
        let span = self.lw.module.global_expressions.get_span(h);
        let e = &self.lw.module.global_expressions[h];
        Ok(match *e {
            Expression::Literal(l) => literal(self.types(), l, span)?,
            Expression::Constant(c) => {
                let init = self.lw.module.constants[c].init;
                self.const_data(init)?
            }
            Expression::ZeroValue(t) => {
                let ty = self.lw.ty(t)?;
                (ty, zero_data(self.types(), ty))
            }
            Expression::Compose { ty, ref components } => {
                let ty = self.lw.ty(ty)?;
                let mut members = Vec::new();
                for &c in components {
                    let (cty, d) = self.const_data(c)?;
                    // A vector built from smaller vectors: flatten the lanes.
                    match (self.lw.ast.types.get(ty), self.lw.ast.types.get(cty), d) {
                        (Type::Vector { .. }, Type::Vector { .. }, ConstantData::Composite(lanes)) => {
                            members.extend(lanes)
                        }
                        (_, _, d) => members.push(d),
                    }
                }
                (ty, ConstantData::Composite(members))
            }
            Expression::Splat { size, value } => {
                let (sty, d) = self.const_data(value)?;
                let ty = self.types().vector(sty, size as u8);
                (ty, ConstantData::Composite(vec![d; size as usize]))
            }
            _ => return unsupported(span, "a constant expression of this kind"),
        })
    }

    fn expr_uncached(&mut self, h: Handle<Expression>) -> R<ExprRef<'a>> {
        let span = self.espan(h);
        let e = &self.f.expressions[h];
        if self.is_pointer(h) {
            return unsupported(span, "a pointer used as a value");
        }
        let ty = self.expr_ty(h)?;
        Ok(match *e {
            Expression::Literal(l) => {
                let (t, d) = literal(self.types(), l, span)?;
                match d {
                    ConstantData::Scalar(b) => self.mk(t, ExprKind::Literal(b), span),
                    d => self.mk(t, ExprKind::Constant(d), span),
                }
            }
            Expression::Constant(c) => {
                let init = self.lw.module.constants[c].init;
                let (t, d) = self.const_data(init)?;
                match d {
                    ConstantData::Scalar(b) => self.mk(t, ExprKind::Literal(b), span),
                    d => self.mk(t, ExprKind::Constant(d), span),
                }
            }
            Expression::Override(_) => return unsupported(span, "an override without a value"),
            Expression::ZeroValue(_) => self.zero(ty, span)?,
            Expression::Compose { ref components, .. } => {
                let mut args = Vec::new();
                for &c in components {
                    let v = self.expr(c)?;
                    // A vector built from smaller vectors: their lanes.
                    if matches!(self.lw.ast.types.get(ty), Type::Vector { .. }) {
                        if let Type::Vector { elem, lanes } = *self.lw.ast.types.get(v.ty) {
                            for l in 0..lanes as u32 {
                                args.push(self.mk(elem, ExprKind::Member(v, l), span));
                            }
                            continue;
                        }
                    }
                    args.push(v);
                }
                self.builtin(Opcode::Aggregate, ty, args, span)
            }
            Expression::Access { base, index } => {
                let b = self.expr(base)?;
                match self.step(b.ty, Step::Dyn(index), span)? {
                    StepExpr::Index(i) => self.mk(ty, ExprKind::Access(b, i), span),
                    StepExpr::Member(i) => self.mk(ty, ExprKind::Member(b, i), span),
                }
            }
            Expression::AccessIndex { base, index } => {
                let b = self.expr(base)?;
                self.mk(ty, ExprKind::Member(b, index), span)
            }
            Expression::Splat { size, value } => {
                let v = self.expr(value)?;
                self.builtin(Opcode::Aggregate, ty, vec![v; size as usize], span)
            }
            Expression::Swizzle { size, vector, pattern } => {
                let v = self.expr(vector)?;
                let lanes = pattern[..size as usize].iter().map(|c| *c as u32).collect();
                self.mk(ty, ExprKind::Swizzle(v, lanes), span)
            }
            Expression::FunctionArgument(i) => match self.args[i as usize] {
                Arg::Var(v) => self.var(v),
                Arg::Builtin(b) => self.builtin_expr(b, span),
            },
            Expression::GlobalVariable(g) if matches!(self.lw.globals[&g], GlobalKind::Texture(_)) => {
                self.var(self.globals[&g])
            }
            Expression::GlobalVariable(_) | Expression::LocalVariable(_) => {
                return unsupported(span, "a pointer used as a value")
            }
            Expression::Load { pointer } => self.load(pointer, span)?,
            Expression::Unary { op, expr } => {
                let x = self.expr(expr)?;
                let op = match op {
                    naga::UnaryOperator::Negate => UnaryOp::Minus,
                    naga::UnaryOperator::LogicalNot => UnaryOp::Not,
                    naga::UnaryOperator::BitwiseNot => UnaryOp::BitNot,
                };
                self.mk(ty, ExprKind::Unary(op, x), span)
            }
            Expression::Binary { op, left, right } => {
                let (l, r) = (self.expr(left)?, self.expr(right)?);
                if self.non_square(left).is_some() || self.non_square(right).is_some() {
                    self.matrix_binary(ty, op, (left, l), (right, r), span)?
                } else {
                    self.binary(ty, op, l, r, span)?
                }
            }
            Expression::Select { condition, accept, reject } => {
                let c = self.expr(condition)?;
                let (a, b) = (self.expr(accept)?, self.expr(reject)?);
                let c = self.splat_like(c, a.ty, span);
                self.builtin(Opcode::Select, ty, vec![c, a, b], span)
            }
            Expression::Relational { fun, argument } => {
                let x = self.expr(argument)?;
                let op = match fun {
                    RelationalFunction::All => Opcode::All,
                    RelationalFunction::Any => Opcode::Any,
                    RelationalFunction::IsNan => Opcode::Isnan,
                    RelationalFunction::IsInf => Opcode::Isinf,
                };
                self.builtin(op, ty, vec![x], span)
            }
            Expression::Math { fun: MathFunction::Transpose, arg, .. } if self.non_square(arg).is_some() => {
                let shape = self.non_square(arg).expect("checked");
                let m = self.expr(arg)?;
                self.matrix_transpose(ty, m, shape, span)
            }
            Expression::Math { arg, .. } if self.non_square(arg).is_some() => {
                return unsupported(span, "this function of a non-square matrix (only `transpose`)")
            }
            Expression::Math { fun, arg, arg1, arg2, arg3 } => {
                let mut args = vec![self.expr(arg)?];
                for a in [arg1, arg2, arg3].into_iter().flatten() {
                    args.push(self.expr(a)?);
                }
                self.math(ty, fun, args, span)?
            }
            Expression::As { expr, .. } if self.non_square(expr).is_some() => {
                return unsupported(span, "a conversion of a non-square matrix")
            }
            Expression::As { expr, kind, convert } => {
                let x = self.expr(expr)?;
                self.convert(ty, x, kind, convert, span)
            }
            Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. } => {
                return unsupported(span, "a call or atomic result used before its statement")
            }
            Expression::ArrayLength(p) => match self.place(p)? {
                Place::BufferArray { buffer, fixed: None } => {
                    self.builtin(Opcode::BufferSize, TypeTable::U32, vec![self.var(buffer)], span)
                }
                _ => return unsupported(span, "arrayLength of something other than a storage buffer's array"),
            },
            // A sampled texture's load names a mip level; an XIR texture has
            // one (the runners bind one), so the level must be 0.
            Expression::ImageLoad { image, coordinate, array_index: None, sample: None, level }
                if self.is_level_zero(level)? =>
            {
                let img = self.expr(image)?;
                let c = self.expr(coordinate)?;
                let c = self.texel_coord(img, c, span);
                let clamped = {
                    let size = self.texture_size(img, span);
                    let one = self.lit_u32(1);
                    let one = self.splat_value(one, size.ty, span);
                    let max = self.mk(size.ty, ExprKind::Binary(BinaryOp::Sub, size, one), span);
                    self.builtin(Opcode::Min, size.ty, vec![c, max], span)
                };
                self.builtin(Opcode::TextureRead, ty, vec![img, clamped], span)
            }
            Expression::ImageQuery { image, query: naga::ImageQuery::Size { level } }
                if self.is_level_zero(level)? =>
            {
                let img = self.expr(image)?;
                self.texture_size(img, span)
            }
            Expression::ImageQuery { query: naga::ImageQuery::NumLevels, .. } => self.lit_u32(1),
            Expression::ImageLoad { level: Some(_), .. }
            | Expression::ImageQuery { query: naga::ImageQuery::Size { .. }, .. } => {
                return unsupported(span, "a mip level other than a constant 0 (an XIR texture has one level)")
            }
            Expression::ImageSample { .. } => {
                return unsupported(
                    span,
                    "sampling (XIR samples only its bindless textures; `textureLoad` reads a texel)",
                )
            }
            Expression::ImageLoad { .. } | Expression::ImageQuery { .. } => {
                return unsupported(
                    span,
                    "this texture operation (texel loads and stores, sizes and level counts of 2D and 3D textures)",
                )
            }
            Expression::Derivative { .. } => return unsupported(span, "derivatives outside a fragment shader"),
            Expression::RayQueryVertexPositions { .. }
            | Expression::RayQueryProceedResult
            | Expression::RayQueryGetIntersection { .. } => return unsupported(span, "ray queries"),
            Expression::SubgroupBallotResult | Expression::SubgroupOperationResult { .. } => {
                return unsupported(span, "a subgroup result used before its statement")
            }
            Expression::CooperativeLoad { .. } | Expression::CooperativeMultiplyAdd { .. } => {
                return unsupported(span, "cooperative matrices")
            }
        })
    }

    fn builtin_expr(&mut self, b: BuiltinValue, span: naga::Span) -> ExprRef<'a> {
        let v3 = self.types().vector(TypeTable::U32, 3);
        let reg = |cx: &Self, r| {
            cx.mk(
                if matches!(
                    r,
                    SpecialRegister::WarpSize
                        | SpecialRegister::WarpLaneId
                        | SpecialRegister::WarpId
                        | SpecialRegister::WarpCount
                ) {
                    TypeTable::U32
                } else {
                    v3
                },
                ExprKind::Register(r),
                span,
            )
        };
        match b {
            BuiltinValue::Reg(r) => reg(self, r),
            BuiltinValue::NumWorkgroups => {
                let (d, b) = (reg(self, SpecialRegister::DispatchSize), reg(self, SpecialRegister::BlockSize));
                self.mk(v3, ExprKind::Binary(BinaryOp::Div, d, b), span)
            }
            BuiltinValue::LocalIndex => {
                let t = reg(self, SpecialRegister::ThreadId);
                let b = reg(self, SpecialRegister::BlockSize);
                let lane = |cx: &Self, v, i| cx.mk(TypeTable::U32, ExprKind::Member(v, i), span);
                let bin = |cx: &Self, op, l, r| cx.mk(TypeTable::U32, ExprKind::Binary(op, l, r), span);
                // x + bx * (y + by * z)
                let yz = bin(self, BinaryOp::Mul, lane(self, b, 1), lane(self, t, 2));
                let yz = bin(self, BinaryOp::Add, lane(self, t, 1), yz);
                let yz = bin(self, BinaryOp::Mul, lane(self, b, 0), yz);
                bin(self, BinaryOp::Add, lane(self, t, 0), yz)
            }
        }
    }

    /// `c` broadcast to the lane count of `like` when `c` is a scalar bool
    /// and `like` a vector (`select(a, b, c)` with a scalar condition).
    fn splat_like(&mut self, c: ExprRef<'a>, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        if let Type::Vector { lanes, .. } = *self.lw.ast.types.get(like) {
            if self.lw.ast.types.is_scalar(c.ty) {
                let t = self.types().vector(TypeTable::BOOL, lanes);
                return self.builtin(Opcode::Aggregate, t, vec![c; lanes as usize], span);
            }
        }
        c
    }

    fn binary(
        &mut self,
        ty: TypeId,
        op: BinaryOperator,
        l: ExprRef<'a>,
        r: ExprRef<'a>,
        span: naga::Span,
    ) -> R<ExprRef<'a>> {
        let types = &self.lw.ast.types;
        let is_bool = types.scalar_of(l.ty) == TypeTable::BOOL;
        let is_int = types.is_int(types.scalar_of(l.ty));
        let bop = match op {
            BinaryOperator::Add if debug_miscompile() => BinaryOp::Sub,
            BinaryOperator::Add => BinaryOp::Add,
            BinaryOperator::Subtract => BinaryOp::Sub,
            BinaryOperator::Multiply => BinaryOp::Mul,
            BinaryOperator::Divide | BinaryOperator::Modulo if is_int => {
                return Ok(self.int_div(ty, op == BinaryOperator::Divide, l, r, span));
            }
            BinaryOperator::Divide => BinaryOp::Div,
            BinaryOperator::Modulo => BinaryOp::Mod,
            BinaryOperator::Equal => BinaryOp::Equal,
            BinaryOperator::NotEqual => BinaryOp::NotEqual,
            BinaryOperator::Less => BinaryOp::Less,
            BinaryOperator::LessEqual => BinaryOp::LessEqual,
            BinaryOperator::Greater => BinaryOp::Greater,
            BinaryOperator::GreaterEqual => BinaryOp::GreaterEqual,
            BinaryOperator::And if is_bool => BinaryOp::And,
            BinaryOperator::InclusiveOr if is_bool => BinaryOp::Or,
            BinaryOperator::And => BinaryOp::BitAnd,
            BinaryOperator::ExclusiveOr => BinaryOp::BitXor,
            BinaryOperator::InclusiveOr => BinaryOp::BitOr,
            BinaryOperator::LogicalAnd => BinaryOp::And,
            BinaryOperator::LogicalOr => BinaryOp::Or,
            BinaryOperator::ShiftLeft | BinaryOperator::ShiftRight => {
                // The amount is taken modulo the width.
                let bits = lane_bits(&self.lw.ast.types, l.ty) as u64;
                let mask_scalar = self.lw.ast.types.scalar_of(r.ty);
                let mask = self.mk(mask_scalar, ExprKind::Literal(bits - 1), span);
                let mask = self.splat_value(mask, r.ty, span);
                let amount = self.mk(r.ty, ExprKind::Binary(BinaryOp::BitAnd, r, mask), span);
                let bop = if op == BinaryOperator::ShiftLeft { BinaryOp::Shl } else { BinaryOp::Shr };
                return Ok(self.mk(ty, ExprKind::Binary(bop, l, amount), span));
            }
        };
        Ok(self.mk(ty, ExprKind::Binary(bop, l, r), span))
    }

    /// A 32-bit unsigned bit operation (`ctz`, `clz`, `popcount`,
    /// `reverse`) on `x` of type `ty`: signed lanes go through their bits.
    fn unsigned_bit_op(&mut self, op: Opcode, ty: TypeId, x: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let scalar = self.lw.ast.types.scalar_of(ty);
        if scalar == TypeTable::U32 {
            return self.builtin(op, ty, vec![x], span);
        }
        let uty = self.types().with_scalar(ty, TypeTable::U32);
        let ux = self.mk(uty, ExprKind::Cast(CastOp::Bitwise, x), span);
        let r = self.builtin(op, uty, vec![ux], span);
        self.mk(ty, ExprKind::Cast(CastOp::Bitwise, r), span)
    }

    /// WGSL's `refract(e1, e2, e3)`: with `k = 1 - e3 * e3 * (1 - dot(e2,
    /// e1)^2)`, zero when `k < 0`, else `e3 * e1 - (e3 * dot(e2, e1) +
    /// sqrt(k)) * e2`.
    fn refract(
        &mut self,
        ty: TypeId,
        e1: ExprRef<'a>,
        e2: ExprRef<'a>,
        e3: ExprRef<'a>,
        span: naga::Span,
    ) -> ExprRef<'a> {
        let s = e3.ty;
        let bin = |cx: &mut Self, t: TypeId, op: BinaryOp, l: ExprRef<'a>, r: ExprRef<'a>| {
            cx.mk(t, ExprKind::Binary(op, l, r), span)
        };
        let lit = |cx: &mut Self, v: f64| {
            let bits = if lane_bits(&cx.lw.ast.types, s) == 64 { v.to_bits() } else { u64::from((v as f32).to_bits()) };
            cx.mk(s, ExprKind::Literal(bits), span)
        };
        let d = self.builtin(Opcode::Dot, s, vec![e2, e1], span);
        let dd = bin(self, s, BinaryOp::Mul, d, d);
        let one = lit(self, 1.0);
        let rest = bin(self, s, BinaryOp::Sub, one, dd);
        let ee = bin(self, s, BinaryOp::Mul, e3, e3);
        let scaled = bin(self, s, BinaryOp::Mul, ee, rest);
        let one = lit(self, 1.0);
        let k = bin(self, s, BinaryOp::Sub, one, scaled);
        let root = self.builtin(Opcode::Sqrt, s, vec![k], span);
        let ed = bin(self, s, BinaryOp::Mul, e3, d);
        let factor = bin(self, s, BinaryOp::Add, ed, root);
        let e3v = self.splat_value(e3, ty, span);
        let along = bin(self, ty, BinaryOp::Mul, e3v, e1);
        let factor = self.splat_value(factor, ty, span);
        let across = bin(self, ty, BinaryOp::Mul, factor, e2);
        let r = bin(self, ty, BinaryOp::Sub, along, across);
        let zero = lit(self, 0.0);
        let total = bin(self, TypeTable::BOOL, BinaryOp::Less, k, zero);
        let total = self.splat_like(total, ty, span);
        let zero = lit(self, 0.0);
        let zero = self.splat_value(zero, ty, span);
        self.builtin(Opcode::Select, ty, vec![total, zero, r], span)
    }

    /// `v` (a scalar) repeated to the lane count of `like`, in `v`'s own
    /// scalar type; `v` itself when `like` is a scalar.
    fn splat_lanes(&mut self, v: ExprRef<'a>, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        match *self.lw.ast.types.get(like) {
            Type::Vector { lanes, .. } => {
                let t = self.types().vector(v.ty, lanes);
                self.builtin(Opcode::Aggregate, t, vec![v; lanes as usize], span)
            }
            _ => v,
        }
    }

    /// WGSL's bit built-ins, written with shifts whose amounts stay below
    /// the width (both arms of a `select` are evaluated):
    /// - `firstTrailingBit(e)`: -1 (all ones) for 0, else `ctz(e)`;
    /// - `firstLeadingBit(e)`: the highest bit that differs from the sign
    ///   (signed) or is set (unsigned): `w - 1 - clz(x)`, -1 when `x == 0`,
    ///   with `x = e < 0 ? ~e : e`;
    /// - `extractBits(e, o, c)` / `insertBits(e, n, o, c)` with `o = min(o,
    ///   w)` and `c = min(c, w - o)`: nothing extracted or inserted when
    ///   `c == 0`, a sign-extended field for signed `e`.
    fn bit_builtin(&mut self, ty: TypeId, fun: MathFunction, args: &[ExprRef<'a>], span: naga::Span) -> ExprRef<'a> {
        let w = lane_bits(&self.lw.ast.types, ty);
        let scalar = self.lw.ast.types.scalar_of(ty);
        let signed = matches!(self.lw.ast.types.get(scalar), Type::Int { signed: true, .. });
        let bty = self.types().with_scalar(ty, TypeTable::BOOL);
        let all_ones = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let lit = |cx: &mut Self, bits: u64| cx.splat_bits(bits, ty, span);
        let bin = |cx: &mut Self, t: TypeId, op: BinaryOp, l: ExprRef<'a>, r: ExprRef<'a>| {
            cx.mk(t, ExprKind::Binary(op, l, r), span)
        };
        let sel = |cx: &mut Self, c: ExprRef<'a>, a: ExprRef<'a>, b: ExprRef<'a>| {
            cx.builtin(Opcode::Select, ty, vec![c, a, b], span)
        };
        let e = args[0];
        let (zero, ones) = (lit(self, 0), lit(self, all_ones));
        match fun {
            MathFunction::FirstTrailingBit => {
                let is0 = bin(self, bty, BinaryOp::Equal, e, zero);
                let ctz = self.unsigned_bit_op(Opcode::Ctz, ty, e, span);
                sel(self, is0, ones, ctz)
            }
            MathFunction::FirstLeadingBit => {
                let x = if signed {
                    let neg = bin(self, bty, BinaryOp::Less, e, zero);
                    let not = self.mk(ty, ExprKind::Unary(UnaryOp::BitNot, e), span);
                    sel(self, neg, not, e)
                } else {
                    e
                };
                let is0 = bin(self, bty, BinaryOp::Equal, x, zero);
                let clz = self.unsigned_bit_op(Opcode::Clz, ty, x, span);
                let top = lit(self, u64::from(w - 1));
                let pos = bin(self, ty, BinaryOp::Sub, top, clz);
                sel(self, is0, ones, pos)
            }
            MathFunction::ExtractBits | MathFunction::InsertBits => {
                let (o, c) = if fun == MathFunction::ExtractBits { (args[1], args[2]) } else { (args[2], args[3]) };
                let u = |cx: &mut Self, v: u32| cx.lit_u32(v);
                let wl = u(self, w);
                let o = self.builtin(Opcode::Min, TypeTable::U32, vec![o, wl], span);
                let room = bin(self, TypeTable::U32, BinaryOp::Sub, wl, o);
                let c = self.builtin(Opcode::Min, TypeTable::U32, vec![c, room], span);
                let c0 = u(self, 0);
                let none = bin(self, TypeTable::BOOL, BinaryOp::Equal, c, c0);
                let none = self.splat_lanes(none, ty, span);
                // With c >= 1: w - c and o are below w.
                let w_minus_c = bin(self, TypeTable::U32, BinaryOp::Sub, wl, c);
                let top = u(self, w - 1);
                let w_minus_c = self.builtin(Opcode::Min, TypeTable::U32, vec![w_minus_c, top], span);
                let top = u(self, w - 1);
                let o_safe = self.builtin(Opcode::Min, TypeTable::U32, vec![o, top], span);
                let w_minus_c = self.splat_lanes(w_minus_c, ty, span);
                let o_safe_v = self.splat_lanes(o_safe, ty, span);
                if fun == MathFunction::ExtractBits {
                    let field = if signed {
                        // (e << (w - o - c)) >> (w - c), arithmetic.
                        let up = bin(self, TypeTable::U32, BinaryOp::Sub, wl, o);
                        let up = bin(self, TypeTable::U32, BinaryOp::Sub, up, c);
                        let top = u(self, w - 1);
                        let up = self.builtin(Opcode::Min, TypeTable::U32, vec![up, top], span);
                        let up = self.splat_lanes(up, ty, span);
                        let l = bin(self, ty, BinaryOp::Shl, e, up);
                        bin(self, ty, BinaryOp::Shr, l, w_minus_c)
                    } else {
                        let sh = bin(self, ty, BinaryOp::Shr, e, o_safe_v);
                        let mask = bin(self, ty, BinaryOp::Shr, ones, w_minus_c);
                        bin(self, ty, BinaryOp::BitAnd, sh, mask)
                    };
                    sel(self, none, zero, field)
                } else {
                    let n = args[1];
                    // Unsigned all-ones shifted right stays logical for signed types too.
                    let uscalar = self.types().int(w as u8, false);
                    let uty = self.types().with_scalar(ty, uscalar);
                    let uones = self.mk(uty, ExprKind::Cast(CastOp::Bitwise, ones), span);
                    let low = bin(self, uty, BinaryOp::Shr, uones, w_minus_c);
                    let mask = bin(self, uty, BinaryOp::Shl, low, o_safe_v);
                    let mask = self.mk(ty, ExprKind::Cast(CastOp::Bitwise, mask), span);
                    let mask = sel(self, none, zero, mask);
                    let keep = self.mk(ty, ExprKind::Unary(UnaryOp::BitNot, mask), span);
                    let kept = bin(self, ty, BinaryOp::BitAnd, e, keep);
                    let moved = bin(self, ty, BinaryOp::Shl, n, o_safe_v);
                    let moved = bin(self, ty, BinaryOp::BitAnd, moved, mask);
                    bin(self, ty, BinaryOp::BitOr, kept, moved)
                }
            }
            _ => unreachable!("only the bit built-ins"),
        }
    }

    fn splat_value(&mut self, v: ExprRef<'a>, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        match *self.lw.ast.types.get(like) {
            Type::Vector { lanes, .. } => self.builtin(Opcode::Aggregate, like, vec![v; lanes as usize], span),
            _ => v,
        }
    }

    /// The literal `bits` of `like`'s scalar type in every lane of `like`.
    fn splat_bits(&mut self, bits: u64, like: TypeId, span: naga::Span) -> ExprRef<'a> {
        let scalar = self.lw.ast.types.scalar_of(like);
        let s = self.mk(scalar, ExprKind::Literal(bits), span);
        self.splat_value(s, like, span)
    }

    /// WGSL integer `/` and `%`: a zero divisor, or -1 beside the minimum
    /// signed value, is replaced by 1 (so `x / 0 == x`, `x % 0 == 0`).
    fn int_div(&mut self, ty: TypeId, is_div: bool, l: ExprRef<'a>, r: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let l = self.splat_value(l, ty, span);
        let r = self.splat_value(r, ty, span);
        let scalar = self.lw.ast.types.scalar_of(ty);
        let bits = lane_bits(&self.lw.ast.types, ty);
        let signed = matches!(self.lw.ast.types.get(scalar), Type::Int { signed: true, .. });
        let op = if is_div { BinaryOp::Div } else { BinaryOp::Mod };
        let all_ones = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        if let ExprKind::Literal(d) = r.kind {
            if d != 0 && !(signed && d == all_ones) {
                return self.mk(ty, ExprKind::Binary(op, l, r), span); // nothing to guard
            }
        }
        let bool_ty = self.types().with_scalar(ty, TypeTable::BOOL);
        let lit = |cx: &mut Self, bits: u64| cx.splat_bits(bits, ty, span);
        let zero = lit(self, 0);
        let one = lit(self, 1);
        let mut bad = self.mk(bool_ty, ExprKind::Binary(BinaryOp::Equal, r, zero), span);
        if signed {
            let width_mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let min = lit(self, 1u64 << (bits - 1));
            let minus_one = lit(self, width_mask);
            let lmin = self.mk(bool_ty, ExprKind::Binary(BinaryOp::Equal, l, min), span);
            let rm1 = self.mk(bool_ty, ExprKind::Binary(BinaryOp::Equal, r, minus_one), span);
            let both = self.mk(bool_ty, ExprKind::Binary(BinaryOp::And, lmin, rm1), span);
            bad = self.mk(bool_ty, ExprKind::Binary(BinaryOp::Or, bad, both), span);
        }
        let divisor = self.builtin(Opcode::Select, ty, vec![bad, one, r], span);
        self.mk(ty, ExprKind::Binary(op, l, divisor), span)
    }

    fn convert(
        &mut self,
        ty: TypeId,
        x: ExprRef<'a>,
        kind: ScalarKind,
        convert: Option<u8>,
        span: naga::Span,
    ) -> ExprRef<'a> {
        if convert.is_none() {
            return self.mk(ty, ExprKind::Cast(CastOp::Bitwise, x), span);
        }
        let types = &self.lw.ast.types;
        let from_float = types.is_float(types.scalar_of(x.ty));
        let to_int = matches!(kind, ScalarKind::Sint | ScalarKind::Uint);
        if from_float && to_int {
            // Saturate: clamp into the range of the integer, in the float
            // type (the bounds are the largest floats inside the range).
            let bits = lane_bits(types, ty);
            let fbits = lane_bits(types, x.ty);
            let (lo, hi): (f64, f64) = match (kind, bits) {
                (ScalarKind::Sint, 32) => (-2147483648.0, if fbits == 32 { 2147483520.0 } else { 2147483647.0 }),
                (ScalarKind::Uint, 32) => (0.0, if fbits == 32 { 4294967040.0 } else { 4294967295.0 }),
                (ScalarKind::Sint, 64) => {
                    (-9223372036854775808.0, if fbits == 32 { 9.223371487098962e18 } else { 9.223372036854775e18 })
                }
                (ScalarKind::Uint, 64) => (0.0, if fbits == 32 { 1.8446742974197924e19 } else { 1.844674407370955e19 }),
                _ => (f64::MIN, f64::MAX),
            };
            let fscalar = self.lw.ast.types.scalar_of(x.ty);
            let fl = |cx: &mut Self, v: f64| {
                let b = if fbits == 32 { (v as f32).to_bits() as u64 } else { v.to_bits() };
                let s = cx.mk(fscalar, ExprKind::Literal(b), span);
                cx.splat_value(s, x.ty, span)
            };
            if fbits == 32 || fbits == 64 {
                let (lo, hi) = (fl(self, lo), fl(self, hi));
                let clamped = self.builtin(Opcode::Clamp, x.ty, vec![x, lo, hi], span);
                return self.mk(ty, ExprKind::Cast(CastOp::Static, clamped), span);
            }
        }
        self.mk(ty, ExprKind::Cast(CastOp::Static, x), span)
    }

    fn math(&mut self, ty: TypeId, fun: MathFunction, args: Vec<ExprRef<'a>>, span: naga::Span) -> R<ExprRef<'a>> {
        use MathFunction as M;
        if let Some(packed) = self.packing(ty, fun, &args, span) {
            return Ok(packed);
        }
        if let Some(parts) = self.float_parts(ty, fun, &args, span)? {
            return Ok(parts);
        }
        let op = match fun {
            M::Abs => Opcode::Abs,
            M::Min => Opcode::Min,
            M::Max => Opcode::Max,
            M::Clamp => Opcode::Clamp,
            M::Saturate => Opcode::Saturate,
            M::Cos => Opcode::Cos,
            M::Cosh => Opcode::Cosh,
            M::Sin => Opcode::Sin,
            M::Sinh => Opcode::Sinh,
            M::Tan => Opcode::Tan,
            M::Tanh => Opcode::Tanh,
            M::Acos => Opcode::Acos,
            M::Asin => Opcode::Asin,
            M::Atan => Opcode::Atan,
            M::Atan2 => Opcode::Atan2,
            M::Asinh => Opcode::Asinh,
            M::Acosh => Opcode::Acosh,
            M::Atanh => Opcode::Atanh,
            M::Ceil => Opcode::Ceil,
            M::Floor => Opcode::Floor,
            // WGSL rounds half to even.
            M::Round => Opcode::Rint,
            M::Fract => Opcode::Fract,
            M::Trunc => Opcode::Trunc,
            M::Exp => Opcode::Exp,
            M::Exp2 => Opcode::Exp2,
            M::Log => Opcode::Log,
            M::Log2 => Opcode::Log2,
            M::Pow => Opcode::Pow,
            M::Dot => Opcode::Dot,
            M::Outer => Opcode::OuterProduct,
            M::Cross => Opcode::Cross,
            M::Length => Opcode::Length,
            M::Normalize => Opcode::Normalize,
            M::FaceForward => Opcode::Faceforward,
            M::Reflect => Opcode::Reflect,
            M::Fma => Opcode::Fma,
            M::Mix => Opcode::Lerp,
            M::Step => Opcode::Step,
            M::SmoothStep => Opcode::Smoothstep,
            M::Sqrt => Opcode::Sqrt,
            M::InverseSqrt => Opcode::Rsqrt,
            M::Transpose => Opcode::MatrixTranspose,
            M::Determinant => Opcode::MatrixDeterminant,
            M::Inverse => Opcode::MatrixInverse,
            M::Refract => return Ok(self.refract(ty, args[0], args[1], args[2], span)),
            M::Distance => {
                let d = self.mk(args[0].ty, ExprKind::Binary(BinaryOp::Sub, args[0], args[1]), span);
                return Ok(self.builtin(Opcode::Length, ty, vec![d], span));
            }
            M::Radians | M::Degrees => {
                let f = if fun == M::Radians { std::f64::consts::PI / 180.0 } else { 180.0 / std::f64::consts::PI };
                let scalar = self.lw.ast.types.scalar_of(ty);
                let bits = match lane_bits(&self.lw.ast.types, ty) {
                    32 => (f as f32).to_bits() as u64,
                    64 => f.to_bits(),
                    _ => return unsupported(span, "radians/degrees below 32 bits"),
                };
                let k = self.mk(scalar, ExprKind::Literal(bits), span);
                return Ok(self.mk(ty, ExprKind::Binary(BinaryOp::Mul, args[0], k), span));
            }
            M::Sign => {
                // sign(x) = select(select(0, 1, x > 0), -1, x < 0)
                let x = args[0];
                let scalar = self.lw.ast.types.scalar_of(ty);
                let bits = lane_bits(&self.lw.ast.types, ty);
                let (one, minus_one) = if self.lw.ast.types.is_float(scalar) {
                    match bits {
                        32 => (1f32.to_bits() as u64, (-1f32).to_bits() as u64),
                        64 => (1f64.to_bits(), (-1f64).to_bits()),
                        _ => return unsupported(span, "sign below 32 bits"),
                    }
                } else {
                    (1, if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 })
                };
                let bty = self.types().with_scalar(ty, TypeTable::BOOL);
                let lit = |cx: &mut Self, b| cx.splat_bits(b, ty, span);
                let (z, o, m) = (lit(self, 0), lit(self, one), lit(self, minus_one));
                let gt = self.mk(bty, ExprKind::Binary(BinaryOp::Greater, x, z), span);
                let lt = self.mk(bty, ExprKind::Binary(BinaryOp::Less, x, z), span);
                let pos = self.builtin(Opcode::Select, ty, vec![gt, o, z], span);
                return Ok(self.builtin(Opcode::Select, ty, vec![lt, m, pos], span));
            }
            M::CountTrailingZeros | M::CountLeadingZeros | M::CountOneBits | M::ReverseBits => {
                return Ok(self.unsigned_bit_op(op_of_count(fun), ty, args[0], span));
            }
            M::FirstTrailingBit | M::FirstLeadingBit | M::ExtractBits | M::InsertBits => {
                return Ok(self.bit_builtin(ty, fun, &args, span));
            }
            other => return unsupported(span, format!("built-in {other:?}")),
        };
        // WGSL's `mix(a: vecN, b: vecN, t: f32)` takes a scalar factor where
        // XIR's `lerp` takes three operands of one type (naga's GLSL front end
        // already splats GLSL's scalar overloads, `mix` and `clamp` included).
        let args = if fun == M::Mix {
            args.into_iter().map(|a| if a.ty == ty { a } else { self.splat_value(a, ty, span) }).collect()
        } else {
            args
        };
        Ok(self.builtin(op, ty, args, span))
    }
}

#[derive(Copy, Clone)]
enum Step {
    Const(u32),
    Dyn(Handle<Expression>),
}

enum StepExpr<'a> {
    Member(u32),
    Index(ExprRef<'a>),
}

fn op_of_count(f: MathFunction) -> Opcode {
    match f {
        MathFunction::CountTrailingZeros => Opcode::Ctz,
        MathFunction::CountLeadingZeros => Opcode::Clz,
        MathFunction::CountOneBits => Opcode::Popcount,
        _ => Opcode::Reverse,
    }
}

/// Bits of a scalar, or of each lane of a vector.
fn lane_bits(types: &TypeTable, t: TypeId) -> u32 {
    types.scalar_bits(types.scalar_of(t))
}

/// How many scalars a value of `ty` holds (saturating).
fn scalar_count(types: &TypeTable, ty: TypeId) -> u64 {
    match types.get(ty) {
        Type::Vector { lanes, .. } => u64::from(*lanes),
        Type::Matrix { dim, .. } => u64::from(*dim) * u64::from(*dim),
        Type::Array { elem, len } => len.saturating_mul(scalar_count(types, *elem)),
        Type::Struct { fields, .. } => fields.iter().fold(0u64, |n, &f| n.saturating_add(scalar_count(types, f))),
        _ => 1,
    }
}

fn zero_data(types: &mut TypeTable, ty: TypeId) -> ConstantData {
    match types.get(ty).clone() {
        Type::Vector { lanes, .. } => ConstantData::Composite(vec![ConstantData::Scalar(0); lanes as usize]),
        Type::Matrix { elem, dim } => {
            let col = types.vector(elem, dim);
            ConstantData::Composite(vec![zero_data(types, col); dim as usize])
        }
        Type::Array { elem, len } => ConstantData::Composite(vec![zero_data(types, elem); len as usize]),
        Type::Struct { fields, .. } => ConstantData::Composite(fields.iter().map(|&f| zero_data(types, f)).collect()),
        _ => ConstantData::Scalar(0),
    }
}

fn literal(types: &mut TypeTable, l: Literal, span: naga::Span) -> R<(TypeId, ConstantData)> {
    let (t, bits) = match l {
        Literal::F64(v) => (types.float(FloatFormat::F64), v.to_bits()),
        Literal::F32(v) => (TypeTable::F32, v.to_bits() as u64),
        Literal::F16(v) => (types.float(FloatFormat::F16), v.to_bits() as u64),
        Literal::U16(v) => (types.int(16, false), v as u64),
        Literal::I16(v) => (types.int(16, true), v as u16 as u64),
        Literal::U32(v) => (TypeTable::U32, v as u64),
        Literal::I32(v) => (TypeTable::I32, v as u32 as u64),
        Literal::U64(v) => (types.int(64, false), v),
        Literal::I64(v) => (types.int(64, true), v as u64),
        Literal::Bool(b) => (TypeTable::BOOL, b as u64),
        Literal::AbstractInt(_) | Literal::AbstractFloat(_) => {
            return unsupported(span, "an abstract literal (naga should have made it concrete)")
        }
    };
    Ok((t, ConstantData::Scalar(bits)))
}

/// The expression operands of a naga expression.
fn naga_operands(e: &Expression, out: &mut Vec<Handle<Expression>>) {
    match *e {
        Expression::Compose { ref components, .. } => out.extend(components.iter().copied()),
        Expression::Access { base, index } => out.extend([base, index]),
        Expression::AccessIndex { base, .. } => out.push(base),
        Expression::Splat { value, .. } => out.push(value),
        Expression::Swizzle { vector, .. } => out.push(vector),
        Expression::Load { pointer } => out.push(pointer),
        Expression::Unary { expr, .. } => out.push(expr),
        Expression::Binary { left, right, .. } => out.extend([left, right]),
        Expression::Select { condition, accept, reject } => out.extend([condition, accept, reject]),
        Expression::Relational { argument, .. } => out.push(argument),
        Expression::Math { arg, arg1, arg2, arg3, .. } => {
            out.push(arg);
            out.extend([arg1, arg2, arg3].into_iter().flatten());
        }
        Expression::As { expr, .. } => out.push(expr),
        Expression::ArrayLength(e) => out.push(e),
        _ => {}
    }
}

/// Test aid, in debug builds only: with `XIR_DEBUG_MISCOMPILE_FRONTEND`
/// set, every `+` is lowered as `-`, a planted front-end bug that only
/// naga's module disagrees with (`xir-reduce --naga-mismatch`'s test,
/// docs/reduce.md). Release builds do not read the variable.
fn debug_miscompile() -> bool {
    cfg!(debug_assertions) && std::env::var_os("XIR_DEBUG_MISCOMPILE_FRONTEND").is_some()
}
