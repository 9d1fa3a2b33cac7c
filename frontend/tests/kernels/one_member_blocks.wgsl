// A bound struct of one member stands for that member, as the foreign
// runner reads naga's block around it: the uniform `p` is the value 2.5
// (a whole load of it rebuilt from that member), the storage counter `c`
// a one-element buffer of `n`. Any other struct is its member list, as
// each element of `items` is `[v]`.
// inputs: {"dispatch": [4, 1, 1], "args": {"p": 2.5, "c": [10], "items": [[1.0], [-2.0], [3.0], [-4.0]], "out": {"fill": 0.0, "len": 4}}}
// expect: {"buffers":{"c":[12],"items":[[2.0],[-2.0],[6.0],[-4.0]],"out":[2.5,5.0,7.5,10.0]},"printed":[]}
struct Scale { k: f32 }
struct Counter { n: atomic<u32> }
struct Item { v: f32 }

@group(0) @binding(0) var<uniform> p: Scale;
@group(0) @binding(1) var<storage, read_write> c: Counter;
@group(0) @binding(2) var<storage, read_write> items: array<Item>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
  let s = p;
  out[i] = f32(i + 1u) * s.k;
  if items[i].v > 0.0 {
    atomicAdd(&c.n, 1u);
    items[i] = Item(items[i].v * 2.0);
  }
}
