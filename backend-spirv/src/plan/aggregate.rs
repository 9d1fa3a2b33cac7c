//! Aggregate index planning for `gep`, `extract`, `insert` and atomic
//! address walks: the whole index path is checked before emission.
//!
//! - structure indices must be constants in range; they are canonicalized to
//!   `u32` literals (emitted as `u32` `OpConstant`s in access chains);
//! - vector / matrix / array indices keep their value; a constant index is
//!   range-checked and becomes a literal;
//! - a walk with any dynamic step cannot use `OpCompositeExtract`; the plan
//!   says so (`all_literal == false`) and the emitter uses an access chain.

use xir::{Function, Module, Type, TypeId, Value};

/// One step of an index walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A constant index (struct member, or constant lane / element).
    Literal(u32),
    /// A run-time index value (integer scalar).
    Dynamic(Value),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexPlan {
    pub steps: Vec<Step>,
    /// Type reached at the end of the walk.
    pub result: TypeId,
    pub all_literal: bool,
}

/// Why a walk through an aggregate has no SPIR-V access chain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error("index {0} is not an integer")]
    NotInteger(usize),
    #[error("index {0} selects a struct member and must be a constant")]
    DynamicMember(usize),
    #[error("struct index {index} is out of range (the struct has {members} members)")]
    MemberOutOfRange { index: i128, members: usize },
    #[error("index {index} walks into the non-aggregate `{ty}`")]
    NotAggregate { index: usize, ty: String },
    #[error("constant index {index} is out of range 0..{len}")]
    OutOfRange { index: i128, len: u64 },
    #[error("a walk ending at a matrix column needs the column vector type interned")]
    ColumnNotInterned,
}

/// Plan a walk from `base` through `indices`.
pub fn plan_indices(m: &Module, f: &Function, base: TypeId, indices: &[Value]) -> Result<IndexPlan, IndexError> {
    let t = &m.types;
    // A matrix column need not be an interned XIR type: track it structurally.
    let mut cur = base;
    let mut column: Option<(TypeId, u8)> = None;
    let mut steps = Vec::new();
    for (k, &v) in indices.iter().enumerate() {
        let iv = m.const_int_value(v);
        if !t.is_int(f.value_type(m, v)) {
            return Err(IndexError::NotInteger(k));
        }
        let (next, len): (Option<TypeId>, u64) = if let Some((elem, dim)) = column.take() {
            (Some(elem), dim as u64)
        } else {
            match t.get(cur) {
                Type::Vector { elem, lanes } => (Some(*elem), *lanes as u64),
                Type::Matrix { elem, dim } => match t.lookup(&Type::Vector { elem: *elem, lanes: *dim }) {
                    Some(c) => (Some(c), *dim as u64),
                    None => {
                        column = Some((*elem, *dim));
                        (None, *dim as u64)
                    }
                },
                Type::Array { elem, len } => (Some(*elem), *len),
                Type::Struct { fields, .. } => {
                    let Some(i) = iv else {
                        return Err(IndexError::DynamicMember(k));
                    };
                    if i < 0 || i as usize >= fields.len() {
                        return Err(IndexError::MemberOutOfRange { index: i, members: fields.len() });
                    }
                    steps.push(Step::Literal(i as u32));
                    cur = fields[i as usize];
                    continue;
                }
                _ => return Err(IndexError::NotAggregate { index: k, ty: xir::verify::type_name(t, cur) }),
            }
        };
        match iv {
            Some(i) if i < 0 || i as u64 >= len => return Err(IndexError::OutOfRange { index: i, len }),
            Some(i) => steps.push(Step::Literal(i as u32)),
            None => steps.push(Step::Dynamic(v)),
        }
        if let Some(n) = next {
            cur = n;
        }
    }
    if column.is_some() {
        return Err(IndexError::ColumnNotInterned);
    }
    let all_literal = steps.iter().all(|s| matches!(s, Step::Literal(_)));
    Ok(IndexPlan { steps, result: cur, all_literal })
}
