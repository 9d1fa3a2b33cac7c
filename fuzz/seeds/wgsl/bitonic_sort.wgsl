// Twin of tests/corpus/bitonic_sort.xir: bitonic sort of 64 values in one
// workgroup: stages k = 2, 4, ..., 64 and steps j = k/2, ..., 1, each step a
// compare-exchange between invocation t and t ^ j followed by a barrier.
// Sorts ascending in place.
@group(0) @binding(0) var<storage, read_write> data: array<u32>;

var<workgroup> sh: array<u32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let tid = lid.x;
    sh[tid] = data[tid];
    workgroupBarrier();
    for (var k = 2u; k <= 64u; k = k << 1u) {
        for (var j = k >> 1u; j > 0u; j = j >> 1u) {
            let partner = tid ^ j;
            if partner > tid {
                // The lower invocation of each pair owns both slots this step.
                let ascending = (tid & k) == 0u;
                let a = sh[tid];
                let b = sh[partner];
                let gtab = a > b;
                let ltab = a < b;
                if select(ltab, gtab, ascending) {
                    sh[tid] = b;
                    sh[partner] = a;
                }
            }
            workgroupBarrier();
        }
    }
    data[tid] = sh[tid];
}
