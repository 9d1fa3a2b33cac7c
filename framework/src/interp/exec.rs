//! The execution engine: each thread is a resumable state machine (an
//! explicit stack of frames, no OS threads). `Machine::run_thread` runs one
//! thread until it reaches a block barrier or finishes; the dispatch loop in
//! `mod.rs` schedules the threads of a block round-robin between barriers.
//! Control flow follows the executed successor of each terminator (structured
//! and raw forms alike); entering a block evaluates its leading phis
//! simultaneously from the edge taken.

use smallvec::SmallVec;
use xir_spec::{Opcode, SpecialRegister};

use crate::ir::{ArgKind, Block, ConstValue, FuncId, Function, Inst, InstCore, Module, TypeId, Value};

use super::arith::{binop, mask, R};
use super::autodiff::{self, has_tangent, Scope, NESTED, NON_DIFFERENTIABLE};
use super::memory::{Buf, Mem};
use super::ops::{eval_pure, index_value};
use super::value::{scalar_kind, undef_of, Ptr, Root, Sk, Val};
use super::{print, InterpError, Options};

/// Per-function tables computed once per run.
pub(crate) struct FuncInfo {
    /// Number of leading phis of each block (by block index).
    lead_phis: Vec<u32>,
    /// Storage slot of each alloca (by inst index): a frame-relative local
    /// slot for `alloca`, a block-wide slot for `alloca.shared`.
    slot: Vec<u32>,
    n_locals: u32,
    /// Scalar kind of operand 0 of each instruction (by inst index).
    sk0: Vec<Option<Sk>>,
    /// Instructions whose shape the interpreter cannot run (see `malformed`).
    bad: Vec<bool>,
}

/// A digest of the call sites a thread is inside (FNV-1a over each
/// frame's function and return instruction).
fn call_path(t: &Thread) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for fr in &t.frames {
        for x in [fr.func.index() as u64, fr.ret_to.map_or(u64::MAX, |i| i.index() as u64)] {
            h = (h ^ x).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn fr_func(t: &Thread) -> FuncId {
    t.frames.last().map(|f| f.func).unwrap_or(FuncId(0))
}

/// Why an instruction cannot be run safely: operand or block counts below
/// the spec's, case lists that do not match the blocks, or references to
/// ids that do not exist. Verified IR never has these; the interpreter
/// reports them instead of panicking.
fn malformed(m: &Module, f: &Function, i: Inst) -> Option<String> {
    let d = f.inst(i);
    let spec = &xir_spec::spec().op(d.opcode).spec;
    let op = d.opcode;
    if d.operands.len() < spec.operands.len() || d.blocks.len() < spec.blocks.len() {
        return Some(format!("`{op}` has too few operands or blocks"));
    }
    let fixed = match op {
        Opcode::Switch => 2,
        Opcode::BrIndexed => 1,
        _ => usize::MAX,
    };
    if fixed != usize::MAX && f.cases(i).len() + fixed != d.blocks.len() {
        return Some(format!(
            "`{op}` has {} case literals for {} case blocks",
            f.cases(i).len(),
            d.blocks.len() - fixed
        ));
    }
    if op == Opcode::Phi && d.operands.len() != d.blocks.len() {
        return Some("phi has different numbers of values and blocks".into());
    }
    if !m.types.contains(d.ty) {
        return Some(format!("`{op}` has a result type that does not exist"));
    }
    if d.operands.iter().enumerate().any(|(k, v)| matches!(v, Value::Func(_)) && !(op == Opcode::Call && k == 0)) {
        return Some(format!("`{op}` has a function operand where a value belongs"));
    }
    const MAX: u64 = super::limits::MAX_VALUE_SCALARS;
    let too_big = |t: TypeId| m.types.contains(t) && super::limits::scalars(&m.types, t) > MAX;
    if matches!(op, Opcode::Alloca | Opcode::AllocaShared) && too_big(d.ty)
        || d.operands.iter().any(|v| matches!(*v, Value::Undef(t) if too_big(t)))
    {
        return Some(format!("`{op}` needs a value larger than the interpreter's limit of {MAX} scalars"));
    }
    if let Some(b) = d.blocks.iter().find(|b| !f.block_exists(**b)) {
        return Some(format!("`{op}` refers to nonexistent block {b}"));
    }
    for v in &d.operands {
        let ok = match *v {
            Value::Inst(i) => f.inst_exists(i),
            Value::Arg(a) => (a as usize) < f.args.len(),
            Value::Const(c) => m.consts.contains(c),
            Value::Undef(t) => m.types.contains(t),
            Value::Func(g) => g.index() < m.functions.len(),
            Value::Reg(_) => true,
        };
        if !ok {
            return Some(format!("`{op}` has an operand that refers to nothing ({v:?})"));
        }
    }
    None
}

struct Frame {
    func: FuncId,
    block: Block,
    ip: usize,
    vals: Vec<Val>,
    args: Vec<Val>,
    base: u32,
    ret_to: Option<Inst>,
    /// Scalars this frame's local variables hold (`Machine::local_scalars`).
    scalars: u64,
}

#[derive(Copy, Clone, Debug)]
pub(crate) struct Regs {
    pub tid: [u32; 3],
    pub bid: [u32; 3],
    pub did: [u32; 3],
    pub lane: u32,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum State {
    Run,
    /// Waiting at the barrier `sync_block` instruction of a function.
    Wait(FuncId, Block, Inst),
    /// Waiting at a warp operation for the other lanes (operands in
    /// `Thread::pending`); the last field names the call path (the calls
    /// the thread is inside), so that lanes reaching one callee instruction
    /// from different call sites are different instances, as under
    /// maximal reconvergence.
    WarpWait(FuncId, Block, Inst, u64),
    Done,
}

pub(crate) struct Thread {
    frames: Vec<Frame>,
    locals: Vec<Val>,
    pub regs: Regs,
    pub state: State,
    /// Operands of the warp operation the thread waits at.
    pub pending: SmallVec<[Val; 4]>,
    /// The autodiff scope the thread runs (`autodiff.rs`), if any.
    ad: Option<Box<Scope>>,
}

/// What the autodiff hook did with an instruction.
enum Scoped {
    /// Nothing: the ordinary step runs it (with the operands as adjusted).
    Run,
    /// It computed the result.
    Val(Val),
    /// It ran the instruction, which has no result.
    Next,
}

enum Flow {
    Next,
    Jump(Block),
    Call(FuncId, SmallVec<[Val; 4]>),
    Ret(Option<Val>),
    Wait,
    Warp(SmallVec<[Val; 4]>),
}

pub(crate) struct Machine<'m> {
    pub m: &'m Module,
    consts: Vec<Val>,
    info: Vec<FuncInfo>,
    pub shared_types: Vec<TypeId>,
    pub bufs: Vec<Buf>,
    pub printed: Vec<String>,
    /// Bytes of `printed`, lines and newlines (`Options::max_print_bytes`).
    printed_bytes: u64,
    /// Scalars held by the local variables of the running block's threads
    /// (`limits::MAX_BLOCK_LOCAL_SCALARS`).
    pub local_scalars: u64,
    /// Ray-query objects of the run (`ray.rs`).
    rays: super::ray::Rays,
    /// Instructions the run executed (`Options::max_steps`).
    steps: u64,
    opts: Options,
    pub dispatch_size: [u32; 3],
    pub block_size: [u32; 3],
    /// The shared static checks of autodiff scopes (`xir::autodiff`), run
    /// once per function the first time a scope runs in it or a scope
    /// calls it: `None` until then, then the first refusal, if any.
    scope_checks: Vec<Option<Option<InterpError>>>,
}

pub(crate) fn const_val(m: &Module, c: crate::ir::Const) -> Val {
    match &m.consts.get(c).value {
        ConstValue::Scalar(b) => Val::S(*b),
        ConstValue::Composite(ms) => Val::agg(ms.iter().map(|&x| const_val(m, x)).collect()),
    }
}

fn vec3(v: [u32; 3]) -> Val {
    Val::agg(v.iter().map(|&x| Val::S(x as u64)).collect())
}

impl<'m> Machine<'m> {
    /// Lanes per warp (`Options::warp_size`).
    pub fn warp_size(&self) -> u32 {
        self.opts.warp_size
    }

    /// The device model of the precision shadow, when it is on.
    pub(crate) fn precision(&self) -> Option<&super::Precision> {
        self.opts.precision.as_ref()
    }

    pub fn new(m: &'m Module, opts: Options, dispatch_size: [u32; 3], block_size: [u32; 3]) -> Self {
        let consts = m.consts.iter().map(|(c, _)| const_val(m, c)).collect();
        let mut shared_types = Vec::new();
        let info = m
            .functions
            .iter()
            .map(|f| {
                let mut lead_phis = vec![0u32; f.block_capacity()];
                let mut slot = vec![u32::MAX; f.inst_capacity()];
                let mut n_locals = 0;
                let mut sk0 = vec![None; f.inst_capacity()];
                let mut bad = vec![false; f.inst_capacity()];
                for &b in f.blocks() {
                    let insts = f.block(b).insts();
                    lead_phis[b.index()] =
                        insts.iter().take_while(|&&i| f.inst_exists(i) && f.opcode(i) == Opcode::Phi).count() as u32;
                    for &i in insts {
                        if !f.inst_exists(i) || malformed(m, f, i).is_some() {
                            if let Some(slot) = bad.get_mut(i.index()) {
                                *slot = true;
                            }
                            continue;
                        }
                        sk0[i.index()] =
                            f.inst(i).operands.first().and_then(|&v| scalar_kind(&m.types, f.value_type(m, v)));
                        match f.opcode(i) {
                            Opcode::Alloca => {
                                slot[i.index()] = n_locals;
                                n_locals += 1;
                            }
                            Opcode::AllocaShared => {
                                slot[i.index()] = shared_types.len() as u32;
                                shared_types.push(f.inst(i).ty);
                            }
                            _ => {}
                        }
                    }
                }
                FuncInfo { lead_phis, slot, n_locals, sk0, bad }
            })
            .collect();
        Machine {
            m,
            consts,
            info,
            shared_types,
            bufs: Vec::new(),
            printed: Vec::new(),
            printed_bytes: 0,
            local_scalars: 0,
            rays: Default::default(),
            steps: 0,
            opts,
            dispatch_size,
            block_size,
            scope_checks: vec![None; m.functions.len()],
        }
    }

    /// The shared structural checks of autodiff scopes (the `autodiff` pass
    /// runs the same ones, so both refuse a malformed scope with the same
    /// words at the same place), for function `fid`; cached. A function
    /// with an instruction the interpreter cannot run is refused at that
    /// instruction first: the checks assume well-formed instructions.
    fn scope_check(&mut self, fid: FuncId) -> Result<(), InterpError> {
        if self.scope_checks[fid.index()].is_none() {
            let m = self.m;
            let f = m.func(fid);
            let bad =
                f.blocks().iter().flat_map(|&b| f.block(b).insts().iter().map(move |&i| (b, i))).find(|&(_, i)| {
                    !f.inst_exists(i) || self.info[fid.index()].bad.get(i.index()).copied().unwrap_or(true)
                });
            let first = match bad {
                Some((b, i)) => {
                    let msg = if f.inst_exists(i) { malformed(m, f, i) } else { None };
                    let msg = msg.unwrap_or_else(|| format!("block lists nonexistent instruction {i}"));
                    Some(self.error(fid, Some(b), Some(i).filter(|&i| f.inst_exists(i)), msg))
                }
                None => crate::autodiff::check_scopes(m, f).err().and_then(|ds| ds.into_iter().next()).map(|d| {
                    InterpError {
                        message: d.message,
                        function: Some(f.name.clone()),
                        block: d.block,
                        inst: d.inst,
                        span: d.span,
                        file: None,
                        thread: None,
                    }
                }),
            };
            self.scope_checks[fid.index()] = Some(first);
        }
        match &self.scope_checks[fid.index()] {
            Some(Some(e)) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// A thread at the entry of `kernel`; `refs` are the initial values of
    /// its reference arguments (one local slot each).
    pub fn thread(&self, kernel: FuncId, args: &[Val], refs: &[Val], regs: Regs) -> Thread {
        let f = self.m.func(kernel);
        let mut locals: Vec<Val> = refs.to_vec();
        let base = locals.len() as u32;
        locals.resize(base as usize + self.info[kernel.index()].n_locals as usize, Val::U);
        let body = f.body().unwrap_or(Block(0));
        let frame = Frame {
            func: kernel,
            block: body,
            ip: self.info[kernel.index()].lead_phis.get(body.index()).copied().unwrap_or(0) as usize,
            vals: vec![Val::U; f.inst_capacity()],
            args: args.to_vec(),
            base,
            ret_to: None,
            scalars: 0,
        };
        Thread { frames: vec![frame], locals, regs, state: State::Run, pending: SmallVec::new(), ad: None }
    }

    pub fn error(&self, func: FuncId, block: Option<Block>, inst: Option<Inst>, msg: impl Into<String>) -> InterpError {
        let f = self.m.func(func);
        let span = inst.and_then(|i| f.inst_span(i)).or_else(|| block.and_then(|b| f.block(b).span));
        InterpError { message: msg.into(), function: Some(f.name.clone()), block, inst, span, file: None, thread: None }
    }

    /// Run `t` until it waits at a barrier or finishes.
    pub fn run_thread(&mut self, t: &mut Thread, shared: &mut [Val]) -> Result<(), InterpError> {
        let located = |e: InterpError, t: &Thread| InterpError { thread: Some(t.regs.did), ..e };
        t.state = State::Run;
        loop {
            let Some(fr) = t.frames.last() else {
                t.state = State::Done;
                return Ok(());
            };
            let (func, block, ip) = (fr.func, fr.block, fr.ip);
            let f = self.m.func(func);
            let Some(&inst) = f.block(block).insts().get(ip) else {
                return Err(located(self.error(func, Some(block), None, "block ends without a terminator"), t));
            };
            self.steps += 1;
            if self.steps > self.opts.max_steps {
                let msg =
                    format!("step limit of {} instructions for the run exceeded (infinite loop?)", self.opts.max_steps);
                return Err(located(self.error(func, Some(block), Some(inst), msg), t));
            }
            if f.inst_exists(inst) && f.opcode(inst) == Opcode::AutodiffScope && t.ad.is_none() {
                self.scope_check(func).map_err(|e| located(e, t))?;
            }
            let flow = match self.step(t, shared, f, inst) {
                Ok(fl) => fl,
                Err(msg) => return Err(located(self.error(func, Some(block), Some(inst), msg), t)),
            };
            match flow {
                Flow::Next => t.frames.last_mut().expect("frame").ip += 1,
                Flow::Wait => {
                    t.frames.last_mut().expect("frame").ip += 1;
                    t.state = State::Wait(func, block, inst);
                    return Ok(());
                }
                Flow::Warp(ops) => {
                    t.pending = ops;
                    t.state = State::WarpWait(func, block, inst, call_path(t));
                    return Ok(());
                }
                Flow::Jump(target) => {
                    self.enter(t, target).map_err(|e| located(e, t))?;
                    if t.ad.as_ref().is_some_and(|sc| sc.merge == target && sc.depth == t.frames.len()) {
                        end_scope(t);
                    }
                }
                Flow::Call(callee, args) => {
                    let g = self.m.func(callee);
                    if g.is_external() {
                        let msg = format!("call to external function @{} (no body to interpret)", g.name);
                        return Err(located(self.error(func, Some(block), Some(inst), msg), t));
                    }
                    if t.frames.len() >= self.opts.max_call_depth as usize {
                        let msg =
                            format!("call depth limit of {} exceeded (runaway recursion?)", self.opts.max_call_depth);
                        return Err(located(self.error(func, Some(block), Some(inst), msg), t));
                    }
                    let Some(body) = g.body() else {
                        let msg = format!("callee @{} has no body", g.name);
                        return Err(located(self.error(func, Some(block), Some(inst), msg), t));
                    };
                    // A callee runs as part of the scope: its intrinsics
                    // are refused as the pass refuses them.
                    if t.ad.is_some() {
                        self.scope_check(callee).map_err(|e| located(e, t))?;
                    }
                    let base = t.locals.len() as u32;
                    t.locals.resize(base as usize + self.info[callee.index()].n_locals as usize, Val::U);
                    t.frames.push(Frame {
                        func: callee,
                        block: body,
                        ip: self.info[callee.index()].lead_phis[body.index()] as usize,
                        vals: vec![Val::U; g.inst_capacity()],
                        args: args.into_vec(),
                        base,
                        ret_to: Some(inst),
                        scalars: 0,
                    });
                }
                Flow::Ret(v) => {
                    let done = t.frames.pop().expect("frame");
                    t.locals.truncate(done.base as usize);
                    self.local_scalars -= done.scalars;
                    match t.frames.last_mut() {
                        None => {
                            t.state = State::Done;
                            return Ok(());
                        }
                        Some(caller) => {
                            if let (Some(r), Some(v)) = (done.ret_to, v) {
                                caller.vals[r.index()] = v;
                            }
                            caller.ip += 1;
                        }
                    }
                }
            }
        }
    }

    /// Give a thread waiting at a warp operation its result and let it go on.
    pub fn resume_warp(&self, t: &mut Thread, v: Val) {
        let fr = t.frames.last_mut().expect("frame");
        let inst = self.m.func(fr.func).block(fr.block).insts()[fr.ip];
        fr.vals[inst.index()] = v;
        fr.ip += 1;
        t.pending.clear();
        t.state = State::Run;
    }

    /// Go to `target`, evaluating its phis from the edge taken.
    fn enter(&mut self, t: &mut Thread, target: Block) -> Result<(), InterpError> {
        let regs = t.regs;
        let fr = t.frames.last_mut().expect("frame");
        let f = self.m.func(fr.func);
        if !f.block_exists(target) {
            return Err(self.error(fr.func, Some(fr.block), None, format!("branch to nonexistent block {target}")));
        }
        let from = fr.block;
        let n = self.info[fr.func.index()].lead_phis[target.index()] as usize;
        if n > 0 {
            let insts = f.block(target).insts();
            let mut tmp: SmallVec<[(Inst, Val); 4]> = SmallVec::new();
            for &pi in &insts[..n] {
                let d = f.inst(pi);
                let Some(k) = d.blocks.iter().position(|&b| b == from) else {
                    let msg = format!("phi has no incoming value for predecessor {from}");
                    return Err(self.error(fr.func, Some(target), Some(pi), msg));
                };
                let v =
                    self.value(fr, &regs, d.operands[k]).map_err(|m| self.error(fr.func, Some(target), Some(pi), m))?;
                tmp.push((pi, v));
            }
            for (pi, v) in tmp {
                fr.vals[pi.index()] = v;
            }
        }
        fr.block = target;
        fr.ip = n;
        Ok(())
    }

    fn value(&self, fr: &Frame, regs: &Regs, v: Value) -> R<Val> {
        Ok(match v {
            Value::Inst(i) => fr.vals[i.index()].clone(),
            Value::Arg(a) => fr.args.get(a as usize).cloned().ok_or("argument index out of range")?,
            Value::Const(c) => self.consts[c.index()].clone(),
            Value::Undef(ty) => undef_of(&self.m.types, ty),
            Value::Reg(r) => match r {
                SpecialRegister::ThreadId => vec3(regs.tid),
                SpecialRegister::BlockId => vec3(regs.bid),
                SpecialRegister::DispatchId => vec3(regs.did),
                SpecialRegister::DispatchSize => vec3(self.dispatch_size),
                SpecialRegister::BlockSize => vec3(self.block_size),
                SpecialRegister::WarpLaneId => Val::S((regs.lane % self.opts.warp_size) as u64),
                SpecialRegister::WarpSize => Val::S(self.opts.warp_size as u64),
                // Warps are `warp_size` consecutive linear thread indices (`warp.rs`).
                SpecialRegister::WarpId => Val::S((regs.lane / self.opts.warp_size) as u64),
                SpecialRegister::WarpCount => {
                    let threads: u64 = self.block_size.iter().map(|&n| u64::from(n)).product();
                    Val::S(threads.div_ceil(u64::from(self.opts.warp_size)))
                }
                SpecialRegister::KernelId => Val::S(0),
                r => return Err(format!("special register ${} is not available in a compute dispatch", r.name())),
            },
            Value::Func(_) => return Err("a function is not a value".into()),
        })
    }

    fn step(&mut self, t: &mut Thread, shared: &mut [Val], f: &Function, inst: Inst) -> R<Flow> {
        use Opcode::*;
        let m = self.m;
        if !f.inst_exists(inst) {
            return Err(format!("block lists nonexistent instruction {inst}"));
        }
        let d = f.inst(inst);
        if self.info[fr_func(t).index()].bad[inst.index()] {
            return Err(malformed(m, f, inst).unwrap_or_else(|| "malformed instruction".into()));
        }
        let regs = t.regs;
        let Thread { frames, locals, ad, .. } = t;
        let depth = frames.len();
        let fr = frames.last_mut().expect("frame");
        let mut ops: SmallVec<[Val; 4]> = SmallVec::new();
        for &v in &d.operands {
            // Fast paths for the common operands; the rest go through `value`.
            match v {
                Value::Inst(i) => ops.push(fr.vals[i.index()].clone()),
                Value::Const(c) => ops.push(self.consts[c.index()].clone()),
                Value::Func(_) => {}
                _ => ops.push(self.value(fr, &regs, v)?),
            }
        }
        if let Some(sc) = ad.as_deref_mut() {
            let mem = Mem { locals, shared, bufs: &mut self.bufs };
            match scoped(m, sc, mem, f, inst, &mut ops)? {
                Scoped::Run => {}
                Scoped::Next => return Ok(Flow::Next),
                Scoped::Val(v) => {
                    fr.vals[inst.index()] = v;
                    return Ok(Flow::Next);
                }
            }
        }
        let cond = |v: &Val| -> R<bool> { Ok(v.bits()? != 0) };
        let result = match d.opcode {
            // ---- control flow ------------------------------------------
            If | CondBr => {
                super::precision::certain(&ops[0], "a branch")?;
                return Ok(Flow::Jump(d.blocks[if cond(&ops[0])? { 0 } else { 1 }]));
            }
            AutodiffScope => {
                if self.opts.precision.is_some() {
                    return Err("autodiff scopes are not run under the precision shadow".into());
                }
                *ad = Some(Box::new(Scope::new(d.blocks[1], depth)));
                return Ok(Flow::Jump(d.blocks[0]));
            }
            AutodiffDetach => match &ops[0] {
                Val::P(p) => Mem { locals, shared, bufs: &mut self.bufs }.read(p)?,
                v => v.clone(),
            },
            AutodiffRequiresGradient
            | AutodiffGradient
            | AutodiffGradientMarker
            | AutodiffAccumulateGradient
            | AutodiffBackward => return Err(format!("`{}` outside an autodiff scope", d.opcode)),
            Loop | SimpleLoop | Br | Break | Continue | Outline | RayQueryLoop => return Ok(Flow::Jump(d.blocks[0])),
            RayQueryDispatch => {
                let role = super::ray::dispatch(&mut self.rays, &ops[0], &mut self.bufs)?;
                return Ok(Flow::Jump(d.blocks[role]));
            }
            Switch | BrIndexed => {
                super::precision::certain(&ops[0], "a switch")?;
                let sel = ops[0].bits()?;
                let bits = scalar_kind(&m.types, f.value_type(m, d.operands[0])).map(|s| s.bits()).unwrap_or(64);
                let first_case = if d.opcode == Switch { 2 } else { 1 };
                let default = d.blocks[first_case - 1];
                let hit = f.cases(inst).iter().position(|&c| mask(c, bits) == mask(sel, bits));
                return Ok(Flow::Jump(hit.map(|k| d.blocks[first_case + k]).unwrap_or(default)));
            }
            Return => return Ok(Flow::Ret(ops.into_iter().next())),
            Unreachable => {
                return Err(match f.text(inst) {
                    Some(t) if !t.is_empty() => format!("reached `unreachable`: {t}"),
                    _ => "reached `unreachable`".into(),
                })
            }
            Phi => return Err("phi after the start of its block".into()),
            SyncBlock => return Ok(Flow::Wait),
            op if super::warp::is_warp_op(op) => return Ok(Flow::Warp(ops)),
            ShaderExecutionReorder => return Ok(Flow::Next),
            Call => {
                let Some(Value::Func(callee)) = d.operands.first().copied() else {
                    return Err("call without a function callee".into());
                };
                let g = m.func(callee);
                if g.args.len() != ops.len() {
                    return Err(format!("@{} takes {} arguments, {} given", g.name, g.args.len(), ops.len()));
                }
                for (a, v) in g.args.iter().zip(&ops) {
                    if a.kind == ArgKind::Reference && !matches!(v, Val::P(_)) {
                        return Err(format!("reference argument of @{} is not an lvalue", g.name));
                    }
                }
                return Ok(Flow::Call(callee, ops));
            }
            // ---- memory ------------------------------------------------
            Alloca => {
                // One variable per call, wherever the alloca sits: executing it
                // again (in a loop) keeps the contents, as hoisting would.
                let slot = fr.base + self.info[fr.func.index()].slot[inst.index()];
                if matches!(locals[slot as usize], Val::U) {
                    let n = super::limits::scalars(&m.types, d.ty);
                    const MAX: u64 = super::limits::MAX_BLOCK_LOCAL_SCALARS;
                    if self.local_scalars.saturating_add(n) > MAX {
                        return Err(format!(
                            "the local variables of the block's threads exceed the interpreter's limit of {MAX} scalars"
                        ));
                    }
                    self.local_scalars += n;
                    fr.scalars += n;
                    locals[slot as usize] = undef_of(&m.types, d.ty);
                }
                Val::P(std::rc::Rc::new(Ptr { root: Root::Local(slot), path: SmallVec::new() }))
            }
            AllocaShared => {
                let slot = self.info[fr.func.index()].slot[inst.index()];
                Val::P(std::rc::Rc::new(Ptr { root: Root::Shared(slot), path: SmallVec::new() }))
            }
            Gep => self.address(f, d, &ops, 1)?,
            Load => {
                let Val::P(p) = &ops[0] else { return Err("load from a non-address".into()) };
                let mem = Mem { locals, shared, bufs: &mut self.bufs };
                let v = mem.read(p)?;
                if v.all_undef() {
                    return Err("read of uninitialized memory".into());
                }
                v
            }
            Store => {
                let Val::P(p) = &ops[0] else { return Err("store to a non-address".into()) };
                let mut mem = Mem { locals, shared, bufs: &mut self.bufs };
                let v = ops[1].clone();
                if matches!(p.root, Root::Buffer(_)) && v.any_undef() {
                    return Err("store of an undefined value into a buffer".into());
                }
                mem.modify(p, |slot| {
                    *slot = v;
                    Ok(())
                })?;
                return Ok(Flow::Next);
            }
            AtomicExchange
            | AtomicCompareExchange
            | AtomicFetchAdd
            | AtomicFetchSub
            | AtomicFetchAnd
            | AtomicFetchOr
            | AtomicFetchXor
            | AtomicFetchMin
            | AtomicFetchMax => {
                let nvals = if d.opcode == AtomicCompareExchange { 2 } else { 1 };
                let Val::P(p) = self.address(f, d, &ops, 1 + nvals)? else { unreachable!("address() yields P") };
                let sk = scalar_kind(&m.types, f.value_type(m, d.operands[1])).ok_or("atomic on a non-scalar")?;
                let (a, b) = (ops[1].bits()?, if nvals == 2 { ops[2].bits()? } else { 0 });
                let op = d.opcode;
                let mut mem = Mem { locals, shared, bufs: &mut self.bufs };
                mem.modify(&p, |slot| {
                    let old = slot.bits().map_err(|_| "atomic on uninitialized memory".to_string())?;
                    let new = match op {
                        AtomicExchange => a,
                        AtomicCompareExchange => {
                            if old == a {
                                b
                            } else {
                                old
                            }
                        }
                        AtomicFetchAdd => binop(Add, sk, old, a)?,
                        AtomicFetchSub => binop(Sub, sk, old, a)?,
                        AtomicFetchAnd => binop(BitAnd, sk, old, a)?,
                        AtomicFetchOr => binop(BitOr, sk, old, a)?,
                        AtomicFetchXor => binop(BitXor, sk, old, a)?,
                        AtomicFetchMin => binop(Min, sk, old, a)?,
                        _ => binop(Max, sk, old, a)?,
                    };
                    *slot = Val::S(new);
                    Ok(Val::S(old))
                })?
            }
            // A volatile access is an ordinary one here: one thread sees its own writes, and
            // other threads' writes only across a barrier (a race otherwise).
            BufferRead | BufferWrite | BufferVolatileRead | BufferVolatileWrite => {
                let Val::R(b) = ops[0] else { return Err("buffer operand is not a buffer".into()) };
                let i = index_value(m, f, d, 1, &ops[1])?;
                let p = Ptr { root: Root::Buffer(b), path: SmallVec::from_slice(&[i]) };
                let mut mem = Mem { locals, shared, bufs: &mut self.bufs };
                if matches!(d.opcode, BufferRead | BufferVolatileRead) {
                    mem.read(&p)?
                } else {
                    let v = ops[2].clone();
                    if v.any_undef() {
                        return Err("write of an undefined value into a buffer".into());
                    }
                    mem.modify(&p, |slot| {
                        *slot = v;
                        Ok(())
                    })?;
                    return Ok(Flow::Next);
                }
            }
            // Only the addressed part changes: the element's other parts keep
            // what this or another thread wrote there. Indices out of range are
            // errors, as for `buffer.write` and atomics (`Mem::modify`).
            BufferWritePart => {
                let Val::R(b) = ops[0] else { return Err("buffer operand is not a buffer".into()) };
                let mut path: SmallVec<[u64; 4]> = SmallVec::new();
                path.push(index_value(m, f, d, 1, &ops[1])?);
                for (k, v) in ops.iter().enumerate().skip(3) {
                    path.push(index_value(m, f, d, k, v)?);
                }
                let v = ops[2].clone();
                if v.any_undef() {
                    return Err("write of an undefined value into a buffer".into());
                }
                let p = Ptr { root: Root::Buffer(b), path };
                let mut mem = Mem { locals, shared, bufs: &mut self.bufs };
                mem.modify(&p, |slot| {
                    *slot = v;
                    Ok(())
                })?;
                return Ok(Flow::Next);
            }
            op if super::ray::is_ray_op(op) => {
                let rays = &mut self.rays;
                match super::ray::ray_op(m, f, d, &ops, &mut self.bufs, rays)? {
                    Some(v) => v,
                    None => return Ok(Flow::Next),
                }
            }
            op if super::resource::is_resource_op(op) => {
                match super::resource::resource_op(m, f, d, &ops, &mut self.bufs)? {
                    Some(v) => v,
                    None => return Ok(Flow::Next),
                }
            }
            // ---- debugging and misc ------------------------------------
            Print => {
                let tys: Vec<TypeId> = d.operands.iter().map(|&v| f.value_type(m, v)).collect();
                let line = print::format(&m.types, f.text(inst).unwrap_or(""), &tys, &ops)?;
                self.printed_bytes = self.printed_bytes.saturating_add(line.len() as u64 + 1);
                if self.printed_bytes > self.opts.max_print_bytes {
                    return Err(format!(
                        "printed output exceeds the limit of {} bytes (the max-print-bytes option)",
                        self.opts.max_print_bytes
                    ));
                }
                self.printed.push(line);
                return Ok(Flow::Next);
            }
            Assert | Assume => {
                if !cond(&ops[0])? {
                    let what = if d.opcode == Assert { "assertion failed" } else { "assumption violated" };
                    return Err(match f.text(inst) {
                        Some(t) if !t.is_empty() => format!("{what}: {t}"),
                        _ => what.into(),
                    });
                }
                return Ok(Flow::Next);
            }
            DebugBreak => return Ok(Flow::Next),
            Clock => Val::S(self.steps),
            _ => {
                let sk0 = self.info[fr.func.index()].sk0[inst.index()];
                let v = eval_pure(m, f, d, sk0, &ops)?;
                match &self.opts.precision {
                    Some(p) => super::precision::annotate(m, f, d, sk0, &ops, v, p)?,
                    None => v,
                }
            }
        };
        fr.vals[inst.index()] = result;
        Ok(Flow::Next)
    }

    /// The address `base[indices...]` where the indices start at operand
    /// `first_index` (gep and atomics): a buffer base takes the element
    /// index first.
    fn address(&self, f: &Function, d: &InstCore, ops: &[Val], first_index: usize) -> R<Val> {
        let mut path: SmallVec<[u64; 4]> = SmallVec::new();
        let base = match &ops[0] {
            Val::P(p) => {
                path.extend_from_slice(&p.path);
                p.root
            }
            Val::R(b) => Root::Buffer(*b),
            _ => return Err("address base is neither an lvalue nor a buffer".into()),
        };
        for (k, v) in ops.iter().enumerate().skip(first_index) {
            path.push(index_value(self.m, f, d, k, v)?);
        }
        Ok(Val::P(std::rc::Rc::new(Ptr { root: base, path })))
    }
}

/// The end of the thread's autodiff scope (its merge): every tangent of the
/// frame and of local memory is dropped.
fn end_scope(t: &mut Thread) {
    t.ad = None;
    if let Some(fr) = t.frames.last_mut() {
        fr.vals.iter_mut().for_each(autodiff::strip_in_place);
    }
    t.locals.iter_mut().for_each(autodiff::strip_in_place);
}

/// The step of an instruction inside an autodiff scope (its body or a
/// function it calls): the intrinsics, tangents of the differentiable
/// operations, buffers as constants, and the refusals of docs/autodiff.md
/// "What a scope may not do" that only a run can see (the structural ones
/// are `xir::autodiff`'s, checked before the scope starts: see
/// `Machine::scope_check`).
fn scoped(m: &Module, sc: &mut Scope, mut mem: Mem, f: &Function, inst: Inst, ops: &mut [Val]) -> R<Scoped> {
    use super::semantics::{semantics, Semantics};
    use Opcode::*;
    let d = f.inst(inst);
    let types = &m.types;
    let addr = |v: &Val| -> R<Ptr> {
        match v {
            Val::P(p) => Ok((**p).clone()),
            _ => Err(format!("`{}` of a value that is not an address", d.opcode)),
        }
    };
    match d.opcode {
        // A scope in a function the scope calls (the pass, which inlines
        // the callee, sees it nested).
        AutodiffScope => return Err(NESTED.into()),
        AutodiffRequiresGradient => {
            let p = addr(&ops[0])?;
            let v = mem.read(&p)?;
            let v = sc.mark(types, &p, f.value_type(m, d.operands[0]), v)?;
            mem.modify(&p, |slot| {
                *slot = v;
                Ok(())
            })?;
            return Ok(Scoped::Next);
        }
        AutodiffGradient => return Ok(Scoped::Val(sc.gradient(types, &addr(&ops[0])?, d.ty)?)),
        AutodiffAccumulateGradient => {
            sc.accumulate(types, &addr(&ops[0])?, ops[1].clone())?;
            return Ok(Scoped::Next);
        }
        AutodiffGradientMarker => {
            sc.marker(d.operands[0], ops[1].clone());
            return Ok(Scoped::Next);
        }
        AutodiffBackward => {
            let y = match &ops[0] {
                Val::P(p) => mem.read(p)?,
                v => v.clone(),
            };
            if y.all_undef() {
                return Err("`backward` of an undefined value".into());
            }
            sc.backward(types, f.value_type(m, d.operands[0]), y)?;
            return Ok(Scoped::Next);
        }
        AutodiffDetach => {
            let v = match &ops[0] {
                Val::P(p) => mem.read(p)?,
                v => v.clone(),
            };
            return Ok(Scoped::Val(autodiff::strip(&v)));
        }
        // Tangents pass into the callee with its arguments (values, and
        // addresses of variables holding them) and come back with its
        // result: the callee's instructions run through this same step.
        // (A `return` in the scope's own body is refused statically.)
        Call | Return => return Ok(Scoped::Run),
        // Buffers carry no gradient: a write stores the primal value.
        Store | Load => {
            if let Val::P(p) = &ops[0] {
                match p.root {
                    Root::Buffer(b) => {
                        sc.touch(b, d.opcode == Store)?;
                        if d.opcode == Store {
                            ops[1] = autodiff::strip(&ops[1]);
                        }
                    }
                    Root::Shared(_) if d.opcode == Store && has_tangent(&ops[1]) => {
                        return Err(NON_DIFFERENTIABLE.into())
                    }
                    _ => {}
                }
            }
            return Ok(Scoped::Run);
        }
        BufferRead | BufferWrite | BufferWritePart => {
            if let Val::R(b) = ops[0] {
                sc.touch(b, d.opcode != BufferRead)?;
            }
            if d.opcode != BufferRead {
                ops[2] = autodiff::strip(&ops[2]);
            }
            return Ok(Scoped::Run);
        }
        Gep => return Ok(Scoped::Run),
        _ => {}
    }
    if xir_spec::spec().op(d.opcode).has(xir_spec::Trait::Atomic) {
        match &ops[0] {
            Val::R(b) => sc.touch(*b, true)?,
            Val::P(p) => {
                if let Root::Buffer(b) = p.root {
                    sc.touch(b, true)?;
                }
            }
            _ => {}
        }
    }
    let tangent = ops.iter().any(has_tangent);
    if !tangent || autodiff::moves(d.opcode) {
        return Ok(Scoped::Run);
    }
    if semantics(d.opcode) != Semantics::Pure {
        return Err(NON_DIFFERENTIABLE.into());
    }
    let sks: SmallVec<[Option<Sk>; 4]> = d.operands.iter().map(|&v| scalar_kind(types, f.value_type(m, v))).collect();
    let primal = eval_pure(m, f, d, sks.first().copied().flatten(), ops)?;
    Ok(Scoped::Val(autodiff::derive(d.opcode, &sks, scalar_kind(types, d.ty), ops, primal)?))
}
