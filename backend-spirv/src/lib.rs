//! placeholder
pub use ash as _ash;
pub use rspirv as _rspirv;
pub use spirv_tools as _spirv_tools;
