//! The pass manager gives back the room a pipeline grew: after a run, every
//! function's per-instruction tables are exactly as long as its
//! instructions (the module outlives the run in a driver or a workspace;
//! BENCHMARKS.md, "Memory per instruction").

use std::mem::size_of;

use xir::pipeline::{PassManager, RunOptions};

#[test]
fn a_pipeline_run_leaves_no_spare_room_in_the_tables() {
    let path = format!("{}/../tests/corpus/bitonic_sort.xir", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut m = xir::text::parse_module(&text, "bitonic_sort.xir").unwrap();
    let before = m.inst_count();
    let reg = xir_pipelines::registry();
    let p = xir_pipelines::loader(&reg, None).load("spirv-legalize").unwrap();
    PassManager::new(&p, RunOptions { opt_level: 2, ..Default::default() }).run(&mut m, &mut std::io::sink()).unwrap();
    assert_ne!(m.inst_count(), before, "the pipeline changed the module");
    for f in &m.functions {
        let fp = f.footprint();
        let n = f.inst_capacity();
        assert_eq!(fp.inst_cores, n * size_of::<xir::InstCore>(), "{}", f.name);
        assert_eq!(fp.dense, n * 8, "{}", f.name);
        assert_eq!(fp.spans, n * 12, "{}", f.name);
    }
}
