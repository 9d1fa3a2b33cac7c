//! The examples under `pipelines/examples/` run as tests, so they keep
//! working as the API changes (`cargo test` only builds them).

#[path = "../examples/compile_kernel.rs"]
mod compile_kernel;
#[path = "../examples/edit_loop.rs"]
mod edit_loop;

#[test]
fn compile_kernel_runs() {
    compile_kernel::main().unwrap();
}

#[test]
fn edit_loop_runs() {
    edit_loop::main().unwrap();
}
