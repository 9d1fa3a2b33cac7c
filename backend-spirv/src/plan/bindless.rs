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
//! Typed elements ([`typed_access`]): the heap is word storage, and a typed
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

use crate::plan::layout;

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
                        "spirv-plan:bindless",
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
                let bad = if t.is_bool(vt) {
                    Some("`bool` has no representation in a bindless buffer (host bools are 1 byte)".to_string())
                } else if d.opcode == Opcode::BindlessByteBufferRead {
                    crate::emit::bytes::byte_leaves(m, vt).err()
                } else {
                    typed_access(t, vt).err()
                };
                if let Some(e) = bad {
                    diags.push(inst_diag(f, i, "spirv-plan:bindless", format!("`{}` value: {e}", d.opcode)));
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

/// One scalar of a typed element: its byte offset, type, and constant index path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub offset: u64,
    pub ty: TypeId,
    pub path: Vec<u32>,
}

/// How a typed bindless element (`bindless.buffer_read` / `buffer_write` of `T`) moves through the word heap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypedAccess {
    /// A whole number of words of 32/64-bit leaves at word offsets: plain words (`memory.rs`).
    Words,
    /// Some 8/16-bit leaf, or a size that is not a multiple of 4.
    SubWord {
        /// `size(T)` is a multiple of 4: the element starts at a word (`index * size / 4`);
        /// otherwise at byte `index * size` (alignment `gcd(size, 4)`).
        word_aligned: bool,
        /// A write must be a masked CAS loop: some word it touches is only partly covered
        /// (another element, or padding, shares it).
        masked_write: bool,
        leaves: Vec<Leaf>,
    },
}

/// The leaves of `ty` in host layout, with their paths; `Err` for `bool` or a non-data leaf.
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

pub fn leaves(t: &TypeTable, ty: TypeId) -> Result<Vec<Leaf>, String> {
    fn go(t: &TypeTable, ty: TypeId, off: u64, path: &mut Vec<u32>, out: &mut Vec<Leaf>) -> Result<(), String> {
        let mut each = |path: &mut Vec<u32>, parts: Vec<(TypeId, u64, Vec<u32>)>| {
            parts.into_iter().try_for_each(|(e, o, k)| {
                let n = path.len();
                path.extend(k);
                let r = go(t, e, off + o, path, out);
                path.truncate(n);
                r
            })
        };
        match t.get(ty) {
            Type::Bool => Err("`bool` has no bindless-buffer representation (host bools are 1 byte)".into()),
            Type::Int { .. } | Type::Float(_) => {
                out.push(Leaf { offset: off, ty, path: path.clone() });
                Ok(())
            }
            Type::Vector { elem, lanes } => {
                let s = t.size_align(*elem).0;
                each(path, (0..u32::from(*lanes)).map(|k| (*elem, s * u64::from(k), vec![k])).collect())
            }
            Type::Array { elem, len } => {
                let s = t.size_align(*elem).0;
                each(path, (0..*len as u32).map(|k| (*elem, s * u64::from(k), vec![k])).collect())
            }
            Type::Matrix { elem, dim } => {
                let stride = layout::matrix_stride(t, *elem, *dim) as u64;
                let s = t.size_align(*elem).0;
                let d = u32::from(*dim);
                let parts =
                    (0..d * d).map(|k| (*elem, stride * u64::from(k / d) + s * u64::from(k % d), vec![k / d, k % d]));
                each(path, parts.collect())
            }
            Type::Struct { fields, .. } => {
                let parts =
                    fields.iter().zip(t.struct_offsets(ty)).enumerate().map(|(k, (f, o))| (*f, o, vec![k as u32]));
                each(path, parts.collect())
            }
            _ => Err(format!("`{}` is not plain data", xir::verify::type_name(t, ty))),
        }
    }
    let mut out = Vec::new();
    go(t, ty, 0, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// Decide how typed element `ty` moves through the heap (see the module doc).
pub fn typed_access(t: &TypeTable, ty: TypeId) -> Result<TypedAccess, String> {
    let size = t.size_align(ty).0;
    if size == 0 {
        return Err("an element of zero size has no heap representation".into());
    }
    let leaves = leaves(t, ty)?;
    let word_aligned = size.is_multiple_of(4);
    if word_aligned && leaves.iter().all(|l| t.scalar_bits(l.ty) >= 32 && l.offset.is_multiple_of(4)) {
        return Ok(TypedAccess::Words);
    }
    // The element's alignment is gcd(size, 4); a leaf's is that of its offset within it, too.
    let base_align = 1u64 << size.trailing_zeros().min(2);
    let mut covered = vec![0u8; size.div_ceil(4) as usize];
    for l in &leaves {
        let bytes = u64::from(t.scalar_bits(l.ty) / 8);
        let align = base_align.min(if l.offset == 0 { 4 } else { 1 << l.offset.trailing_zeros().min(2) });
        if align < bytes.min(4) {
            return Err(format!(
                "a {}-byte leaf at byte {} of `{}` is not naturally aligned in the word heap",
                bytes,
                l.offset,
                xir::verify::type_name(t, ty)
            ));
        }
        for b in l.offset..l.offset + bytes {
            covered[(b / 4) as usize] |= 1 << (b % 4);
        }
    }
    let masked_write = !word_aligned || covered.iter().any(|&c| c != 0 && c != 0xf);
    Ok(TypedAccess::SubWord { word_aligned, masked_write, leaves })
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
