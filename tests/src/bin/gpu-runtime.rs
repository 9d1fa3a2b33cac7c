//! GPU runtime of each WGSL corpus kernel compiled two ways (issue 24, BENCHMARKS.md "GPU runtime"):
//! ours (front end, the `spirv` pipeline at -O2, SPIRV-Tools preset 2) against a peer SPIR-V module
//! given per kernel (`scripts/gpu-runtime.sh` makes them with `naga NAME.wgsl` then `spirv-opt -O`).
//!
//! Each kernel runs on its corpus inputs tiled `k` times (every buffer's contents repeated, the
//! dispatch's x size multiplied), `k` growing by 4x until our dispatch takes at least `--min-ms` or
//! the next step's largest buffer would pass `--max-mib`; at that size both modules are dispatched
//! `--repeats` times back to back in one submission (`Device::timed_dispatches`: uploaded once) on
//! the same device, and the medians of the GPU timestamps are compared. Prints
//! one Markdown row per kernel; a kernel that stays under `--min-ms` at the largest size (its work
//! is bounded by uniforms, not by the dispatch, or it is memory-bound and fast) is marked so.
//!
//! `--fast-math` compiles ours as `xir-opt --fast-math` does (to measure what exact float
//! semantics cost a kernel); `--opt-level N` (default 2) compiles ours at another level (to
//! tell what our lowering costs from what the optimizer gains).
//!
//! `--peer-abi ours` times a variant of our own module instead of a foreign one: the peer file is
//! our binary for the kernel, edited (a decoration added, a branch removed, ...), bound through our
//! ABI exactly as ours is. It must keep our interface (the same descriptor bindings and push-constant
//! block), or the kernel is reported failed. This is how a guess about why a kernel is slower is
//! measured: one difference at a time, side by side on one device.
//!
//! ```text
//! gpu-runtime --wgsl tests/wgsl --corpus tests/corpus --peer DIR [--peer-label TEXT] [--repeats 20]
//!             [--min-ms 1] [--max-mib 256] [--only KERNEL ...] [--fast-math] [--opt-level 2]
//!             [--peer-abi foreign|ours]
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use xir::interp::Inputs;
use xir_frontend::{Language, Overrides, Source};
use xir_vulkan::Device;

struct Args {
    wgsl: PathBuf,
    corpus: PathBuf,
    peer: PathBuf,
    peer_label: String,
    repeats: usize,
    min_ms: f64,
    max_mib: f64,
    only: Vec<String>,
    fast_math: bool,
    opt_level: u8,
    /// Whether peer modules are foreign (bound by reflection, inputs by binding) or variants of
    /// ours (bound through our ABI).
    peer_has_our_abi: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        wgsl: "tests/wgsl".into(),
        corpus: "tests/corpus".into(),
        peer: PathBuf::new(),
        peer_label: "naga + spirv-opt -O".into(),
        repeats: 20,
        min_ms: 1.0,
        max_mib: 256.0,
        only: Vec::new(),
        fast_math: false,
        opt_level: 2,
        peer_has_our_abi: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<f64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--wgsl" => a.wgsl = value()?.into(),
            "--corpus" => a.corpus = value()?.into(),
            "--peer" => a.peer = value()?.into(),
            "--peer-label" => a.peer_label = value()?,
            "--repeats" => a.repeats = number(value()?)?.max(1.0) as usize,
            "--min-ms" => a.min_ms = number(value()?)?,
            "--max-mib" => a.max_mib = number(value()?)?,
            "--only" => a.only.push(value()?),
            "--fast-math" => a.fast_math = true,
            "--opt-level" => {
                a.opt_level = value()?.parse::<u8>().ok().filter(|l| *l <= 3).ok_or("--opt-level takes 0..=3")?
            }
            "--peer-abi" => {
                a.peer_has_our_abi = match value()?.as_str() {
                    "foreign" => false,
                    "ours" => true,
                    other => return Err(format!("--peer-abi takes `foreign` or `ours`, not `{other}`")),
                }
            }
            _ => return Err(format!("unknown argument `{flag}` (see the file's doc)")),
        }
    }
    if a.peer.as_os_str().is_empty() {
        return Err("--peer DIR (NAME.spv per kernel) is required".into());
    }
    Ok(a)
}

/// The inputs tiled `k` times: each buffer's elements repeated, `fill` lengths multiplied, the
/// dispatch's x size multiplied (`block` when the inputs give none). Value arguments (vectors,
/// matrices) and textures stay as they are.
fn tiled(inputs: &Json, k: usize, block: [u32; 3], buffers: &[String]) -> Json {
    let mut out = inputs.clone();
    let d = out.get("dispatch").and_then(|d| serde_json::from_value::<[u32; 3]>(d.clone()).ok()).unwrap_or(block);
    out["dispatch"] = serde_json::json!([d[0] as usize * k, d[1], d[2]]);
    if let Some(args) = out.get_mut("args").and_then(Json::as_object_mut) {
        for (name, v) in args.iter_mut() {
            if !buffers.contains(name) {
                continue;
            }
            match v {
                Json::Array(items) => *items = items.iter().cycle().take(items.len() * k).cloned().collect(),
                Json::Object(o) if o.contains_key("fill") => {
                    if let Some(n) = o.get("len").and_then(Json::as_u64) {
                        o.insert("len".into(), (n * k as u64).into());
                    }
                }
                Json::Object(o) => {
                    if let Some(Json::Array(b)) = o.get_mut("bytes") {
                        *b = b.iter().cycle().take(b.len() * k).cloned().collect();
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Elements of the largest of the `buffers` in `inputs`.
fn largest_buffer(inputs: &Json, buffers: &[String]) -> usize {
    let args = inputs.get("args").and_then(Json::as_object);
    args.into_iter()
        .flat_map(|a| a.iter())
        .filter(|(name, _)| buffers.contains(name))
        .map(|(_, v)| match v {
            Json::Array(items) => items.len(),
            Json::Object(o) => o
                .get("len")
                .and_then(Json::as_u64)
                .map(|n| n as usize)
                .or_else(|| o.get("bytes").and_then(Json::as_array).map(|b| b.len() / 4))
                .unwrap_or(0),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// The median GPU time in ms of `dev.timed_dispatches` dispatches of one run.
fn median_ms(timing: xir_vulkan::GpuTiming) -> Result<f64, String> {
    Ok(timing.dispatch_ns.ok_or("the device's queue has no timestamps")? / 1e6)
}

struct Row {
    kernel: String,
    tiles: usize,
    threads: u64,
    ours_ms: f64,
    peer_ms: f64,
}

fn measure(dev: &mut Device, a: &Args, name: &str, wgsl: &Path) -> Result<Row, String> {
    let text = std::fs::read_to_string(wgsl).map_err(|e| format!("{}: {e}", wgsl.display()))?;
    let own_inputs = a.wgsl.join(format!("{name}.inputs.json"));
    let inputs_path = if own_inputs.is_file() { own_inputs } else { a.corpus.join(format!("{name}.inputs.json")) };
    let inputs: Json = serde_json::from_str(
        &std::fs::read_to_string(&inputs_path).map_err(|e| format!("{}: {e}", inputs_path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", inputs_path.display()))?;
    let src = Source { path: &wgsl.display().to_string(), text: &text, language: Language::Wgsl };
    let module = xir_frontend::compile(&src, &Overrides::default()).map_err(|d| d.to_string())?;
    // Argument names in binding order (tests/wgsl/MANIFEST.md: bindings follow the arguments), and
    // which of them are buffers.
    let entry = module.functions.iter().find(|f| f.name == "main").ok_or("no kernel `main`")?;
    let names = xir::interp::arg_names(entry);
    let peer_path = a.peer.join(format!("{name}.spv"));
    let peer_bytes = std::fs::read(&peer_path).map_err(|e| format!("{}: {e}", peer_path.display()))?;
    let peer: Vec<u32> = peer_bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let reflection = match a.peer_has_our_abi {
        true => None,
        false => Some(xir_spirv::reflect::reflect(&peer, Some("main")).map_err(|e| format!("peer: {}", e.0))?),
    };
    // A buffer is tiled when both sides size it at run time (a WGSL `array<T, N>` in storage is a
    // buffer in XIR but has a fixed length in a foreign peer; in ours every buffer is sized at run
    // time).
    let runtime_sized = |binding: usize| {
        let Some(reflection) = &reflection else { return true };
        reflection.variables.iter().any(|v| {
            v.set == 0
                && v.binding as usize == binding
                && matches!(&v.kind, xir_spirv::reflect::VariableKind::StorageBuffer(l)
                    if matches!(l.members.last().map(|m| &m.ty), Some(xir_spirv::reflect::DataType::Array { len: None, .. })))
        })
    };
    let buffers: Vec<String> = names
        .iter()
        .zip(&entry.args)
        .enumerate()
        .filter(|(i, (_, a))| {
            matches!(module.types.get(a.ty), xir::ir::Type::Buffer(_) | xir::ir::Type::ByteBuffer) && runtime_sized(*i)
        })
        .map(|(_, (n, _))| n.clone())
        .collect();
    let (legal, kernel, ours) =
        xir_pipelines::backend::legalize_and_compile(&module, Some("main"), a.opt_level, a.fast_math)
            .map_err(|e| e.to_string())?;
    if a.peer_has_our_abi {
        let (theirs, mine) = (interface(&peer)?, interface(&ours.words)?);
        if theirs != mine {
            return Err(format!(
                "peer: {} is not a variant of our module: its descriptor bindings or push-constant block differ \
                 from ours ({theirs:?} against {mine:?})",
                peer_path.display()
            ));
        }
    }
    let block = match legal.func(kernel).kind {
        xir::ir::FunctionKind::Kernel { block_size, .. } => block_size,
        _ => [1, 1, 1],
    };

    let run_ours_abi = |dev: &Device, words: &[u32], inputs: &Inputs| -> Result<f64, String> {
        let dispatch = inputs.dispatch.unwrap_or(block);
        let compiled = xir_vulkan::Compiled { words, abi: &ours.abi, constants: &ours.constants };
        let (_, timing) =
            xir_vulkan::run_compiled(dev, &legal, kernel, compiled, inputs, dispatch).map_err(|e| e.to_string())?;
        median_ms(timing)
    };
    let ours = |dev: &Device, inputs: &Inputs| run_ours_abi(dev, &ours.words, inputs).map_err(|e| format!("ours: {e}"));
    let max_elems = (a.max_mib * 1024.0 * 1024.0 / 4.0) as usize;
    let base = largest_buffer(&inputs, &buffers).max(1);
    let mut k = 1;
    let mut scaled;
    dev.timed_dispatches = 3;
    loop {
        scaled = serde_json::from_value::<Inputs>(tiled(&inputs, k, block, &buffers)).map_err(|e| e.to_string())?;
        if ours(dev, &scaled)? >= a.min_ms || base * k * 4 > max_elems {
            break;
        }
        k *= 4;
    }
    let threads = scaled.dispatch.map_or(0, |d| d.iter().map(|&x| x as u64).product());
    dev.timed_dispatches = a.repeats as u32;
    let ours_ms = ours(dev, &scaled)?;
    if a.peer_has_our_abi {
        let peer_ms = run_ours_abi(dev, &peer, &scaled).map_err(|e| format!("peer: {e}"))?;
        return Ok(Row { kernel: name.to_string(), tiles: k, threads, ours_ms, peer_ms });
    }
    // The peer module has no names after `spirv-opt -O`: its inputs go by `set0.bindingN`.
    let mut by_binding = scaled.clone();
    by_binding.args = std::mem::take(&mut by_binding.args)
        .into_iter()
        .map(|(name, v)| match names.iter().position(|n| *n == name) {
            Some(i) => (format!("set0.binding{i}"), v),
            None => (name, v),
        })
        .collect();
    let (_, timing) = xir_vulkan::run_foreign_on(dev, &peer, Some("main"), &by_binding, by_binding.dispatch)
        .map_err(|e| format!("peer: {e}"))?;
    let peer_ms = median_ms(timing)?;
    Ok(Row { kernel: name.to_string(), tiles: k, threads, ours_ms, peer_ms })
}

/// What binds a module to its inputs under our ABI: its (set, binding) pairs, sorted, and its
/// number of push-constant variables.
fn interface(words: &[u32]) -> Result<(Vec<(u32, u32)>, usize), String> {
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, Op, StorageClass};
    let module = rspirv::dr::load_words(words).map_err(|e| format!("unreadable SPIR-V: {e}"))?;
    let decoration = |id: u32, which: Decoration| {
        module.annotations.iter().find_map(|d| match d.operands.as_slice() {
            [Operand::IdRef(target), Operand::Decoration(dec), Operand::LiteralBit32(n)]
                if d.class.opcode == Op::Decorate && *target == id && *dec == which =>
            {
                Some(*n)
            }
            _ => None,
        })
    };
    let mut bindings = Vec::new();
    let mut push_constants = 0;
    for v in module.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let id = v.result_id.unwrap_or(0);
        if v.operands.first() == Some(&Operand::StorageClass(StorageClass::PushConstant)) {
            push_constants += 1;
        }
        if let (Some(set), Some(binding)) =
            (decoration(id, Decoration::DescriptorSet), decoration(id, Decoration::Binding))
        {
            bindings.push((set, binding));
        }
    }
    bindings.sort_unstable();
    Ok((bindings, push_constants))
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gpu-runtime: {e}");
            std::process::exit(2);
        }
    };
    let mut dev = match Device::new() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("gpu-runtime: no Vulkan device: {e}");
            std::process::exit(1);
        }
    };
    println!("device: {} ({})\n", dev.name, dev.driver);
    let ours = format!("ours -O{}{}", a.opt_level, if a.fast_math { " --fast-math" } else { "" });
    println!("| kernel | tiles | threads | {ours} ms | {} ms | ours / peer | note |", a.peer_label);
    println!("|---|---:|---:|---:|---:|---:|---|");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&a.wgsl) {
        Ok(d) => d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "wgsl")).collect(),
        Err(e) => {
            eprintln!("gpu-runtime: {}: {e}", a.wgsl.display());
            std::process::exit(2);
        }
    };
    files.sort();
    let mut failed = false;
    for path in files {
        let name = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        if !a.only.is_empty() && !a.only.contains(&name) {
            continue;
        }
        // A peer directory may cover only some kernels (`scripts/gpu-runtime.sh`'s
        // "ours through spirv-opt" peer exists only where the foreign runner can bind it).
        if !a.peer.join(format!("{name}.spv")).exists() {
            println!("| {name} | | | | | | no peer module |");
            continue;
        }
        match measure(&mut dev, &a, &name, &path) {
            Ok(r) => {
                let note = if r.ours_ms < a.min_ms { "under the minimum at the largest tiling" } else { "" };
                println!(
                    "| {} | {} | {} | {:.3} | {:.3} | {:.2} | {note} |",
                    r.kernel,
                    r.tiles,
                    r.threads,
                    r.ours_ms,
                    r.peer_ms,
                    r.ours_ms / r.peer_ms
                )
            }
            Err(e) => {
                failed = true;
                println!("| {name} | | | | | | failed: {} |", e.replace('\n', " "));
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
