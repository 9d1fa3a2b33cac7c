//! The scalar optimizations' option contract: option-less passes reject
//! every option at load time. Their fixtures (exact output, statistics and
//! interpreter equality) are file tests, `tests/filetests/<pass>/`.

/// Option-less passes (declared with `PassDecl::without_options`) accept
/// no options and `()`, and reject any named option at load time, naming it.
#[test]
fn option_less_passes_reject_every_option_at_load() {
    let mut reg = xir::pass::PassRegistry::new();
    xir_passes::register_all(&mut reg);
    let load = |steps: &str| {
        let text = format!("Pipeline(name: \"t\", input: \"xir\", output: \"xir\", steps: [{steps}])");
        xir::pipeline::Loader::new(&reg).load_text("t.ron".into(), None, &text)
    };
    for pass in ["sccp", "cvp", "licm", "trace_gep", "local_load_elimination", "dead_store_elimination"] {
        assert!(load(&format!("Pass(\"{pass}\")")).is_ok(), "{pass} without options");
        assert!(load(&format!("Pass(\"{pass}\", ())")).is_ok(), "{pass} with ()");
        let err =
            load(&format!("Pass(\"{pass}\", (budget: 3))")).err().unwrap_or_else(|| panic!("{pass} took an option"));
        assert!(err.to_string().contains("budget"), "{pass}: {err}");
    }
}
