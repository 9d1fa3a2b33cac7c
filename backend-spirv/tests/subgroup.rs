//! Warp (subgroup) operations: the exact SPIR-V of each family's lowering
//! (the kernel function's body with ids renamed in order of definition and
//! constants and types spelled out, so the expectation is the instruction
//! sequence itself), the capabilities and features each family needs, the
//! `MaximallyReconvergesKHR` contract, and the handoff's refusals by name.
//! The device halves (lavapipe against the interpreter) are the corpus
//! kernels `warp_reduce`, `ballot_compact` and `warp_scan`.

mod common;

use std::collections::HashMap;

use common::*;
use xir_spirv::Feature;

/// The body of the first function (the kernel; `main` is emitted last),
/// one line per instruction: `%k = Op type operands`, local results
/// numbered from 0, constants as `(type value)`, types by name, module
/// variables as `@var`.
fn kernel_body(words: &[u32]) -> Vec<String> {
    let m = load(words);
    let mut names: HashMap<u32, String> = HashMap::new();
    for a in &m.annotations {
        if let [Operand::IdRef(v), Operand::Decoration(rspirv::spirv::Decoration::BuiltIn), Operand::BuiltIn(b)] =
            a.operands.as_slice()
        {
            names.insert(*v, format!("@{b:?}"));
        }
    }
    for i in &m.types_global_values {
        let Some(id) = i.result_id else { continue };
        let name = |k: usize, names: &HashMap<u32, String>| match &i.operands[k] {
            Operand::IdRef(r) => names.get(r).cloned().unwrap_or_else(|| format!("?{r}")),
            o => format!("{o}"),
        };
        let lit = |k: usize| match &i.operands[k] {
            Operand::LiteralBit32(v) => *v,
            _ => u32::MAX,
        };
        let n = match i.class.opcode {
            Op::TypeBool => "bool".to_string(),
            Op::TypeInt => format!("{}{}", if lit(1) == 1 { "i" } else { "u" }, lit(0)),
            Op::TypeFloat => format!("f{}", lit(0)),
            Op::TypeVector => format!("vec<{}, {}>", name(0, &names), lit(1)),
            Op::TypePointer => format!("ptr<{}, {}>", i.operands[0], name(1, &names)),
            Op::Constant => {
                let ty = names.get(&i.result_type.unwrap()).cloned().unwrap_or_default();
                let v = match &i.operands[0] {
                    Operand::LiteralBit32(v) if ty.starts_with('f') => format!("{}", f32::from_bits(*v)),
                    o => format!("{o}"),
                };
                format!("({ty} {v})")
            }
            Op::ConstantTrue => "true".into(),
            Op::ConstantFalse => "false".into(),
            Op::Variable => names.get(&id).cloned().unwrap_or_else(|| "@var".into()),
            _ => format!("<{:?}>", i.class.opcode),
        };
        names.insert(id, n);
    }
    let f = &m.functions[0];
    let mut local = 0;
    let mut out = Vec::new();
    for b in &f.blocks {
        for i in &b.instructions {
            let mut line = String::new();
            if let Some(r) = i.result_id {
                names.insert(r, format!("%{local}"));
                line += &format!("%{local} = ");
                local += 1;
            }
            line += &format!("{:?}", i.class.opcode);
            if let Some(t) = i.result_type {
                line += &format!(" {}", names.get(&t).cloned().unwrap_or_else(|| format!("?{t}")));
            }
            for o in &i.operands {
                let s = match o {
                    Operand::IdRef(r) | Operand::IdScope(r) => names.get(r).cloned().unwrap_or_else(|| format!("?{r}")),
                    o => format!("{o}"),
                };
                line += &format!(" {s}");
            }
            out.push(line);
        }
    }
    out
}

/// The kernel body of `src` at preset 0 (every preset validates).
fn body(src: &str) -> Vec<String> {
    kernel_body(&compile_all_presets(src).words_unoptimized)
}

fn capabilities(src: &str) -> Vec<String> {
    let out = compile_with(src, &opts(0, false));
    xir_spirv::capabilities(&out.words).iter().map(|c| format!("{c:?}")).collect()
}

fn subgroup_features(src: &str) -> Vec<Feature> {
    let out = compile_with(src, &opts(0, false));
    out.features
        .iter()
        .filter(|f| format!("{f:?}").starts_with("Subgroup") || *f == Feature::MaximalReconvergence)
        .collect()
}

const REDUCTIONS: &str = r#"
kernel @k(%u: buffer<u32>, %s: buffer<i32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %a = buffer.read %u, %t : u32
  %b = buffer.read %s, %t : i32
  %sum = warp.active_sum %a : u32
  %prod = warp.active_product %b : i32
  %umin = warp.active_min %a : u32
  %smin = warp.active_min %b : i32
  %umax = warp.active_max %a : u32
  %smax = warp.active_max %b : i32
  %and = warp.active_bit_and %a : u32
  %or = warp.active_bit_or %b : i32
  %xor = warp.active_bit_xor %a : u32
  %r1 = add %sum, %umin : u32
  %r2 = add %r1, %umax : u32
  %r3 = add %r2, %and : u32
  %r4 = add %r3, %xor : u32
  buffer.write %u, %t, %r4
  %q1 = add %prod, %smin : i32
  %q2 = add %q1, %smax : i32
  %q3 = add %q2, %or : i32
  buffer.write %s, %t, %q3
  return
}
"#;

const SCANS: &str = r#"
kernel @k(%u: buffer<u32>, %s: buffer<i64>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %a = buffer.read %u, %t : u32
  %b = buffer.read %s, %t : i64
  %ps = warp.prefix_sum %a : u32
  %pp = warp.prefix_product %b : i64
  %odd = bit_and %a, u32 1 : u32
  %p = ne %odd, u32 0 : bool
  %pc = warp.prefix_count_bits %p : u32
  %r = add %ps, %pc : u32
  buffer.write %u, %t, %r
  buffer.write %s, %t, %pp
  return
}
"#;

const VOTES: &str = r#"
kernel @k(%u: buffer<vec<u32, 2>>, %f: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %v = buffer.read %u, %t : vec<u32, 2>
  %x = buffer.read %f, %t : f32
  %ve = warp.active_all_equal %v : vec<bool, 2>
  %xe = warp.active_all_equal %x : bool
  %all = warp.active_all %xe : bool
  %any = warp.active_any %xe : bool
  %both = aggregate %all, %any : vec<bool, 2>
  %r = bit_and %ve, %both : vec<bool, 2>
  %w = cast.static %r : vec<u32, 2>
  buffer.write %u, %t, %w
  return
}
"#;

const BALLOTS: &str = r#"
kernel @k(%u: buffer<u32>, %m: buffer<vec<u32, 4>>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %a = buffer.read %u, %t : u32
  %p = gt %a, u32 7 : bool
  %mask = warp.active_bit_mask %p : vec<u32, 4>
  %low = warp.active_bit_mask %p : u32
  %count = warp.active_count_bits %p : u32
  %r = add %low, %count : u32
  buffer.write %m, %t, %mask
  buffer.write %u, %t, %r
  return
}
"#;

const LANES: &str = r#"
kernel @k(%u: buffer<u32>, %f: buffer<vec<f16, 2>>, %l: buffer<i32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %a = buffer.read %u, %t : u32
  %h = buffer.read %f, %t : vec<f16, 2>
  %k = buffer.read %l, %t : i32
  %first = warp.is_first_active_lane : bool
  %fl = warp.first_active_lane : u32
  %b = warp.read_first_active_lane %a : u32
  %c = warp.read_lane %h, %k : vec<f16, 2>
  %lane = add $warp_lane_id, $warp_size : u32
  %s1 = add %fl, %b : u32
  %s2 = add %s1, %lane : u32
  %r = select %first, %s2, u32 0 : u32
  buffer.write %u, %t, %r
  buffer.write %f, %t, %c
  return
}
"#;

/// Sum and product wrap (IAdd / IMul), min / max follow the operand's
/// signedness, bit operations as they are: every one exact in any order.
#[test]
fn integer_reductions_are_group_arithmetic_reduce_by_signedness() {
    assert_eq!(
        body(REDUCTIONS),
        [
            "%0 = Load vec<u32, 3> @GlobalInvocationId",
            "%1 = CompositeExtract u32 %0 0",
            "%2 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "%3 = Load u32 %2",
            "%4 = AccessChain ptr<StorageBuffer, i32> @var (u32 0) %1",
            "%5 = Load i32 %4",
            "%6 = GroupNonUniformIAdd u32 (u32 3) Reduce %3",
            "%7 = GroupNonUniformIMul i32 (u32 3) Reduce %5",
            "%8 = GroupNonUniformUMin u32 (u32 3) Reduce %3",
            "%9 = GroupNonUniformSMin i32 (u32 3) Reduce %5",
            "%10 = GroupNonUniformUMax u32 (u32 3) Reduce %3",
            "%11 = GroupNonUniformSMax i32 (u32 3) Reduce %5",
            "%12 = GroupNonUniformBitwiseAnd u32 (u32 3) Reduce %3",
            "%13 = GroupNonUniformBitwiseOr i32 (u32 3) Reduce %5",
            "%14 = GroupNonUniformBitwiseXor u32 (u32 3) Reduce %3",
            "%15 = IAdd u32 %6 %8",
            "%16 = IAdd u32 %15 %10",
            "%17 = IAdd u32 %16 %12",
            "%18 = IAdd u32 %17 %14",
            "%19 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "Store %19 %18",
            "%20 = IAdd i32 %7 %9",
            "%21 = IAdd i32 %20 %11",
            "%22 = IAdd i32 %21 %13",
            "%23 = AccessChain ptr<StorageBuffer, i32> @var (u32 0) %1",
            "Store %23 %22",
            "Return",
        ]
    );
    assert_eq!(capabilities(REDUCTIONS), ["Shader", "GroupNonUniformArithmetic"]);
    assert_eq!(subgroup_features(REDUCTIONS), [Feature::SubgroupArithmetic, Feature::MaximalReconvergence]);
}

/// `prefix_*` are exclusive scans; `prefix_count_bits` counts the lower
/// active lanes of a ballot; a 64-bit scan needs extended types.
#[test]
fn prefix_scans_are_exclusive_scans_and_a_ballot_bit_count() {
    assert_eq!(
        body(SCANS),
        [
            "%0 = Load vec<u32, 3> @GlobalInvocationId",
            "%1 = CompositeExtract u32 %0 0",
            "%2 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "%3 = Load u32 %2",
            "%4 = AccessChain ptr<StorageBuffer, i64> @var (u32 0) %1",
            "%5 = Load i64 %4",
            "%6 = GroupNonUniformIAdd u32 (u32 3) ExclusiveScan %3",
            "%7 = GroupNonUniformIMul i64 (u32 3) ExclusiveScan %5",
            "%8 = BitwiseAnd u32 %3 (u32 1)",
            "%9 = INotEqual bool %8 (u32 0)",
            "%10 = GroupNonUniformBallot vec<u32, 4> (u32 3) %9",
            "%11 = GroupNonUniformBallotBitCount u32 (u32 3) ExclusiveScan %10",
            "%12 = IAdd u32 %6 %11",
            "%13 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "Store %13 %12",
            "%14 = AccessChain ptr<StorageBuffer, i64> @var (u32 0) %1",
            "Store %14 %7",
            "Return",
        ]
    );
    assert_eq!(capabilities(SCANS), ["Shader", "Int64", "GroupNonUniformArithmetic", "GroupNonUniformBallot"]);
    assert_eq!(
        subgroup_features(SCANS),
        [
            Feature::SubgroupArithmetic,
            Feature::SubgroupBallot,
            Feature::SubgroupExtendedTypes,
            Feature::MaximalReconvergence
        ]
    );
}

/// `active_all_equal` answers per component (AllEqual answers one bool
/// per value); a float is compared by its bits with -0.0 made +0.0.
#[test]
fn votes_compare_per_component_and_floats_by_canonical_bits() {
    assert_eq!(
        body(VOTES),
        [
            "%0 = Load vec<u32, 3> @GlobalInvocationId",
            "%1 = CompositeExtract u32 %0 0",
            "%2 = AccessChain ptr<StorageBuffer, vec<u32, 2>> @var (u32 0) %1",
            "%3 = Load vec<u32, 2> %2",
            "%4 = AccessChain ptr<StorageBuffer, f32> @var (u32 0) %1",
            "%5 = Load f32 %4",
            "%6 = CompositeExtract u32 %3 0",
            "%7 = GroupNonUniformAllEqual bool (u32 3) %6",
            "%8 = CompositeExtract u32 %3 1",
            "%9 = GroupNonUniformAllEqual bool (u32 3) %8",
            "%10 = CompositeConstruct vec<bool, 2> %7 %9",
            "%11 = FOrdEqual bool %5 (f32 0)",
            "%12 = Bitcast u32 %5",
            "%13 = Select u32 %11 (u32 0) %12",
            "%14 = GroupNonUniformAllEqual bool (u32 3) %13",
            "%15 = GroupNonUniformAll bool (u32 3) %14",
            "%16 = GroupNonUniformAny bool (u32 3) %14",
            "%17 = CompositeConstruct vec<bool, 2> %15 %16",
            "%18 = LogicalAnd vec<bool, 2> %10 %17",
            "%19 = Select vec<u32, 2> %18 <ConstantComposite> <ConstantComposite>",
            "%20 = AccessChain ptr<StorageBuffer, vec<u32, 2>> @var (u32 0) %1",
            "Store %20 %19",
            "Return",
        ]
    );
    assert_eq!(capabilities(VOTES), ["Shader", "GroupNonUniformVote", "SignedZeroInfNanPreserve", "RoundingModeRTE"]);
    assert_eq!(subgroup_features(VOTES), [Feature::SubgroupVote, Feature::MaximalReconvergence]);
}

/// A ballot is a `uvec4` (or its first word); counts summarize a ballot.
#[test]
fn ballots_are_uvec4_and_counts_come_from_the_ballot() {
    assert_eq!(
        body(BALLOTS),
        [
            "%0 = Load vec<u32, 3> @GlobalInvocationId",
            "%1 = CompositeExtract u32 %0 0",
            "%2 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "%3 = Load u32 %2",
            "%4 = UGreaterThan bool %3 (u32 7)",
            "%5 = GroupNonUniformBallot vec<u32, 4> (u32 3) %4",
            "%6 = CopyObject vec<u32, 4> %5",
            "%7 = GroupNonUniformBallot vec<u32, 4> (u32 3) %4",
            "%8 = CompositeExtract u32 %7 0",
            "%9 = GroupNonUniformBallot vec<u32, 4> (u32 3) %4",
            "%10 = GroupNonUniformBallotBitCount u32 (u32 3) Reduce %9",
            "%11 = IAdd u32 %8 %10",
            "%12 = AccessChain ptr<StorageBuffer, vec<u32, 4>> @var (u32 0) %1",
            "Store %12 %6",
            "%13 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "Store %13 %11",
            "Return",
        ]
    );
    assert_eq!(capabilities(BALLOTS), ["Shader", "GroupNonUniformBallot"]);
    assert_eq!(subgroup_features(BALLOTS), [Feature::SubgroupBallot, Feature::MaximalReconvergence]);
}

/// Elect, broadcast-first of the lane id (`first_active_lane`) and of a
/// value, a shuffle of an f16 pair by an `i32` lane (bit-cast to the u32
/// index OpGroupNonUniformShuffle takes), the lane id and size builtins.
#[test]
fn elect_broadcast_and_shuffle_with_a_u32_lane_index() {
    assert_eq!(
        body(LANES),
        [
            "%0 = Load vec<u32, 3> @GlobalInvocationId",
            "%1 = CompositeExtract u32 %0 0",
            "%2 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "%3 = Load u32 %2",
            "%4 = AccessChain ptr<StorageBuffer, vec<f16, 2>> @var (u32 0) %1",
            "%5 = Load vec<f16, 2> %4",
            "%6 = AccessChain ptr<StorageBuffer, i32> @var (u32 0) %1",
            "%7 = Load i32 %6",
            "%8 = GroupNonUniformElect bool (u32 3)",
            "%9 = Load u32 @SubgroupLocalInvocationId",
            "%10 = GroupNonUniformBroadcastFirst u32 (u32 3) %9",
            "%11 = GroupNonUniformBroadcastFirst u32 (u32 3) %3",
            "%12 = Bitcast u32 %7",
            "%13 = GroupNonUniformShuffle vec<f16, 2> (u32 3) %5 %12",
            "%14 = Load u32 @SubgroupLocalInvocationId",
            "%15 = Load u32 @SubgroupSize",
            "%16 = IAdd u32 %14 %15",
            "%17 = IAdd u32 %10 %11",
            "%18 = IAdd u32 %17 %16",
            "%19 = Select u32 %8 %18 (u32 0)",
            "%20 = AccessChain ptr<StorageBuffer, u32> @var (u32 0) %1",
            "Store %20 %19",
            "%21 = AccessChain ptr<StorageBuffer, vec<f16, 2>> @var (u32 0) %1",
            "Store %21 %13",
            "Return",
        ]
    );
    assert_eq!(
        capabilities(LANES),
        [
            "Shader",
            "Float16",
            "GroupNonUniform",
            "GroupNonUniformBallot",
            "GroupNonUniformShuffle",
            "StorageBuffer16BitAccess",
            "SignedZeroInfNanPreserve",
            "RoundingModeRTE"
        ]
    );
    assert_eq!(
        subgroup_features(LANES),
        [
            Feature::SubgroupBasic,
            Feature::SubgroupBallot,
            Feature::SubgroupShuffle,
            Feature::SubgroupExtendedTypes,
            Feature::MaximalReconvergence
        ]
    );
}

/// Every kernel with a warp operation declares `MaximallyReconvergesKHR`
/// (and its extension), at every preset: without it Vulkan does not say
/// which lanes are active after divergence. The registers alone need only
/// `GroupNonUniform`.
#[test]
fn warp_operations_declare_maximal_reconvergence_and_registers_alone_do_not() {
    for level in 0..=3 {
        let dis = compile_with(BALLOTS, &opts(level, false)).disassembly();
        assert_eq!(count(&dis, "MaximallyReconvergesKHR"), 1, "-O{level}:\n{dis}");
        assert_eq!(count(&dis, "OpExtension \"SPV_KHR_maximal_reconvergence\""), 1, "-O{level}:\n{dis}");
    }
    let registers = r#"
kernel @k(%u: buffer<u32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %l = add $warp_lane_id, $warp_size : u32
  buffer.write %u, %t, %l
  return
}
"#;
    let out = compile_with(registers, &opts(0, false));
    assert_eq!(count(&out.disassembly(), "MaximallyReconverges"), 0);
    assert_eq!(count(&out.disassembly(), "OpExtension"), 0);
    assert_eq!(subgroup_features(registers), [Feature::SubgroupBasic]);
}

/// A device without an operation class refuses the kernel by the feature's
/// name (the compilation for the device checks the reconciled set).
#[test]
fn a_device_without_subgroup_arithmetic_refuses_a_reduction() {
    let mut dev = all_features();
    dev.remove(Feature::SubgroupArithmetic);
    let o = xir_spirv::CompileOptions { device_features: Some(dev), ..opts(0, false) };
    let e = compile_err(REDUCTIONS, &o);
    assert!(e.contains("spirv-features"), "{e}");
    assert!(e.contains("subgroupSupportedOperations ARITHMETIC (compute)"), "{e}");
    let mut dev = all_features();
    dev.remove(Feature::MaximalReconvergence);
    let o = xir_spirv::CompileOptions { device_features: Some(dev), ..opts(0, false) };
    assert!(compile_err(BALLOTS, &o).contains("shaderMaximalReconvergence"));
    let mut dev = all_features();
    dev.remove(Feature::SubgroupExtendedTypes);
    let o = xir_spirv::CompileOptions { device_features: Some(dev), ..opts(0, false) };
    assert!(compile_err(SCANS, &o).contains("shaderSubgroupExtendedTypes"));
    compile_with(REDUCTIONS, &xir_spirv::CompileOptions { device_features: Some(all_features()), ..opts(0, false) });
}

const FLOAT_SCAN: &str = r#"
kernel @k(%x: buffer<f32>) block_size(64, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %f = buffer.read %x, %t : f32
  %s = warp.prefix_sum %f : f32
  buffer.write %x, %t, %s
  return
}
"#;

/// An `f32` fold is a loop over the subgroup's lanes in lane order (the
/// interpreter's order; `plan::warp_fold`): lane k's value shuffled to
/// every lane, taken where k is active and, for a scan, below the lane
/// (block labels print as `?N`).
#[test]
fn float_folds_are_loops_over_the_lanes_in_lane_order() {
    assert_eq!(
        body(FLOAT_SCAN),
        [
            "%0 = Load vec<u32, 3> @GlobalInvocationId",
            "%1 = CompositeExtract u32 %0 0",
            "%2 = AccessChain ptr<StorageBuffer, f32> @var (u32 0) %1",
            "%3 = Load f32 %2",
            "%4 = GroupNonUniformBallot vec<u32, 4> (u32 3) true",
            "%5 = Load u32 @SubgroupSize",
            "%6 = Load u32 @SubgroupLocalInvocationId",
            "Branch ?19",
            "%7 = Phi u32 (u32 0) ?18 ?42 ?21",
            "%8 = Phi f32 (f32 0) ?18 ?44 ?21",
            "LoopMerge ?22 ?21 LoopControl(0x0)",
            "Branch ?20",
            "%9 = GroupNonUniformShuffle f32 (u32 3) %3 %7",
            "%10 = GroupNonUniformBallotBitExtract bool (u32 3) %4 %7",
            "%11 = ULessThan bool %7 %6",
            "%12 = LogicalAnd bool %10 %11",
            "%13 = FAdd f32 %8 %9",
            "%14 = Select f32 %12 %13 %8",
            "Branch ?21",
            "%15 = IAdd u32 %7 (u32 1)",
            "%16 = ULessThan bool %15 %5",
            "BranchConditional %16 ?19 ?22",
            "%17 = CopyObject f32 %14",
            "%18 = AccessChain ptr<StorageBuffer, f32> @var (u32 0) %1",
            "Store %18 %17",
            "Return",
        ]
    );
}

/// With fast math the fold is the group instruction, in the device's order
/// (`--compare` bounds it as any order).
#[test]
fn with_fast_math_float_folds_are_group_instructions() {
    let out = compile_with(FLOAT_SCAN, &opts(0, true));
    let body = kernel_body(&out.words_unoptimized);
    assert!(body.contains(&"%4 = GroupNonUniformFAdd f32 (u32 3) ExclusiveScan %3".to_string()), "{body:#?}");
    assert!(!body.iter().any(|l| l.starts_with("LoopMerge")), "{body:#?}");
}

/// What no group instruction computes exactly is refused at the handoff,
/// located at the instruction (rule `spirv-handoff:warp`).
#[test]
fn inexact_warp_forms_are_refused_by_name_at_the_handoff() {
    let cases = [
        ("%r = warp.active_sum %d : f64", "warp.active_sum"),
        ("%r = warp.active_product %d : f64", "warp.active_product"),
        ("%r = warp.prefix_sum %d : f64", "warp.prefix_sum"),
        ("%r = warp.prefix_product %d : f64", "warp.prefix_product"),
        ("%r = warp.active_min %d : f64", "warp.active_min"),
        ("%r = warp.active_max %d : f64", "warp.active_max"),
        ("%r = warp.active_all %bv : bool", "warp.active_all"),
        ("%r = warp.active_count_bits %b : u64", "warp.active_count_bits"),
        ("%r = warp.prefix_count_bits %b : i32", "warp.prefix_count_bits"),
        ("%r = warp.active_bit_mask %b : vec<u32, 2>", "warp.active_bit_mask"),
        ("%r = warp.read_lane %arr, u32 0 : array<u32, 2>", "warp.read_lane"),
        ("%r = warp.read_first_active_lane %arr : array<u32, 2>", "warp.read_first_active_lane"),
    ];
    for (line, op) in cases {
        let src = format!(
            r#"
kernel @k(%x: buffer<f32>) block_size(64, 1, 1) {{
^entry:
  %f = buffer.read %x, u32 0 : f32
  %b = gt %f, f32 0.0 : bool
  %bv = aggregate %b, %b : vec<bool, 2>
  %arr = aggregate u32 1, u32 2 : array<u32, 2>
  %d = cast.static %f : f64
  {line}
  return
}}
"#
        );
        let e = compile_err(&src, &opts(0, false));
        assert!(e.contains("spirv-handoff:warp"), "{line}: {e}");
        assert!(e.contains(&format!("`{op}`")), "{line}: {e}");
        assert!(e.contains(":9:3: error: [spirv-handoff:warp]"), "located at the instruction: {line}: {e}");
    }
}
