//! Metadata attached to functions, arguments, blocks and instructions. Names,
//! comments and locations are diagnostic; spill provenance is semantic (the
//! post-restructure audit depends on it) and survives cloning and every
//! serialization.

use serde::{Deserialize, Serialize};

/// Why `reg2mem` created a slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SpillKind {
    /// A Phi was demoted to this slot.
    Phi,
    /// A value used outside its defining block was demoted to this slot.
    CrossBlock,
}

impl SpillKind {
    pub fn name(self) -> &'static str {
        match self {
            SpillKind::Phi => "phi",
            SpillKind::CrossBlock => "cross_block",
        }
    }
}

/// A source location from the front end (not the position in XIR text).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill: Option<SpillKind>,
}

impl Metadata {
    pub fn named(name: impl Into<String>) -> Self {
        Metadata { name: Some(name.into()), ..Default::default() }
    }
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.location.is_none() && self.comments.is_empty() && self.spill.is_none()
    }
}

/// Where an entity was written in XIR text (1-based). Diagnostics only: it is
/// never printed, so it does not affect round trips.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}
