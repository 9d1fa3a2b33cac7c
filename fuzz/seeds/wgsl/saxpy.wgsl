// Twin of tests/corpus/saxpy.xir: y = a * x + y over the first
// arrayLength(&x) elements; threads past the end do nothing. The multiply and
// the add are separate operations (two roundings in the XIR kernel).
@group(0) @binding(0) var<uniform> a: f32;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = arrayLength(&x);
    if i < n {
        let ax = a * x[i];
        y[i] = ax + y[i];
    }
}
