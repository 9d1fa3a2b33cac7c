//! The XIR data structures. See ARCHITECTURE.md for the shape: typed ids into
//! dense tables, the spec-defined opcode on every instruction, use lists kept
//! exact by the mutation API.

mod builder;
mod constant;
mod entities;
mod flat_lists;
mod footprint;
mod function;
mod inst;
mod metadata;
mod module;
mod types;
mod value;

pub use builder::Builder;
pub use constant::{ConstData, ConstTable, ConstValue};
pub use entities::{Block, Const, FuncId, Inst, TypeId};
pub use flat_lists::FlatLists;
pub use footprint::Footprint;
pub(crate) use function::prefetch_line;
pub use function::{
    reads, ArgData, ArgKind, BlockData, Chain, Cursor, CursorPosition, Function, FunctionKind, IdsDescending, InstList,
    Reads, Rewriter, Walk, INLINE_BLOCK_INSTS, PREFETCH_MIN_INSTS,
};
pub use inst::{InstCore, InstData, Payload};
pub use metadata::{CurveBasis, CurveBasisSet, Location, Metadata, MetadataFields, MetadataRef, Span, SpillKind};
pub use module::{sign_extend, Module};
pub use types::{FloatFormat, Type, TypeTable};
pub use value::{Use, Value};
pub use xir_spec::{Opcode, SpecialRegister, Trait};
