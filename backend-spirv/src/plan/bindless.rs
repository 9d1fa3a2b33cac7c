//! Bindless buffer planning: which `bindless_array` arguments need a metadata
//! descriptor, whether the kernel needs the global buffer heap, and which
//! bindless accesses index the heap with a divergent slot.
//!
//! Two independent facts (the reference, "Bindings and Vulkan ABI"): a real
//! read or write (`bindless.buffer_read`, `bindless.byte_buffer_read`,
//! `bindless.buffer_write`) needs the global buffer heap *and* its array's
//! metadata descriptor; a size-only query (`bindless.buffer_size`) needs only
//! the metadata. So a metadata descriptor exists only beside an argument that
//! needs it, and the heap only when some access reads or writes through it.
//!
//! Callables: `callable_specialization` inlines every call that passes a
//! resource, so after `spirv-legalize` bindless operations only address
//! kernel arguments and this analysis walks the kernel alone. A bindless
//! operation in a reachable callable (whose array is a callable parameter)
//! is rejected with a located diagnostic, never guessed at. Only reachable
//! instructions count (`callgraph::reachable_insts`): unreachable code
//! declares and requires nothing.
//!
//! Typed elements ([`crate::plan::layout::typed_access`]): the heap is word storage, and a typed
//! view's offset and size are exact multiples of its element stride, so an
//! element `index` starts at byte `index * size(T)` with alignment
//! `gcd(size(T), 4)` (the reference, "typed word-storage"). A 32/64-bit-only
//! element of whole words moves as plain words; an element with 8/16-bit
//! leaves moves leaf by leaf inside its containing words (every leaf is
//! naturally aligned, so none straddles a word). Its write is plain word
//! stores when it covers each word it touches completely, else one masked
//! CAS loop (planned as a CAS site like a byte-buffer store), so threads
//! writing neighbouring sub-word elements never lose each other's bytes.
//!
//! Divergence: a heap access is `NonUniform` exactly when
//! [`xir::analysis::Uniformity`] says its slot operand is divergent (the heap
//! index is loaded from the read-only metadata at that slot, so it is as
//! uniform as the slot). Constants are uniform and never selected.

use rustc_hash::{FxHashMap, FxHashSet};
use xir::analysis::Uniformity;
use xir::verify::inst_diag;
use xir::{Diagnostic, FuncId, Function, Inst, Module, Opcode, Type, TypeId, TypeTable, Value};

use crate::plan::layout::{typed_access, TypedAccess};

/// Whether `ty` is or holds a `bool` (not planned for the heap; `buffer<bool>` is).
fn holds_bool(t: &TypeTable, ty: TypeId) -> bool {
    t.is_bool(ty) || xir::verify::type_members(t.get(ty)).into_iter().any(|x| holds_bool(t, x))
}

/// What one `bindless_array` argument needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArgNeed {
    /// A local metadata descriptor (any buffer operation through the array).
    pub metadata: bool,
    /// The global buffer heap (a read or write through the array).
    pub heap: bool,
}

/// The frozen bindless plan of a kernel.
#[derive(Clone, Debug, Default)]
pub struct BindlessPlan {
    /// Needs by kernel argument index (only arguments some buffer operation uses).
    pub args: FxHashMap<u32, ArgNeed>,
    /// Kernel bindless accesses whose heap index is divergent (`NonUniform`).
    pub nonuniform: FxHashSet<Inst>,
}

impl BindlessPlan {
    /// Whether any argument needs the global buffer heap.
    pub fn heap(&self) -> bool {
        self.args.values().any(|n| n.heap)
    }

    /// The needs of kernel argument `arg` (all false when unused).
    pub fn need(&self, arg: u32) -> ArgNeed {
        self.args.get(&arg).copied().unwrap_or_default()
    }
}

/// True for the bindless buffer operations this backend lowers.
pub fn is_bindless_buffer_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::BindlessBufferRead
            | Opcode::BindlessByteBufferRead
            | Opcode::BindlessBufferWrite
            | Opcode::BindlessBufferSize
    )
}

/// Plan the bindless usage of `kernel` over the reachable functions `order`.
pub fn plan_bindless(m: &Module, kernel: FuncId, order: &[FuncId]) -> Result<BindlessPlan, Vec<Diagnostic>> {
    let mut plan = BindlessPlan::default();
    let mut diags = Vec::new();
    let t = &m.types;
    for &fid in order {
        let f = m.func(fid);
        let mut uniformity: Option<Uniformity> = None;
        for i in super::callgraph::reachable_insts(f) {
            let d = f.inst(i);
            if !is_bindless_buffer_op(d.opcode) {
                continue;
            }
            let arg = match d.operands[0] {
                Value::Arg(a) if fid == kernel => a,
                _ => {
                    diags.push(inst_diag(
                        f,
                        i,
                        xir::diag::Rule::SpirvPlanBindless,
                        format!(
                            "`{}` must address a kernel `bindless_array` argument (callables taking bindless arrays \
                             are inlined by callable_specialization in spirv-legalize)",
                            d.opcode
                        ),
                    ));
                    continue;
                }
            };
            // The moved value: word storage of 32/64-bit leaves, like a byte buffer.
            let moved = match d.opcode {
                Opcode::BindlessBufferRead | Opcode::BindlessByteBufferRead => Some(d.ty),
                Opcode::BindlessBufferWrite => Some(f.value_type(m, d.operands[3])),
                _ => None,
            };
            if let Some(vt) = moved {
                let bad = if holds_bool(t, vt) {
                    Some("`bool` has no representation in a bindless buffer (host bools are 1 byte)".to_string())
                } else if d.opcode == Opcode::BindlessByteBufferRead {
                    super::byte_access::byte_leaves(m, vt).err().map(|e| e.to_string())
                } else {
                    typed_access(t, vt).err().map(|e| e.to_string())
                };
                if let Some(e) = bad {
                    diags.push(inst_diag(
                        f,
                        i,
                        xir::diag::Rule::SpirvPlanBindless,
                        format!("`{}` value: {e}", d.opcode),
                    ));
                    continue;
                }
            }
            let need = plan.args.entry(arg).or_default();
            need.metadata = true;
            if moved.is_some() {
                need.heap = true;
                let u = uniformity.get_or_insert_with(|| Uniformity::of_function(f));
                if u.is_divergent(d.operands[1]) && !matches!(d.operands[1], Value::Const(_)) {
                    plan.nonuniform.insert(i);
                }
            }
        }
    }
    check_bindless_args(m, kernel, plan.args.keys().copied(), "spirv-plan:bindless", &mut diags);
    if diags.is_empty() {
        Ok(plan)
    } else {
        Err(diags)
    }
}

/// Every planned argument must really be a bindless array (the verifier's
/// operand class says so); one that is not is reported under `rule`.
pub(crate) fn check_bindless_args(
    m: &Module,
    kernel: FuncId,
    args: impl IntoIterator<Item = u32>,
    rule: &'static str,
    diags: &mut Vec<Diagnostic>,
) {
    let k = m.func(kernel);
    for a in args {
        if !matches!(k.args.get(a as usize).map(|x| m.types.get(x.ty)), Some(Type::BindlessArray)) {
            diags.push(
                Diagnostic::error(rule, format!("argument {a} is used as a bindless array but is not one"))
                    .in_function(&k.name),
            );
        }
    }
}

/// Whether `i` is a typed bindless write that expands to a masked CAS loop (a CAS site of the control-flow plan).
pub fn needs_masked_write(m: &Module, f: &Function, i: Inst) -> bool {
    let d = f.inst(i);
    d.opcode == Opcode::BindlessBufferWrite
        && matches!(
            typed_access(&m.types, f.value_type(m, d.operands[3])),
            Ok(TypedAccess::SubWord { masked_write: true, .. })
        )
}
