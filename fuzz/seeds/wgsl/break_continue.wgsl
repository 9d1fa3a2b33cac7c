// Twin of tests/corpus/break_continue.xir: invocation t scans row t of a 4x16
// table: it skips every column whose index is a multiple of 3 (continue),
// stops at the sentinel 0xffffffff (break), and sums the rest. sums[t] is
// the sum, visited[t] the number of columns examined.
@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read_write> visited: array<u32>;

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let row = t * 16u;
    var sum = 0u;
    var seen = 0u;
    for (var i = 0u; i < 16u; i++) {
        seen += 1u;
        let v = table[row + i];
        if v == 0xffffffffu {
            break;
        }
        if i % 3u == 0u {
            continue;
        }
        sum += v;
    }
    sums[t] = sum;
    visited[t] = seen;
}
