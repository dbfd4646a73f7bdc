// Batched network evaluation: one workgroup per position.
//
// The host prepends the constants shared with Rust (see `shader_source` in src/evaluator.rs):
//   WORKGROUP_SIZE  invocations per workgroup (a power of two)
//   MAX_ACTIVE      most active features per perspective
//   NUM_FEATURES    input features per perspective (768 per king bucket)
//
// Integer only. The i16 weights are packed two to a u32 (neuron 2k in the low half, 2k+1 in
// the high half) and sign-extended here, so a thread works on a pair of neurons and one word
// load serves both. Accumulators are summed exactly in i32 (at most 33 terms of 16 bits) and
// then wrapped to i16, which equals the CPU's wrapping i16 additions because wrapping addition
// is associative. The output sum wraps in i32 like Rust's wrapping_add/wrapping_mul: WGSL
// integer arithmetic wraps at run time, and the reduction order does not matter for the same
// reason.

struct Params {
    // Positions in this dispatch (one workgroup each).
    positions: u32,
    // Hidden size / 2: words per feature row, neuron pairs per perspective.
    half_hidden: u32,
    // Word offset of the packed feature indices in `input` (after the 2 * positions + 1 bounds).
    features_base: u32,
    qa: i32,
    // SCALE / (QA * QB) as a reduced fraction (chess_nn's Network::output_ratio): the final
    // divisor and multiplier.
    out_div: i32,
    out_mul: i32,
    // Output buckets B (1 for a version-1 network).
    buckets: u32,
    _pad: u32,
}

// [feature * half_hidden + pair]: feature-transformer weights, two i16 per word.
@group(0) @binding(0) var<storage, read> ft_weights: array<u32>;
// [0, half_hidden): feature-transformer biases, two i16 per word; then for each bucket b,
// from half_hidden * (1 + 2b): half_hidden words of output weights for the side to move's
// accumulator, then half_hidden for the other side's, two i16 per word; then, from
// half_hidden * (1 + 2B), the B output biases, one i32 per word.
@group(0) @binding(1) var<storage, read> head: array<u32>;
// [0, 2 * positions + 1): bounds. Position p's side-to-move features are the indices
// [bounds[2p], bounds[2p+1]), the other side's [bounds[2p+1], bounds[2p+2]).
// Then, from features_base, the u16 feature indices packed two to a word (low half first).
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read_write> scores: array<i32>;

// Active features of this workgroup's position: [0, MAX_ACTIVE) side to move,
// [MAX_ACTIVE, 2 * MAX_ACTIVE) the other side.
var<workgroup> features_wg: array<u32, 2u * MAX_ACTIVE>;
var<workgroup> partial: array<i32, WORKGROUP_SIZE>;

fn low_i16(word: u32) -> i32 {
    return bitcast<i32>(word << 16u) >> 16u;
}

fn high_i16(word: u32) -> i32 {
    return bitcast<i32>(word) >> 16u;
}

// Two's-complement wrap of an i32 to the i16 range: keep the low 16 bits, sign-extend.
fn wrap_i16(x: i32) -> i32 {
    return bitcast<i32>(bitcast<u32>(x) << 16u) >> 16u;
}

fn feature_index(i: u32) -> u32 {
    let word = input[params.features_base + (i >> 1u)];
    return (word >> ((i & 1u) * 16u)) & 0xFFFFu;
}

// Clipped ReLU squared, times the weight: (c * w) * c with c = clamp(a, 0, QA), wrapping.
fn screlu(a: i32, w: i32) -> i32 {
    let c = clamp(a, 0, params.qa);
    return (c * w) * c;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn evaluate(
    @builtin(workgroup_id) workgroup: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let pos = workgroup.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if pos >= params.positions {
        return;
    }

    let stm_start = input[2u * pos];
    let other_start = input[2u * pos + 1u];
    let end = input[2u * pos + 2u];
    let stm_count = min(other_start - stm_start, MAX_ACTIVE);
    let other_count = min(end - other_start, MAX_ACTIVE);

    if lid < stm_count {
        features_wg[lid] = feature_index(stm_start + lid);
    } else if lid >= MAX_ACTIVE && lid - MAX_ACTIVE < other_count {
        features_wg[lid] = feature_index(other_start + lid - MAX_ACTIVE);
    }
    workgroupBarrier();

    let half_h = params.half_hidden;
    // The output bucket, from the number of pieces (one side-to-move feature each), as
    // chess_nn::output_bucket: (clamp(pieces, 2, 32) - 2) * B / 31.
    let bucket = (clamp(other_start - stm_start, 2u, 32u) - 2u) * params.buckets / 31u;
    let out_base = half_h * (1u + 2u * bucket);
    var sum = 0i;
    for (var pair = lid; pair < half_h; pair += WORKGROUP_SIZE) {
        let bias = head[pair];
        var stm_lo = low_i16(bias);
        var stm_hi = high_i16(bias);
        var other_lo = stm_lo;
        var other_hi = stm_hi;
        for (var i = 0u; i < stm_count; i++) {
            let f = features_wg[i];
            if f < NUM_FEATURES {
                let w = ft_weights[f * half_h + pair];
                stm_lo += low_i16(w);
                stm_hi += high_i16(w);
            }
        }
        for (var i = 0u; i < other_count; i++) {
            let f = features_wg[MAX_ACTIVE + i];
            if f < NUM_FEATURES {
                let w = ft_weights[f * half_h + pair];
                other_lo += low_i16(w);
                other_hi += high_i16(w);
            }
        }
        let w_stm = head[out_base + pair];
        let w_other = head[out_base + half_h + pair];
        sum += screlu(wrap_i16(stm_lo), low_i16(w_stm));
        sum += screlu(wrap_i16(stm_hi), high_i16(w_stm));
        sum += screlu(wrap_i16(other_lo), low_i16(w_other));
        sum += screlu(wrap_i16(other_hi), high_i16(w_other));
    }

    partial[lid] = sum;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride >>= 1u) {
        if lid < stride {
            partial[lid] += partial[lid + stride];
        }
        workgroupBarrier();
    }

    if lid == 0u {
        // i32 division truncates toward zero, as in Rust.
        let out_bias = bitcast<i32>(head[half_h * (1u + 2u * params.buckets) + bucket]);
        scores[pos] = (partial[0] / params.qa + out_bias) * params.out_mul / params.out_div;
    }
}
