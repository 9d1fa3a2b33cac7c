//! The compile cache as a library (`xir_pipelines::cache`): a second
//! compilation is a hit and compiles nothing; changing any part of the key
//! (module text, pipeline content, opt level, fast math, device features,
//! compiler version or build) misses; every flipped bit of a stored entry and
//! a truncated entry are rejected, deleted and recompiled, never trusted.

mod common;

use std::path::Path;

use xir::pipeline::Pipeline;
use xir::Module;
use xir_pipelines::cache::{self, CompileCache, CompilerId, EntryError, Outcome, Request};
use xir_spirv::artifact::{ArtifactError, Section};

const SAXPY: &str = include_str!("../../tests/corpus/saxpy.xir");

fn module(text: &str) -> Module {
    xir::text::parse_module(text, "k.xir").expect("the kernel parses")
}

fn pipeline(name: &str, dir: Option<&Path>) -> Pipeline {
    let reg = xir_pipelines::registry();
    xir_pipelines::loader(&reg, dir).load(name).unwrap_or_else(|f| panic!("{name} loads: {f}"))
}

fn request(m: &Module) -> Request<'_> {
    Request { module: m, kernel: None, opt_level: 0, fast_math: false, device_features: None, debug_info: false }
}

/// Compile through the cache; the outcome's kind and the compiled words.
fn compile(c: &CompileCache, r: &Request<'_>, p: &mut Pipeline) -> (Vec<u32>, Outcome) {
    let (compiled, outcome) = cache::compile(c, r, Some(p)).expect("the kernel compiles");
    (compiled.words, outcome)
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Hit { .. } => "hit",
        Outcome::Miss { stored: Ok(()), .. } => "miss, stored",
        Outcome::Miss { stored: Err(_), .. } => "miss, not stored",
        Outcome::Recompiled { stored: Ok(()), .. } => "rejected, recompiled, stored",
        Outcome::Recompiled { stored: Err(_), .. } => "rejected, recompiled, not stored",
    }
}

#[test]
fn a_second_compilation_is_a_hit_with_the_same_bytes() {
    let dir = common::scratch("cache-hit");
    let c = CompileCache::new(dir.join("cache"));
    let m = module(SAXPY);
    let mut p = pipeline("spirv", None);
    let (fresh, first) = compile(&c, &request(&m), &mut p);
    assert_eq!(kind(&first), "miss, stored");
    let (again, second) = compile(&c, &request(&m), &mut p);
    assert_eq!(kind(&second), "hit");
    assert_eq!(again, fresh);
    assert_eq!(first.path(), second.path());
    let key = c.key(&request(&m), Some(&p));
    assert_eq!(second.path(), c.dir().join("v1").join(&key.to_string()[..2]).join(format!("{key}.xce")));
    // The hit's artifact bytes are exactly the uncached compilation's.
    let uncached = cache::compile_uncached(&request(&m), Some(&mut p)).expect("compiles");
    let (hit, _) = cache::compile(&c, &request(&m), Some(&mut p)).expect("hit");
    assert_eq!(hit.artifact.as_ref().expect("an artifact"), uncached.artifact.as_ref().expect("an artifact"));
    assert_eq!(hit.words, uncached.words);
    // Nothing else was left in the cache directory (no temporary files).
    let entries: Vec<_> = std::fs::read_dir(second.path().parent().unwrap()).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
}

#[test]
fn the_module_key_is_its_canonical_print() {
    let dir = common::scratch("cache-module");
    let c = CompileCache::new(dir.join("cache"));
    let mut p = pipeline("spirv", None);
    let m = module(SAXPY);
    assert_eq!(kind(&compile(&c, &request(&m), &mut p).1), "miss, stored");
    // Spacing is not in the canonical print: a hit.
    let m2 = module(&SAXPY.replace("  %ax = mul %a, %xi", "  %ax  =  mul %a,%xi"));
    assert_eq!(kind(&compile(&c, &request(&m2), &mut p).1), "hit");
    // Comments are (the printer keeps them, and the artifact's shader hash
    // is over the printed text): a miss.
    let m2 = module(&SAXPY.replace("// Two roundings", "// Rounded twice"));
    assert_eq!(kind(&compile(&c, &request(&m2), &mut p).1), "miss, stored");
    // A changed instruction misses.
    let m3 = module(&SAXPY.replace("%r = add %ax, %yi", "%r = sub %ax, %yi"));
    assert_eq!(kind(&compile(&c, &request(&m3), &mut p).1), "miss, stored");
    // A renamed value misses too: names reach the SPIR-V's `OpName`s.
    let m4 = module(&SAXPY.replace("%ax", "%scaled"));
    assert_eq!(kind(&compile(&c, &request(&m4), &mut p).1), "miss, stored");
    // The kernel named explicitly is another key than "the only kernel".
    let named = Request { kernel: Some("saxpy"), ..request(&m) };
    assert_eq!(kind(&compile(&c, &named, &mut p).1), "miss, stored");
}

#[test]
fn every_other_key_part_misses_when_it_changes() {
    let dir = common::scratch("cache-parts");
    let c = CompileCache::new(dir.join("cache"));
    let m = module(SAXPY);
    let mut p = pipeline("spirv", None);
    let base = request(&m);
    assert_eq!(kind(&compile(&c, &base, &mut p).1), "miss, stored");
    let lavapipe = xir_pipelines::device_features::resolve("lavapipe").expect("a preset");
    let all = xir_pipelines::device_features::resolve("all").expect("a preset");
    let changed = [
        ("opt level", Request { opt_level: 2, ..base }),
        ("fast math", Request { fast_math: true, ..base }),
        ("device features lavapipe", Request { device_features: lavapipe, ..base }),
        ("device features all", Request { device_features: all, ..base }),
        ("debug info", Request { debug_info: true, ..base }),
    ];
    for (what, r) in &changed {
        assert_eq!(kind(&compile(&c, r, &mut p).1), "miss, stored", "{what}");
        assert_eq!(kind(&compile(&c, r, &mut p).1), "hit", "{what}");
    }
    // Another compiler: version, or the same version from other sources.
    let current = CompilerId::current();
    assert_eq!(current.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(current.build.len(), 64);
    let other_version = c.clone().with_compiler(CompilerId { version: "0.0.0-other".into(), ..current.clone() });
    let other_build = c.clone().with_compiler(CompilerId { build: "0".repeat(64), ..current.clone() });
    for (what, other) in [("version", &other_version), ("build", &other_build)] {
        assert_eq!(kind(&compile(other, &base, &mut p).1), "miss, stored", "compiler {what}");
        assert_eq!(kind(&compile(other, &base, &mut p).1), "hit", "compiler {what}");
    }
    // Each variation was its own entry: the original still hits.
    assert_eq!(kind(&compile(&c, &base, &mut p).1), "hit");
}

#[test]
fn the_pipeline_key_is_its_resolved_content() {
    let dir = common::scratch("cache-pipeline");
    let c = CompileCache::new(dir.join("cache"));
    let m = module(SAXPY);
    let r = request(&m);
    let write = |name: &str, doc: &str, steps: &str| {
        let text = format!(
            "Pipeline(name: {name:?}, doc: {doc:?}, input: \"xir.structured\", output: \"{}\", steps: [{steps}])",
            if name == "mine" { "xir.spirv" } else { "xir.restructured.audited" }
        );
        std::fs::write(dir.join(format!("{name}.ron")), text).unwrap();
    };
    write("inner", "legalize", "Include(\"spirv-legalize\")");
    write("mine", "first", "Include(\"inner\"), Pass(\"spirv_handoff\")");
    let mut mine = pipeline("mine", Some(&dir));
    assert_eq!(kind(&compile(&c, &r, &mut mine).1), "miss, stored");
    // Its steps are those of `spirv`, but it is not the same text: a miss
    // only where the content differs, so `spirv` itself...
    let mut shipped = pipeline("spirv", None);
    let identity = |p: &Pipeline| cache::pipeline_identity(p);
    assert_ne!(identity(&mine), identity(&shipped), "includes are part of the identity");
    assert_eq!(kind(&compile(&c, &r, &mut shipped).1), "miss, stored");
    // A doc change is not a content change: a hit.
    write("mine", "second", "Include(\"inner\"), Pass(\"spirv_handoff\")");
    let mut redoc = pipeline("mine", Some(&dir));
    assert_eq!(kind(&compile(&c, &r, &mut redoc).1), "hit");
    // An edit of the included file misses.
    write("inner", "legalize", "Include(\"O1\"), Include(\"spirv-legalize\")");
    let mut edited = pipeline("mine", Some(&dir));
    assert_eq!(kind(&compile(&c, &r, &mut edited).1), "miss, stored");
    // So does a pass option.
    write("inner", "legalize", "Include(\"spirv-legalize\"), Pass(\"dce\", (fold_structured: false))");
    let mut option = pipeline("mine", Some(&dir));
    assert_eq!(kind(&compile(&c, &r, &mut option).1), "miss, stored");
    assert_eq!(
        identity(&option),
        "pipeline \"xir.structured\" -> \"xir.spirv\"\n\
         include \"inner\" \"xir.structured\" -> \"xir.restructured.audited\" {\n\
         include \"spirv-legalize\" \"xir.structured\" -> \"xir.restructured.audited\" {\n"
            .to_string()
            + &identity(&pipeline("spirv-legalize", None))
                .lines()
                .skip(1)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
            + "}\npass \"dce\" Some(\"(fold_structured: false)\")\n}\npass \"spirv_handoff\" None\n"
    );
}

/// A stored entry of saxpy under `c`: its path and bytes.
fn stored_entry(c: &CompileCache, p: &mut Pipeline, m: &Module) -> (std::path::PathBuf, Vec<u8>) {
    let (_, o) = compile(c, &request(m), p);
    assert_eq!(kind(&o), "miss, stored");
    let path = o.path().to_path_buf();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
fn every_flipped_bit_of_an_entry_is_rejected() {
    let dir = common::scratch("cache-bits");
    let c = CompileCache::new(dir.join("cache"));
    let m = module(SAXPY);
    let mut p = pipeline("spirv", None);
    let (_, bytes) = stored_entry(&c, &mut p, &m);
    let key = c.key(&request(&m), Some(&p));
    assert!(c.verify(&key, bytes.clone()).is_ok());
    // Every bit of the envelope and the artifact header (where the fields
    // that are trusted after the checks live), and one bit of every byte
    // after it (each section is under its own digest).
    let header_end = cache::ENVELOPE_LEN + 360;
    let bits = (0..header_end * 8).chain((header_end..bytes.len()).map(|byte| byte * 8 + byte % 8));
    let mut tried = 0;
    for bit in bits {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(c.verify(&key, flipped).is_err(), "bit {bit} of {} flipped was trusted", bytes.len() * 8);
        tried += 1;
    }
    assert_eq!(tried, header_end * 8 + bytes.len() - header_end);
}

#[test]
fn a_flipped_bit_is_reported_deleted_and_recompiled() {
    let dir = common::scratch("cache-flip");
    let c = CompileCache::new(dir.join("cache"));
    let m = module(SAXPY);
    let mut p = pipeline("spirv", None);
    let (fresh, _) = compile(&c, &request(&m), &mut p);
    let key = c.key(&request(&m), Some(&p));
    let path = c.entry_path(&key);
    let mut bytes = std::fs::read(&path).unwrap();
    // A bit in the middle of the SPIR-V section.
    let spirv = section(&bytes, Section::Spirv);
    bytes[(spirv.start + spirv.end) / 2] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let (words, o) = compile(&c, &request(&m), &mut p);
    assert_eq!(kind(&o), "rejected, recompiled, stored");
    let Outcome::Recompiled { rejected, .. } = &o else { unreachable!() };
    assert!(
        matches!(rejected, EntryError::Artifact(ArtifactError::SectionDigestMismatch(Section::Spirv))),
        "{rejected:?}"
    );
    assert_eq!(rejected.to_string(), "Spirv section digest mismatch: the section is corrupt");
    assert_eq!(words, fresh);
    assert_eq!(kind(&compile(&c, &request(&m), &mut p).1), "hit");
}

/// Where a section lies in an entry, from the artifact header's section
/// table (docs/artifact.md: at byte 128, 40 bytes per section; the sections
/// follow the 360-byte header in order).
fn section(entry: &[u8], which: Section) -> std::ops::Range<usize> {
    let artifact = &entry[cache::ENVELOPE_LEN..];
    let size = |i: usize| u32::from_le_bytes(artifact[128 + 40 * i + 4..128 + 40 * i + 8].try_into().unwrap()) as usize;
    let index = which as usize - 1;
    let start = cache::ENVELOPE_LEN + 360 + (0..index).map(size).sum::<usize>();
    start..start + size(index)
}

#[test]
fn truncated_and_misplaced_entries_are_rejected() {
    let dir = common::scratch("cache-truncated");
    let c = CompileCache::new(dir.join("cache"));
    let m = module(SAXPY);
    let mut p = pipeline("spirv", None);
    let (path, bytes) = stored_entry(&c, &mut p, &m);
    let key = c.key(&request(&m), Some(&p));
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("empty", vec![], "truncated: 0 bytes, shorter than the 44-byte envelope"),
        ("in the envelope", bytes[..20].to_vec(), "truncated: 20 bytes, shorter than the 44-byte envelope"),
        ("in the artifact header", bytes[..100].to_vec(), "artifact truncated: 360 bytes needed, 56 present"),
        (
            "in a section",
            bytes[..bytes.len() - 4].to_vec(),
            &format!("artifact length {} does not match the header's {}", bytes.len() - 48, bytes.len() - 44),
        ),
        (
            "another format",
            [b"XIRCACHE".as_slice(), &[2, 0, 0, 0], &bytes[12..]].concat(),
            "entry format version 2 (this build reads 1)",
        ),
    ];
    for (what, content, message) in &cases {
        std::fs::write(&path, content).unwrap();
        let err = c.load(&key).err().unwrap_or_else(|| panic!("{what}: trusted"));
        assert_eq!(&err.to_string(), message, "{what}");
        let (_, o) = compile(&c, &request(&m), &mut p);
        assert_eq!(kind(&o), "rejected, recompiled, stored", "{what}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{what}: the entry is stored again");
    }
    // An entry copied under another key's name names its own key.
    let other = Request { opt_level: 1, ..request(&m) };
    let other_key = c.key(&other, Some(&p));
    std::fs::create_dir_all(c.entry_path(&other_key).parent().unwrap()).unwrap();
    std::fs::copy(&path, c.entry_path(&other_key)).unwrap();
    let err = c.load(&other_key).err().expect("rejected");
    assert!(matches!(err, EntryError::WrongKey(k) if k == key), "{err:?}");
    assert_eq!(err.to_string(), format!("it names another key ({key})"));
}

#[test]
fn an_unwritable_cache_still_compiles() {
    let dir = common::scratch("cache-unwritable");
    // The cache directory is a regular file: nothing can be stored under it.
    std::fs::write(dir.join("file"), "").unwrap();
    let c = CompileCache::new(dir.join("file"));
    let m = module(SAXPY);
    let mut p = pipeline("spirv", None);
    let (words, o) = compile(&c, &request(&m), &mut p);
    assert_eq!(kind(&o), "miss, not stored");
    assert_eq!(words, cache::compile_uncached(&request(&m), Some(&mut p)).unwrap().words);
}
