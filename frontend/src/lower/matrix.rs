//! Non-square matrices (`matCxR<T>`, C columns of `vecR<T>`, C != R). XIR's
//! matrices are square, so the front end holds a non-square one as its
//! columns, an `array<vec<T, R>, C>`: WGSL's layout (a column is a `vecR`,
//! at the same stride) and the foreign runner's encoding (a list of
//! columns), so inputs are shared with naga's module. Column access and
//! indexing are then array access; what naga's IR does with a matrix as a
//! whole is written out here, column by column:
//!
//! - `+` and `-`: per column;
//! - a product with a scalar: each column times the scalar;
//! - `M * v`: `M[0] * v[0] + M[1] * v[1] + ...`, in column order;
//! - `v * M`: lane `i` is `dot(v, M[i])`;
//! - `A * B`: column `j` is `A * B[j]` (a square operand's columns too, and
//!   a square result, `mat2x3 * mat3x2`, is an XIR matrix of them);
//! - `transpose(M)`: column `j` gathers lane `j` of every column.
//!
//! Each product is rounded, then summed (XIR's arithmetic fuses nothing),
//! where a device's `OpMatrixTimesVector` may fuse or reorder: naga's module
//! agrees within the `--fast-math` precision model, as for square matrices.

use naga::{BinaryOperator, Expression, Handle, TypeInner};
use xir::ir::{Type, TypeId};
use xir_ast::*;
use xir_spec::Opcode;

use super::{FnCx, R};

/// The shape of an operand of a matrix operation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
    Vector,
    /// A matrix of this many columns (square: an XIR matrix; else an array of columns).
    Matrix {
        columns: u32,
    },
}

impl<'a> FnCx<'_, 'a, '_> {
    /// `(columns, rows)` when `h`'s value is a non-square matrix.
    pub(super) fn non_square(&self, h: Handle<Expression>) -> Option<(u32, u32)> {
        match *self.info[h].ty.inner_with(&self.lw.module.types) {
            TypeInner::Matrix { columns, rows, .. } if columns != rows => Some((columns as u32, rows as u32)),
            _ => None,
        }
    }

    fn shape(&self, h: Handle<Expression>) -> Shape {
        match *self.info[h].ty.inner_with(&self.lw.module.types) {
            TypeInner::Matrix { columns, .. } => Shape::Matrix { columns: columns as u32 },
            TypeInner::Vector { .. } => Shape::Vector,
            _ => Shape::Scalar,
        }
    }

    /// `m`'s columns (of an XIR matrix or an array of columns alike).
    fn columns(&mut self, m: ExprRef<'a>, columns: u32, span: naga::Span) -> Vec<ExprRef<'a>> {
        let column = self.column_type(m.ty);
        (0..columns).map(|i| self.mk(column, ExprKind::Member(m, i), span)).collect()
    }

    fn column_type(&mut self, ty: TypeId) -> TypeId {
        match *self.lw.ast.types.get(ty) {
            Type::Array { elem, .. } => elem,
            Type::Matrix { elem, dim } => self.types().vector(elem, dim),
            _ => unreachable!("a matrix is an XIR matrix or an array of columns"),
        }
    }

    /// A matrix of type `ty` from its columns.
    fn matrix_of_columns(&mut self, ty: TypeId, columns: Vec<ExprRef<'a>>, span: naga::Span) -> ExprRef<'a> {
        self.builtin(Opcode::Aggregate, ty, columns, span)
    }

    /// `left op right` where either operand is a non-square matrix.
    pub(super) fn matrix_binary(
        &mut self,
        ty: TypeId,
        op: BinaryOperator,
        (left, l): (Handle<Expression>, ExprRef<'a>),
        (right, r): (Handle<Expression>, ExprRef<'a>),
        span: naga::Span,
    ) -> R<ExprRef<'a>> {
        let (ls, rs) = (self.shape(left), self.shape(right));
        Ok(match (op, ls, rs) {
            (BinaryOperator::Add | BinaryOperator::Subtract, Shape::Matrix { columns }, Shape::Matrix { .. }) => {
                let bop = if op == BinaryOperator::Add { BinaryOp::Add } else { BinaryOp::Sub };
                let (lc, rc) = (self.columns(l, columns, span), self.columns(r, columns, span));
                let cols =
                    lc.into_iter().zip(rc).map(|(a, b)| self.mk(a.ty, ExprKind::Binary(bop, a, b), span)).collect();
                self.matrix_of_columns(ty, cols, span)
            }
            (BinaryOperator::Multiply, Shape::Matrix { columns }, Shape::Scalar)
            | (BinaryOperator::Multiply, Shape::Scalar, Shape::Matrix { columns }) => {
                let (m, s) = if ls == Shape::Scalar { (r, l) } else { (l, r) };
                let cols = self.columns(m, columns, span);
                let cols = cols
                    .into_iter()
                    .map(|c| {
                        let s = self.splat_value(s, c.ty, span);
                        self.mk(c.ty, ExprKind::Binary(BinaryOp::Mul, c, s), span)
                    })
                    .collect();
                self.matrix_of_columns(ty, cols, span)
            }
            (BinaryOperator::Multiply, Shape::Matrix { columns }, Shape::Vector) => {
                let cols = self.columns(l, columns, span);
                self.times_vector(&cols, r, span)
            }
            (BinaryOperator::Multiply, Shape::Vector, Shape::Matrix { columns }) => {
                let scalar = self.lw.ast.types.scalar_of(ty);
                let lanes = self
                    .columns(r, columns, span)
                    .into_iter()
                    .map(|c| self.builtin(Opcode::Dot, scalar, vec![l, c], span))
                    .collect();
                self.builtin(Opcode::Aggregate, ty, lanes, span)
            }
            (BinaryOperator::Multiply, Shape::Matrix { columns }, Shape::Matrix { columns: k }) => {
                let a = self.columns(l, columns, span);
                let cols = self.columns(r, k, span).into_iter().map(|b| self.times_vector(&a, b, span)).collect();
                self.matrix_of_columns(ty, cols, span)
            }
            _ => return super::unsupported(span, format!("{op:?} of these operands of a non-square matrix")),
        })
    }

    /// `M * v` for `M` given by its columns: the columns scaled by `v`'s
    /// lanes, summed in column order.
    fn times_vector(&mut self, columns: &[ExprRef<'a>], v: ExprRef<'a>, span: naga::Span) -> ExprRef<'a> {
        let scalar = self.lw.ast.types.scalar_of(v.ty);
        let mut sum: Option<ExprRef<'a>> = None;
        for (i, &c) in columns.iter().enumerate() {
            let lane = self.mk(scalar, ExprKind::Member(v, i as u32), span);
            let lane = self.splat_value(lane, c.ty, span);
            let term = self.mk(c.ty, ExprKind::Binary(BinaryOp::Mul, c, lane), span);
            sum = Some(match sum {
                None => term,
                Some(s) => self.mk(c.ty, ExprKind::Binary(BinaryOp::Add, s, term), span),
            });
        }
        sum.expect("a matrix has columns")
    }

    /// `transpose(m)` for a non-square `m` (`columns` x `rows`): a `rows` x
    /// `columns` matrix of type `ty`.
    pub(super) fn matrix_transpose(
        &mut self,
        ty: TypeId,
        m: ExprRef<'a>,
        (columns, rows): (u32, u32),
        span: naga::Span,
    ) -> ExprRef<'a> {
        let source = self.columns(m, columns, span);
        let column = self.column_type(ty);
        let scalar = self.lw.ast.types.scalar_of(column);
        let cols = (0..rows)
            .map(|j| {
                let lanes = source.iter().map(|&c| self.mk(scalar, ExprKind::Member(c, j), span)).collect();
                self.builtin(Opcode::Aggregate, column, lanes, span)
            })
            .collect();
        self.matrix_of_columns(ty, cols, span)
    }
}
