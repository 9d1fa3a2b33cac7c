// Twin of tests/corpus/atomics.xir: every atomic read-modify-write on a
// storage array of atomic<u32> counters; the final values do not depend on
// the order invocations run in.
//   c[0] += 1 per invocation       c[1] = max of invocation ids
//   c[2] = min of (1000 - id)      c[3] |= 1 << (id % 32)
//   c[4] ^= 1000 - id              c[5] &= ~(1 << (id % 29)), starting all-ones
//   c[6] -= 2 per invocation       c[7] += 1 per invocation, by a compare-exchange retry loop
//   c[8] = 7 by exchange           c[9] += what each exchange saw (0 once, 7 after)
//   c[10] += 1 per invocation after the exchange
//
// WGSL's only compare-exchange is atomicCompareExchangeWeak, which may fail
// spuriously with old_value == the comparand; the retry loop therefore tests
// `exchanged` (the XIR kernel's strong compare-exchange tests old == seen,
// which is the same thing there).
@group(0) @binding(0) var<storage, read_write> c: array<atomic<u32>>;

@compute @workgroup_size(32, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = gid.x;
    atomicAdd(&c[0], 1u);
    atomicMax(&c[1], id);
    let inv = 1000u - id;
    atomicMin(&c[2], inv);
    let mask = 1u << (id & 31u);
    atomicOr(&c[3], mask);
    atomicXor(&c[4], inv);
    let mask5 = 1u << (id % 29u);
    atomicAnd(&c[5], ~mask5);
    atomicSub(&c[6], 2u);
    loop {
        // An atomic read (adding 0): a plain load would race.
        let seen = atomicAdd(&c[7], 0u);
        let r = atomicCompareExchangeWeak(&c[7], seen, seen + 1u);
        if r.exchanged {
            break;
        }
    }
    let prev = atomicExchange(&c[8], 7u);
    atomicAdd(&c[9], prev);
    atomicAdd(&c[10], 1u);
}
