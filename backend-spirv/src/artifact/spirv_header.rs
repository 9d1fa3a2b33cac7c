//! The SPIR-V module header (five words: magic, version, generator, id
//! bound, schema), checked exactly before the module reaches SPIRV-Tools or
//! a driver. SPIRV-Tools' validator does not check the schema word, and a
//! driver trusts all five (lavapipe crashed in `vkCreateComputePipelines` on
//! a non-zero schema), so the decoder checks each one itself.

use super::ArtifactError;

/// The SPIR-V magic number (host byte order).
pub const SPIRV_MAGIC: u32 = 0x0723_0203;
/// The SPIR-V versions a Vulkan 1.2 device accepts: 1.0 to 1.5.
pub const SPIRV_MINOR_VERSIONS: std::ops::RangeInclusive<u32> = 0..=5;
/// SPIRV-Tools' universal limit on the id bound (`spv_validator_limit_max_id_bound`).
pub const MAX_ID_BOUND: u32 = 0x3f_ffff;

fn bad(msg: String) -> ArtifactError {
    ArtifactError::SpirvHeader(msg)
}

/// Magic, version (exactly `0x00010m00` with `m` in 0..=5), bound (1..=[`MAX_ID_BOUND`])
/// and schema (0) of `words`; the generator word is free.
pub fn check_words(words: &[u32]) -> Result<(), ArtifactError> {
    let [magic, version, _generator, bound, schema, ..] = *words else {
        return Err(bad(format!("{} words; the header alone is 5", words.len())));
    };
    if magic != SPIRV_MAGIC {
        return Err(bad(format!("magic {magic:#010x}, expected {SPIRV_MAGIC:#010x}")));
    }
    let (major, minor) = (version >> 16, (version >> 8) & 0xff);
    if version & 0xff != 0 || major != 1 || !SPIRV_MINOR_VERSIONS.contains(&minor) {
        return Err(bad(format!("version word {version:#010x} is not SPIR-V 1.0 to 1.5 (what Vulkan 1.2 accepts)")));
    }
    if bound == 0 || bound > MAX_ID_BOUND {
        return Err(bad(format!("id bound {bound} is outside 1..={MAX_ID_BOUND}")));
    }
    if schema != 0 {
        return Err(bad(format!("schema word {schema:#x} is not 0 (reserved)")));
    }
    Ok(())
}

/// Every id the loaded module defines or uses is below the header's bound.
pub fn check_ids(m: &rspirv::dr::Module, bound: u32) -> Result<(), ArtifactError> {
    for inst in m.all_inst_iter() {
        let ids = inst.result_type.iter().chain(&inst.result_id).copied();
        let used = inst.operands.iter().filter_map(|o| o.id_ref_any());
        if let Some(id) = ids.chain(used).find(|&id| id >= bound) {
            return Err(bad(format!("id {id} of `Op{:?}` is not below the id bound {bound}", inst.class.opcode)));
        }
    }
    Ok(())
}

/// Every string operand ends inside its instruction (a NUL byte before the
/// instruction's last word), and every instruction fits in the module.
/// rspirv's loader assumes both and panics where they fail; this runs
/// before it. Operands before a string whose width the grammar does not
/// fix end the check for that instruction (it never refuses a valid one).
pub fn check_strings(words: &[u32]) -> Result<(), ArtifactError> {
    use rspirv::grammar::{OperandKind as K, OperandQuantifier, INSTRUCTION_TABLE};
    let mut k = 5;
    while k < words.len() {
        let count = (words[k] >> 16) as usize;
        if count == 0 || k + count > words.len() {
            return Err(bad(format!("the instruction at word {k} has word count {count}, past the module's end")));
        }
        let end = k + count;
        if let Some(grammar) = INSTRUCTION_TABLE.lookup_opcode(words[k] & 0xffff) {
            let mut at = k + 1;
            for o in grammar.operands {
                match o.kind {
                    K::LiteralString => {
                        let terminated = words[at.min(end)..end].iter().any(|w| w.to_le_bytes().contains(&0));
                        if !terminated {
                            return Err(bad(format!(
                                "the string of `Op{}` at word {k} has no terminator inside the instruction",
                                grammar.opname
                            )));
                        }
                        break;
                    }
                    K::IdResultType
                    | K::IdResult
                    | K::IdRef
                    | K::IdScope
                    | K::IdMemorySemantics
                    | K::LiteralInteger => at += 1,
                    _ => break,
                }
                if o.quantifier != OperandQuantifier::One {
                    break;
                }
            }
        }
        k = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `OpName %1 "ab"`: terminated inside the instruction, or (its last
    /// word without a NUL) not, or its word count past the module's end.
    #[test]
    fn strings_end_inside_their_instruction() {
        let name = |count: u32, text: u32| vec![SPIRV_MAGIC, 0x0001_0500, 0, 9, 0, (count << 16) | 5, 1, text];
        assert_eq!(check_strings(&name(3, u32::from_le_bytes(*b"ab\0\0"))), Ok(()));
        let e = check_strings(&name(3, u32::from_le_bytes(*b"abcd"))).unwrap_err();
        assert!(e.to_string().contains("no terminator"), "{e}");
        let e = check_strings(&name(9, u32::from_le_bytes(*b"ab\0\0"))).unwrap_err();
        assert!(e.to_string().contains("past the module's end"), "{e}");
    }

    fn header(version: u32, bound: u32, schema: u32) -> Vec<u32> {
        vec![SPIRV_MAGIC, version, 0, bound, schema]
    }

    #[test]
    fn each_header_word_is_checked_exactly() {
        assert_eq!(check_words(&header(0x0001_0500, 9, 0)), Ok(()));
        assert_eq!(check_words(&header(0x0001_0000, 1, 0)), Ok(()));
        assert_eq!(check_words(&header(0x0001_0500, MAX_ID_BOUND, 0)), Ok(()));
        let cases = [
            (vec![SPIRV_MAGIC, 0x0001_0500, 0, 9], "4 words"),
            (vec![0x0302_2307, 0x0001_0500, 0, 9, 0], "magic 0x03022307"),
            (header(0x0001_0600, 9, 0), "version word 0x00010600"),
            (header(0x0002_0000, 9, 0), "version word 0x00020000"),
            (header(0x0001_0501, 9, 0), "version word 0x00010501"),
            (header(0x0101_0500, 9, 0), "version word 0x01010500"),
            (header(0x0001_0500, 0, 0), "id bound 0 "),
            (header(0x0001_0500, MAX_ID_BOUND + 1, 0), "id bound 4194304 "),
            (header(0x0001_0500, 9, 1), "schema word 0x1 "),
        ];
        for (words, want) in cases {
            let e = check_words(&words).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
