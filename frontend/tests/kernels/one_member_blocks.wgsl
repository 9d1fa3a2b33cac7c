// A uniform struct of one member stands for that member, as the foreign
// runner reads naga's block of one member: `p` is the value 2.5, and a
// whole load of it is rebuilt from that member.
// inputs: {"dispatch": [4, 1, 1], "args": {"p": 2.5, "out": {"fill": 0.0, "len": 4}}}
// expect: {"buffers":{"out":[2.5,5.0,7.5,10.0]},"printed":[]}
struct Scale { k: f32 }

@group(0) @binding(0) var<uniform> p: Scale;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
  let s = p;
  out[i] = f32(i + 1u) * s.k;
}
