//! GLSL layout qualifiers checked before naga sees them.
//!
//! naga 30's GLSL front end evaluates a layout qualifier's value
//! (`binding = ...`, `local_size_x = ...`) looking its expressions up in the
//! wrong arena, and panics ("index out of bounds") when the value indexes
//! anything: `layout(binding = 1[1])`, or the constant array GLSL allows
//! there (`binding = bindings[1]`). This scan refuses an index inside a
//! layout qualifier, where it is, before naga runs.

/// The byte offset of the first `[` inside a `layout(...)` qualifier of
/// `text` (outside comments).
pub(crate) fn first_index_in_layout(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    // The depth of parentheses inside the current layout qualifier, once its
    // `(` is open.
    let mut in_layout: Option<u32> = None;
    let mut after_layout = false;
    while i < bytes.len() {
        if let Some(n) = crate::comment_len(&text[i..]) {
            i += n;
            continue;
        }
        let c = bytes[i];
        // An identifier, or the bytes of a character that is not ASCII (so
        // `i` stays on a character boundary).
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80) {
                i += 1;
            }
            after_layout = in_layout.is_none() && &text[start..i] == "layout";
            continue;
        }
        match (c, in_layout) {
            (b'(', None) if after_layout => in_layout = Some(1),
            (b'(', Some(d)) => in_layout = Some(d + 1),
            (b')', Some(1)) => in_layout = None,
            (b')', Some(d)) => in_layout = Some(d - 1),
            (b'[', Some(_)) => return Some(i),
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            after_layout = false;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_index_in_layout;

    #[test]
    fn an_index_inside_a_layout_qualifier_is_found_and_nothing_else() {
        assert_eq!(first_index_in_layout("layout(binding = 1[1]) buffer B { uint x[]; };"), Some(18));
        assert_eq!(first_index_in_layout("layout (set = 0, binding = (a[1])) uniform U { float k; };"), Some(29));
        assert_eq!(first_index_in_layout("layout(std430, binding = 0) buffer B { uint x[]; };"), None);
        assert_eq!(first_index_in_layout("uint a[2]; void main() { a[layout_x] = 1u; }"), None);
        assert_eq!(
            first_index_in_layout("// layout(binding = a[1])\nlayout(binding = 0) buffer B { uint x[]; };"),
            None
        );
        assert_eq!(first_index_in_layout("int é\u{a0}= 1; layout(binding = é[0])"), Some(32));
    }
}
