//! Metadata attached to functions, arguments, blocks and instructions. Names,
//! comments and locations are diagnostic; a kernel's curve bases describe
//! the scenes it traces; spill provenance is semantic (the
//! post-restructure audit depends on it) and survives cloning and every
//! serialization.
//!
//! `Metadata` is one pointer wide: its fields (`MetadataFields`) live in a
//! box that exists only when something is set, and are reached through
//! `Deref` / `DerefMut` (`md.name`, `md.spill = ..`). Most instructions carry
//! none, and an inline 88-byte record made every `InstData` 208 bytes, so a
//! pass sweeping a million-instruction function dragged 80 cold bytes per
//! instruction through the cache (BENCHMARKS.md, legalization).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// A curve primitive basis (the reference's CURVE_BASIS metadata): on a
/// kernel, the kinds of curve primitive the acceleration structures it
/// traces may hold, which an accel build and a hit shader must agree on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveBasis {
    PiecewiseLinear,
    CubicBspline,
    CatmullRom,
    Bezier,
}

impl CurveBasis {
    pub const ALL: [CurveBasis; 4] =
        [CurveBasis::PiecewiseLinear, CurveBasis::CubicBspline, CurveBasis::CatmullRom, CurveBasis::Bezier];

    /// The name in the text form (`!curve_basis(cubic_bspline, ...)`) and JSON.
    pub fn name(self) -> &'static str {
        match self {
            CurveBasis::PiecewiseLinear => "piecewise_linear",
            CurveBasis::CubicBspline => "cubic_bspline",
            CurveBasis::CatmullRom => "catmull_rom",
            CurveBasis::Bezier => "bezier",
        }
    }

    pub fn from_name(name: &str) -> Option<CurveBasis> {
        CurveBasis::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// A set of curve bases, one bit a basis: iterated, printed and serialized
/// in `CurveBasis::ALL` order (a list of names in JSON). A repeated name is
/// refused when reading, never merged.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CurveBasisSet(u8);

impl CurveBasisSet {
    pub const EMPTY: CurveBasisSet = CurveBasisSet(0);

    fn bit(b: CurveBasis) -> u8 {
        1 << CurveBasis::ALL.iter().position(|&x| x == b).expect("every basis is in ALL")
    }
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
    pub fn contains(&self, b: CurveBasis) -> bool {
        self.0 & Self::bit(b) != 0
    }
    /// Adds `b`; false if it was already there.
    pub fn insert(&mut self, b: CurveBasis) -> bool {
        let new = !self.contains(b);
        self.0 |= Self::bit(b);
        new
    }
    pub fn iter(&self) -> impl Iterator<Item = CurveBasis> + '_ {
        CurveBasis::ALL.into_iter().filter(|&b| self.contains(b))
    }
}

impl FromIterator<CurveBasis> for CurveBasisSet {
    fn from_iter<I: IntoIterator<Item = CurveBasis>>(iter: I) -> Self {
        let mut set = CurveBasisSet::EMPTY;
        for b in iter {
            set.insert(b);
        }
        set
    }
}

impl Serialize for CurveBasisSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for CurveBasisSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Vec::<CurveBasis>::deserialize(d)?;
        let mut set = CurveBasisSet::EMPTY;
        for b in list {
            if !set.insert(b) {
                return Err(serde::de::Error::custom(format!("curve basis `{}` is given twice", b.name())));
            }
        }
        Ok(set)
    }
}

/// A source location from the front end (not the position in XIR text).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

/// The contents of a `Metadata`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MetadataFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Boxed: most metadata is a name alone, and an inline location cost
    /// every metadata box 24 more bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Box<Location>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill: Option<SpillKind>,
    /// The curve bases a kernel may meet.
    #[serde(default, skip_serializing_if = "CurveBasisSet::is_empty")]
    pub curve_basis: CurveBasisSet,
}

impl MetadataFields {
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.location.is_none()
            && self.comments.is_empty()
            && self.spill.is_none()
            && self.curve_basis.is_empty()
    }
}

/// What an absent box reads as.
static EMPTY: MetadataFields =
    MetadataFields { name: None, location: None, comments: Vec::new(), spill: None, curve_basis: CurveBasisSet::EMPTY };

/// Metadata of an entity: empty (no allocation) or a boxed `MetadataFields`.
/// Equality, hashing, `Debug` and serialization see only the fields, so an
/// empty box and no box are the same metadata.
#[derive(Default)]
pub struct Metadata(Option<Box<MetadataFields>>);

impl Metadata {
    pub fn named(name: impl Into<String>) -> Self {
        MetadataFields { name: Some(name.into()), ..Default::default() }.into()
    }
    /// Metadata carrying only `name`, if any (no allocation for `None`).
    pub fn with_name(name: Option<String>) -> Self {
        match name {
            Some(n) => Metadata::named(n),
            None => Metadata::default(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.0.as_deref().is_none_or(MetadataFields::is_empty)
    }
    /// The same metadata without an empty box (what a table stores:
    /// writing through `DerefMut` allocates a box even to write nothing).
    pub(crate) fn compacted(self) -> Self {
        if self.is_empty() {
            Metadata(None)
        } else {
            self
        }
    }
    /// The fields by value (a copy of the empty record when there are none).
    pub fn into_fields(self) -> MetadataFields {
        self.0.map(|b| *b).unwrap_or_default()
    }
}

impl Metadata {
    /// Heap bytes this metadata owns (its box and the box's strings).
    pub(crate) fn heap_bytes(&self) -> usize {
        use crate::ir::footprint::vec_bytes;
        let Some(f) = self.0.as_deref() else { return 0 };
        std::mem::size_of::<MetadataFields>()
            + f.name.as_ref().map_or(0, String::capacity)
            + f.location.as_ref().map_or(0, |l| std::mem::size_of::<Location>() + l.file.capacity())
            + vec_bytes(&f.comments)
            + f.comments.iter().map(String::capacity).sum::<usize>()
    }
}

impl From<MetadataFields> for Metadata {
    fn from(f: MetadataFields) -> Self {
        Metadata((!f.is_empty()).then(|| Box::new(f)))
    }
}

impl Deref for Metadata {
    type Target = MetadataFields;
    fn deref(&self) -> &MetadataFields {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

/// Writing through the handle allocates the box on first use.
impl DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut MetadataFields {
        self.0.get_or_insert_with(Default::default)
    }
}

/// A clone of empty metadata allocates nothing (even if a box was made).
impl Clone for Metadata {
    fn clone(&self) -> Self {
        Metadata(self.0.as_ref().filter(|b| !b.is_empty()).cloned())
    }
}

impl PartialEq for Metadata {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Metadata {}

impl Hash for Metadata {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &**self;
        f.debug_struct("Metadata")
            .field("name", &m.name)
            .field("location", &m.location)
            .field("comments", &m.comments)
            .field("spill", &m.spill)
            .field("curve_basis", &m.curve_basis)
            .finish()
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        MetadataFields::deserialize(d).map(Metadata::from)
    }
}

/// Where an entity was written in XIR text: its first character (1-based
/// line and column, the column counted in characters) and its extent in
/// bytes, so a diagnostic can underline the whole construct. Diagnostics
/// only: it is never printed, so it does not affect round trips. The extent
/// is a length, not an end offset, so a span stays true when its text is
/// moved (the incremental database parses each function apart and shifts
/// lines back).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub line: u32,
    pub col: u32,
    /// Bytes the construct covers from `line:col` (0: a point).
    #[serde(default)]
    pub len: u32,
}

impl Span {
    /// A point at `line:col`.
    pub fn new(line: u32, col: u32) -> Span {
        Span { line, col, len: 0 }
    }
    /// `line:col` covering `len` bytes.
    pub fn with_len(line: u32, col: u32, len: u32) -> Span {
        Span { line, col, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pointer_wide_and_empty_without_allocation() {
        assert_eq!(std::mem::size_of::<Metadata>(), std::mem::size_of::<usize>());
        let mut md = Metadata::default();
        assert!(md.is_empty() && md.0.is_none());
        assert_eq!(md.name, None);
        md.spill = Some(SpillKind::Phi);
        assert!(!md.is_empty());
        assert_eq!(md.clone().spill, Some(SpillKind::Phi));
        md.spill = None;
        // An emptied box equals no box and clones to none.
        assert_eq!(md, Metadata::default());
        assert!(md.clone().0.is_none());
        assert!(Metadata::from(MetadataFields::default()).0.is_none());
        assert!(Metadata::with_name(None).0.is_none());
        assert_eq!(Metadata::with_name(Some("x".into())).name.as_deref(), Some("x"));
    }

    #[test]
    fn serializes_as_its_fields() {
        let md = Metadata::from(MetadataFields {
            name: Some("a".into()),
            comments: vec!["c".into()],
            spill: Some(SpillKind::CrossBlock),
            curve_basis: [CurveBasis::CubicBspline, CurveBasis::Bezier].into_iter().collect(),
            ..Default::default()
        });
        let text = ron::to_string(&md).unwrap();
        assert_eq!(ron::from_str::<Metadata>(&text).unwrap(), md);
        assert_eq!(ron::to_string(&Metadata::default()).unwrap(), ron::to_string(&MetadataFields::default()).unwrap());
    }
}
