//! SPIR-V instruction word-count limits for variable-length instructions.
//! The word count lives in the top 16 bits of an instruction's first word, so
//! no instruction may exceed 65535 words. `OpPhi` and `OpSwitch` grow with
//! the IR (incomings, cases) and are planned here before any id is allocated.

/// Largest instruction, in words.
pub const MAX_WORDS: u32 = u16::MAX as u32;

/// An instruction that would exceed [`MAX_WORDS`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WordLimitError {
    #[error("OpPhi with {incomings} incomings needs {words} words; SPIR-V allows {MAX_WORDS}")]
    Phi { incomings: usize, words: u64 },
    #[error(
        "OpSwitch with {cases} cases on a {selector_bits}-bit selector needs {words} words; SPIR-V allows {MAX_WORDS}"
    )]
    Switch { cases: usize, selector_bits: u32, words: u64 },
}

/// Words of an `OpPhi` with `incomings` (value, parent) pairs:
/// opcode, result type, result id, then two words per pair.
pub fn plan_phi(incomings: usize) -> Result<u32, WordLimitError> {
    let words = 3u64 + 2 * incomings as u64;
    if words > MAX_WORDS as u64 {
        return Err(WordLimitError::Phi { incomings, words });
    }
    Ok(words as u32)
}

/// Words of an `OpSwitch` on a selector of `selector_bits` with `cases` cases:
/// opcode, selector, default, then per case the literal (one word up to 32
/// bits, two for 64) and the target label.
pub fn plan_switch(cases: usize, selector_bits: u32) -> Result<u32, WordLimitError> {
    let lit = if selector_bits > 32 { 2u64 } else { 1 };
    let words = 3u64 + (lit + 1) * cases as u64;
    if words > MAX_WORDS as u64 {
        return Err(WordLimitError::Switch { cases, selector_bits, words });
    }
    Ok(words as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_limit_exact_boundary_and_one_over() {
        // 3 + 2n <= 65535  <=>  n <= 32766
        assert_eq!(plan_phi(32766), Ok(65535));
        assert_eq!(plan_phi(32767), Err(WordLimitError::Phi { incomings: 32767, words: 65537 }));
    }

    #[test]
    fn switch_limit_depends_on_literal_width() {
        // 32-bit: 3 + 2n <= 65535 <=> n <= 32766; 64-bit: 3 + 3n <= 65535 <=> n <= 21844
        assert_eq!(plan_switch(32766, 32), Ok(65535));
        assert_eq!(
            plan_switch(32767, 32),
            Err(WordLimitError::Switch { cases: 32767, selector_bits: 32, words: 65537 })
        );
        assert_eq!(plan_switch(21844, 64), Ok(65535));
        assert_eq!(
            plan_switch(21845, 64),
            Err(WordLimitError::Switch { cases: 21845, selector_bits: 64, words: 65538 })
        );
        assert_eq!(plan_switch(3, 16), Ok(9));
    }
}
