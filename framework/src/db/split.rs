//! Lexical split of a module text into per-function chunks, so that each
//! function is its own salsa input. This does not parse: it finds top-level
//! `kernel` / `callable` / `extern` headers and their balanced braces (skipping
//! strings and comments); the real parser still checks everything.

/// One function's text and where it starts in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionChunk {
    pub name: String,
    /// The function, with the comment lines directly above it.
    pub text: String,
    /// 1-based line of the chunk's first line.
    pub first_line: u32,
}

/// Split a module into function chunks, in order. Text between functions
/// that is not a comment directly above one is dropped (it is whitespace in
/// a well-formed module).
pub fn split_functions(text: &str) -> Vec<FunctionChunk> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let Some(name) = header_name(trimmed) else {
            i += 1;
            continue;
        };
        // Attach the comment lines directly above.
        let mut start = i;
        while start > 0 && lines[start - 1].trim_start().starts_with("//") {
            start -= 1;
        }
        let mut end = i + 1;
        if !trimmed.starts_with("extern") {
            let mut depth = 0i64;
            let mut opened = false;
            let mut j = i;
            'scan: while j < lines.len() {
                // On the header line the body opens at its last `{`: braces
                // before it belong to struct types in the signature.
                let from = if j == i { lines[j].rfind('{').unwrap_or(lines[j].len()) } else { 0 };
                let mut chars = lines[j][from..].chars().peekable();
                let mut in_str = false;
                while let Some(c) = chars.next() {
                    if in_str {
                        match c {
                            '\\' => {
                                chars.next();
                            }
                            '"' => in_str = false,
                            _ => {}
                        }
                        continue;
                    }
                    match c {
                        '"' => in_str = true,
                        '/' if chars.peek() == Some(&'/') => break,
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => {
                            depth -= 1;
                            if opened && depth == 0 {
                                end = j + 1;
                                break 'scan;
                            }
                        }
                        _ => {}
                    }
                }
                j += 1;
                end = j;
            }
        }
        let chunk_text: String = lines[start..end].concat();
        out.push(FunctionChunk { name, text: chunk_text, first_line: start as u32 + 1 });
        i = end;
    }
    out
}

fn header_name(line: &str) -> Option<String> {
    let rest = ["kernel @", "callable @", "extern @"].iter().find_map(|k| line.strip_prefix(k))?;
    let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').collect();
    (!name.is_empty()).then_some(name)
}

/// The `extern` declaration callers see for a callable or external function
/// (`None` for kernels): the header line with `callable` replaced and the
/// body's opening brace removed.
pub fn extern_declaration(text: &str) -> Option<String> {
    let header = text.lines().map(str::trim).find(|l| header_name(l).is_some())?;
    if let Some(rest) = header.strip_prefix("callable ") {
        let sig = rest.trim_end().strip_suffix('{')?.trim_end();
        Some(format!("extern {sig}"))
    } else if header.starts_with("extern ") {
        Some(header.to_string())
    } else {
        None
    }
}

/// Names `@g` referenced in a function's text other than its own, sorted
/// and unique (strings and comments skipped).
pub fn referenced_names(text: &str, own: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut in_str = false;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if in_str {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => in_str = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_str = true,
                '/' if chars.peek().map(|p| p.1) == Some('/') => break,
                '@' => {
                    let name: String = line[i + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                        .collect();
                    if !name.is_empty() && name != own {
                        out.push(name);
                    }
                }
                _ => {}
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_functions_with_comments_strings_and_struct_braces() {
        let text = "// leaf\ncallable @f(%s: struct<align 4>{f32, u32}) -> f32 {\n^entry:\n  print \"{\", %s\n  return f32 1.0\n}\n\nextern @g(%x: f32) -> f32\nkernel @k() block_size(1, 1, 1) {\n^entry:\n  return\n}\n";
        let chunks = split_functions(text);
        let names: Vec<_> = chunks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["f", "g", "k"]);
        assert_eq!(chunks[0].first_line, 1);
        assert!(chunks[0].text.starts_with("// leaf\n") && chunks[0].text.ends_with("}\n"), "{:?}", chunks[0].text);
        assert_eq!(chunks[1].text, "extern @g(%x: f32) -> f32\n");
        assert_eq!(chunks[2].first_line, 9);
        assert_eq!(
            extern_declaration(&chunks[0].text).as_deref(),
            Some("extern @f(%s: struct<align 4>{f32, u32}) -> f32")
        );
        assert_eq!(extern_declaration(&chunks[2].text), None);
        assert_eq!(referenced_names("call @g, @h // @x\nprint \"@s\", @g", "f"), ["g", "h"]);
    }
}
