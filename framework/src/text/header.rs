//! The attributes of a function header: a kernel's block size and flags,
//! `!loc(..)` and `!curve_basis(..)`.

use super::lexer::Tok;
use super::parser::{PResult, Parser};
use crate::ir::{CurveBasis, CurveBasisSet, FunctionKind, Location};

impl<'a> Parser<'a> {
    /// A kernel's `block_size(x, y, z)` and its flags (`whole_blocks`,
    /// `noalias`), each at most once, in any order.
    pub(super) fn kernel_kind(&mut self) -> PResult<FunctionKind> {
        self.expect_keyword("block_size")?;
        self.expect_punct('(')?;
        let mut size = [0u32; 3];
        for (k, s) in size.iter_mut().enumerate() {
            if k > 0 {
                self.expect_punct(',')?;
            }
            *s = self.u32_literal("a block size")?;
        }
        self.expect_punct(')')?;
        // The kernel's promises, each at most once, in any order.
        let (mut whole_blocks, mut noalias) = (false, false);
        loop {
            let (name, flag) = match self.tok.tok {
                Tok::Ident(name @ "whole_blocks") => (name, &mut whole_blocks),
                Tok::Ident(name @ "noalias") => (name, &mut noalias),
                _ => break,
            };
            if std::mem::replace(flag, true) {
                return Err(self.error(self.tok.span, format!("kernel flag `{name}` is given twice")));
            }
            self.advance();
        }
        Ok(FunctionKind::Kernel { block_size: size, whole_blocks, noalias })
    }

    /// `!curve_basis(name, ...)` if present: a non-empty set of distinct
    /// bases.
    pub(super) fn opt_curve_basis(&mut self) -> PResult<CurveBasisSet> {
        if self.tok.tok != Tok::Meta("curve_basis") {
            return Ok(CurveBasisSet::EMPTY);
        }
        self.advance();
        self.expect_punct('(')?;
        let mut set = CurveBasisSet::EMPTY;
        loop {
            let Tok::Ident(name) = self.tok.tok else { return Err(self.unexpected("a curve basis name")) };
            let Some(basis) = CurveBasis::from_name(name) else {
                let known: Vec<&str> = CurveBasis::ALL.iter().map(|b| b.name()).collect();
                let message = format!("unknown curve basis `{name}` (one of: {})", known.join(", "));
                return Err(self.error(self.tok.span, message));
            };
            if !set.insert(basis) {
                return Err(self.error(self.tok.span, format!("curve basis `{name}` is given twice")));
            }
            self.advance();
            if !self.is_punct(',') {
                break;
            }
            self.advance();
        }
        self.expect_punct(')')?;
        Ok(set)
    }

    /// `!loc("file", line, col)` if present.
    pub(super) fn opt_location(&mut self) -> PResult<Option<Box<Location>>> {
        if self.tok.tok != Tok::Meta("loc") {
            return Ok(None);
        }
        self.advance();
        self.expect_punct('(')?;
        let file = self.string_literal("a file name string")?;
        self.expect_punct(',')?;
        let line = self.u32_literal("a line number")?;
        self.expect_punct(',')?;
        let col = self.u32_literal("a column number")?;
        self.expect_punct(')')?;
        Ok(Some(Box::new(Location { file, line, col })))
    }
}
