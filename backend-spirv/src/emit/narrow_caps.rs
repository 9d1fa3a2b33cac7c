//! Which narrow *arithmetic* capabilities (`Int8`, `Int16`, `Float16`) an
//! emitted module needs, derived from its instructions once they are all
//! emitted.
//!
//! Why here and not at type declaration: Vulkan's 8/16-bit storage
//! capabilities (`StorageBuffer8BitAccess`, `UniformAndStorageBuffer16BitAccess`,
//! `StoragePushConstant16`, ...) let a module declare a narrow type and move
//! its values through buffer memory (loads, stores, copies, width-only
//! conversions) without `Int8`, `Int16` or `Float16`. Those three are the
//! device's `shaderInt8` / `shaderInt16` / `shaderFloat16` features, so
//! declaring them for every narrow type would make a kernel that only reads
//! `u16` data unrunnable on a device with 16-bit storage but no 16-bit
//! arithmetic. The reference forbids stripping capabilities from a finished
//! binary, so the requirement is computed exactly, from what was emitted,
//! before the module is assembled and validated: anything outside the
//! storage-only uses below asks for the arithmetic capability.
//!
//! Storage-only (no arithmetic capability): narrow values that are the result
//! of `OpLoad`, `OpCopyObject` or a width-only conversion (`OpUConvert`,
//! `OpSConvert`, `OpFConvert`), and narrow operands of `OpStore`,
//! `OpCopyObject` and those conversions, where every variable holding narrow
//! data is in `StorageBuffer`, `Uniform` or `PushConstant` storage, and only
//! when a matching storage capability is declared (without one, the narrow
//! type itself needs the arithmetic capability).
//! Everything else counts as arithmetic: narrow constants (the reference:
//! constants keep the arithmetic capability), `OpUndef`, variables in any
//! other storage class (`Function`, `Private`, `Workgroup`), Phis, composite
//! extracts and constructs, bitcasts, function parameters and returns, and
//! narrow indices. This errs towards declaring the capability; the emitted
//! module is validated right after, so an under-declaration would fail loudly
//! at compile time, never on a device.

use std::collections::{BTreeSet, HashMap};

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Capability, Op, StorageClass, Word};

/// The narrow arithmetic capability of a scalar type id, if it is narrow.
fn scalar_cap(t: &Instruction) -> Option<Capability> {
    let width = match t.operands.first() {
        Some(Operand::LiteralBit32(w)) => *w,
        _ => return None,
    };
    match (t.class.opcode, width) {
        (Op::TypeInt, 8) => Some(Capability::Int8),
        (Op::TypeInt, 16) => Some(Capability::Int16),
        (Op::TypeFloat, 16) => Some(Capability::Float16),
        _ => None,
    }
}

struct Types<'m> {
    defs: HashMap<Word, &'m Instruction>,
}

impl<'m> Types<'m> {
    fn new(m: &'m Module) -> Self {
        let defs = m.types_global_values.iter().filter_map(|i| i.result_id.map(|id| (id, i))).collect();
        Types { defs }
    }

    /// The narrow capability of a scalar or vector (or f16 matrix) value type.
    fn value_cap(&self, ty: Word) -> Option<Capability> {
        let t = self.defs.get(&ty)?;
        match t.class.opcode {
            Op::TypeInt | Op::TypeFloat => scalar_cap(t),
            Op::TypeVector | Op::TypeMatrix => match t.operands.first() {
                Some(Operand::IdRef(e)) => self.value_cap(*e),
                _ => None,
            },
            _ => None,
        }
    }

    /// Every narrow capability of the scalars inside `ty` (through vectors,
    /// matrices, arrays and structures), added to `out`.
    fn contained(&self, ty: Word, out: &mut BTreeSet<u32>) {
        let Some(t) = self.defs.get(&ty) else { return };
        match t.class.opcode {
            Op::TypeInt | Op::TypeFloat => {
                if let Some(c) = scalar_cap(t) {
                    out.insert(c as u32);
                }
            }
            Op::TypeVector | Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray | Op::TypeStruct => {
                for o in &t.operands {
                    if let Operand::IdRef(e) = o {
                        self.contained(*e, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// A pointer type's storage class and pointee.
    fn pointer(&self, ty: Word) -> Option<(StorageClass, Word)> {
        let t = self.defs.get(&ty)?;
        match (t.class.opcode, t.operands.as_slice()) {
            (Op::TypePointer, [Operand::StorageClass(sc), Operand::IdRef(p)]) => Some((*sc, *p)),
            _ => None,
        }
    }
}

/// Storage classes whose narrow data the 8/16-bit storage capabilities cover.
fn storage_covered(sc: StorageClass) -> bool {
    matches!(sc, StorageClass::StorageBuffer | StorageClass::Uniform | StorageClass::PushConstant)
}

/// Opcodes that may produce or consume a narrow value without arithmetic.
fn storage_only(op: Op) -> bool {
    matches!(op, Op::Load | Op::Store | Op::CopyObject | Op::UConvert | Op::SConvert | Op::FConvert)
}

/// The storage capabilities that make a narrow type declarable without its
/// arithmetic capability.
fn storage_caps(arith: Capability) -> &'static [Capability] {
    match arith {
        Capability::Int8 => &[
            Capability::StorageBuffer8BitAccess,
            Capability::UniformAndStorageBuffer8BitAccess,
            Capability::StoragePushConstant8,
        ],
        _ => &[
            Capability::StorageBuffer16BitAccess,
            Capability::UniformAndStorageBuffer16BitAccess,
            Capability::StoragePushConstant16,
        ],
    }
}

/// The narrow arithmetic capabilities (as `Capability as u32`) module `m`
/// needs, given the capabilities `declared` so far; see the module doc.
pub(crate) fn required(m: &Module, declared: &BTreeSet<u32>) -> BTreeSet<u32> {
    let types = Types::new(m);
    let mut need = BTreeSet::new();
    // A narrow type with no storage capability to declare it needs its
    // arithmetic capability whatever its uses are.
    for t in &m.types_global_values {
        if let Some(c) = scalar_cap(t) {
            if !storage_caps(c).iter().any(|s| declared.contains(&(*s as u32))) {
                need.insert(c as u32);
            }
        }
    }
    let mut value_ty: HashMap<Word, Word> = HashMap::new();
    let variable = |i: &Instruction, need: &mut BTreeSet<u32>| {
        if let Some((sc, pointee)) = i.result_type.and_then(|t| types.pointer(t)) {
            if !storage_covered(sc) {
                types.contained(pointee, need);
            }
        }
    };
    for i in &m.types_global_values {
        if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
            value_ty.insert(id, ty);
        }
        match i.class.opcode {
            Op::Variable => variable(i, &mut need),
            Op::Constant
            | Op::ConstantComposite
            | Op::ConstantNull
            | Op::SpecConstant
            | Op::SpecConstantComposite
            | Op::SpecConstantOp
            | Op::Undef => {
                if let Some(ty) = i.result_type {
                    types.contained(ty, &mut need);
                }
            }
            _ => {}
        }
    }
    let bodies = || {
        m.functions.iter().flat_map(|f| {
            f.def.iter().chain(&f.parameters).chain(f.blocks.iter().flat_map(|b| b.label.iter().chain(&b.instructions)))
        })
    };
    for i in bodies() {
        if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
            value_ty.insert(id, ty);
        }
    }
    for i in bodies() {
        let op = i.class.opcode;
        if op == Op::Variable {
            variable(i, &mut need);
            continue;
        }
        let arithmetic = !storage_only(op);
        if let Some(c) = i.result_type.and_then(|t| types.value_cap(t)) {
            if arithmetic {
                need.insert(c as u32);
            }
        }
        if op == Op::Function {
            continue;
        }
        for o in &i.operands {
            if let Operand::IdRef(v) = o {
                if let Some(c) = value_ty.get(v).and_then(|t| types.value_cap(*t)) {
                    if arithmetic {
                        need.insert(c as u32);
                    }
                }
            }
        }
    }
    need
}

/// Whether a float type of `width` bits is declared (its rounding and
/// signed-zero execution modes are needed even for storage-only use).
pub(crate) fn declares_float(m: &Module, width: u32) -> bool {
    m.types_global_values.iter().any(|t| {
        t.class.opcode == Op::TypeFloat && matches!(t.operands.first(), Some(Operand::LiteralBit32(w)) if *w == width)
    })
}
