//! Capturing `print` on the device: the Khronos validation layer's debug
//! printf is the consumer of the `NonSemantic.DebugPrintf` instructions the
//! backend emits (`emit/print.rs`), and this file collects what it reports
//! and turns it back into the interpreter's printed lines.
//!
//! - [`create_instance`] makes an instance with `VK_LAYER_KHRONOS_validation`,
//!   `VkValidationFeaturesEXT` enabling only `DEBUG_PRINTF` (every ordinary
//!   validation check disabled: they cost time and are not what we ask,
//!   unless `XIR_VULKAN_VALIDATION=1` asks for them: then they stay on and
//!   their warnings and errors go to stderr), and a `VK_EXT_debug_utils`
//!   messenger that appends every message to a sink.
//!   Without the layer (or its `VK_EXT_debug_utils`) the device is refused
//!   with [`RunError::Printf`] naming what is missing: a printing kernel never
//!   runs silently without its output.
//! - The layer's output buffer is `khronos_validation.printf_buffer_size`
//!   bytes (default 1024, about 25 short messages). Layer 1.3.239 reads it
//!   only from a settings file, once per process: unless the user names one
//!   (`VK_LAYER_SETTINGS_PATH`, or a vkconfig file), [`prepare_settings`]
//!   writes one raising it to [`PRINTF_BUFFER_SIZE`] (the layer's maximum)
//!   and points `VK_LAYER_SETTINGS_PATH` at it, once per process, as the
//!   first step of every `Device` constructor (so no thread of ours is in
//!   the loader while the variable is set). The file only holds printf keys
//!   and is shared by every process (`$TMPDIR/xir-vk-layer-printf-<size>`). When messages do not fit, the layer drops them and says so;
//!   [`run_kernel_printing`] reports that as `truncated` (never a silent loss).
//! - [`run_kernel_printing`] runs a dispatch with the sink cleared (one
//!   capturing dispatch per device at a time), then parses each message: the
//!   layer may prefix the text (`Validation Information: [ ... ] | MessageID
//!   = ... |`), so the payload is found by its mark `xir-print#`, then the
//!   record id, the invocation id and the hex words. Each line is formatted
//!   on the host from the printer record with the interpreter's formatter
//!   (`xir::interp::format_value_bits`).
//!
//! Order: the device appends messages in whatever order invocations reach
//! their `print`. The runner sorts the lines the way the interpreter runs
//! threads (workgroups x-fastest, then the invocation's linear index in its
//! workgroup), keeping each invocation's own lines in program order. For a
//! kernel without barriers or warp operations between prints that is the
//! interpreter's order exactly; with them the interpreter interleaves
//! threads at each barrier, so callers compare the lines as multisets
//! (`xir-run --compare` sorts both sides).

use std::ffi::{c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

use ash::vk;
use xir::interp::{format_value_bits, Inputs, Outputs};
use xir::{FloatFormat, FuncId, Module, Type, TypeId, TypeTable};

use super::{Compiled, Device, GpuTiming, RunError};
use xir_spirv::artifact::{check_print_type, pieces, Piece, PrinterRecord};
use xir_spirv::emit::print::{words_per_leaf, DEBUG_PRINTF_SET, PRINTF_MARK};

/// The validation layer, the only debug-printf consumer the runner knows.
pub const LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";
/// The printf buffer this runner asks for, in bytes (the layer's maximum).
pub const PRINTF_BUFFER_SIZE: u32 = 1 << 20;

/// One message the layer handed to the messenger.
#[derive(Clone, Debug)]
struct LayerMessage {
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    id_name: String,
    text: String,
}

type Sink = Mutex<Vec<LayerMessage>>;

/// The debug-printf state of a [`Device`] opened with [`Device::with_printf`].
pub(crate) struct Capture {
    loader: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    /// Boxed so its address (the messenger's user data) is stable.
    sink: Box<Sink>,
    /// One capturing dispatch at a time (the messenger is per instance).
    run: Mutex<()>,
    /// The printf buffer size in force, when known.
    pub(crate) buffer_size: Option<u32>,
}

impl Drop for Capture {
    fn drop(&mut self) {
        // SAFETY: the messenger belongs to the loader's instance, which the
        // owning Device destroys only after this drop.
        unsafe { self.loader.destroy_debug_utils_messenger(self.messenger, None) };
    }
}

impl Capture {
    fn take(&self) -> Vec<LayerMessage> {
        self.sink.lock().map(|mut g| std::mem::take(&mut *g)).unwrap_or_default()
    }

    /// Problems the layer reported while setting up (device creation):
    /// debug printf disables itself on a device it cannot instrument.
    pub(crate) fn setup_problem(&self) -> Option<String> {
        let msgs = self.take();
        msgs.iter()
            .find(|m| {
                m.severity.intersects(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                ) && m.text.contains("Debug Printf")
            })
            .map(|m| m.text.clone())
    }
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the layer passes valid callback data for the call's duration;
    // `user` is the boxed sink, alive as long as the messenger.
    let (data, sink) = unsafe { (&*data, &*(user as *const Sink)) };
    let text = |p: *const std::ffi::c_char| {
        // SAFETY: non-null strings of the callback data are NUL-terminated.
        if p.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let msg = LayerMessage { severity, id_name: text(data.p_message_id_name), text: text(data.p_message) };
    if let Ok(mut g) = sink.lock() {
        g.push(msg);
    }
    vk::FALSE
}

/// A `key = value` of a layer settings file, if set.
fn setting(text: &str, key: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.split('#').next()?.split_once('='))
        .find_map(|(k, v)| (k.trim() == format!("khronos_validation.{key}")).then(|| v.trim().to_ascii_lowercase()))
}

/// Make the layer's settings give debug printf a large buffer and the
/// messenger (not stdout) its messages; see the module doc. Returns the
/// buffer size in force, or why the settings defeat the capture. Runs once
/// per process, first thing in every device creation (setting an
/// environment variable is only sound while no other thread reads it: every
/// `Device` constructor waits here before touching the loader).
pub(crate) fn prepare_settings() -> Result<Option<u32>, PrintfSettingsError> {
    static DONE: OnceLock<Result<Option<u32>, PrintfSettingsError>> = OnceLock::new();
    DONE.get_or_init(|| {
        if std::env::var_os("DEBUG_PRINTF_TO_STDOUT").is_some() {
            return Err(PrintfSettingsError::StdoutEnv);
        }
        let vkconfig = std::env::var_os("XDG_DATA_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".local/share")))
            .map(|d| d.join("vulkan/settings.d/vk_layer_settings.txt"))
            .filter(|p| p.is_file());
        let user = vkconfig.or_else(|| {
            let p = std::path::PathBuf::from(std::env::var_os("VK_LAYER_SETTINGS_PATH")?);
            Some(if p.is_dir() { p.join("vk_layer_settings.txt") } else { p })
        });
        if let Some(path) = user {
            // The user's settings rule; read what they say about printf.
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if setting(&text, "printf_to_stdout").as_deref() == Some("true") {
                return Err(PrintfSettingsError::StdoutSetting(path));
            }
            return Ok(Some(setting(&text, "printf_buffer_size").and_then(|v| v.parse().ok()).unwrap_or(1024)));
        }
        // One file per buffer size, shared by every process (same content).
        let dir = std::env::temp_dir().join(format!("xir-vk-layer-printf-{PRINTF_BUFFER_SIZE}"));
        let text = format!(
            "# written by xir-spirv's Vulkan runner to capture debug printf\n\
             khronos_validation.printf_buffer_size = {PRINTF_BUFFER_SIZE}\n\
             khronos_validation.printf_to_stdout = false\n\
             khronos_validation.printf_verbose = false\n"
        );
        // Written beside and renamed into place: a concurrent reader sees a whole file.
        let tmp = dir.join(format!(".vk_layer_settings.{}", std::process::id()));
        let write = std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&tmp, text))
            .and_then(|_| std::fs::rename(&tmp, dir.join("vk_layer_settings.txt")));
        match write {
            Ok(()) => {
                std::env::set_var("VK_LAYER_SETTINGS_PATH", &dir);
                Ok(Some(PRINTF_BUFFER_SIZE))
            }
            // The layer's default buffer still works for small dispatches.
            Err(_) => Ok(Some(1024)),
        }
    })
    .clone()
}

/// Why the validation layer's printf output cannot be captured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrintfSettingsError {
    #[error("DEBUG_PRINTF_TO_STDOUT is set: the layer would write the printf text to stdout")]
    StdoutEnv,
    #[error("{} sets printf_to_stdout: the text would bypass the runner", .0.display())]
    StdoutSetting(std::path::PathBuf),
}

/// Whether the loader offers the validation layer with `VK_EXT_debug_utils`.
fn check_layer(entry: &ash::Entry) -> Result<(), RunError> {
    // SAFETY: plain loader queries.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
    if !layers.iter().any(|l| l.layer_name_as_c_str() == Ok(LAYER)) {
        return Err(RunError::Printf(format!(
            "printing kernels need a debug-printf consumer: the Vulkan loader offers no {} (install the Khronos \
             validation layer, e.g. Debian's vulkan-validationlayers)",
            LAYER.to_string_lossy()
        )));
    }
    // SAFETY: as above, for the layer's own extensions.
    let exts = unsafe { entry.enumerate_instance_extension_properties(Some(LAYER)) }.unwrap_or_default();
    if !exts.iter().any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME)) {
        return Err(RunError::Printf(format!(
            "{} offers no VK_EXT_debug_utils to hand printf messages to the runner",
            LAYER.to_string_lossy()
        )));
    }
    Ok(())
}

/// Create the instance with debug printf enabled and the capture attached.
/// `buffer_size` is what [`prepare_settings`] said.
pub(crate) fn create_instance(
    entry: &ash::Entry,
    buffer_size: Option<u32>,
) -> Result<(ash::Instance, Capture), RunError> {
    check_layer(entry)?;
    let app_name = CString::new("xir-run").expect("static name");
    let app = vk::ApplicationInfo::default().application_name(&app_name).api_version(vk::API_VERSION_1_2);
    let layers = [LAYER.as_ptr()];
    let exts = [ash::ext::debug_utils::NAME.as_ptr()];
    let enables = [vk::ValidationFeatureEnableEXT::DEBUG_PRINTF];
    // `XIR_VULKAN_VALIDATION=1` keeps the ordinary checks (module doc of device.rs).
    let validate = std::env::var("XIR_VULKAN_VALIDATION").as_deref() == Ok("1");
    let disables: &[vk::ValidationFeatureDisableEXT] =
        if validate { &[] } else { &[vk::ValidationFeatureDisableEXT::ALL] };
    let mut features = vk::ValidationFeaturesEXT::default()
        .enabled_validation_features(&enables)
        .disabled_validation_features(disables);
    let sink: Box<Sink> = Box::default();
    let user = &*sink as *const Sink as *mut c_void;
    let messenger_info = || {
        vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::INFO
                    | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_message))
            .user_data(user)
    };
    let mut during_create = messenger_info();
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&exts)
        .push_next(&mut features)
        .push_next(&mut during_create);
    // SAFETY: valid create info; the caller destroys the instance after the capture.
    let instance = unsafe { entry.create_instance(&info, None) }
        .map_err(|e| RunError::Printf(format!("vkCreateInstance with {}: {e}", LAYER.to_string_lossy())))?;
    let loader = ash::ext::debug_utils::Instance::new(entry, &instance);
    // SAFETY: the instance enables VK_EXT_debug_utils; the sink outlives the messenger (Capture's drop).
    match unsafe { loader.create_debug_utils_messenger(&messenger_info(), None) } {
        Ok(messenger) => Ok((instance, Capture { loader, messenger, sink, run: Mutex::new(()), buffer_size })),
        Err(e) => {
            // SAFETY: nothing else refers to the instance.
            unsafe { instance.destroy_instance(None) };
            Err(RunError::Printf(format!("vkCreateDebugUtilsMessengerEXT: {e}")))
        }
    }
}

/// Whether a SPIR-V module imports `NonSemantic.DebugPrintf` (a printing
/// kernel); a bounded scan of the module's instructions, never a panic.
pub fn imports_debug_printf(words: &[u32]) -> bool {
    let mut at = 5;
    while at < words.len() {
        let (len, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        if len == 0 || at + len > words.len() {
            return false;
        }
        // OpExtInstImport = 11: result id, then the name.
        if op == 11 && len > 2 {
            let bytes: Vec<u8> = words[at + 2..at + len].iter().flat_map(|w| w.to_le_bytes()).collect();
            let name = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
            if name == DEBUG_PRINTF_SET.as_bytes() {
                return true;
            }
        }
        // Imports precede every function: stop at the first OpFunction (54).
        if op == 54 {
            return false;
        }
        at += len;
    }
    false
}

/// One line a kernel printed on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintedLine {
    /// The invocation's `GlobalInvocationId` (the interpreter's `$dispatch_id`).
    pub thread: [u32; 3],
    pub text: String,
}

/// What the device printed during one dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintCapture {
    /// In the interpreter's thread order (module doc).
    pub lines: Vec<PrintedLine>,
    /// The layer dropped messages that did not fit its buffer.
    pub truncated: bool,
    /// The layer's printf buffer in bytes, when known.
    pub buffer_size: Option<u32>,
}

/// The host side of the printer records: each argument type as a type of a
/// private table, its scalar leaf count and leaf width.
struct Formats<'a> {
    types: TypeTable,
    records: &'a [PrinterRecord],
    /// Per record: (type, leaves, leaf bits) per argument.
    args: Vec<Vec<(TypeId, u32, u32)>>,
}

/// A printable type spelling (already accepted by `check_print_type`) as a type.
fn print_type(t: &mut TypeTable, s: &str) -> Result<(TypeId, u32, u32), String> {
    let scalar = |t: &mut TypeTable, s: &str| -> Result<(TypeId, u32), String> {
        let ty = match s {
            "bool" => Type::Bool,
            "f16" => Type::Float(FloatFormat::F16),
            "f32" => Type::Float(FloatFormat::F32),
            "f64" => Type::Float(FloatFormat::F64),
            _ => {
                let (signed, bits) = match s.split_at(1) {
                    ("i", b) => (true, b),
                    ("u", b) => (false, b),
                    _ => return Err(format!("`{s}` cannot be printed on the device")),
                };
                match bits.parse::<u8>() {
                    Ok(bits @ (8 | 16 | 32 | 64)) => Type::Int { bits, signed },
                    _ => return Err(format!("`{s}` cannot be printed on the device")),
                }
            }
        };
        let bits = match ty {
            Type::Bool => 1,
            Type::Int { bits, .. } => bits as u32,
            Type::Float(f) => f.bits(),
            _ => 0,
        };
        Ok((t.intern(ty), bits))
    };
    check_print_type(s).map_err(|e| e.to_string())?;
    let inner = |p: &str| s.strip_prefix(p).and_then(|r| r.strip_suffix('>')).and_then(|r| r.split_once(", "));
    if let Some((e, n)) = inner("vec<") {
        let ((elem, bits), lanes) = (scalar(t, e)?, n.parse::<u8>().map_err(|e| e.to_string())?);
        return Ok((t.intern(Type::Vector { elem, lanes }), lanes as u32, bits));
    }
    if let Some((e, n)) = inner("mat<") {
        let ((elem, bits), dim) = (scalar(t, e)?, n.parse::<u8>().map_err(|e| e.to_string())?);
        return Ok((t.intern(Type::Matrix { elem, dim }), (dim as u32) * (dim as u32), bits));
    }
    let (ty, bits) = scalar(t, s)?;
    Ok((ty, 1, bits))
}

impl<'a> Formats<'a> {
    fn new(records: &'a [PrinterRecord]) -> Result<Self, RunError> {
        let mut types = TypeTable::default();
        let mut args = Vec::with_capacity(records.len());
        for (k, r) in records.iter().enumerate() {
            let bad = |e: String| RunError::Printf(format!("printer record {} (id {}): {e}", k, r.id));
            if k > 0 && records[k - 1].id >= r.id {
                return Err(bad("ids are not increasing".into()));
            }
            let n = pieces(&r.format).map_err(|e| bad(e.to_string()))?.iter().filter(|p| **p == Piece::Arg).count();
            if n != r.arg_types.len() {
                return Err(bad(format!("{n} placeholders for {} arguments", r.arg_types.len())));
            }
            args.push(r.arg_types.iter().map(|s| print_type(&mut types, s)).collect::<Result<_, _>>().map_err(bad)?);
        }
        Ok(Formats { types, records, args })
    }

    /// The line of record `id` from its argument words.
    fn line(&self, id: u32, words: &[u32]) -> Result<String, String> {
        let k = self.records.binary_search_by_key(&id, |r| r.id).map_err(|_| format!("no printer record {id}"))?;
        let args = &self.args[k];
        let want: u32 = args.iter().map(|&(_, n, bits)| n * words_per_leaf(bits)).sum();
        if want as usize != words.len() {
            return Err(format!("record {id} takes {want} words, the device printed {}", words.len()));
        }
        let mut at = words.iter();
        let mut values = args.iter().map(|&(ty, n, bits)| {
            let leaves: Vec<u64> = (0..n)
                .map(|_| {
                    let lo = *at.next().unwrap_or(&0) as u64;
                    if words_per_leaf(bits) == 2 {
                        lo | (*at.next().unwrap_or(&0) as u64) << 32
                    } else {
                        lo
                    }
                })
                .collect();
            format_value_bits(&self.types, ty, &leaves).map_err(|e| e.to_string())
        });
        let mut out = String::new();
        for p in pieces(&self.records[k].format).map_err(|e| e.to_string())? {
            match p {
                Piece::Text(t) => out.push_str(&t),
                Piece::Arg => out.push_str(&values.next().ok_or("more placeholders than arguments")??),
            }
        }
        Ok(out)
    }
}

/// Parse one payload (the text after the mark): `<id> <x> <y> <z>: <hex words>`.
fn payload(p: &str) -> Result<(u32, [u32; 3], Vec<u32>), String> {
    let (head, tail) = p.split_once(':').ok_or("no `:` after the invocation id")?;
    let head: Vec<u32> =
        head.split_whitespace().map(|w| w.parse::<u32>().map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    let [id, x, y, z] = head[..] else { return Err(format!("{} numbers before `:`, expected 4", head.len())) };
    let words = tail
        .split_whitespace()
        .map(|w| u32::from_str_radix(w, 16).map_err(|e| format!("word `{w}`: {e}")))
        .collect::<Result<_, _>>()?;
    Ok((id, [x, y, z], words))
}

/// Run a printing kernel (its SPIR-V, ABI and constant data) on a device
/// opened with [`Device::with_printf`] and capture its lines (module doc).
/// `printers` are the kernel's printer records (from the compilation or the
/// artifact); the outputs' `printed` holds the lines in the interpreter's
/// thread order.
pub fn run_kernel_printing(
    device: &Device,
    module: &Module,
    kernel: FuncId,
    compiled: Compiled<'_>,
    printers: &[PrinterRecord],
    inputs: &Inputs,
    dispatch_size: [u32; 3],
) -> Result<(Outputs, GpuTiming, PrintCapture), RunError> {
    let formats = Formats::new(printers)?;
    let run = || super::typed::run_compiled_unchecked(device, module, kernel, compiled, inputs, dispatch_size);
    let abi = compiled.abi;
    let Some(cap) = &device.printf else {
        if !imports_debug_printf(compiled.words) {
            let (o, t) = run()?;
            return Ok((o, t, PrintCapture::default()));
        }
        return Err(RunError::Printf(
            "this kernel prints, and the device was opened without a debug-printf capture (Device::with_printf)".into(),
        ));
    };
    let _one = cap.run.lock().map_err(|_| RunError::Printf("a previous capturing dispatch panicked".into()))?;
    cap.take();
    let (mut outputs, timing) = run()?;
    let mut capture = PrintCapture { buffer_size: cap.buffer_size, ..Default::default() };
    for m in cap.take() {
        let mut parts = m.text.split(PRINTF_MARK);
        let prefix = parts.next().unwrap_or("");
        let mut any = false;
        for p in parts {
            any = true;
            let (id, thread, w) = payload(p)
                .map_err(|e| RunError::Printf(format!("unreadable debug-printf message `{}`: {e}", m.text)))?;
            let text = formats.line(id, &w).map_err(|e| RunError::Printf(format!("message `{}`: {e}", m.text)))?;
            capture.lines.push(PrintedLine { thread, text });
        }
        let printf_msg = m.id_name.to_ascii_lowercase().contains("debug-printf") || prefix.contains("Debug Printf");
        if any {
            continue;
        }
        if !printf_msg {
            // The ordinary checks (on with XIR_VULKAN_VALIDATION=1): the
            // messenger took them from the layer's own output, so pass on
            // warnings and errors the way the layer would have printed them.
            let loud = vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING;
            if m.severity.intersects(loud) {
                eprintln!("{}", m.text.trim_end());
            }
            continue;
        }
        if m.text.contains("truncated") {
            capture.truncated = true;
        } else {
            return Err(RunError::Printf(format!("the validation layer's debug printf: {}", m.text.trim())));
        }
    }
    // The interpreter's thread order; a stable sort keeps each invocation's lines in program order.
    let bs = abi.block_size.map(|b| b.max(1));
    let groups = super::group_counts(dispatch_size, abi.block_size);
    let key = |t: &[u32; 3]| {
        let g = [0, 1, 2].map(|i| (t[i] / bs[i]) as u64);
        let l = [0, 1, 2].map(|i| (t[i] % bs[i]) as u64);
        let group = g[0] + groups[0] as u64 * (g[1] + groups[1] as u64 * g[2]);
        let local = l[0] + bs[0] as u64 * (l[1] + bs[1] as u64 * l[2]);
        (group, local)
    };
    capture.lines.sort_by_key(|l| key(&l.thread));
    outputs.printed = capture.lines.iter().map(|l| l.text.clone()).collect();
    Ok((outputs, timing, capture))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: u32, format: &str, tys: &[&str]) -> PrinterRecord {
        PrinterRecord { id, format: format.into(), arg_types: tys.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn payloads_become_the_interpreters_text() {
        let records = [rec(0, "x={} v={}", &["f32", "vec<i8, 2>"]), rec(3, "{{{}}} {}", &["f64", "bool"])];
        let f = Formats::new(&records).unwrap();
        let (id, thread, w) = payload("0 1 2 3: 80000000 ff 7f\n").unwrap();
        assert_eq!((id, thread), (0, [1, 2, 3]));
        assert_eq!(f.line(id, &w).unwrap(), "x=-0 v=(-1, 127)");
        let nan = f64::NAN.to_bits();
        let w = [nan as u32, (nan >> 32) as u32, 1];
        assert_eq!(f.line(3, &w).unwrap(), "{NaN} true");
        assert!(f.line(3, &w[..2]).unwrap_err().contains("takes 3 words"));
        assert!(f.line(1, &w).unwrap_err().contains("no printer record 1"));
        assert!(payload("0 1 2: 5").is_err() && payload("0 1 2 3 zz").is_err() && payload("0 1 2 3: zz").is_err());
    }

    #[test]
    fn inconsistent_records_are_refused() {
        for bad in [
            vec![rec(1, "{}", &["u32"]), rec(1, "{}", &["u32"])],
            vec![rec(0, "{} {}", &["u32"])],
            vec![rec(0, "{", &[])],
            vec![rec(0, "{}", &["fp8e4m3"])],
            vec![rec(0, "{}", &["array<u32, 2>"])],
        ] {
            assert!(matches!(Formats::new(&bad), Err(RunError::Printf(_))), "{bad:?}");
        }
    }

    #[test]
    fn the_import_scan_is_bounded() {
        assert!(!imports_debug_printf(&[]));
        assert!(!imports_debug_printf(&[0x0723_0203, 0, 0, 9, 0, 0xffff_0000]));
    }
}
