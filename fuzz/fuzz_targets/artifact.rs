//! Shader artifacts (`xir-run --artifact`): the codec must refuse bad
//! bytes with an `ArtifactError`; an artifact it accepts must rebuild its
//! signature module (what `xir-run` binds inputs against) or refuse typed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xir_spirv::artifact::{decode, LoadRequirements};

fuzz_target!(|data: &[u8]| {
    let req = LoadRequirements::any_xir_spirv();
    for device in [None, Some(xir_spirv::FeatureSet::default())] {
        match decode(data, &req, device.as_ref()) {
            Ok(art) => {
                if let Ok((m, k)) = art.signature_module() {
                    assert!(m.func(k).is_kernel(), "the signature module's kernel is not a kernel");
                    let _ = xir::verify::verify_module(&m);
                }
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
