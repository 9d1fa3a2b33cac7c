//! Immutable plans, computed after the handoff and before any SPIR-V exists:
//! the call graph and structural closures (`callgraph`), per-function
//! control flow (`control_flow`, with word-count `limits`), buffer layout
//! (`layout`), aggregate index walks (`aggregate`), the argument block and
//! descriptor bindings (`bindings`), bindless buffer usage (`bindless`),
//! bindless texture usage and the sampler / texture heaps (`texture_heap`),
//! target features (`features`; float atomics by the `float_atomics`
//! table), byte-buffer access paths (`byte_access`), ray-query roles and
//! guarded reads (`ray_query`), the constant UBO (`constant_ubo`: large array constants read
//! from one uniform buffer), and the buffers reached by volatile accesses (`coherence`).
//! Emission only reads them.

pub mod aggregate;
pub mod bindings;
pub mod bindless;
pub mod byte_access;
pub mod callgraph;
pub mod coherence;
pub mod constant_ubo;
pub mod control_flow;
pub mod features;
pub mod float_atomics;
pub mod layout;
pub mod limits;
pub mod ray_query;
pub mod texture_heap;
pub mod warp_fold;

use rustc_hash::FxHashMap;
use xir::verify::{block_diag, inst_diag};
use xir::{Diagnostic, FuncId, Opcode};

use crate::features::FeatureSet;
use crate::handoff::HandedOff;

/// Everything emission needs, frozen.
#[derive(Clone, Debug)]
pub struct Plans {
    pub kernel: FuncId,
    pub callgraph: callgraph::CallGraph,
    pub closures: FxHashMap<FuncId, callgraph::Closure>,
    pub control: FxHashMap<FuncId, control_flow::FunctionPlan>,
    pub bindings: bindings::BindingPlan,
    /// Bindless metadata / heap needs and the divergent heap accesses.
    pub bindless: bindless::BindlessPlan,
    pub features: features::FeaturePlan,
    /// Bindless texture usage: metadata, sampler and texture heaps, divergence, anisotropy.
    pub textures: texture_heap::TexturePlan,
    /// Whether any reachable instruction writes user-resource memory (`writes_user_memory`):
    /// the alias proof for `NonWritable`.
    pub writes_memory: bool,
    /// The kernel buffer arguments reached by volatile accesses (`Coherent`).
    pub coherence: coherence::CoherencePlan,
    /// The placed array constants and the constant data (bound in `bindings`).
    pub constant_ubo: constant_ubo::ConstantUboPlan,
}

/// Compute every plan for a handed-off kernel; errors are located diagnostics.
pub fn plan_all(
    handed: &HandedOff<'_>,
    device: Option<&FeatureSet>,
    fast_math: bool,
) -> Result<Plans, Vec<Diagnostic>> {
    let (m, kernel) = (handed.module(), handed.kernel());
    let mut diags = Vec::new();
    let cg = match callgraph::plan_call_graph(m, kernel) {
        Ok(cg) => cg,
        Err(e) => {
            return Err(e
                .into_iter()
                .map(|(f, msg)| {
                    Diagnostic::error(xir::diag::Rule::SpirvPlanCallgraph, msg).in_function(&m.func(f).name)
                })
                .collect())
        }
    };
    let mut closures = FxHashMap::default();
    let mut blocks_of = Vec::new();
    let mut writes_memory = false;
    for &fid in &cg.order {
        let f = m.func(fid);
        let c = callgraph::structural_closure(f);
        for &b in &c.blocks {
            for &i in f.block(b).insts() {
                if writes_user_memory(f.opcode(i)) {
                    writes_memory = true;
                }
            }
        }
        blocks_of.push((fid, c.blocks.clone()));
        closures.insert(fid, c);
    }
    let coherence = coherence::plan_coherence(m, &blocks_of);
    let (mut feats, refusals) = features::plan_features(m, &blocks_of, device);
    // Byte-buffer stores not proven word-aligned and sub-word writes of partly covered words
    // (word-ABI buffers, typed bindless elements) are masked CAS loops (`emit::bytes`,
    // `plan::layout`, `plan::bindless`); committed ray-query reads are guarded selections
    // (`emit::ray_query`); f32 warp reductions and scans are loops over the lanes
    // (`plan::warp_fold`); in block order.
    for (fid, blocks) in &blocks_of {
        let f = m.func(*fid);
        for &b in blocks {
            let insts = f.block(b).insts();
            let masked: Vec<_> = insts
                .iter()
                .copied()
                .filter(|&i| {
                    byte_access::needs_masked_store(m, f, i)
                        || layout::needs_masked_buffer_write(m, f, i)
                        || bindless::needs_masked_write(m, f, i)
                        || ray_query::needs_guarded_read(m, f, i)
                        || warp_fold::is_lane_order_loop(m, f, i, fast_math)
                })
                .collect();
            if masked.is_empty() {
                continue;
            }
            let sites = feats.cas_sites.entry(*fid).or_default().entry(b).or_default();
            sites.extend(masked);
            sites.sort_by_key(|i| insts.iter().position(|x| x == i));
        }
    }
    for (fid, i, msg) in refusals {
        diags.push(inst_diag(m.func(fid), i, "spirv-plan:features", msg));
    }
    let mut bindless = bindless::plan_bindless(m, kernel, &cg.order)?;
    let textures = texture_heap::plan_textures(m, kernel, &cg.order)?;
    for &a in &textures.args {
        bindless.args.entry(a).or_default().metadata = true;
    }
    texture_heap::require_features(m, &textures, &mut feats.required, device)?;
    let mut bindings = match bindings::plan_bindings(m, kernel, &feats.int_view_buffers, &bindless) {
        Ok(b) => b,
        Err(errs) => {
            let f = m.func(kernel);
            return Err(errs
                .into_iter()
                .map(|msg| {
                    Diagnostic::error(xir::diag::Rule::SpirvHandoffAbi, msg).in_function(&f.name).with_span(f.span)
                })
                .collect());
        }
    };
    let mut constant_ubo = constant_ubo::plan_kernel(m, &blocks_of, device);
    if let Err(e) = constant_ubo::bind(&mut constant_ubo, &mut bindings) {
        let f = m.func(kernel);
        return Err(vec![Diagnostic::error(xir::diag::Rule::SpirvPlanConstantUbo, e.to_string())
            .in_function(&f.name)
            .with_span(f.span)]);
    }
    if let Err(e) = texture_heap::add_heaps(&mut bindings.abi, &textures) {
        let f = m.func(kernel);
        let msg = format!("internal: the planned kernel ABI with texture heaps is not canonical: {e}");
        return Err(vec![Diagnostic::error(xir::diag::Rule::SpirvPlanTextures, msg)
            .in_function(&f.name)
            .with_span(f.span)]);
    }
    let mut control = FxHashMap::default();
    let empty = FxHashMap::default();
    for &fid in &cg.order {
        let f = m.func(fid);
        let sites = feats.cas_sites.get(&fid).unwrap_or(&empty);
        match control_flow::plan_control_flow(m, f, &closures[&fid], sites) {
            Ok(p) => {
                control.insert(fid, p);
            }
            Err(errs) => {
                for (i, b, msg) in errs {
                    diags.push(match (i, b) {
                        (Some(i), _) => inst_diag(f, i, xir::diag::Rule::SpirvPlanControlFlow, msg),
                        (None, Some(b)) => block_diag(f, b, xir::diag::Rule::SpirvPlanControlFlow, msg),
                        _ => Diagnostic::error(xir::diag::Rule::SpirvPlanControlFlow, msg).in_function(&f.name),
                    });
                }
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Plans {
        kernel,
        callgraph: cg,
        closures,
        control,
        bindings,
        bindless,
        textures,
        features: feats,
        writes_memory,
        coherence,
        constant_ubo,
    })
}

/// Whether `op` may write memory that a user-bindable storage buffer can
/// alias: every resource write (direct and bindless buffers, storage
/// textures, accel-instance storage, device addresses, the indirect-dispatch
/// buffer) and every atomic (shared-memory atomics included: the proof stays
/// conservative). A module with none may mark its buffers `NonWritable`; a
/// declaration's own read-only use proves nothing, as another argument may
/// be the same memory.
pub fn writes_user_memory(op: Opcode) -> bool {
    let o = xir_spec::spec().op(op);
    (o.has(xir::Trait::MemoryWrite) && o.has(xir::Trait::Resource)) || features::is_atomic(op)
}
