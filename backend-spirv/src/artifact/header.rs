//! The fixed-width artifact header (docs/artifact.md, "Header"): its fields,
//! the canonical byte string they append to (field by field, little-endian,
//! no padding), and its parse. The header digest is SHA-256 over that
//! canonical string, recomputed from the *parsed fields* on decode, so a
//! field is trusted only after the digest over all of them matched.

use super::wire::{sha256, Reader, Writer};
use super::{ArtifactError, Digest, Section};

/// `b"XIRSHADR"`: what every artifact starts with.
pub const MAGIC: [u8; 8] = *b"XIRSHADR";
/// The format this build writes and the only one it reads.
pub const FORMAT_VERSION: u32 = 2;
/// Bytes of the NUL-padded entry-point name field.
pub const ENTRY_FIELD_LEN: usize = 16;
/// `ExecutionModel::GLCompute`'s SPIR-V code.
pub const EXEC_MODEL_GLCOMPUTE: u32 = 5;
/// Sections in a version-1 artifact.
pub const SECTION_COUNT: u32 = 5;
/// Bytes of one section-table entry: id, size, digest.
const SECTION_ENTRY_LEN: usize = 4 + 4 + 32;
/// Bytes covered by the header digest.
pub const HEADER_FIELDS_LEN: usize =
    8 + 4 + 4 + 4 + 4 + 8 + 8 + 32 + 32 + ENTRY_FIELD_LEN + 4 + 4 + 5 * SECTION_ENTRY_LEN;
/// The whole header: the fields and their digest.
pub const HEADER_LEN: usize = HEADER_FIELDS_LEN + 32;

/// One entry of the section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionEntry {
    /// The section's id code (`Section as u32`).
    pub id: u32,
    pub size: u32,
    pub digest: Digest,
}

/// Every header field as persisted (before any of it is interpreted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawHeader {
    pub magic: [u8; 8],
    pub version: u32,
    pub header_len: u32,
    pub dialect: u32,
    pub exec_model: u32,
    pub required_features: u64,
    pub emission_features: u64,
    pub shader_hash: Digest,
    pub argument_type_hash: Digest,
    pub entry_point: [u8; ENTRY_FIELD_LEN],
    pub section_count: u32,
    /// Must be zero in version 1.
    pub reserved: u32,
    pub sections: [SectionEntry; SECTION_COUNT as usize],
}

impl RawHeader {
    /// The canonical semantic byte string: each field appended in order, little-endian.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.raw(&self.magic);
        w.u32(self.version);
        w.u32(self.header_len);
        w.u32(self.dialect);
        w.u32(self.exec_model);
        w.u64(self.required_features);
        w.u64(self.emission_features);
        w.raw(&self.shader_hash);
        w.raw(&self.argument_type_hash);
        w.raw(&self.entry_point);
        w.u32(self.section_count);
        w.u32(self.reserved);
        for s in &self.sections {
            w.u32(s.id);
            w.u32(s.size);
            w.raw(&s.digest);
        }
        debug_assert_eq!(w.bytes.len(), HEADER_FIELDS_LEN);
        w.bytes
    }

    /// The header digest: SHA-256 of [`RawHeader::canonical_bytes`].
    pub fn digest(&self) -> Digest {
        sha256(&self.canonical_bytes())
    }

    /// The header bytes as written: the canonical fields, then their digest.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.canonical_bytes();
        b.extend_from_slice(&self.digest());
        b
    }

    /// Parse the first [`HEADER_LEN`] bytes (fields and stored digest); nothing is checked here.
    pub fn parse(bytes: &[u8]) -> Result<(RawHeader, Digest), ArtifactError> {
        if bytes.len() < HEADER_LEN {
            return Err(ArtifactError::Truncated { needed: HEADER_LEN, have: bytes.len() });
        }
        let mut r = Reader::new(&bytes[..HEADER_LEN], Section::Header);
        let mut magic = [0u8; 8];
        magic.copy_from_slice(r.take(8)?);
        let version = r.u32()?;
        let header_len = r.u32()?;
        let dialect = r.u32()?;
        let exec_model = r.u32()?;
        let required_features = r.u64()?;
        let emission_features = r.u64()?;
        let shader_hash = r.digest()?;
        let argument_type_hash = r.digest()?;
        let mut entry_point = [0u8; ENTRY_FIELD_LEN];
        entry_point.copy_from_slice(r.take(ENTRY_FIELD_LEN)?);
        let section_count = r.u32()?;
        let reserved = r.u32()?;
        let mut sections = [SectionEntry { id: 0, size: 0, digest: [0; 32] }; SECTION_COUNT as usize];
        for s in &mut sections {
            s.id = r.u32()?;
            s.size = r.u32()?;
            s.digest = r.digest()?;
        }
        let stored = r.digest()?;
        r.finish()?;
        let h = RawHeader {
            magic,
            version,
            header_len,
            dialect,
            exec_model,
            required_features,
            emission_features,
            shader_hash,
            argument_type_hash,
            entry_point,
            section_count,
            reserved,
            sections,
        };
        Ok((h, stored))
    }

    /// The entry-point name: the bytes before the first NUL; every byte after it must be NUL.
    pub fn entry_point_name(&self) -> Result<&str, ArtifactError> {
        let end = self.entry_point.iter().position(|&b| b == 0).unwrap_or(ENTRY_FIELD_LEN);
        if self.entry_point[end..].iter().any(|&b| b != 0) {
            return Err(ArtifactError::BadHeader("entry-point field has bytes after its NUL padding".into()));
        }
        std::str::from_utf8(&self.entry_point[..end])
            .map_err(|_| ArtifactError::BadHeader("entry-point name is not UTF-8".into()))
    }
}

/// The entry-point field for `name` (at most [`ENTRY_FIELD_LEN`] - 1 bytes).
pub fn entry_field(name: &str) -> Result<[u8; ENTRY_FIELD_LEN], ArtifactError> {
    if name.is_empty() || name.len() >= ENTRY_FIELD_LEN || name.as_bytes().contains(&0) {
        return Err(ArtifactError::BadHeader(format!("entry point `{name}` does not fit the 16-byte field")));
    }
    let mut f = [0u8; ENTRY_FIELD_LEN];
    f[..name.len()].copy_from_slice(name.as_bytes());
    Ok(f)
}
