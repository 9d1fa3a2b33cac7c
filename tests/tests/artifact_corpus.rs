//! The shader artifact over the whole corpus: every kernel the backend
//! compiles is written through the codec, read back with the exact-identity
//! load requirements of the module it came from, and equals what was
//! written; its saved signature matches the source kernel's (legalization
//! keeps kernel signatures, which `xir-run k.xir --artifact k.xsa` relies
//! on); and running the *decoded* artifact on Vulkan, bound through the
//! rebuilt signature-only module, gives byte-identical outputs to running
//! the compiled module directly.

use xir_spirv::artifact::{decode, LoadRequirements, SavedArguments, ShaderArtifact};
use xir_tests::device::{device, run_on_vulkan};
use xir_tests::{corpus, inputs, kernel_id, parse};

#[test]
fn every_compiled_corpus_kernel_round_trips_and_runs_from_its_artifact() {
    let dev = device();
    let mut round_trips = 0;
    let mut runs = 0;
    let (mut bytes_total, mut decode_time) = (0usize, std::time::Duration::ZERO);
    for k in corpus() {
        let module = parse(&k);
        let kid = kernel_id(&module, &k);
        let name = module.func(kid).name.clone();
        let Ok((legal, lk, out)) = xir_pipelines::backend::legalize_and_compile(&module, Some(&name), 0, false) else {
            continue; // compile failures are the backend tests' business (vulkan_corpus lists them)
        };
        let art = ShaderArtifact::from_compiled(&legal, lk, &out);
        let bytes = art.encode().unwrap_or_else(|e| panic!("{}: encode: {e}", k.name));
        let req = LoadRequirements::for_kernel(&legal, lk);
        let t = std::time::Instant::now();
        let back = decode(&bytes, &req, Some(&out.features)).unwrap_or_else(|e| panic!("{}: decode: {e}", k.name));
        decode_time += t.elapsed();
        bytes_total += bytes.len();
        assert_eq!(back, art, "{}", k.name);
        assert_eq!(
            SavedArguments::of_kernel(&module, kid),
            back.arguments,
            "{}: the signature changed in legalization",
            k.name
        );
        round_trips += 1;
        let Some(dev) = &dev else { continue };
        let inputs = inputs(&k);
        let dispatch = inputs.dispatch.expect("corpus inputs give a dispatch size");
        let (sig, sk) = back.signature_module().unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let from_artifact = xir_vulkan::run_compiled(dev, &sig, sk, (&back).into(), &inputs, dispatch)
            .unwrap_or_else(|e| panic!("{}: artifact run: {e}", k.name))
            .0;
        let direct = run_on_vulkan(dev, &module, kid, &inputs, 0).unwrap_or_else(|e| panic!("{}: {e}", k.name)).0;
        assert_eq!(from_artifact.to_json(), direct.to_json(), "{}", k.name);
        runs += 1;
    }
    eprintln!(
        "{round_trips} corpus artifacts round-tripped ({} bytes on average, decode {:.1} us on average), {runs} ran from their artifact",
        bytes_total / round_trips.max(1),
        decode_time.as_secs_f64() * 1e6 / round_trips.max(1) as f64
    );
    assert!(round_trips >= 20, "only {round_trips} corpus kernels compiled");
}
