//! The reference interpreter: runs a kernel over a dispatch grid with
//! buffers and gives exact results, so that every pass can be tested by
//! running programs before and after it, and the SPIR-V backend by
//! comparing device results with these.
//!
//! Semantics (the full list is `docs/inputs-format.md`, "Semantics"):
//! IEEE f32/f64 arithmetic, f16 computed in f64 and rounded once, wrapping
//! integers, integer division by zero and signed `MIN / -1` (or `MIN % -1`,
//! undefined in SPIR-V) are errors, shift amounts modulo the
//! lhs width, C `round`, float comparisons ordered except `ne`, min/max are
//! IEEE minNum/maxNum. Threads of a block run cooperatively: each is a
//! resumable state machine run until it reaches `sync_block` or finishes.
//! Reading uninitialized memory, out-of-bounds indices, mismatched barriers,
//! unsupported opcodes and runaway loops or recursion are located errors.
//! So is a run past the limits (`limits`: block size, shared and local
//! memory, value and texture sizes as desktop devices bound them; `Options`:
//! steps, threads and printed bytes of the whole run).
//!
//! Files: `exec` (threads as frame stacks, control flow, memory and call
//! instructions), `ops` (pure value operations), `arith` (exact scalar
//! rules), `limits` (what a run may use), `memory` (storage and host layout), `resource` (byte buffers,
//! textures, bindless), `sampling` (the 16 samplers on mip chains), `warp` (subgroup rendezvous), `io` (JSON formats),
//! `print`, `value`, `fold` (the scalar rules offered to constant folding),
//! `precision` (Vulkan's allowed deviation of each float, `Options::precision`),
//! `autodiff` (autodiff scopes run in forward mode, docs/autodiff.md);
//! this file holds the API and the dispatch loop.
//!
//! **API boundary:** the interpreter reads a `Module` and never changes it.

mod arith;
mod autodiff;
mod exec;
mod fold;
mod io;
pub mod limits;
mod memory;
mod ops;
mod precision;
mod print;
mod ray;
mod resource;
mod sampling;
pub mod semantics;
mod template;
mod value;
mod warp;

use std::fmt;

use crate::diag::{Diagnostic, Rule};
use crate::ir::{ArgKind, Block, FuncId, FunctionKind, Inst, Module, Span, Type};

pub use io::{
    buffer_from_host_bytes, buffer_to_host_bytes, close, is_nan_json, json_float, same_value, HostBytesError, Inputs,
    Mismatch, Outputs,
};

pub use fold::{fold_constant, fold_scalar};
pub use precision::{BoundedMismatch, Comparison, Precision};
pub use print::{format_value_bits, FormatError};
pub use ray::{
    accel_from_json, accel_to_json, Accel, AccelError, AccelInstance, MAX_INSTANCE_MASK, MAX_INSTANCE_USER_ID,
};
pub use template::{inputs_template, InputsTemplate};

use exec::{Machine, Regs, State, Thread};
use memory::Buf;
use value::{undef_of, Ptr, Root, Val};

/// Limits and overrides of one run (the fixed limits are in [`limits`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// Overrides `Inputs::dispatch`.
    pub dispatch: Option<[u32; 3]>,
    /// Instructions the whole run may execute, all threads together, before
    /// it gives up (catches infinite loops, also around barriers).
    pub max_steps: u64,
    /// Frames on one thread's stack (the kernel counts as one).
    pub max_call_depth: u32,
    /// Threads one dispatch may run (the product of the dispatch size).
    pub max_threads: u64,
    /// Bytes of `print` output one run may produce (lines and their newlines).
    pub max_print_bytes: u64,
    /// Bound every result by Vulkan's precision (`Outputs::bounds`,
    /// docs/vulkan.md "Precision"); `None`: exact values only.
    pub precision: Option<Precision>,
    /// Lanes per warp: `$warp_size`, and how a block's linear thread indices
    /// split into warps. A device run is compared at the device's subgroup
    /// size (lavapipe: 8, NVIDIA: 32); a power of two from 1 to 128, as
    /// Vulkan's `subgroupSize` is.
    pub warp_size: u32,
}

/// The interpreter's default warp size (NVIDIA's).
pub const DEFAULT_WARP_SIZE: u32 = 32;

impl Default for Options {
    fn default() -> Self {
        Options {
            dispatch: None,
            max_steps: 1 << 28,
            max_call_depth: 64,
            max_threads: 1 << 24,
            max_print_bytes: 16 << 20,
            precision: None,
            warp_size: DEFAULT_WARP_SIZE,
        }
    }
}

/// A run-time error, located at the instruction that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    pub message: String,
    pub function: Option<String>,
    pub block: Option<Block>,
    pub inst: Option<Inst>,
    /// Text position of the instruction when the module came from text.
    pub span: Option<Span>,
    /// Source file name for the rendering, when the caller knows it.
    pub file: Option<String>,
    /// `dispatch_id` of the failing thread.
    pub thread: Option<[u32; 3]>,
}

impl InterpError {
    fn plain(message: impl Into<String>) -> Self {
        InterpError {
            message: message.into(),
            function: None,
            block: None,
            inst: None,
            span: None,
            file: None,
            thread: None,
        }
    }
    pub fn with_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(Rule::Interp, self.message.clone()).with_span(self.span);
        d.function = self.function.clone();
        d.block = self.block;
        d.inst = self.inst;
        d.file = self.file.clone();
        d
    }
}

impl fmt::Display for InterpError {
    /// `file:line:col: error: [interp] message (in @f, bb2, inst5)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_diagnostic().fmt(f)
    }
}

impl std::error::Error for InterpError {}

/// Run `kernel` with default options.
pub fn run_kernel(module: &Module, kernel: FuncId, inputs: &Inputs) -> Result<Outputs, InterpError> {
    run_kernel_with(module, kernel, inputs, &Options::default())
}

/// The input names of a function's arguments: their spelling in the text
/// form without `%` (as `text::print_module` writes them: names sanitized,
/// a repeated name suffixed `.1`, `.2`, ...; unnamed arguments numbered
/// `0`, `1`, ... in order among the unnamed ones).
/// The input key of a shader binding that has no name of its own (GLSL's
/// interface block without an instance name, `buffer B { uint x[]; };`):
/// its single member's name, less one trailing `_` when what remains is a
/// GLSL keyword (a member `out_` stands for an argument `out`). The front
/// end and the foreign-SPIR-V runner both key such a binding by it.
pub fn block_member_key(member: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "in",
        "out",
        "inout",
        "uniform",
        "buffer",
        "shared",
        "const",
        "attribute",
        "varying",
        "layout",
        "struct",
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "default",
        "break",
        "continue",
        "return",
        "discard",
        "true",
        "false",
        "void",
        "bool",
        "int",
        "uint",
        "float",
        "double",
        "precision",
        "highp",
        "mediump",
        "lowp",
        "flat",
        "smooth",
        "centroid",
        "patch",
        "sample",
        "coherent",
        "volatile",
        "restrict",
        "readonly",
        "writeonly",
        "invariant",
        "precise",
        "subroutine",
    ];
    match member.strip_suffix('_') {
        Some(rest) if KEYWORDS.contains(&rest) => rest.to_string(),
        _ => member.to_string(),
    }
}

pub fn arg_names(f: &crate::ir::Function) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut unnamed = 0u32;
    f.args
        .iter()
        .map(|a| match a.md.name.as_deref().and_then(crate::text::sanitize_name) {
            Some(base) => {
                let mut name = base.to_string();
                let mut k = 1u64;
                while seen.contains(&name) {
                    name = format!("{base}.{k}");
                    k += 1;
                }
                seen.insert(name.clone());
                name
            }
            None => {
                unnamed += 1;
                (unnamed - 1).to_string()
            }
        })
        .collect()
}

/// The threads a `whole_blocks` kernel runs for a requested dispatch: each
/// dimension rounded up to a multiple of the block size (`None` past
/// `u32::MAX`). The device runs `ceil(n / block)` workgroups without an
/// entry check, so it runs exactly these.
pub fn whole_block_dispatch(dispatch: [u32; 3], block_size: [u32; 3]) -> Option<[u32; 3]> {
    let mut out = [0u32; 3];
    for ((o, &n), &b) in out.iter_mut().zip(&dispatch).zip(&block_size) {
        *o = n.div_ceil(b.max(1)).checked_mul(b)?;
    }
    Some(out)
}

/// The threads a function of `kind` runs for a requested `dispatch`: a
/// `whole_blocks` kernel rounds it up ([`whole_block_dispatch`]; `None` past
/// `u32::MAX`), any other runs it as given. What a peer module without an
/// entry check (naga's, for the front end's kernels) must be dispatched
/// with to run the same threads.
pub fn threads_run(kind: FunctionKind, dispatch: [u32; 3]) -> Option<[u32; 3]> {
    match kind {
        FunctionKind::Kernel { block_size, whole_blocks: true, .. } => whole_block_dispatch(dispatch, block_size),
        _ => Some(dispatch),
    }
}

/// Run `kernel` over the dispatch grid.
pub fn run_kernel_with(
    module: &Module,
    kernel: FuncId,
    inputs: &Inputs,
    opts: &Options,
) -> Result<Outputs, InterpError> {
    if kernel.index() >= module.functions.len() {
        return Err(InterpError::plain(format!("no function {kernel} in the module")));
    }
    let f = module.func(kernel);
    let at_kernel = |msg: String| InterpError { function: Some(f.name.clone()), ..InterpError::plain(msg) };
    let FunctionKind::Kernel { block_size, .. } = f.kind else {
        return Err(at_kernel(format!("@{} is not a kernel", f.name)));
    };
    if block_size.contains(&0) {
        return Err(at_kernel(format!("@{} has a zero block size", f.name)));
    }
    limits::check_block_size(block_size).map_err(|e| at_kernel(format!("@{}: {e}", f.name)))?;
    if f.body().is_none() {
        return Err(at_kernel(format!("kernel @{} has no body", f.name)));
    }
    limits::check_shared(module, kernel).map_err(|e| at_kernel(format!("@{}: {e}", f.name)))?;
    if !opts.warp_size.is_power_of_two() || opts.warp_size > 128 {
        return Err(at_kernel(format!(
            "a warp size of {} lanes: Vulkan subgroup sizes are powers of two from 1 to 128",
            opts.warp_size
        )));
    }
    let requested = opts.dispatch.or(inputs.dispatch).unwrap_or(block_size);
    let dispatch = threads_run(f.kind, requested).ok_or_else(|| {
        at_kernel(format!("a dispatch of {requested:?} in whole blocks of {block_size:?} overflows u32"))
    })?;
    // In u128: three u32 dimensions can overflow u64, never u128.
    let total = dispatch.iter().map(|&d| u128::from(d)).product::<u128>();
    if total > u128::from(opts.max_threads) {
        return Err(at_kernel(format!(
            "a dispatch of {total} threads ({dispatch:?}) exceeds the limit of {} (the max-threads option)",
            opts.max_threads
        )));
    }
    let mut mach = Machine::new(module, opts.clone(), dispatch, block_size);

    // Arguments.
    let names = arg_names(f);
    if let Some(extra) = inputs.args.keys().find(|k| !names.contains(k)) {
        return Err(at_kernel(format!("input `{extra}` names no argument of @{}", f.name)));
    }
    let types = &module.types;
    let mut args = Vec::with_capacity(f.args.len());
    let mut refs = Vec::new();
    let mut buffer_args = Vec::new();
    for (k, a) in f.args.iter().enumerate() {
        let name = &names[k];
        let j = inputs.args.get(name).ok_or_else(|| at_kernel(format!("no input for argument `{name}`")))?;
        let bad = |e: String| at_kernel(format!("argument `{name}`: {e}"));
        match (a.kind, types.get(a.ty)) {
            (ArgKind::Resource, Type::Buffer(elem)) => {
                let data = io::buffer_from_json(types, *elem, j).map_err(bad)?;
                buffer_args.push((name.clone(), mach.bufs.len()));
                args.push(Val::R(mach.bufs.len() as u32));
                mach.bufs.push(Buf::Typed { elem: *elem, data });
            }
            (ArgKind::Resource, Type::ByteBuffer) => {
                let data = io::bytes_from_json(j).map_err(bad)?;
                buffer_args.push((name.clone(), mach.bufs.len()));
                args.push(Val::R(mach.bufs.len() as u32));
                mach.bufs.push(Buf::Bytes(data));
            }
            (ArgKind::Resource, Type::Texture { dim, elem }) => {
                let (size, levels, data) = io::texture_from_json(types, *dim, *elem, j).map_err(bad)?;
                if levels != 1 {
                    return Err(bad(format!(
                        "storage texture `{name}` has {levels} mip levels; it takes level 0 only"
                    )));
                }
                buffer_args.push((name.clone(), mach.bufs.len()));
                args.push(Val::R(mach.bufs.len() as u32));
                mach.bufs.push(Buf::Texture { elem: *elem, dim: *dim, size, levels, data });
            }
            (ArgKind::Resource, Type::BindlessArray) => {
                let slots = io::bindless_from_json(types, j).map_err(bad)?;
                buffer_args.push((name.clone(), mach.bufs.len()));
                args.push(Val::R(mach.bufs.len() as u32));
                mach.bufs.push(Buf::Bindless(slots));
            }
            (ArgKind::Resource, Type::Accel) => {
                let accel = ray::accel_from_json(j).map_err(|e| bad(e.to_string()))?;
                buffer_args.push((name.clone(), mach.bufs.len()));
                args.push(Val::R(mach.bufs.len() as u32));
                mach.bufs.push(Buf::Accel(accel));
            }
            (ArgKind::Resource, _) => {
                return Err(bad(format!("{} arguments are not supported by the interpreter", types.kind_name(a.ty))))
            }
            (ArgKind::Value, _) => args.push(io::val_from_json(types, a.ty, j).map_err(bad)?),
            (ArgKind::Reference, _) => {
                refs.push(io::val_from_json(types, a.ty, j).map_err(bad)?);
                let p = Ptr { root: Root::Local(refs.len() as u32 - 1), path: Default::default() };
                args.push(Val::P(std::rc::Rc::new(p)));
            }
        }
    }

    // Blocks in x-fastest order; threads past the dispatch edge do not run.
    let nblocks: Vec<u32> = (0..3).map(|i| dispatch[i].div_ceil(block_size[i])).collect();
    for bz in 0..nblocks[2] {
        for by in 0..nblocks[1] {
            for bx in 0..nblocks[0] {
                let bid = [bx, by, bz];
                let mut threads = Vec::new();
                let mut linear = 0u32;
                for tz in 0..block_size[2] {
                    for ty in 0..block_size[1] {
                        for tx in 0..block_size[0] {
                            let tid = [tx, ty, tz];
                            let did = [0, 1, 2].map(|i| bid[i] * block_size[i] + tid[i]);
                            let lane = linear;
                            linear += 1;
                            if (0..3).any(|i| did[i] >= dispatch[i]) {
                                continue;
                            }
                            threads.push(mach.thread(kernel, &args, &refs, Regs { tid, bid, did, lane }));
                        }
                    }
                }
                run_block(&mut mach, &mut threads)?;
            }
        }
    }

    let mut out = Outputs { printed: std::mem::take(&mut mach.printed), ..Default::default() };
    for (name, b) in buffer_args {
        if let Buf::Typed { data, .. } = &mach.bufs[b] {
            let bounds: std::collections::BTreeMap<usize, Vec<f64>> =
                data.iter().enumerate().filter_map(|(k, v)| Some((k, precision::leaf_bounds(v)?))).collect();
            if !bounds.is_empty() {
                out.bounds.insert(name.clone(), bounds);
            }
        }
        out.buffers.insert(name, io::buf_to_json(types, &mach.bufs[b]));
    }
    Ok(out)
}

/// Run the threads of one block round-robin until each blocks (barrier,
/// warp operation) or finishes; then release a warp group, or the barrier.
fn run_block(mach: &mut Machine, threads: &mut [Thread]) -> Result<(), InterpError> {
    let mut shared: Vec<Val> = mach.shared_types.iter().map(|&t| undef_of(&mach.m.types, t)).collect();
    mach.local_scalars = 0;
    loop {
        for t in threads.iter_mut() {
            if t.state == State::Run {
                mach.run_thread(t, &mut shared)?;
            }
        }
        if warp::resolve(mach, threads)? {
            continue;
        }
        let mut waiting = threads.iter().filter_map(|t| match t.state {
            State::Wait(f, b, i) => Some((t, f, b, i)),
            _ => None,
        });
        let Some((first, func, block, inst)) = waiting.next() else { return Ok(()) };
        if let Some((other, _, ob, oi)) = waiting.find(|w| (w.1, w.3) != (func, inst)) {
            let msg = format!(
                "threads of a block wait at different barriers: {inst} in {block} and {oi} in {ob} (thread {:?})",
                other.regs.did
            );
            return Err(InterpError { thread: Some(first.regs.did), ..mach.error(func, Some(block), Some(inst), msg) });
        }
        if let Some(done) = threads.iter().find(|t| t.state == State::Done) {
            let msg = format!(
                "barrier not reached by every thread of the block (thread {:?} finished while others wait here)",
                done.regs.did
            );
            return Err(InterpError { thread: Some(first.regs.did), ..mach.error(func, Some(block), Some(inst), msg) });
        }
        for t in threads.iter_mut() {
            t.state = State::Run;
        }
    }
}
