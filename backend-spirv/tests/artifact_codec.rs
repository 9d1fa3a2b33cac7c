//! The shader artifact codec on real artifacts (kernels compiled by the
//! backend): round trip, every single-bit flip rejected without a panic,
//! features present / missing / mismatched, load requirements, and
//! malformed artifacts whose digests are all recomputed (`artifact::seal`),
//! so each rejection comes from the semantic check under test and not from
//! a digest. The decoder is fuzzed with proptest at the end.

mod common;

use common::*;
use proptest::prelude::*;
use xir_spirv::artifact::{
    self, decode, ArtifactError, Dialect, LoadRequirements, PrinterRecord, Section, ShaderArtifact,
};
use xir_spirv::{CompileOptions, Feature, FeatureSet};

/// Int64 + Int64Atomics (capability-owned) and a native f32 buffer atomic add (emission-owned).
const KERNEL: &str = r#"
kernel @acc(%c: buffer<i64>, %f: buffer<f32>, %s: f32, %n: u32) block_size(64, 1, 1) {
^entry:
  %a = atomic.fetch_min %c, i64 -5, u32 0 : i64
  %b = atomic.fetch_add %f, %s, %n : f32
  return
}
"#;

fn real() -> (ShaderArtifact, Vec<u8>) {
    let m = parse(KERNEL);
    let k = kernel_of(&m);
    let o = CompileOptions { device_features: Some(FeatureSet::all()), ..CompileOptions::default() };
    let out = xir_spirv::compile(&m, k, &o).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    (art, bytes)
}

fn unconstrained() -> LoadRequirements {
    LoadRequirements::any_xir_spirv()
}

fn bit(f: Feature) -> u64 {
    artifact::feature_bit(f)
}

#[test]
fn a_real_artifact_round_trips_exactly() {
    let (art, bytes) = real();
    assert!(art.features.contains(Feature::Int64) && art.features.contains(Feature::Int64Atomics));
    assert!(art.features.contains(Feature::BufferFloat32AtomicAdd), "{:?}", art.features);
    let back = decode(&bytes, &unconstrained(), None).expect("decodes");
    assert_eq!(back, art);
    assert_eq!(back.encode().expect("re-encodes"), bytes, "encoding is deterministic");
    // The signature module binds the same names and types as the source kernel.
    let (sig, k) = back.signature_module().expect("signature");
    let m = parse(KERNEL);
    let src = m.func(kernel_of(&m));
    assert_eq!(sig.func(k).name, "acc");
    for (a, b) in sig.func(k).args.iter().zip(&src.args) {
        assert_eq!(a.md.name, b.md.name);
        assert_eq!(xir::text::type_to_string(&sig.types, a.ty), xir::text::type_to_string(&m.types, b.ty));
    }
    // The exact-identity requirements of the source module are met.
    assert!(decode(&bytes, &LoadRequirements::for_kernel(&m, kernel_of(&m)), None).is_ok());
}

#[test]
fn every_single_bit_flip_is_rejected_without_a_panic() {
    let (_, bytes) = real();
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[i / 8] ^= 1 << (i % 8);
        let r = std::panic::catch_unwind(|| decode(&b, &unconstrained(), Some(&FeatureSet::all())));
        match r {
            Ok(Err(e)) => {
                let k = format!("{e:?}");
                *kinds.entry(k.split(['(', ' ', '{']).next().unwrap_or("").to_string()).or_default() += 1;
            }
            Ok(Ok(_)) => panic!("bit {i} flipped: the artifact was accepted"),
            Err(_) => panic!("bit {i} flipped: the decoder panicked"),
        }
    }
    // Flips land on the magic, the header digest, and each section digest.
    for k in ["BadMagic", "HeaderDigestMismatch", "SectionDigestMismatch"] {
        assert!(kinds.contains_key(k), "{kinds:?}");
    }
}

#[test]
fn features_present_missing_and_mismatched_on_load() {
    let (art, bytes) = real();
    // Present: a device with everything.
    assert_eq!(decode(&bytes, &unconstrained(), Some(&FeatureSet::all())).unwrap().features, art.features);
    // Missing: capability-owned and emission-owned features each named.
    let mut dev = FeatureSet::all();
    dev.remove(Feature::Int64Atomics);
    dev.remove(Feature::BufferFloat32AtomicAdd);
    let e = decode(&bytes, &unconstrained(), Some(&dev)).unwrap_err();
    assert_eq!(e, ArtifactError::MissingDeviceFeatures(vec![Feature::Int64Atomics, Feature::BufferFloat32AtomicAdd]));
    assert!(e.to_string().contains("shaderBufferFloat32AtomicAdd"), "{e}");
    // Mismatched: a capability-owned bit dropped from, or added to, the persisted mask.
    let drop = reseal(&bytes, |h, _| h.required_features &= !bit(Feature::Int64));
    assert!(matches!(decode(&drop, &unconstrained(), None), Err(ArtifactError::FeatureMismatch { .. })));
    let add = reseal(&bytes, |h, _| h.required_features |= bit(Feature::Float64));
    let e = decode(&add, &unconstrained(), None).unwrap_err();
    assert!(matches!(e, ArtifactError::FeatureMismatch { .. }) && e.to_string().contains("shaderFloat64"), "{e}");
    // Unknown bits fail closed; emission-owned bits must agree with the mask.
    let unknown = reseal(&bytes, |h, _| h.required_features |= 1 << 50);
    assert_eq!(decode(&unknown, &unconstrained(), None), Err(ArtifactError::UnknownFeatureBits(1 << 50)));
    let lost = reseal(&bytes, |h, _| h.emission_features = 0);
    assert!(matches!(decode(&lost, &unconstrained(), None), Err(ArtifactError::BadHeader(_))));
    // Dropping an emission-owned bit consistently is accepted (emission bits are kept as persisted).
    let both = reseal(&bytes, |h, _| {
        h.required_features &= !bit(Feature::BufferFloat32AtomicAdd);
        h.emission_features = 0;
    });
    assert!(!decode(&both, &unconstrained(), None).unwrap().features.contains(Feature::BufferFloat32AtomicAdd));
    // The writer refuses a feature set that disagrees with the module.
    let mut w = art.clone();
    w.features.remove(Feature::Int64);
    assert!(matches!(w.encode(), Err(ArtifactError::FeatureMismatch { .. })));
}

#[test]
fn load_requirements_are_checked() {
    let (art, bytes) = real();
    let mut other = [0u8; 32];
    other[0] = 1;
    let want = |shader, args, dialect| LoadRequirements { shader_hash: shader, argument_type_hash: args, dialect };
    assert!(decode(&bytes, &want(Some(art.shader_hash), Some(art.argument_type_hash), Dialect::XirSpirv), None).is_ok());
    for (req, what) in [
        (want(Some(other), None, Dialect::XirSpirv), "shader hash"),
        (want(None, Some(other), Dialect::XirSpirv), "argument-type hash"),
        (want(None, None, Dialect::HlslSpirv), "codegen dialect"),
    ] {
        match decode(&bytes, &req, None) {
            Err(ArtifactError::RequirementMismatch { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{what}: {other:?}"),
        }
    }
    // An artifact of another dialect is not decoded by this build.
    let hlsl = reseal(&bytes, |h, _| h.dialect = Dialect::HlslSpirv as u32);
    assert_eq!(decode(&hlsl, &unconstrained(), None), Err(ArtifactError::UnsupportedDialect(2)));
    let unknown = reseal(&bytes, |h, _| h.dialect = 77);
    assert_eq!(decode(&unknown, &unconstrained(), None), Err(ArtifactError::UnsupportedDialect(77)));
}

/// Word `i` of the properties section (block size, push size, count, then 11 words per record).
fn set_prop_word(s: &mut [Vec<u8>; 5], i: usize, v: u32) {
    s[0][i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn the_abi_shape_is_checked_by_writer_and_reader() {
    let (art, bytes) = real();
    // Properties: DispatchSize, c (binding 0), f (binding 1), s (push), n (push).
    let record = |p: usize, field: usize| 5 + 11 * p + field;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("binding not dense", reseal(&bytes, |_, s| set_prop_word(s, record(2, 7), 2))),
        ("push constant with a binding", reseal(&bytes, |_, s| set_prop_word(s, record(3, 7), 0))),
        ("descriptor outside set 0", reseal(&bytes, |_, s| set_prop_word(s, record(1, 6), 1))),
        ("unknown kind", reseal(&bytes, |_, s| set_prop_word(s, record(1, 0), 9))),
        ("unknown role", reseal(&bytes, |_, s| set_prop_word(s, record(1, 3), 99))),
        ("role parameter", reseal(&bytes, |_, s| set_prop_word(s, record(1, 4), 1))),
        ("role that does not fit the kind", reseal(&bytes, |_, s| set_prop_word(s, record(1, 3), 2))),
        ("unknown storage", reseal(&bytes, |_, s| set_prop_word(s, record(1, 8), 7))),
        ("push range past the block", reseal(&bytes, |_, s| set_prop_word(s, record(4, 1), 124))),
        ("trailing bytes", reseal(&bytes, |_, s| s[0].push(0))),
    ];
    for (what, b) in cases {
        let e = decode(&b, &unconstrained(), None).expect_err(what);
        assert!(matches!(e, ArtifactError::NonCanonicalAbi(_) | ArtifactError::Malformed { .. }), "{what}: {e}");
    }
    // DispatchSize moved after a descriptor: rejected on both sides.
    let mut w = art.clone();
    w.abi.properties.swap(0, 1);
    assert!(matches!(w.encode(), Err(ArtifactError::NonCanonicalAbi(_))));
    let swapped = reseal(&bytes, |_, s| {
        let (a, b) = (record(0, 0) * 4, record(1, 0) * 4);
        let first: Vec<u8> = s[0][a..a + 44].to_vec();
        let second: Vec<u8> = s[0][b..b + 44].to_vec();
        s[0][a..a + 44].copy_from_slice(&second);
        s[0][b..b + 44].copy_from_slice(&first);
    });
    assert!(matches!(decode(&swapped, &unconstrained(), None), Err(ArtifactError::NonCanonicalAbi(_))));
    // A block size that is not the module's LocalSize.
    let local = reseal(&bytes, |_, s| set_prop_word(s, 0, 32));
    assert!(matches!(decode(&local, &unconstrained(), None), Err(ArtifactError::EntryPoint(_))));
}

#[test]
fn malformed_spirv_and_entry_points_are_rejected_with_correct_digests() {
    let (_, bytes) = real();
    let short = reseal(&bytes, |_, s| s[2].truncate(s[2].len() - 4));
    assert!(matches!(decode(&short, &unconstrained(), None), Err(ArtifactError::InvalidSpirv(_))));
    let ragged = reseal(&bytes, |_, s| s[2].push(0));
    assert!(matches!(
        decode(&ragged, &unconstrained(), None),
        Err(ArtifactError::Malformed { section: Section::Spirv, .. })
    ));
    // Rename the entry point in the module ("main" -> "mbin"): valid SPIR-V, wrong entry.
    let renamed = reseal(&bytes, |_, s| {
        let at = s[2].windows(4).position(|w| w == b"main").expect("entry name in the module");
        s[2][at + 1] = b'b';
    });
    assert!(
        matches!(decode(&renamed, &unconstrained(), None), Err(ArtifactError::EntryPoint(_))),
        "{:?}",
        decode(&renamed, &unconstrained(), None)
    );
    // The header's entry-point field must be `main`, NUL-padded.
    let header_name = reseal(&bytes, |h, _| h.entry_point[0] = b'x');
    assert!(matches!(decode(&header_name, &unconstrained(), None), Err(ArtifactError::BadHeader(_))));
    let appended = [bytes.clone(), vec![0]].concat();
    assert!(matches!(decode(&appended, &unconstrained(), None), Err(ArtifactError::LengthMismatch { .. })));
    // A section size over its bound, under a correct header digest: refused before any read.
    let (mut h, s) = split(&bytes);
    h.sections[4].size = u32::MAX;
    let mut b = h.to_bytes();
    s.iter().for_each(|x| b.extend_from_slice(x));
    let e = decode(&b, &unconstrained(), None).unwrap_err();
    assert!(matches!(e, ArtifactError::SectionTooLarge { section: Section::Constants, .. }), "{e}");
    // The same size patched in place: the header digest catches it first.
    let mut b = bytes.clone();
    let size_at = 128 + 4 * 40 + 4;
    b[size_at..size_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(decode(&b, &unconstrained(), None), Err(ArtifactError::HeaderDigestMismatch));
}

#[test]
fn saved_arguments_are_bound_to_the_header_and_screened() {
    let (art, bytes) = real();
    let changed = reseal(&bytes, |_, s| {
        let at = s[1].windows(3).position(|w| w == b"f32").expect("a f32 type");
        s[1][at] = b'u';
    });
    assert!(matches!(decode(&changed, &unconstrained(), None), Err(ArtifactError::Arguments(_))));
    // Consistent hash, but a value argument whose size disagrees with its push-constant range.
    let mut w = art.clone();
    w.arguments.args[2].ty = "f64".into();
    w.argument_type_hash = w.arguments.type_hash();
    assert!(matches!(w.encode(), Err(ArtifactError::Arguments(_))));
    // A deeply nested spelling never reaches the recursive parser.
    let mut deep = art.clone();
    deep.arguments.args[2].ty = format!("{}f32{}", "array<".repeat(40), ", 1>".repeat(40));
    deep.argument_type_hash = deep.arguments.type_hash();
    let e = deep.encode().unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
    let mut odd = art;
    odd.arguments.args[2].ty = "f32\"".into();
    odd.argument_type_hash = odd.arguments.type_hash();
    assert!(matches!(odd.encode(), Err(ArtifactError::Arguments(_))));
}

#[test]
fn printer_records_round_trip_and_malformed_ones_are_rejected() {
    let (art, _) = real();
    let mut p = art.clone();
    p.printers = vec![
        PrinterRecord { id: 0, format: "x = {} at {{{}}}".into(), arg_types: vec!["f32".into(), "vec<u32, 3>".into()] },
        PrinterRecord { id: 3, format: "m {}".into(), arg_types: vec!["mat<f32, 2>".into()] },
    ];
    let bytes = p.encode().expect("encodes");
    assert_eq!(decode(&bytes, &unconstrained(), None).unwrap().printers, p.printers);
    // The writer refuses what the reader would.
    for bad in [
        PrinterRecord { id: 0, format: "{} {}".into(), arg_types: vec!["f32".into()] },
        PrinterRecord { id: 0, format: "stray }".into(), arg_types: vec![] },
        PrinterRecord { id: 0, format: "{}".into(), arg_types: vec!["vec<f32, 5>".into()] },
        PrinterRecord { id: 0, format: "{}".into(), arg_types: vec!["buffer<f32>".into()] },
    ] {
        let mut q = art.clone();
        q.printers = vec![bad];
        assert!(matches!(q.encode(), Err(ArtifactError::Printer { .. })));
    }
    // The reader, on sealed records: a stray brace, then ids out of order.
    let stray = reseal(&bytes, |_, s| {
        let at = s[3].windows(2).position(|w| w == b"{{").expect("escaped brace");
        s[3][at + 1] = b'x';
    });
    assert!(matches!(decode(&stray, &unconstrained(), None), Err(ArtifactError::Printer { record: 0, .. })));
    let order = reseal(&bytes, |_, s| {
        let second = s[3].len() - (4 + 4 + 4 + 4 + 4 + 11);
        s[3][second..second + 4].copy_from_slice(&0u32.to_le_bytes());
    });
    assert!(matches!(decode(&order, &unconstrained(), None), Err(ArtifactError::Printer { record: 1, .. })));
    assert_eq!(artifact::count_placeholders("{{}} {} {}"), Ok(2));
    assert!(artifact::check_print_type("vec<bool, 4>").is_ok());
    assert_eq!(artifact::check_print_type("vec<bool>"), Err(artifact::PrintTypeError::VecWithoutLanes));
    assert_eq!(
        artifact::check_print_type("mat<i32, 2>"),
        Err(artifact::PrintTypeError::NotPrintable("mat<i32, 2>".into()))
    );
    assert_eq!(artifact::count_placeholders("{} }"), Err(artifact::FormatStringError { brace: '}', at: 3 }));
}

#[test]
fn feature_bits_are_pinned() {
    // The persisted bit of each feature is its position in Feature::ALL; a
    // reorder changes the format and must bump FORMAT_VERSION.
    assert_eq!(artifact::feature_bit(Feature::Int8), 1);
    assert_eq!(artifact::feature_bit(Feature::Int64Atomics), 1 << 9);
    assert_eq!(artifact::feature_bit(Feature::SharedFloat64AtomicAdd), 1 << 13);
    let s: FeatureSet = [Feature::Float16, Feature::SharedFloat32AtomicAdd].into_iter().collect();
    assert_eq!(artifact::features_from_mask(artifact::feature_mask(&s)), Ok(s));
}

#[test]
fn an_oversized_file_is_refused_before_it_is_read() {
    let path = std::env::temp_dir().join(format!("xir-artifact-oversized-{}.xsa", std::process::id()));
    let f = std::fs::File::create(&path).expect("temp file");
    f.set_len(artifact::MAX_ARTIFACT_LEN as u64 + 1).expect("sparse length");
    let r = artifact::read_file(&path);
    let _ = std::fs::remove_file(&path);
    assert!(matches!(r, Err(ArtifactError::TooLarge { .. })), "{r:?}");
    let missing = artifact::read_file(std::path::Path::new("/nonexistent/k.xsa"));
    assert!(matches!(missing, Err(ArtifactError::Io(_))));
}

fn fuzz_base() -> &'static Vec<u8> {
    static B: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    B.get_or_init(|| real().1)
}

proptest! {
    // 256 cases by default; PROPTEST_CASES scales it.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = decode(&b, &unconstrained(), None);
        let mut m = artifact::MAGIC.to_vec();
        m.extend_from_slice(&b);
        prop_assert!(decode(&m, &unconstrained(), None).is_err());
    }

    #[test]
    fn truncations_and_mutations_are_rejected(cut in 0usize..4096, at in 0usize..4096, v in 1u8..=255) {
        let base = fuzz_base();
        prop_assert!(decode(&base[..cut % base.len()], &unconstrained(), None).is_err());
        let mut b = base.clone();
        let i = at % b.len();
        b[i] ^= v;
        prop_assert!(decode(&b, &unconstrained(), None).is_err());
    }

    /// Mutations inside one section, re-sealed so every digest is right: the
    /// section parsers themselves must not panic.
    #[test]
    fn sealed_section_mutations_never_panic(
        section in 0usize..5,
        edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..8),
        extra in proptest::collection::vec(any::<u8>(), 0..16),
    ) {
        let b = reseal(fuzz_base(), |_, s| {
            let s = &mut s[section];
            for (at, v) in &edits {
                if !s.is_empty() {
                    let i = *at as usize % s.len();
                    s[i] = *v;
                }
            }
            s.extend_from_slice(&extra);
        });
        let _ = decode(&b, &unconstrained(), Some(&FeatureSet::all()));
    }
}

/// Replace SPIR-V word `k` of the section with `v`.
fn set_spirv_word(s: &mut [Vec<u8>; 5], k: usize, v: u32) {
    s[2][4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
}

// Each SPIR-V header word is checked exactly, before the module reaches a
// driver: a non-zero schema word passes SPIRV-Tools (lavapipe then crashed
// in vkCreateComputePipelines), and so would a bound far above the ids.
#[test]
fn the_spirv_header_words_are_checked_exactly_under_correct_digests() {
    let (art, bytes) = real();
    let bound = art.words[3];
    let cases = [
        (0, 0x0302_2307, "magic 0x03022307"),
        (1, 0x0001_0600, "version word 0x00010600"),
        (1, 0x0001_05ff, "version word 0x000105ff"),
        (3, 0, "id bound 0 "),
        (3, 0x40_0000, "id bound 4194304 "),
        (3, bound - 1, &format!("not below the id bound {}", bound - 1)),
        (4, 1, "schema word 0x1 "),
        (4, 0xdead_beef, "schema word 0xdeadbeef"),
    ];
    for (k, v, want) in cases {
        let b = reseal(&bytes, |_, s| set_spirv_word(s, k, v));
        let e = decode(&b, &unconstrained(), None).unwrap_err();
        assert!(matches!(&e, ArtifactError::SpirvHeader(m) if m.contains(want)), "word {k} = {v:#x}: {e}");
    }
    // The generator word is free, and a bound above the largest id is what optimizers leave.
    let generator = reseal(&bytes, |_, s| set_spirv_word(s, 2, 0x1234_5678));
    assert!(decode(&generator, &unconstrained(), None).is_ok());
    let loose = reseal(&bytes, |_, s| set_spirv_word(s, 3, bound + 100));
    assert!(decode(&loose, &unconstrained(), None).is_ok());
    // The writer runs the same check.
    let mut bad = art.clone();
    bad.words[4] = 1;
    assert!(matches!(bad.encode(), Err(ArtifactError::SpirvHeader(_))));
}
