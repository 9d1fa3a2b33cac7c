//! Little-endian framing primitives of the artifact codec: a writer that
//! appends fields one by one and a bounded reader that never reads past its
//! slice (every short read is an error value, never a panic). Nothing here
//! transmutes a struct: each field is converted with `to_le_bytes` /
//! `from_le_bytes`.

use sha2::{Digest as _, Sha256};

use super::{ArtifactError, Digest, Section};

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest {
    Sha256::digest(bytes).into()
}

/// Appends fields in little-endian order.
#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn raw(&mut self, v: &[u8]) {
        self.bytes.extend_from_slice(v);
    }
    /// A `u32` byte length followed by the bytes.
    pub fn string(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.raw(s.as_bytes());
    }
}

/// Reads fields from one section (or the header), bounded by its slice.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    section: Section,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], section: Section) -> Self {
        Reader { bytes, pos: 0, section }
    }

    pub fn malformed(&self, reason: impl Into<String>) -> ArtifactError {
        ArtifactError::Malformed { section: self.section, offset: self.pos, reason: reason.into() }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ArtifactError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.malformed(format!("needs {n} more bytes, {} left", self.bytes.len() - self.pos)))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, ArtifactError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, ArtifactError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }
    pub fn u64(&mut self) -> Result<u64, ArtifactError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    pub fn digest(&mut self) -> Result<Digest, ArtifactError> {
        let mut d = [0u8; 32];
        d.copy_from_slice(self.take(32)?);
        Ok(d)
    }
    /// A count, rejected above `max` before anything is allocated for it.
    pub fn count(&mut self, what: &str, max: u32) -> Result<u32, ArtifactError> {
        let n = self.u32()?;
        if n > max {
            return Err(self.malformed(format!("{what} count {n} exceeds the limit {max}")));
        }
        Ok(n)
    }
    /// A length-prefixed UTF-8 string of at most `max` bytes.
    pub fn string(&mut self, what: &str, max: u32) -> Result<&'a str, ArtifactError> {
        let n = self.u32()?;
        if n > max {
            return Err(self.malformed(format!("{what} is {n} bytes, the limit is {max}")));
        }
        let b = self.take(n as usize)?;
        std::str::from_utf8(b).map_err(|e| self.malformed(format!("{what} is not UTF-8: {e}")))
    }
    /// Every byte must have been consumed.
    pub fn finish(self) -> Result<(), ArtifactError> {
        if self.pos != self.bytes.len() {
            return Err(self.malformed(format!("{} trailing bytes", self.bytes.len() - self.pos)));
        }
        Ok(())
    }
}
