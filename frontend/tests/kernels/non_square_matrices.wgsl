// Non-square matrices, held as their columns (an array of vectors, WGSL's
// layout): a uniform mat2x3 applied to points, transposes, products of
// every shape (a square one from two non-square), scalar products, sums,
// v * M, and a column's lane written through a local copy.
// inputs: {"dispatch": [4, 1, 1], "args": {"xf": [[[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]], [0.5, 0.25, 1.0]], "pts": [[1.0, 2.0], [-1.0, 0.5], [3.0, 0.0], [2.0, -2.0]], "out": {"fill": [0.0, 0.0, 0.0], "len": 4}, "mats": {"fill": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], "len": 4}, "dots": {"fill": [0.0, 0.0], "len": 4}}}
// expect: {"buffers":{"dots":[[12.0,7.25],[-1.0,0.25],[18.0,7.25],[9.0,1.25]],"mats":[[[9.5,4.0],[23.0,0.0],[-4.0,-3.5]],[[9.5,4.0],[23.0,1.0],[-4.0,-3.5]],[[9.5,4.0],[23.0,2.0],[-4.0,-3.5]],[[9.5,4.0],[23.0,3.0],[-4.0,-3.5]]],"out":[[1.5,4.25,-1.0],[-0.5,-1.25,0.5],[3.5,6.25,1.0],[2.5,2.25,3.0]],"pts":[[1.0,2.0],[-1.0,0.5],[3.0,0.0],[2.0,-2.0]]},"printed":[]}
struct Xf { m: mat2x3<f32>, bias: vec3<f32> }
@group(0) @binding(0) var<uniform> xf: Xf;
@group(0) @binding(1) var<storage, read> pts: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec3<f32>>;
@group(0) @binding(3) var<storage, read_write> mats: array<mat3x2<f32>>;
@group(0) @binding(4) var<storage, read_write> dots: array<vec2<f32>>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if i >= arrayLength(&pts) { return; }
  let m = xf.m;
  out[i] = m * pts[i] + xf.bias;
  let t = transpose(m);            // mat3x2
  let sq = t * m;                  // mat2x2 (square)
  let back = m * sq;               // mat2x3
  mats[i] = transpose(back) * 2.0 - t + t * 0.5;
  dots[i] = out[i] * m + sq[1];    // vec3 * mat2x3 -> vec2
  var c = mats[i];
  c[1].y = f32(i);
  mats[i] = c;
}
