// Twin of tests/corpus/mandelbrot.xir: escape-time Mandelbrot over a 16x16
// grid covering [-2, 1) x [-1.5, 1.5). out[y * width + x] = the number of
// iterations before |z|^2 > 4, at most max_iter. The XIR kernel's
// $dispatch_size.x is the dispatch width in invocations: here
// num_workgroups.x * 8. The grid step is an `override` whose default is the
// XIR kernel's constant.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> max_iter: u32;

override step_size: f32 = 0.1875;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let px = gid.x;
    let py = gid.y;
    let width = groups.x * 8u;
    let sx = f32(px) * step_size;
    let cr = sx - 2.0;
    let sy = f32(py) * step_size;
    let ci = sy - 1.5;
    var zr = 0.0;
    var zi = 0.0;
    var n = 0u;
    // The XIR loop tests its condition before each iteration (prepare) and
    // counts in its update block: `loop` with the test first and `continuing`.
    loop {
        if n >= max_iter {
            break;
        }
        let aa = zr * zr;
        let bb = zi * zi;
        let mag = aa + bb;
        if mag > 4.0 {
            break;
        }
        // z = z^2 + c, every operation separately rounded.
        let ab = zr * zi;
        let ab2 = ab + ab;
        let ni = ab2 + ci;
        let d = aa - bb;
        let nr = d + cr;
        zr = nr;
        zi = ni;
        continuing {
            n = n + 1u;
        }
    }
    out[py * width + px] = n;
}
