//! What the drivers do to the world outside the compiler: where `-o` writes
//! (regular files atomically; symlinks, FIFOs and devices written through,
//! never replaced), binary output refused on a terminal, reproducers only
//! for internal faults, and shipped pipelines found by a moved binary.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::scratch;
use common::xir_opt;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn corpus(name: &str) -> String {
    format!("{}/../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory for one test.
fn saxpy_text() -> String {
    let src = std::fs::read_to_string(corpus("saxpy.xir")).unwrap();
    xir::text::print_module(&xir::text::parse_module(&src, "saxpy.xir").unwrap())
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", p.display());
}

#[test]
fn a_regular_output_is_replaced_atomically_and_keeps_its_permissions() {
    let dir = scratch("regular");
    let out = dir.join("out.xir");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = xir_opt(&[&corpus("saxpy.xir"), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), saxpy_text());
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left behind");
}

#[test]
fn a_symlink_output_is_written_through_and_stays_a_symlink() {
    let dir = scratch("symlink");
    let target = dir.join("real.xir");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.xir");
    std::os::unix::fs::symlink("real.xir", &link).unwrap();
    let o = xir_opt(&[&corpus("saxpy.xir"), "-o", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.xir"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), saxpy_text());
    // A link to nothing is refused with the reason, and stays as it was.
    let dangling = dir.join("dangling.xir");
    std::os::unix::fs::symlink("missing/nowhere.xir", &dangling).unwrap();
    let o = xir_opt(&[&corpus("saxpy.xir"), "-o", dangling.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the symlink's target cannot be resolved"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
}

#[test]
fn a_fifo_output_is_written_through_not_replaced() {
    let dir = scratch("fifo");
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let child = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&corpus("saxpy.xir"), "-o", fifo.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the read end waits for the writer, so this reads what it wrote.
    let mut got = String::new();
    std::fs::File::open(&fifo).unwrap().read_to_string(&mut got).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(got, saxpy_text());
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left behind");
}

#[test]
fn a_directory_output_is_refused() {
    let dir = scratch("dir");
    let o = xir_opt(&[&corpus("saxpy.xir"), "-o", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot write output: it is a directory"), "{}", stderr(&o));
    assert!(dir.is_dir() && std::fs::read_dir(&dir).unwrap().count() == 0);
}

/// Run xir-opt with standard output on a pseudo-terminal.
fn xir_opt_on_a_terminal(args: &[&str]) -> Output {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: both out-pointers are valid; the name, termios and winsize are optional.
    let rc =
        unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: `slave` and `master` are open descriptors we own from here on.
    let (slave, master) = unsafe {
        use std::os::fd::FromRawFd;
        (std::fs::File::from_raw_fd(slave), std::fs::File::from_raw_fd(master))
    };
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt")).args(args).stdout(slave).output().unwrap();
    drop(master);
    o
}

#[test]
fn binary_output_is_refused_on_a_terminal_with_a_hint() {
    for emit in ["spirv", "artifact"] {
        let o = xir_opt_on_a_terminal(&[&corpus("saxpy.xir"), "--pipeline", "spirv", "--emit", emit]);
        assert_eq!(o.status.code(), Some(2), "{emit}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with(&format!("xir-opt: error: refusing to write binary `--emit {emit}` output")), "{err}");
        assert!(err.contains("help: give `-o FILE`"), "{err}");
    }
    // Text is fine on a terminal, and binary output to a pipe is fine.
    let o = xir_opt_on_a_terminal(&[&corpus("saxpy.xir"), "--pipeline", "spirv", "--emit", "spirv-asm"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = xir_opt(&[&corpus("saxpy.xir"), "--pipeline", "spirv", "--emit", "spirv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&o.stdout[..4], &0x0723_0203u32.to_le_bytes());
}

#[test]
fn a_refused_kernel_leaves_no_reproducer_but_an_internal_fault_does() {
    let dir = scratch("repro");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let input = dir.join("address.xir");
    std::fs::write(
        &input,
        "kernel @k(%b: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  %p = buffer.address %b : u64\n  \
         %q = cast.static %p : u32\n  buffer.write %b, u32 0, %q\n  return\n}\n",
    )
    .unwrap();
    // The user's unsupported op: refused with its reason, nothing written.
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([input.to_str().unwrap(), "--pipeline", "spirv", "--emit", "spirv-asm"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("device addresses need PhysicalStorageBuffer addressing"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("reproducer"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "a reproducer was written for a user error");
    // A panicking pass is an internal fault: the reproducer goes to the
    // temporary directory, and the message says where.
    let pipeline = dir.join("panics.ron");
    std::fs::write(&pipeline, "Pipeline(name: \"p\", input: \"xir\", output: \"xir\", steps: [Pass(\"debug.panic\")])")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt"))
        .args([&corpus("saxpy.xir"), "--pipeline", pipeline.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let written: Vec<PathBuf> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].join("repro.ron").is_file() && written[0].join("input.xir").is_file());
    // The default (human) form gives it as a note: `= reproducer written to ...`.
    assert!(stderr(&o).contains(&format!("= reproducer written to {}", written[0].display())), "{}", stderr(&o));
}

#[test]
fn the_shipped_pipelines_are_built_in() {
    // No directory is searched unless one is given: nothing depends on where
    // the sources were when the binary was built.
    let reg = xir_pipelines::registry();
    if std::env::var_os(xir_pipelines::PIPELINE_DIR_ENV).is_none() {
        assert!(xir_pipelines::loader(&reg, None).search_dirs().is_empty());
    }
    let names: Vec<&str> = xir_pipelines::SHIPPED.iter().map(|(n, _)| *n).collect();
    for expected in ["spirv", "spirv-legalize", "O1", "O2", "cleanup", "to-raw"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    // A moved binary, run from elsewhere, still finds them (`spirv`
    // includes `spirv-legalize`, which includes others).
    let dir = scratch("moved");
    let moved = dir.join("xir-opt");
    std::fs::copy(env!("CARGO_BIN_EXE_xir-opt"), &moved).unwrap();
    let out = dir.join("saxpy.spv");
    let o = Command::new(&moved)
        .args([&corpus("saxpy.xir"), "--pipeline", "spirv", "--emit", "spirv", "-o", out.to_str().unwrap()])
        .current_dir("/")
        .env_remove(xir_pipelines::PIPELINE_DIR_ENV)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap().len() > 20);
}

#[test]
fn a_pipeline_directory_overrides_a_shipped_pipeline() {
    let dir = scratch("override");
    std::fs::write(
        dir.join("to-raw.ron"),
        "Pipeline(name: \"mine\", input: \"xir\", output: \"xir\", steps: [Pass(\"debug.panic\")])",
    )
    .unwrap();
    for (flag, env) in [(true, false), (false, true)] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_xir-opt"));
        c.args([&corpus("saxpy.xir"), "--pipeline", "to-raw", "--reproducer-dir", dir.join("r").to_str().unwrap()]);
        if flag {
            c.arg("--pipeline-dir").arg(&dir);
        }
        if env {
            c.env(xir_pipelines::PIPELINE_DIR_ENV, &dir);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "flag {flag} env {env}");
        assert!(stderr(&o).contains("pass `debug.panic` panicked"), "{}", stderr(&o));
    }
}
