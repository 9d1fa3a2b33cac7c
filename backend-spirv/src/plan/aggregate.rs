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

/// Plan a walk from `base` through `indices`.
pub fn plan_indices(m: &Module, f: &Function, base: TypeId, indices: &[Value]) -> Result<IndexPlan, String> {
    let t = &m.types;
    // A matrix column need not be an interned XIR type: track it structurally.
    let mut cur = base;
    let mut column: Option<(TypeId, u8)> = None;
    let mut steps = Vec::new();
    for (k, &v) in indices.iter().enumerate() {
        let iv = m.const_int_value(v);
        if !t.is_int(f.value_type(m, v)) {
            return Err(format!("index {k} is not an integer"));
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
                        return Err(format!("index {k} selects a struct member and must be a constant"));
                    };
                    if i < 0 || i as usize >= fields.len() {
                        return Err(format!(
                            "struct index {i} is out of range (the struct has {} members)",
                            fields.len()
                        ));
                    }
                    steps.push(Step::Literal(i as u32));
                    cur = fields[i as usize];
                    continue;
                }
                _ => {
                    return Err(format!("index {k} walks into the non-aggregate `{}`", xir::verify::type_name(t, cur)))
                }
            }
        };
        match iv {
            Some(i) if i < 0 || i as u64 >= len => return Err(format!("constant index {i} is out of range 0..{len}")),
            Some(i) => steps.push(Step::Literal(i as u32)),
            None => steps.push(Step::Dynamic(v)),
        }
        if let Some(n) = next {
            cur = n;
        }
    }
    if column.is_some() {
        return Err("a walk ending at a matrix column needs the column vector type interned".into());
    }
    let all_literal = steps.iter().all(|s| matches!(s, Step::Literal(_)));
    Ok(IndexPlan { steps, result: cur, all_literal })
}
