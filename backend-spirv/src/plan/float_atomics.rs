//! The float-atomic table: how each float atomic is lowered, by operation,
//! storage and width, given the device's features (the reference plans
//! float atomics before emission: buffer float atomics may fall back to
//! words, shared ones may have no legal fallback).
//!
//! One [`Row`] per operation x storage x width says which device feature
//! makes the native opcode legal and what happens without it:
//! - exchange: native `OpAtomicExchange` on the float with
//!   `shader{Buffer,Shared}Float{16,32,64}Atomics`; else one integer
//!   exchange on the buffer's same-width unsigned view (bits move unchanged);
//! - compare-exchange: always the integer view (SPIR-V has no float
//!   compare-exchange; XIR compares bits, as the interpreter does);
//! - add / sub: native `OpAtomicFAddEXT` with the add feature; else a
//!   compare-exchange loop over the unsigned view;
//! - min / max: native `OpAtomicF{Min,Max}EXT` with the min/max feature;
//!   else a compare-exchange loop computing the interpreter's `min_num` /
//!   `max_num` exactly (a NaN loses to a number, -0 < +0);
//! - shared memory has no unsigned view (its variable keeps the float type)
//!   and Vulkan has no 16-bit integer atomics: those rows refuse without the
//!   native feature.

use crate::features::{Feature, FeatureSet};

/// A float atomic operation (sub is add of the negated operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Exchange,
    CompareExchange,
    Add,
    Min,
    Max,
}

/// The memory an atomic targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    Buffer,
    Shared,
}

/// What a row does without its native feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// One integer atomic on the same-width unsigned view of the buffer.
    Word,
    /// A compare-exchange loop over the unsigned view.
    CasLoop,
    /// No legal lowering; the reason.
    Refuse(&'static str),
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub op: FloatOp,
    pub storage: Storage,
    /// 16, 32 or 64.
    pub bits: u32,
    /// The device feature that makes the native float opcode legal (none: there is no native opcode).
    pub native: Option<Feature>,
    pub fallback: Fallback,
}

/// How one float atomic is emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// The float opcode itself; the feature is required.
    Native(Feature),
    /// One integer atomic on the unsigned view (exchange, compare-exchange).
    Word,
    /// A compare-exchange loop on the unsigned view (add/sub, min, max).
    CasLoop,
}

const NO_SHARED_VIEW: &str = "shared memory has no integer view to fall back on";
const NO_INT16_ATOMICS: &str = "Vulkan has no 16-bit integer atomics to fall back on";
const CAS_SHARED: &str = "a float compare-exchange compares bits through an integer view, which shared memory lacks";
const CAS_F16: &str =
    "a float compare-exchange compares bits through an integer view, and Vulkan has no 16-bit integer atomics";

const fn row(op: FloatOp, storage: Storage, bits: u32, native: Option<Feature>, fallback: Fallback) -> Row {
    Row { op, storage, bits, native, fallback }
}

use Fallback::{CasLoop, Refuse, Word};
use Feature as F;
use FloatOp::*;
use Storage::{Buffer, Shared};

/// Every operation x storage x width.
pub const TABLE: [Row; 30] = [
    row(Exchange, Buffer, 16, Some(F::BufferFloat16Atomics), Refuse(NO_INT16_ATOMICS)),
    row(Exchange, Buffer, 32, Some(F::BufferFloat32Atomics), Word),
    row(Exchange, Buffer, 64, Some(F::BufferFloat64Atomics), Word),
    row(Exchange, Shared, 16, Some(F::SharedFloat16Atomics), Refuse(NO_SHARED_VIEW)),
    row(Exchange, Shared, 32, Some(F::SharedFloat32Atomics), Refuse(NO_SHARED_VIEW)),
    row(Exchange, Shared, 64, Some(F::SharedFloat64Atomics), Refuse(NO_SHARED_VIEW)),
    row(CompareExchange, Buffer, 16, None, Refuse(CAS_F16)),
    row(CompareExchange, Buffer, 32, None, Word),
    row(CompareExchange, Buffer, 64, None, Word),
    row(CompareExchange, Shared, 16, None, Refuse(CAS_SHARED)),
    row(CompareExchange, Shared, 32, None, Refuse(CAS_SHARED)),
    row(CompareExchange, Shared, 64, None, Refuse(CAS_SHARED)),
    row(Add, Buffer, 16, Some(F::BufferFloat16AtomicAdd), Refuse(NO_INT16_ATOMICS)),
    row(Add, Buffer, 32, Some(F::BufferFloat32AtomicAdd), CasLoop),
    row(Add, Buffer, 64, Some(F::BufferFloat64AtomicAdd), CasLoop),
    row(Add, Shared, 16, Some(F::SharedFloat16AtomicAdd), Refuse(NO_SHARED_VIEW)),
    row(Add, Shared, 32, Some(F::SharedFloat32AtomicAdd), Refuse(NO_SHARED_VIEW)),
    row(Add, Shared, 64, Some(F::SharedFloat64AtomicAdd), Refuse(NO_SHARED_VIEW)),
    row(Min, Buffer, 16, Some(F::BufferFloat16AtomicMinMax), Refuse(NO_INT16_ATOMICS)),
    row(Min, Buffer, 32, Some(F::BufferFloat32AtomicMinMax), CasLoop),
    row(Min, Buffer, 64, Some(F::BufferFloat64AtomicMinMax), CasLoop),
    row(Min, Shared, 16, Some(F::SharedFloat16AtomicMinMax), Refuse(NO_SHARED_VIEW)),
    row(Min, Shared, 32, Some(F::SharedFloat32AtomicMinMax), Refuse(NO_SHARED_VIEW)),
    row(Min, Shared, 64, Some(F::SharedFloat64AtomicMinMax), Refuse(NO_SHARED_VIEW)),
    row(Max, Buffer, 16, Some(F::BufferFloat16AtomicMinMax), Refuse(NO_INT16_ATOMICS)),
    row(Max, Buffer, 32, Some(F::BufferFloat32AtomicMinMax), CasLoop),
    row(Max, Buffer, 64, Some(F::BufferFloat64AtomicMinMax), CasLoop),
    row(Max, Shared, 16, Some(F::SharedFloat16AtomicMinMax), Refuse(NO_SHARED_VIEW)),
    row(Max, Shared, 32, Some(F::SharedFloat32AtomicMinMax), Refuse(NO_SHARED_VIEW)),
    row(Max, Shared, 64, Some(F::SharedFloat64AtomicMinMax), Refuse(NO_SHARED_VIEW)),
];

/// The row of an operation, storage and width (`None`: not a float atomic width).
pub fn lookup(op: FloatOp, storage: Storage, bits: u32) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.op == op && r.storage == storage && r.bits == bits)
}

/// A float atomic with no legal lowering on the device: why, and the
/// device feature that would make it native, if one would.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{why}{}", .needs.map(|f| format!("; it needs the device feature {}", f.vulkan_name())).unwrap_or_default())]
pub struct Refusal {
    pub why: &'static str,
    pub needs: Option<Feature>,
}

impl Row {
    /// The lowering on a device with `device` enabled (`None`: unknown, so
    /// nothing optional is native), or why there is none.
    pub fn choose(&self, device: Option<&FeatureSet>) -> Result<Lowering, Refusal> {
        if let Some(feat) = self.native.filter(|f| device.is_some_and(|d| d.contains(*f))) {
            return Ok(Lowering::Native(feat));
        }
        match self.fallback {
            Word => Ok(Lowering::Word),
            CasLoop => Ok(Lowering::CasLoop),
            Refuse(why) => Err(Refusal { why, needs: self.native }),
        }
    }

    /// The lowering when the target buffer must be addressed through its
    /// unsigned view (another atomic on it needs the view): the fallback.
    pub fn on_word_view(&self) -> Option<Lowering> {
        match self.fallback {
            Word => Some(Lowering::Word),
            CasLoop => Some(Lowering::CasLoop),
            Refuse(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_exactly_one_row_per_op_storage_and_width() {
        for op in [Exchange, CompareExchange, Add, Min, Max] {
            for storage in [Buffer, Shared] {
                for bits in [16, 32, 64] {
                    let n = TABLE.iter().filter(|r| r.op == op && r.storage == storage && r.bits == bits).count();
                    assert_eq!(n, 1, "{op:?} {storage:?} f{bits}");
                }
            }
        }
    }

    #[test]
    fn a_native_row_needs_its_feature_and_a_refusal_names_it() {
        let add = lookup(Add, Shared, 32).expect("row");
        let dev: FeatureSet = [F::SharedFloat32AtomicAdd].into_iter().collect();
        assert_eq!(add.choose(Some(&dev)), Ok(Lowering::Native(F::SharedFloat32AtomicAdd)));
        let e = add.choose(Some(&FeatureSet::empty())).unwrap_err();
        assert_eq!(e.needs, Some(F::SharedFloat32AtomicAdd));
        assert!(e.to_string().contains("shaderSharedFloat32AtomicAdd") && e.why.contains("shared memory"), "{e}");
        assert_eq!(add.choose(None), add.choose(Some(&FeatureSet::empty())));
        let cas = lookup(CompareExchange, Buffer, 32).expect("row");
        assert_eq!(cas.choose(Some(&FeatureSet::all())), Ok(Lowering::Word));
    }
}
