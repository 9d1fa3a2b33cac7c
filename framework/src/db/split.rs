//! Lexical split of a module text into per-function chunks, so that each
//! function is its own salsa input. This does not parse: it finds top-level
//! `kernel` / `callable` / `extern` headers and their balanced braces (skipping
//! strings and comments); the real parser still checks everything.
//!
//! Chunks are byte ranges of the text, and the splitter can start at any
//! chunk boundary: `Session::update` re-splits only the region an edit
//! touched (`resplit`), so an edit costs the size of the edit, not of the
//! module.

/// One function's place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionChunk {
    /// The function's name, without `@`.
    pub name: String,
    /// Whether the header says `kernel`.
    pub kernel: bool,
    /// Byte range of the function, with the comment lines directly above it.
    pub start: usize,
    /// End of the range (exclusive): just past the closing line's newline.
    pub end: usize,
    /// 1-based line of the chunk's first line.
    pub first_line: u32,
}

impl FunctionChunk {
    /// The chunk's text in `src` (the text it was split from).
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }
}

/// Split a module into function chunks, in order. Text between functions
/// that is not a comment directly above one is dropped (it is whitespace in
/// a well-formed module).
pub fn split_functions(text: &str) -> Vec<FunctionChunk> {
    Splitter::new(text, 0, 1).collect()
}

/// Chunks of `text` from byte `pos` (a line start), whose line is `line`.
/// Comment lines above a header are attached back to `pos` at most.
pub struct Splitter<'a> {
    text: &'a str,
    pos: usize,
    line: u32,
    /// Start of the run of comment lines just read, if any.
    comments: Option<(usize, u32)>,
}

impl<'a> Splitter<'a> {
    /// Start at byte `pos` (a line start) of `text`, on line `line`.
    pub fn new(text: &'a str, pos: usize, line: u32) -> Self {
        Splitter { text, pos, line, comments: None }
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| from + i + 1)
}

impl Iterator for Splitter<'_> {
    type Item = FunctionChunk;

    fn next(&mut self) -> Option<FunctionChunk> {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            let end = line_end(bytes, self.pos);
            let trimmed = self.text[self.pos..end].trim_start();
            let Some(name) = header_name(trimmed) else {
                if trimmed.starts_with("//") {
                    self.comments.get_or_insert((self.pos, self.line));
                } else {
                    self.comments = None;
                }
                self.pos = end;
                self.line += 1;
                continue;
            };
            let (start, first_line) = self.comments.take().unwrap_or((self.pos, self.line));
            let kernel = trimmed.starts_with("kernel");
            let stop = if trimmed.starts_with("extern") {
                end
            } else {
                // On the header line the body opens at its last `{`: braces
                // before it belong to struct types in the signature.
                let from = self.text[self.pos..end].rfind('{').map_or(end, |i| self.pos + i);
                body_end(bytes, from)
            };
            self.line += bytes[self.pos..stop].iter().filter(|&&b| b == b'\n').count() as u32;
            self.pos = stop;
            return Some(FunctionChunk { name, kernel, start, end: stop, first_line });
        }
        None
    }
}

/// Scan from `from` (on the header line) to the brace that closes the
/// body; returns the end of that line. Unclosed: the end of the text.
fn body_end(bytes: &[u8], from: usize) -> usize {
    let mut depth = 0i64;
    let mut opened = false;
    let mut i = from;
    let mut in_str = false;
    while i < bytes.len() {
        let c = bytes[i];
        i += 1;
        if in_str {
            match c {
                b'\\' if bytes.get(i) != Some(&b'\n') => i += 1,
                b'"' | b'\n' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            // The rest of the line is a comment.
            b'/' if bytes.get(i) == Some(&b'/') => i = line_end(bytes, i) - 1,
            b'{' => {
                depth += 1;
                opened = true;
            }
            b'}' => {
                depth -= 1;
                if opened && depth == 0 {
                    return line_end(bytes, i - 1);
                }
            }
            _ => {}
        }
    }
    bytes.len()
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

/// Blocks compared at once (slice equality is a `memcmp`), so finding
/// where two megabyte texts differ takes microseconds.
const BLOCK: usize = 256;

/// Length of the common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= len && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..len].iter().zip(&b[i..len]).position(|(x, y)| x != y).unwrap_or(len - i)
}

/// Length of the common suffix of `a` and `b`.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[a.len() - len..], &b[b.len() - len..]);
    let mut k = 0;
    while k + BLOCK <= len && a[len - k - BLOCK..len - k] == b[len - k - BLOCK..len - k] {
        k += BLOCK;
    }
    k + a[..len - k].iter().rev().zip(b[..len - k].iter().rev()).position(|(x, y)| x != y).unwrap_or(len - k)
}

/// How the chunks of a text change with an edit: the old chunks in
/// `replace` give way to `chunks`; those after it move by the deltas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resplit {
    /// Indices into the old chunk list.
    pub replace: std::ops::Range<usize>,
    /// The chunks that take their place, in the new text.
    pub chunks: Vec<FunctionChunk>,
    /// How far the chunks after the edit move, in bytes and in lines.
    pub byte_delta: i64,
    pub line_delta: i64,
}

impl Resplit {
    /// Apply to the old chunk list: splice, then move the chunks after it.
    pub fn apply(self, chunks: &mut Vec<FunctionChunk>) {
        let after = self.replace.start + self.chunks.len();
        chunks.splice(self.replace, self.chunks);
        for c in &mut chunks[after..] {
            c.start = (c.start as i64 + self.byte_delta) as usize;
            c.end = (c.end as i64 + self.byte_delta) as usize;
            c.first_line = (c.first_line as i64 + self.line_delta) as u32;
        }
    }
}

/// The change to `chunks` (the split of `old`) that gives the split of
/// `new`, re-splitting only around the edit: the common prefix and suffix
/// of the two texts keep their chunks. Costs the edit's size (and a
/// comparison of the texts), not the module's.
pub fn resplit(old: &str, chunks: &[FunctionChunk], new: &str) -> Resplit {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let prefix = common_prefix(o, n);
    let max_suffix = o.len().min(n.len()) - prefix;
    let suffix = common_suffix(&o[prefix..], &n[prefix..]).min(max_suffix);
    // Re-split from the start of the chunk before the first one the edit
    // reaches (a comment or gap edit can re-attach lines to its neighbour).
    let first_touched = chunks.partition_point(|c| c.end <= prefix);
    let a = first_touched.saturating_sub(1);
    let (a, from, line) = match chunks.get(a) {
        Some(c) if c.start <= prefix => (a, c.start, c.first_line),
        // No chunk before the edit: start over at the top.
        _ => (0, 0, 1),
    };
    let byte_delta = n.len() as i64 - o.len() as i64;
    let old_suffix_start = o.len() - suffix;
    let count = |s: &[u8]| s.iter().filter(|&&b| b == b'\n').count() as i64;
    let line_delta = count(&n[prefix..n.len() - suffix]) - count(&o[prefix..old_suffix_start]);
    let mut out = Vec::new();
    let mut b = chunks.len();
    for c in Splitter::new(new, from, line) {
        let old_start = c.start as i64 - byte_delta;
        if old_start >= old_suffix_start as i64 {
            // In the common suffix: the old chunk starting here (if any) and
            // every one after it are unchanged.
            if let Ok(k) = chunks.binary_search_by_key(&(old_start as usize), |c| c.start) {
                b = k;
                break;
            }
        }
        out.push(c);
    }
    Resplit { replace: a..b.max(a), chunks: out, byte_delta, line_delta }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "// leaf\ncallable @f(%s: struct<align 4>{f32, u32}) -> f32 {\n^entry:\n  print \"{\", %s // }\n  return f32 1.0\n}\n\nextern @g(%x: f32) -> f32\nkernel @k() block_size(1, 1, 1) {\n^entry:\n  return\n}\n";

    #[test]
    fn splits_functions_with_comments_strings_and_struct_braces() {
        let chunks = split_functions(TEXT);
        let names: Vec<_> = chunks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["f", "g", "k"]);
        assert_eq!(chunks[0].first_line, 1);
        assert_eq!(
            chunks[0].text(TEXT),
            "// leaf\ncallable @f(%s: struct<align 4>{f32, u32}) -> f32 {\n^entry:\n  print \"{\", %s // }\n  return f32 1.0\n}\n"
        );
        assert_eq!(chunks[1].text(TEXT), "extern @g(%x: f32) -> f32\n");
        assert_eq!((chunks[1].first_line, chunks[2].first_line), (8, 9));
        assert!(chunks[2].kernel && !chunks[0].kernel);
        assert_eq!(
            extern_declaration(chunks[0].text(TEXT)).as_deref(),
            Some("extern @f(%s: struct<align 4>{f32, u32}) -> f32")
        );
        assert_eq!(extern_declaration(chunks[2].text(TEXT)), None);
        assert_eq!(referenced_names("call @g, @h // @x\nprint \"@s\", @g", "f"), ["g", "h"]);
    }

    /// Random byte-range replacements (from pieces that open and close
    /// braces, strings, comments and headers) of a module: re-splitting
    /// around each edit always gives the full split.
    #[test]
    fn resplit_agrees_with_a_full_split_on_random_edits() {
        let pieces = ["{", "}", "\"", "// c\n", "\n", "kernel @z() {\n", "extern @e() -> void\n", "x", ""];
        let mut text = TEXT.repeat(20);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize % m.max(1)
        };
        for _ in 0..300 {
            let chunks = split_functions(&text);
            let a = next(text.len() + 1);
            let b = (a + next(40)).min(text.len());
            let new = format!("{}{}{}", &text[..a], pieces[next(pieces.len())], &text[b..]);
            let mut got = chunks.clone();
            resplit(&text, &chunks, &new).apply(&mut got);
            assert_eq!(got, split_functions(&new), "edit of {a}..{b}");
            text = new;
        }
    }

    #[test]
    fn common_prefix_and_suffix_cross_blocks() {
        let a = "x".repeat(1000) + "A" + &"y".repeat(700);
        let b = "x".repeat(1000) + "BB" + &"y".repeat(700);
        assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), 1000);
        assert_eq!(common_suffix(a.as_bytes(), b.as_bytes()), 700);
        assert_eq!(common_prefix(a.as_bytes(), a.as_bytes()), a.len());
        assert_eq!(common_suffix(b"", b"abc"), 0);
    }

    #[test]
    fn resplit_matches_a_full_split_and_keeps_untouched_chunks() {
        let old = TEXT.repeat(3).replace("@f(", "@f0(").replacen("@f0(", "@f1(", 1);
        let chunks = split_functions(&old);
        let edits = [
            old.replacen("return f32 1.0", "%z = add f32 1.0, f32 2.0\n  return %z", 2),
            old.replacen("\n\n", "\n\n// new comment\n", 2),
            old.replacen("extern @g(%x: f32) -> f32\n", "", 1),
            old.replacen("}\n", "", 1),
            format!("{old}callable @tail() -> void {{\n^entry:\n  return\n}}\n"),
            format!("extern @head() -> void\n{old}"),
            old.clone(),
            String::new(),
        ];
        for new in &edits {
            let mut got = chunks.clone();
            resplit(&old, &chunks, new).apply(&mut got);
            assert_eq!(got, split_functions(new), "edit {new:?}");
        }
        // A one-line edit of the second kernel (chunk 5) re-splits it and its
        // neighbour above only.
        let pos = old.match_indices("  return\n}").nth(1).unwrap().0;
        let one = format!("{}  return // x\n}}{}", &old[..pos], &old[pos + "  return\n}".len()..]);
        let r = resplit(&old, &chunks, &one);
        assert_eq!((r.replace.clone(), r.chunks.len()), (4..6, 2));
        let mut got = chunks.clone();
        r.apply(&mut got);
        assert_eq!(got, split_functions(&one));
    }
}
