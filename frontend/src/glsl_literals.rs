//! GLSL number literals checked before naga sees them.
//!
//! naga's GLSL preprocessor (pp-rs) reports a malformed number without a
//! position (`IntegerOverflow` for `0x`, `FloatParsingError` for `1e`) and
//! takes an integer literal that does not fit in 32 bits, which GLSL 4.50
//! (section 4.1.3) makes a compile-time error, leaving its bits to whatever
//! naga keeps. This scan finds the first such literal and says what is
//! wrong with it, where.

/// A literal the scan refuses: its byte range and why.
pub(crate) struct BadLiteral {
    pub start: usize,
    pub len: usize,
    pub message: String,
}

/// The first number literal of `text` (outside comments) that is malformed,
/// does not fit in 32 bits, or has a 16- or 64-bit suffix naga refuses.
pub(crate) fn first_bad_literal(text: &str) -> Option<BadLiteral> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if let Some(n) = crate::comment_len(rest) {
            i += n;
            continue;
        }
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            // An identifier (a digit inside it is no number), or a byte of a
            // character that is not ASCII.
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80) {
                i += 1;
            }
            continue;
        }
        let starts_number = c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        let hex = rest.starts_with("0x") || rest.starts_with("0X");
        i += 1;
        while i < bytes.len() {
            let x = bytes[i];
            let exponent_sign = !hex && matches!(x, b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E');
            if !(x.is_ascii_alphanumeric() || x == b'_' || x == b'.' || exponent_sign) {
                break;
            }
            i += 1;
        }
        if let Some(message) = literal_error(&text[start..i], hex) {
            return Some(BadLiteral { start, len: i - start, message });
        }
    }
    None
}

/// What is wrong with the number literal `lit`, if anything.
fn literal_error(lit: &str, hex: bool) -> Option<String> {
    let lower = lit.to_ascii_lowercase();
    let float = !hex && (lower.contains('.') || lower.contains('e'));
    if float {
        let (body, width) = match lower.as_str() {
            l if l.ends_with("lf") => (&lit[..lit.len() - 2], Some(64)),
            l if l.ends_with("hf") => (&lit[..lit.len() - 2], Some(16)),
            l if l.ends_with('f') => (&lit[..lit.len() - 1], None),
            _ => (lit, None),
        };
        if body.parse::<f64>().is_err() {
            return Some(format!("malformed floating-point literal `{lit}`"));
        }
        return width.map(|w| format!("{w}-bit floating-point literals (`{lit}`) are not supported"));
    }
    let body = lower.trim_end_matches(['u', 'l', 's']);
    let suffix = &lower[body.len()..];
    if suffix.contains('l') || suffix.contains('s') {
        let width = if suffix.contains('l') { 64 } else { 16 };
        return Some(format!("{width}-bit integer literals (`{lit}`) are not supported"));
    }
    let (digits, radix) = match body.strip_prefix("0x") {
        Some(h) => (h, 16),
        None if body.len() > 1 && body.starts_with('0') => (&body[1..], 8),
        None => (body, 10),
    };
    if digits.is_empty() && radix == 16 {
        return Some(format!("hexadecimal literal `{lit}` has no digits"));
    }
    match u64::from_str_radix(digits, radix) {
        Err(_) if !digits.bytes().all(|d| (d as char).is_digit(radix)) => {
            Some(format!("malformed integer literal `{lit}`"))
        }
        Ok(v) if v <= u64::from(u32::MAX) => None,
        _ => Some(format!("integer literal `{lit}` does not fit in 32 bits (GLSL 4.50, section 4.1.3)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(code: &str) -> Option<(usize, String)> {
        first_bad_literal(code).map(|b| (b.start, b.message))
    }

    #[test]
    fn each_kind_of_bad_literal_is_found_at_its_start() {
        assert_eq!(bad("uint x = 0x;"), Some((9, "hexadecimal literal `0x` has no digits".into())));
        assert_eq!(bad("float x = 1.5e;"), Some((10, "malformed floating-point literal `1.5e`".into())));
        assert_eq!(bad("uint x = 09;"), Some((9, "malformed integer literal `09`".into())));
        assert_eq!(
            bad("uint x = 4294967296;"),
            Some((9, "integer literal `4294967296` does not fit in 32 bits (GLSL 4.50, section 4.1.3)".into()))
        );
        assert!(bad("uint x = 0x100000000u;").is_some_and(|(_, m)| m.contains("does not fit in 32 bits")));
        assert_eq!(bad("uint x = 1ul;"), Some((9, "64-bit integer literals (`1ul`) are not supported".into())));
        assert_eq!(
            bad("double x = 1.0lf;"),
            Some((11, "64-bit floating-point literals (`1.0lf`) are not supported".into()))
        );
        assert_eq!(
            bad("float x = 2.0hf;"),
            Some((10, "16-bit floating-point literals (`2.0hf`) are not supported".into()))
        );
    }

    #[test]
    fn good_literals_identifiers_and_comments_pass() {
        for ok in [
            "uint a = 4294967295u; uint b = 0xFFFFFFFF; int c = 037777777777; int d = 0;",
            "float a = .5e3; float b = 1.; float c = 2.5E-3f; float d = 1e+4; float e = 0.0;",
            "vec2 v1 = vec2(1); x = v1.x + tex2D; // 4294967296 0x\n/* 1e 09 */ y = 1;",
            "#version 450\nlayout(local_size_x = 64) in;",
        ] {
            assert!(bad(ok).is_none(), "{ok}: {:?}", bad(ok));
        }
    }
}
