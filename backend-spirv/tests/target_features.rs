//! Target features: narrow storage and narrow arithmetic are independent
//! (the six 8/16-bit bits are never bundled) because the emitter declares
//! narrow arithmetic capabilities only for narrow values used outside
//! storage, SPIRV-Tools' trim pass after a preset inside its audited
//! allowlist, emission-owned bits kept as emitted (print's
//! non-semantic-info extension, the accel descriptor ABI), and the persisted
//! mask: new bits pinned, unknown bits failing closed on artifact decode.

mod common;

use common::*;
use rspirv::spirv::Capability;
use xir_spirv::artifact::{self, decode, ArtifactError, LoadRequirements, RawHeader, ShaderArtifact, HEADER_LEN};
use xir_spirv::{CompileOptions, Feature, FeatureSet};

/// u8 and i16 only move: loaded, widened, stored as 32-bit values. (An f16
/// widening is emitted as exact bit arithmetic that needs an f16 constant,
/// so f16 storage keeps `Float16`; see `a_narrow_constant_keeps_...`.)
const NARROW_STORAGE: &str = r#"
kernel @k(%a: buffer<u8>, %h: buffer<i16>, %out: buffer<u32>, %io: buffer<i32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %x = buffer.read %a, %i : u8
  %w = cast.static %x : u32
  buffer.write %out, %i, %w
  %y = buffer.read %h, %i : i16
  %z = cast.static %y : i32
  buffer.write %io, %i, %z
  return
}
"#;

/// u8 and f16 arithmetic on values that never touch narrow storage.
const NARROW_ARITH: &str = r#"
kernel @k(%out: buffer<u32>, %fo: buffer<f32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %x = cast.static %i : u8
  %s = mul %x, %x : u8
  %w = cast.static %s : u32
  buffer.write %out, %i, %w
  %f = cast.static %i : f16
  %g = mul %f, %f : f16
  %z = cast.static %g : f32
  buffer.write %fo, %i, %z
  return
}
"#;

fn caps(words: &[u32]) -> Vec<Capability> {
    xir_spirv::capabilities(words)
}

fn six(s: &FeatureSet) -> Vec<Feature> {
    [
        Feature::Float16,
        Feature::Int8,
        Feature::StorageBuffer8BitAccess,
        Feature::UniformAndStorageBuffer8BitAccess,
        Feature::StorageBuffer16BitAccess,
        Feature::UniformAndStorageBuffer16BitAccess,
    ]
    .into_iter()
    .filter(|f| s.contains(*f))
    .collect()
}

#[test]
fn narrow_storage_without_narrow_arithmetic() {
    for level in 0..=3u8 {
        let out = compile_with(NARROW_STORAGE, &opts(level, false));
        let c = caps(&out.words);
        assert!(!c.contains(&Capability::Int8) && !c.contains(&Capability::Int16), "level {level}: {c:?}");
        assert!(!out.features.contains(Feature::Int16) && !out.features.contains(Feature::Float16));
        assert!(c.contains(&Capability::StorageBuffer8BitAccess) && c.contains(&Capability::StorageBuffer16BitAccess));
        assert_eq!(
            six(&out.features),
            vec![Feature::StorageBuffer8BitAccess, Feature::StorageBuffer16BitAccess],
            "level {level}"
        );
        xir_spirv::validate::validate(&out.words).expect("the module validates");
        // Exact from emission: the unoptimized module never declared them either.
        let emitted = caps(&out.words_unoptimized);
        assert!(!emitted.contains(&Capability::Int8) && !emitted.contains(&Capability::Int16), "{emitted:?}");
    }
    // So a device with storage but no narrow arithmetic runs it...
    let mut dev = FeatureSet::all();
    dev.remove(Feature::Int8);
    dev.remove(Feature::Int16);
    dev.remove(Feature::Float16);
    compile_with(NARROW_STORAGE, &CompileOptions { device_features: Some(dev), ..opts(0, false) });
    // ...and one without 8-bit storage is refused, naming exactly that bit.
    let mut dev = FeatureSet::all();
    dev.remove(Feature::StorageBuffer8BitAccess);
    let e = compile_err(NARROW_STORAGE, &CompileOptions { device_features: Some(dev), ..opts(0, false) });
    assert!(e.contains("storageBuffer8BitAccess") && !e.contains("shaderInt8"), "{e}");
}

#[test]
fn narrow_arithmetic_without_narrow_storage() {
    for level in 0..=3u8 {
        let out = compile_with(NARROW_ARITH, &opts(level, false));
        let got = six(&out.features);
        // The optimizer may fold the arithmetic away; what remains is never storage.
        assert!(got.iter().all(|f| matches!(f, Feature::Int8 | Feature::Float16)), "level {level}: {got:?}");
        if level == 0 {
            assert_eq!(got, vec![Feature::Float16, Feature::Int8]);
        }
    }
    let mut dev = FeatureSet::all();
    for f in [
        Feature::StorageBuffer8BitAccess,
        Feature::UniformAndStorageBuffer8BitAccess,
        Feature::StorageBuffer16BitAccess,
        Feature::UniformAndStorageBuffer16BitAccess,
    ] {
        dev.remove(f);
    }
    compile_with(NARROW_ARITH, &CompileOptions { device_features: Some(dev), ..opts(0, false) });
    let mut dev = FeatureSet::all();
    dev.remove(Feature::Int8);
    let e = compile_err(NARROW_ARITH, &CompileOptions { device_features: Some(dev), ..opts(0, false) });
    assert!(e.contains("shaderInt8") && !e.contains("BitAccess"), "{e}");
}

#[test]
fn a_narrow_constant_keeps_the_arithmetic_capability() {
    let src =
        NARROW_STORAGE.replace("%w = cast.static %x : u32", "%x2 = add %x, u8 3 : u8\n  %w = cast.static %x2 : u32");
    let out = compile_with(&src, &opts(0, false));
    let c = caps(&out.words);
    assert!(c.contains(&Capability::Int8) && !c.contains(&Capability::Int16), "{c:?}");
    assert!(out.features.contains(Feature::Int8) && out.features.contains(Feature::StorageBuffer8BitAccess));
    // f16 storage: the exact widening composes an f16 constant, so Float16 stays (the validator requires it).
    let f16 = NARROW_STORAGE
        .replace("%h: buffer<i16>", "%h: buffer<f16>")
        .replace("%io: buffer<i32>", "%io: buffer<f32>")
        .replace(": i16", ": f16")
        .replace(": i32", ": f32");
    let out = compile_with(&f16, &opts(0, false));
    assert!(caps(&out.words).contains(&Capability::Float16));
    assert!(out.features.contains(Feature::Float16) && out.features.contains(Feature::StorageBuffer16BitAccess));
}

#[test]
fn narrow_storage_stays_storage_only_beside_unrelated_capabilities() {
    // A storage texture read adds image capabilities; the u8/i16 data still only moves.
    let src = NARROW_STORAGE
        .replace("%io: buffer<i32>)", "%io: buffer<i32>, %t: texture2d<u32>)")
        .replace("  return\n", "  %c = aggregate %i, %i : vec<u32, 2>\n  %v = texture.read %t, %c : vec<u32, 4>\n  %e = extract %v, u32 0 : u32\n  buffer.write %out, %i, %e\n  return\n");
    let out = compile_with(&src, &opts(0, false));
    let c = caps(&out.words);
    assert!(c.contains(&Capability::StorageImageReadWithoutFormat), "{c:?}");
    assert!(!c.contains(&Capability::Int8) && !c.contains(&Capability::Int16), "{c:?}");
}

#[test]
fn narrow_data_outside_buffer_storage_keeps_the_arithmetic_capability() {
    // An i16 that lives in shared memory: Workgroup storage is not covered by
    // the 16-bit storage capabilities, so Int16 is declared (and required).
    let src = r#"
kernel @k(%h: buffer<i16>, %io: buffer<i32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %s = alloca.shared : array<i16, 4>
  %y = buffer.read %h, %i : i16
  %p = gep %s, %i : i16
  store %p, %y
  sync_block
  %q = load %p : i16
  %z = cast.static %q : i32
  buffer.write %io, %i, %z
  return
}
"#;
    let out = compile_with(src, &opts(0, false));
    let c = caps(&out.words);
    assert!(c.contains(&Capability::Int16) && !c.contains(&Capability::Int8), "{c:?}");
    assert!(out.features.contains(Feature::Int16) && out.features.contains(Feature::StorageBuffer16BitAccess));
}

const PRINTING: &str = r#"
kernel @k(%out: buffer<u32>) block_size(2, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  print "i={}", %i
  buffer.write %out, %i, %i
  return
}
"#;

fn artifact_of(src: &str) -> (xir::Module, Vec<u8>, ShaderArtifact) {
    let m = parse(src);
    let k = kernel_of(&m);
    let out = xir_spirv::compile(&m, k, &opts(2, false)).expect("compiles");
    let art = ShaderArtifact::from_compiled(&m, k, &out);
    let bytes = art.encode().expect("encodes");
    (m, bytes, art)
}

#[test]
fn emission_owned_bits_survive_the_artifact_and_are_checked_on_load() {
    let (_, bytes, art) = artifact_of(PRINTING);
    assert!(art.features.contains(Feature::ShaderNonSemanticInfo), "{:?}", art.features);
    assert_eq!(art.features.emission_owned().iter().collect::<Vec<_>>(), vec![Feature::ShaderNonSemanticInfo]);
    let back = decode(&bytes, &LoadRequirements::any_xir_spirv(), Some(&FeatureSet::all())).expect("present");
    assert_eq!(back.features, art.features);
    let mut dev = FeatureSet::all();
    dev.remove(Feature::ShaderNonSemanticInfo);
    match decode(&bytes, &LoadRequirements::any_xir_spirv(), Some(&dev)) {
        Err(ArtifactError::MissingDeviceFeatures(f)) => assert_eq!(f, vec![Feature::ShaderNonSemanticInfo]),
        r => panic!("expected a missing feature, got {r:?}"),
    }
    // Emission-owned bits are trusted from the integrity-protected header, so
    // a resealed header without it loads without it (the digest, not the
    // capabilities, protects them).
    let stripped = reseal(&bytes, |h| {
        h.required_features &= !artifact::feature_bit(Feature::ShaderNonSemanticInfo);
        h.emission_features = 0;
    });
    let back = decode(&stripped, &LoadRequirements::any_xir_spirv(), None).expect("decodes");
    assert!(!back.features.contains(Feature::ShaderNonSemanticInfo));
    // Without print there is no such requirement.
    let (_, _, plain) = artifact_of(&PRINTING.replace("  print \"i={}\", %i\n", ""));
    assert!(plain.features.emission_owned().is_empty(), "{:?}", plain.features);
}

fn reseal(bytes: &[u8], edit: impl FnOnce(&mut RawHeader)) -> Vec<u8> {
    let (mut h, _) = RawHeader::parse(bytes).expect("header parses");
    let mut at = HEADER_LEN;
    let sections = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    edit(&mut h);
    artifact::seal(h, &sections)
}

#[test]
fn new_bits_are_pinned_and_unknown_bits_fail_closed() {
    assert_eq!(artifact::feature_bit(Feature::UniformAndStorageBuffer8BitAccess), 1 << 19);
    assert_eq!(artifact::feature_bit(Feature::UniformAndStorageBuffer16BitAccess), 1 << 20);
    assert_eq!(artifact::feature_bit(Feature::ShaderNonSemanticInfo), 1 << 21);
    assert_eq!(artifact::feature_bit(Feature::AccelerationStructure), 1 << 22);
    assert_eq!(artifact::feature_bit(Feature::RuntimeDescriptorArray), 1 << 23);
    assert_eq!(artifact::feature_bit(Feature::StorageBufferArrayNonUniformIndexing), 1 << 24);
    assert_eq!(artifact::feature_bit(Feature::BufferHeapBindingFlags), 1 << 25);
    assert_eq!(artifact::feature_bit(Feature::SamplerAnisotropy), 1 << 26);
    assert_eq!(artifact::feature_bit(Feature::SampledImageArrayNonUniformIndexing), 1 << 27);
    assert_eq!(artifact::feature_bit(Feature::BufferFloat32Atomics), 1 << 28);
    assert_eq!(artifact::feature_bit(Feature::SharedFloat16AtomicAdd), 1 << 35);
    assert_eq!(artifact::feature_bit(Feature::SharedFloat64AtomicMinMax), 1 << 41);
    assert_eq!(artifact::feature_bit(Feature::SubgroupBasic), 1 << 42);
    assert_eq!(artifact::feature_bit(Feature::SubgroupShuffle), 1 << 46);
    assert_eq!(artifact::feature_bit(Feature::SubgroupExtendedTypes), 1 << 47);
    assert_eq!(artifact::feature_bit(Feature::MaximalReconvergence), 1 << 48);
    assert_eq!(artifact::feature_bit(Feature::ShaderSubgroupClock), 1 << 49);
    assert_eq!(Feature::ALL.len(), 50);
    let (_, bytes, _) = artifact_of(PRINTING);
    for b in [50u32, 55, 63] {
        for emission in [false, true] {
            let bad = reseal(&bytes, |h| {
                if emission {
                    h.emission_features |= 1u64 << b;
                } else {
                    h.required_features |= 1u64 << b;
                }
            });
            match decode(&bad, &LoadRequirements::any_xir_spirv(), None) {
                Err(ArtifactError::UnknownFeatureBits(m)) => assert_eq!(m, 1u64 << b),
                r => panic!("bit {b}: expected fail-closed, got {r:?}"),
            }
        }
    }
    // A known capability-owned bit the module does not declare is a mismatch.
    let bad =
        reseal(&bytes, |h| h.required_features |= artifact::feature_bit(Feature::UniformAndStorageBuffer8BitAccess));
    assert!(matches!(
        decode(&bad, &LoadRequirements::any_xir_spirv(), None),
        Err(ArtifactError::FeatureMismatch { .. })
    ));
}

/// u64 arithmetic on constants only, beside a live f64 addition: presets 2
/// and 3 fold the multiply, the u64 type dies, and SPIRV-Tools' trim pass
/// (inside its audited allowlist) removes `Int64`, so the artifact does not
/// require `shaderInt64`; `Float64` is still used (this SPIRV-Tools leaves the
/// f64 addition unfolded) and stays. At presets 0 and 1 nothing is folded.
const FOLDED_WIDE: &str = r#"
kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %i = extract $dispatch_id, u32 0 : u32
  %a = add f64 1.5, f64 2.25 : f64
  %b = cast.static %a : u32
  %c = mul u64 3, u64 5 : u64
  %d = cast.static %c : u32
  %e = add %b, %d : u32
  %f = add %e, %i : u32
  buffer.write %out, %i, %f
  return
}
"#;

#[test]
fn a_capability_whose_last_use_the_optimizer_removed_is_trimmed() {
    use xir_spirv::trim::TrimOutcome;
    for level in 0..=1u8 {
        let o = compile_with(FOLDED_WIDE, &opts(level, false));
        let c = caps(&o.words);
        assert!(c.contains(&Capability::Float64) && c.contains(&Capability::Int64), "-O{level}: {c:?}");
        assert!(o.features.contains(Feature::Int64), "-O{level}");
        assert_eq!(o.trim, TrimOutcome::Trimmed(vec![]), "-O{level}");
    }
    for level in 2..=3u8 {
        let o = compile_with(FOLDED_WIDE, &opts(level, false));
        let c = caps(&o.words);
        assert!(c.contains(&Capability::Float64) && !c.contains(&Capability::Int64), "-O{level}: {c:?}");
        assert!(o.features.contains(Feature::Float64) && !o.features.contains(Feature::Int64), "-O{level}");
        assert_eq!(o.trim, TrimOutcome::Trimmed(vec![Capability::Int64]), "-O{level}");
        xir_spirv::validate::validate(&o.words).expect("the trimmed module validates");
    }
}

#[test]
fn the_trim_pass_does_not_run_outside_its_audited_allowlist() {
    use xir_spirv::trim::{trim, TrimOutcome, TRIM_AUDITED};
    // An 8-bit storage capability is outside the allowlist (the pass has no 8-bit handlers).
    let out = compile_with(NARROW_STORAGE, &opts(2, false));
    assert!(!TRIM_AUDITED.contains(&Capability::StorageBuffer8BitAccess));
    assert_eq!(out.trim, TrimOutcome::OutsideAllowlist(Capability::StorageBuffer8BitAccess));
    let (words, outcome) = trim(&out.words);
    assert_eq!(
        (words, outcome),
        (out.words.clone(), TrimOutcome::OutsideAllowlist(Capability::StorageBuffer8BitAccess))
    );
    // UniformAndStorageBuffer16BitAccess is excluded on purpose (the reference).
    assert!(!TRIM_AUDITED.contains(&Capability::UniformAndStorageBuffer16BitAccess));
}
