//! Typed `u32` ids for IR entities. An id indexes a dense table owned by the
//! module (types, constants, functions) or by a function (blocks,
//! instructions); analyses key secondary maps by these ids.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! entity {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn new(i: usize) -> Self {
                $name(u32::try_from(i).expect("entity index fits in u32"))
            }
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(/// An interned type.
    TypeId, "type");
entity!(/// A uniqued constant of the module.
    Const, "const");
entity!(/// A function of the module (kernel, callable or external).
    FuncId, "fn");
entity!(/// A basic block of a function.
    Block, "bb");
entity!(/// An instruction of a function.
    Inst, "inst");
