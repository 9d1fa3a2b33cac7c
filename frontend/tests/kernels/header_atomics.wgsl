// A storage struct with atomics beside its runtime array: a total and a
// maximum in the header, the bins after them; a helper reaches the header
// and the bins through the struct (each member a buffer of its own, passed
// to the helper as its own parameter). `arrayLength` of the bins is the
// bins' buffer length.
// inputs: {"dispatch": [64, 1, 1], "args": {"values": [3, 17, 4, 9, 0, 22, 8, 15, 1, 30, 12, 7, 5, 26, 19, 2, 11, 6, 28, 13, 24, 10, 16, 21, 14, 27, 18, 29, 20, 23, 25, 31, 3, 17, 4, 9, 0, 22, 8, 15, 1, 30, 12, 7, 5, 26, 19, 2, 11, 6, 28, 13, 24, 10, 16, 21, 14, 27, 18, 29, 20, 23, 25, 31], "hist.total": [100], "hist.largest": [0], "hist.bins": {"fill": 0, "len": 4}}}
// expect: {"buffers":{"hist.bins":[16,16,16,16],"hist.largest":[31],"hist.total":[164],"values":[3,17,4,9,0,22,8,15,1,30,12,7,5,26,19,2,11,6,28,13,24,10,16,21,14,27,18,29,20,23,25,31,3,17,4,9,0,22,8,15,1,30,12,7,5,26,19,2,11,6,28,13,24,10,16,21,14,27,18,29,20,23,25,31]},"printed":[]}
struct Histogram {
  total : atomic<u32>,
  largest : atomic<u32>,
  bins : array<atomic<u32>>,
}

@group(0) @binding(0) var<storage, read> values : array<u32>;
@group(0) @binding(1) var<storage, read_write> hist : Histogram;

fn count(v : u32) {
  let bin = v * arrayLength(&hist.bins) / 32u;
  atomicAdd(&hist.bins[bin], 1u);
  atomicMax(&hist.largest, v);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id : vec3u) {
  if (id.x < arrayLength(&values)) {
    count(values[id.x]);
    atomicAdd(&hist.total, 1u);
  }
}
