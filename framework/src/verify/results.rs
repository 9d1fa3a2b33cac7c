//! Result-type rules: the `result` field of each opcode in `opcodes.ron`
//! names one of these. They run after the operand classes held, so they may
//! assume the operand shapes the classes promise.

use crate::ir::{Type, TypeId, TypeTable};

use super::{InstCx, Violation};

/// A result rule: `Err` carries what was expected (and, for the rules
/// that follow an operand, that operand).
pub type ResultRule = fn(&InstCx) -> Result<(), Violation>;

fn expect(cx: &InstCx, want: TypeId) -> Result<(), Violation> {
    if cx.result() == want {
        Ok(())
    } else {
        Err(Violation::new(format!("expected type `{}`, found `{}`", cx.name(want), cx.name(cx.result()))))
    }
}

/// `bool` for scalars, `vec<bool, N>` for N-lane vectors.
fn bool_shape(cx: &InstCx, of: TypeId) -> Result<(), Violation> {
    let t = cx.types();
    let ok = match (t.get(of), t.get(cx.result())) {
        (Type::Vector { lanes, .. }, Type::Vector { elem, lanes: l }) => lanes == l && *elem == TypeTable::BOOL,
        (Type::Vector { .. }, _) => false,
        (_, _) => cx.result() == TypeTable::BOOL,
    };
    if ok {
        Ok(())
    } else {
        Err(Violation::new(format!("expected the bool shape of `{}`, found `{}`", cx.name(of), cx.name(cx.result()))))
    }
}

const RULES: &[(&str, ResultRule)] = &[
    ("none", |cx| expect(cx, TypeTable::VOID)),
    ("explicit", |cx| {
        if cx.result() == TypeTable::VOID {
            Err("a result type is required, found `void`".into())
        } else {
            Ok(())
        }
    }),
    // A call's result type is its callee's, which may be void; `call_signature` pins it.
    ("explicit_or_void", |_| Ok(())),
    ("same_as_0", |cx| expect(cx, cx.op_ty(0)).map_err(|v| v.operand(0))),
    ("same_as_1", |cx| expect(cx, cx.op_ty(1)).map_err(|v| v.operand(1))),
    ("bool", |cx| expect(cx, TypeTable::BOOL)),
    ("bool_shape_of_0", |cx| bool_shape(cx, cx.op_ty(0)).map_err(|v| v.operand(0))),
    ("scalar_of_0", |cx| expect(cx, cx.types().scalar_of(cx.op_ty(0))).map_err(|v| v.operand(0))),
    ("elem_of_buffer_0", |cx| match cx.get(cx.op_ty(0)) {
        Type::Buffer(elem) => expect(cx, *elem),
        _ => Err("operand 0 is not a buffer".into()),
    }),
];

pub fn lookup(name: &str) -> Option<ResultRule> {
    RULES.iter().find(|r| r.0 == name).map(|r| r.1)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|r| r.0)
}
