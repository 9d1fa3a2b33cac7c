//! Metadata attached to functions, arguments, blocks and instructions. Names,
//! comments and locations are diagnostic; a kernel's curve bases describe
//! the scenes it traces; spill provenance is semantic (the
//! post-restructure audit depends on it) and survives cloning and every
//! serialization.
//!
//! Storage (BENCHMARKS.md, "Memory per instruction"): a function keeps its
//! instructions' and blocks' names as ids into one table of its own
//! (`ir/function/names.rs`: a name costs 4 bytes an instruction and one
//! shared copy of the string), and the other, rare fields
//! (`MetadataFields`) in a sparse table keyed by id; it lends both out as
//! a `MetadataRef`. `Metadata` is the value form (name and a box of the
//! fields that exists only when one is set), which instructions are built
//! from and arguments and functions hold.

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

/// The fields of a `Metadata` other than the name: what is rare (most
/// metadata is a name alone), kept out of the way in a box or a sparse
/// table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MetadataFields {
    /// Boxed: an inline location cost every record 24 more bytes.
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
        self.location.is_none() && self.comments.is_empty() && self.spill.is_none() && self.curve_basis.is_empty()
    }

    /// Heap bytes the fields own (not counting their own record).
    pub(crate) fn heap_bytes(&self) -> usize {
        use crate::ir::footprint::vec_bytes;
        self.location.as_ref().map_or(0, |l| std::mem::size_of::<Location>() + l.file.capacity())
            + vec_bytes(&self.comments)
            + self.comments.iter().map(String::capacity).sum::<usize>()
    }
}

/// What absent fields read as.
pub(crate) static NO_FIELDS: MetadataFields =
    MetadataFields { location: None, comments: Vec::new(), spill: None, curve_basis: CurveBasisSet::EMPTY };

/// Metadata of an entity, as a value: its name and its other fields (a box
/// that exists only when one is set, reached through `Deref` / `DerefMut`:
/// `md.comments`, `md.spill = ..`). This is what instructions are built
/// from (`InstData::md`) and what arguments and functions hold; a function
/// stores its instructions' and blocks' metadata apart (names interned,
/// the other fields in a sparse table) and lends it out as a
/// `MetadataRef`. Equality, hashing, `Debug` and serialization see only
/// the name and the fields, so an empty box and no box are the same
/// metadata.
#[derive(Default)]
pub struct Metadata {
    pub name: Option<String>,
    fields: Option<Box<MetadataFields>>,
}

impl Metadata {
    pub fn named(name: impl Into<String>) -> Self {
        Metadata { name: Some(name.into()), fields: None }
    }
    /// Metadata carrying only `name`, if any.
    pub fn with_name(name: Option<String>) -> Self {
        Metadata { name, fields: None }
    }
    /// `name` and `fields` (no box when the fields are empty).
    pub fn new(name: Option<String>, fields: MetadataFields) -> Self {
        Metadata { name, fields: (!fields.is_empty()).then(|| Box::new(fields)) }
    }
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.fields().is_empty()
    }
    /// The fields other than the name.
    pub fn fields(&self) -> &MetadataFields {
        self.fields.as_deref().unwrap_or(&NO_FIELDS)
    }
    /// The name and the other fields, by value.
    pub fn into_parts(self) -> (Option<String>, MetadataFields) {
        (self.name, self.fields.map(|b| *b).unwrap_or_default())
    }
    /// Heap bytes this metadata owns (its name, its box and what that owns).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.name.as_ref().map_or(0, String::capacity)
            + self.fields.as_deref().map_or(0, |f| std::mem::size_of::<MetadataFields>() + f.heap_bytes())
    }
}

impl From<MetadataFields> for Metadata {
    fn from(f: MetadataFields) -> Self {
        Metadata::new(None, f)
    }
}

impl Deref for Metadata {
    type Target = MetadataFields;
    fn deref(&self) -> &MetadataFields {
        self.fields()
    }
}

/// Writing through the handle allocates the box on first use.
impl DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut MetadataFields {
        self.fields.get_or_insert_with(Default::default)
    }
}

/// A clone of empty fields allocates nothing (even if a box was made).
impl Clone for Metadata {
    fn clone(&self) -> Self {
        Metadata { name: self.name.clone(), fields: self.fields.as_ref().filter(|b| !b.is_empty()).cloned() }
    }
}

impl PartialEq for Metadata {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.fields() == other.fields()
    }
}

impl Eq for Metadata {}

impl Hash for Metadata {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.name.hash(h);
        self.fields().hash(h)
    }
}

impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl Metadata {
    /// This metadata lent out as a function lends its entities'.
    pub fn as_ref(&self) -> MetadataRef<'_> {
        MetadataRef { name: self.name.as_deref(), fields: self.fields() }
    }
}

/// The metadata of an instruction or block, as its function lends it out:
/// the name (interned by the function) and the other fields, read as
/// `md.name` and `md.comments` / `md.spill` / ... (through `Deref`).
/// `to_metadata` copies it into a value, to build another entity with it.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct MetadataRef<'a> {
    pub name: Option<&'a str>,
    pub fields: &'a MetadataFields,
}

impl<'a> MetadataRef<'a> {
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.fields.is_empty()
    }
    /// An owned copy (the name's string and the fields).
    pub fn to_metadata(&self) -> Metadata {
        Metadata::new(self.name.map(str::to_string), self.fields.clone())
    }
}

impl Deref for MetadataRef<'_> {
    type Target = MetadataFields;
    fn deref(&self) -> &MetadataFields {
        self.fields
    }
}

impl fmt::Debug for MetadataRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.fields;
        f.debug_struct("Metadata")
            .field("name", &self.name)
            .field("location", &m.location)
            .field("comments", &m.comments)
            .field("spill", &m.spill)
            .field("curve_basis", &m.curve_basis)
            .finish()
    }
}

/// The serialized form: the name and the fields side by side, each left
/// out when unset (as before names were kept apart).
#[derive(Serialize)]
struct MetadataSer<'a> {
    #[serde(skip_serializing_if = "is_none")]
    name: &'a Option<String>,
    #[serde(skip_serializing_if = "is_none")]
    location: &'a Option<Box<Location>>,
    #[serde(skip_serializing_if = "no_comments")]
    comments: &'a [String],
    #[serde(skip_serializing_if = "is_none")]
    spill: &'a Option<SpillKind>,
    #[serde(skip_serializing_if = "no_bases")]
    curve_basis: &'a CurveBasisSet,
}

fn is_none<T>(x: &&Option<T>) -> bool {
    x.is_none()
}
fn no_comments(x: &&[String]) -> bool {
    x.is_empty()
}
fn no_bases(x: &&CurveBasisSet) -> bool {
    x.is_empty()
}

#[derive(Deserialize)]
struct MetadataDe {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    location: Option<Box<Location>>,
    #[serde(default)]
    comments: Vec<String>,
    #[serde(default)]
    spill: Option<SpillKind>,
    #[serde(default)]
    curve_basis: CurveBasisSet,
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.fields();
        MetadataSer {
            name: &self.name,
            location: &f.location,
            comments: &f.comments,
            spill: &f.spill,
            curve_basis: &f.curve_basis,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let MetadataDe { name, location, comments, spill, curve_basis } = MetadataDe::deserialize(d)?;
        Ok(Metadata::new(name, MetadataFields { location, comments, spill, curve_basis }))
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
    fn no_box_without_fields() {
        assert_eq!(std::mem::size_of::<Metadata>(), 4 * std::mem::size_of::<usize>());
        let mut md = Metadata::default();
        assert!(md.is_empty() && md.fields.is_none());
        assert_eq!(md.name, None);
        md.spill = Some(SpillKind::Phi);
        assert!(!md.is_empty());
        assert_eq!(md.clone().spill, Some(SpillKind::Phi));
        md.spill = None;
        // An emptied box equals no box and clones to none.
        assert_eq!(md, Metadata::default());
        assert!(md.clone().fields.is_none());
        assert!(Metadata::from(MetadataFields::default()).fields.is_none());
        assert!(Metadata::with_name(None).is_empty());
        let named = Metadata::with_name(Some("x".into()));
        assert_eq!((named.name.as_deref(), named.fields.is_none()), (Some("x"), true), "a name alone is no box");
        assert_eq!(named.heap_bytes(), 1);
        assert_eq!(named.as_ref().to_metadata(), named);
    }

    #[test]
    fn serializes_as_its_fields() {
        let md = Metadata::new(
            Some("a".into()),
            MetadataFields {
                comments: vec!["c".into()],
                spill: Some(SpillKind::CrossBlock),
                curve_basis: [CurveBasis::CubicBspline, CurveBasis::Bezier].into_iter().collect(),
                ..Default::default()
            },
        );
        let text = serde_json::to_string(&md).unwrap();
        assert_eq!(
            text,
            r#"{"name":"a","comments":["c"],"spill":"CrossBlock","curve_basis":["cubic_bspline","bezier"]}"#
        );
        assert_eq!(serde_json::from_str::<Metadata>(&text).unwrap(), md);
        let text = ron::to_string(&md).unwrap();
        assert_eq!(ron::from_str::<Metadata>(&text).unwrap(), md);
        assert_eq!(serde_json::to_string(&Metadata::default()).unwrap(), "{}");
    }
}
