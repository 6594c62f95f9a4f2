//! `warpsafe::warp`'s raw collectives on the GPU against CPU models of the PTX
//! instructions, with the test kernels of `tests/kernels/warp`.
//!
//! Every test runs on the CPU emulator and, when present, the GPU. Every collective runs in full warps and divergently (odd lanes, even lanes, a prefix,
//! one lane, random masks chosen here and passed in; only the lanes of the mask call it),
//! in 1-D, 2-D and 3-D blocks whose size is not a multiple of 32 (the masks never name a
//! lane the last, shorter warp lacks). Every output buffer is filled with a poison value
//! first and every element is checked: members against the model, the others still
//! poison. Shuffles move bits, so values are compared byte for byte.
//!
//! `redux.sync` and `elect.sync` run from the sm_70 PTX (the shuffle/ballot fallbacks)
//! and from the sm_80/sm_90 PTX (the hardware instructions) on the same GPU; a hardware
//! variant the device cannot run is skipped with a visible message. The emulator runs the
//! kernels once, with smaller shapes (every kind of shape still: full warps, short last
//! warps, 1-D, 2-D and 3-D blocks, one thread), so the emulated suite stays fast.
//!
//! Without a GPU each test prints `skipped: no CUDA device` for its GPU half.

use std::ffi::c_void;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use warp_test_kernels as k;
use warpsafe::kernel::UntypedKernel as Kernel;
use warpsafe_host::{kernel_args, Device, DeviceBuffer, LaunchConfig, Module};
use warpsafe_tests::{common_modules, modules, on_gpu, test_devices};

/// The poison byte every output buffer starts filled with.
const POISON: u8 = 0xA5;
/// A `u32` of poison bytes.
const POISON_U32: u32 = u32::from_ne_bytes([POISON; 4]);

// ---------------------------------------------------------------------------------------
// Geometry.
// ---------------------------------------------------------------------------------------

/// A launch shape, and how its threads are packed into warps (as in the kernels: thread
/// `t = block * block_threads + linear`, warp `w = block * warps_per_block + linear / 32`).
#[derive(Clone, Copy, Debug)]
struct Shape {
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
}

impl Shape {
    const fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Shape {
        Shape { grid, block }
    }
    fn block_threads(&self) -> usize {
        (self.block.0 * self.block.1 * self.block.2) as usize
    }
    fn blocks(&self) -> usize {
        (self.grid.0 * self.grid.1 * self.grid.2) as usize
    }
    fn threads(&self) -> usize {
        self.blocks() * self.block_threads()
    }
    fn warps_per_block(&self) -> usize {
        self.block_threads().div_ceil(32)
    }
    fn warps(&self) -> usize {
        self.blocks() * self.warps_per_block()
    }
    /// The lanes warp `w` has: all 32, except in the last warp of a block whose size is
    /// not a multiple of 32.
    fn existing(&self, w: usize) -> u32 {
        let lanes = (self.block_threads() - 32 * (w % self.warps_per_block())).min(32);
        if lanes == 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        }
    }
    /// The thread index of lane `lane` of warp `w`.
    fn thread(&self, w: usize, lane: u32) -> usize {
        (w / self.warps_per_block()) * self.block_threads()
            + (w % self.warps_per_block()) * 32
            + lane as usize
    }
    fn config(&self) -> LaunchConfig {
        LaunchConfig { grid: self.grid, block: self.block, shared_mem_bytes: 0 }
    }
}

/// Full warps only (block sizes a multiple of 32), 1-D and 2-D.
const FULL_SHAPES: [Shape; 2] = [Shape::new((4, 1, 1), (256, 1, 1)), Shape::new((2, 3, 1), (16, 4, 1))];

/// [`FULL_SHAPES`] for the emulator: the same kinds, fewer threads.
const EMULATOR_FULL_SHAPES: [Shape; 2] =
    [Shape::new((2, 1, 1), (64, 1, 1)), Shape::new((1, 2, 1), (16, 4, 1))];

/// Every kind of shape: full warps, and 1-D, 2-D and 3-D blocks with a short last warp.
const SHAPES: [Shape; 6] = [
    Shape::new((4, 1, 1), (256, 1, 1)),
    Shape::new((3, 1, 1), (200, 1, 1)),
    Shape::new((2, 2, 1), (13, 7, 1)),
    Shape::new((3, 1, 1), (5, 3, 1)),
    Shape::new((2, 1, 1), (4, 3, 3)),
    Shape::new((1, 1, 1), (1, 1, 1)),
];

/// [`SHAPES`] for the emulator: every kind of shape, fewer threads.
const EMULATOR_SHAPES: [Shape; 6] = [
    Shape::new((3, 1, 1), (96, 1, 1)),
    Shape::new((2, 1, 1), (40, 1, 1)),
    Shape::new((1, 2, 1), (13, 7, 1)),
    Shape::new((3, 1, 1), (5, 3, 1)),
    Shape::new((1, 1, 1), (4, 3, 3)),
    Shape::new((1, 1, 1), (1, 1, 1)),
];

/// The shapes of every kind for `device`.
fn shapes(device: &Device) -> &'static [Shape] {
    if on_gpu(device) {
        &SHAPES
    } else {
        &EMULATOR_SHAPES
    }
}

/// The full-warp shapes for `device`.
fn full_shapes(device: &Device) -> &'static [Shape] {
    if on_gpu(device) {
        &FULL_SHAPES
    } else {
        &EMULATOR_FULL_SHAPES
    }
}

/// Whether `lane` is in `mask`.
fn member(mask: u32, lane: u32) -> bool {
    (mask >> lane) & 1 != 0
}

/// A random lane of the non-empty `mask`.
fn random_lane(mask: u32, rng: &mut StdRng) -> u32 {
    let lanes: Vec<u32> = (0..32).filter(|&l| member(mask, l)).collect();
    lanes[rng.gen_range(0..lanes.len())]
}

/// Mask pattern `kind % 6` within the lanes `existing`: all, odd lanes, even lanes, a
/// prefix, one lane, a random non-empty subset. (Odd or even lanes of a one-lane warp
/// may be empty: then no lane calls anything and all outputs must stay poison.)
fn pattern_mask(kind: usize, existing: u32, rng: &mut StdRng) -> u32 {
    match kind % 6 {
        0 => existing,
        1 => existing & 0xAAAA_AAAA,
        2 => existing & 0x5555_5555,
        3 => {
            let len = rng.gen_range(1..=32u32);
            existing & if len == 32 { u32::MAX } else { (1 << len) - 1 }
        }
        4 => 1 << random_lane(existing, rng),
        _ => (existing & rng.gen::<u32>()) | 1 << random_lane(existing, rng),
    }
}

/// One mask per warp of `shape`, cycling through the patterns (offset by `round`).
fn masks_for(shape: Shape, round: usize, rng: &mut StdRng) -> Vec<u32> {
    (0..shape.warps()).map(|w| pattern_mask(w + round, shape.existing(w), rng)).collect()
}

/// `(warp, lane, thread index)` of every lane of every warp that is in its mask.
fn members(shape: Shape, masks: &[u32]) -> impl Iterator<Item = (usize, u32, usize)> + '_ {
    (0..shape.warps()).flat_map(move |w| {
        (0..32).filter(move |&l| member(masks[w], l)).map(move |l| (w, l, shape.thread(w, l)))
    })
}

/// Whether thread `t` of `shape` is in the mask of its warp.
fn is_member(shape: Shape, masks: &[u32], t: usize) -> bool {
    let block = t / shape.block_threads();
    let linear = t % shape.block_threads();
    member(masks[block * shape.warps_per_block() + linear / 32], (linear % 32) as u32)
}

// ---------------------------------------------------------------------------------------
// Launching.
// ---------------------------------------------------------------------------------------

/// Launches `kernel` of `module` over `shape` on `device` and waits for it.
///
/// # Safety
/// `args` matches the kernel's parameters, and every buffer is as large as the kernel's
/// contract asks for `shape`.
unsafe fn launch(
    device: &Device,
    module: &Module,
    kernel: &'static Kernel,
    shape: Shape,
    args: &[*mut c_void],
) {
    let function = module.untyped_kernel(kernel).unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
    // SAFETY: forwarded from the caller.
    unsafe { device.launch_raw(&function, shape.config(), args) }
        .unwrap_or_else(|e| panic!("{} {shape:?}: {e}", kernel.name()));
}

fn upload<T: bytemuck::Pod>(device: &Device, values: &[T]) -> DeviceBuffer<T> {
    device.upload(values).unwrap()
}

/// A buffer of `len` poison bytes.
fn poisoned(device: &Device, len: usize) -> DeviceBuffer<u8> {
    upload(device, &vec![POISON; len])
}

/// A buffer of `len` poison `u32`s.
fn poisoned_u32(device: &Device, len: usize) -> DeviceBuffer<u32> {
    upload(device, &vec![POISON_U32; len])
}

// ---------------------------------------------------------------------------------------
// Shuffles.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idx,
    Up,
    Down,
    Xor,
}

/// The PTX ISA's model of `shfl.sync`: the lane that lane `lane` reads with lane argument
/// `b` and segment `width`, and the predicate. `c = ((32 - width) << 8) | clamp` with
/// clamp 0 for `up`, 31 otherwise; segmask = c[12:8], bval = b[4:0];
/// `maxLane = (lane & segmask) | (clamp & !segmask)`, `minLane = lane & segmask`;
/// up: `j = lane - bval`, in range if `j >= maxLane`; down: `j = lane + bval`,
/// `j <= maxLane`; bfly: `j = lane ^ bval`, `j <= maxLane`; idx:
/// `j = minLane | (bval & !segmask)`, `j <= maxLane`. Out of range: the lane's own value.
fn shuffle_source(mode: Mode, lane: u32, b: u32, width: u32) -> (u32, bool) {
    let segmask = (32 - width) & 31;
    let clamp = if mode == Mode::Up { 0 } else { 31 };
    let b = b & 31;
    let max_lane = ((lane & segmask) | (clamp & !segmask)) as i32;
    let min_lane = lane & segmask;
    let (j, in_range) = match mode {
        Mode::Up => {
            let j = lane as i32 - b as i32;
            (j, j >= max_lane)
        }
        Mode::Down => {
            let j = (lane + b) as i32;
            (j, j <= max_lane)
        }
        Mode::Xor => {
            let j = (lane ^ b) as i32;
            (j, j <= max_lane)
        }
        Mode::Idx => {
            let j = (min_lane | (b & !segmask)) as i32;
            (j, j <= max_lane)
        }
    };
    if in_range {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

#[test]
fn shuffle_model_agrees_with_cuda_documentation() {
    // The model above, checked against what the CUDA programming guide says of
    // __shfl_*_sync with a width (independent of any GPU).
    for width in [1u32, 2, 4, 8, 16, 32] {
        for lane in 0..32u32 {
            let start = lane - lane % width;
            for b in 0..32u32 {
                // idx: srcLane modulo width, within the lane's segment; always in range.
                assert_eq!(shuffle_source(Mode::Idx, lane, b, width), (start + b % width, true));
                // up: lane - delta if still in the segment, else the lane's own value.
                let up = if lane >= start + b { (lane - b, true) } else { (lane, false) };
                assert_eq!(shuffle_source(Mode::Up, lane, b, width), up);
                // down: lane + delta if still in the segment, else own.
                let down = if lane + b < start + width { (lane + b, true) } else { (lane, false) };
                assert_eq!(shuffle_source(Mode::Down, lane, b, width), down);
                // xor: later segments are out of reach, earlier ones are not.
                let xor = if (lane ^ b) < start + width { (lane ^ b, true) } else { (lane, false) };
                assert_eq!(shuffle_source(Mode::Xor, lane, b, width), xor);
            }
        }
    }
}

/// An element type of the shuffle kernels: its size, a generator, and its kernels in
/// [`Mode`] order (idx, up, down, xor).
struct Element {
    size: usize,
    generate: fn(&mut StdRng) -> Vec<u8>,
    kernels: [&'static Kernel; 4],
}

fn random_bytes(rng: &mut StdRng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.gen()).collect()
}

fn gen_u8(rng: &mut StdRng) -> Vec<u8> {
    random_bytes(rng, 1)
}
fn gen_i16(rng: &mut StdRng) -> Vec<u8> {
    let v: i16 = if rng.gen_bool(0.2) { i16::MIN } else { rng.gen() };
    v.to_ne_bytes().to_vec()
}
fn gen_u32(rng: &mut StdRng) -> Vec<u8> {
    random_bytes(rng, 4)
}
fn gen_i64(rng: &mut StdRng) -> Vec<u8> {
    random_bytes(rng, 8)
}
fn gen_u128(rng: &mut StdRng) -> Vec<u8> {
    random_bytes(rng, 16)
}
/// Random bits (any NaN payload included) or one of the special values.
fn gen_f32(rng: &mut StdRng) -> Vec<u8> {
    let specials =
        [f32::NAN.to_bits() | 0x1234, 0x7f80_0001, (-0.0f32).to_bits(), f32::INFINITY.to_bits(), 1];
    let bits = if rng.gen_bool(0.3) { specials[rng.gen_range(0..specials.len())] } else { rng.gen() };
    bits.to_ne_bytes().to_vec()
}
fn gen_f64(rng: &mut StdRng) -> Vec<u8> {
    let specials = [
        f64::NAN.to_bits() | 0xdead_beef,
        0x7ff0_0000_0000_0001,
        (-0.0f64).to_bits(),
        f64::NEG_INFINITY.to_bits(),
        1,
    ];
    let bits = if rng.gen_bool(0.3) { specials[rng.gen_range(0..specials.len())] } else { rng.gen() };
    bits.to_ne_bytes().to_vec()
}
/// The kernels' `Tagged12 { value: i16, tag: u8, flags: u8, index: i32, weight: f32 }`,
/// with the value 0x8000 of CCCL #10958 often.
fn gen_tagged12(rng: &mut StdRng) -> Vec<u8> {
    let mut bytes = random_bytes(rng, 12);
    if rng.gen_bool(0.3) {
        bytes[..2].copy_from_slice(&i16::MIN.to_ne_bytes());
    }
    bytes
}

static ELEMENTS: [Element; 8] = [
    Element {
        size: 1,
        generate: gen_u8,
        kernels: [
            k::warp_shfl_idx_u8.untyped(),
            k::warp_shfl_up_u8.untyped(),
            k::warp_shfl_down_u8.untyped(),
            k::warp_shfl_xor_u8.untyped(),
        ],
    },
    Element {
        size: 2,
        generate: gen_i16,
        kernels: [
            k::warp_shfl_idx_i16.untyped(),
            k::warp_shfl_up_i16.untyped(),
            k::warp_shfl_down_i16.untyped(),
            k::warp_shfl_xor_i16.untyped(),
        ],
    },
    Element {
        size: 4,
        generate: gen_u32,
        kernels: [
            k::warp_shfl_idx_u32.untyped(),
            k::warp_shfl_up_u32.untyped(),
            k::warp_shfl_down_u32.untyped(),
            k::warp_shfl_xor_u32.untyped(),
        ],
    },
    Element {
        size: 8,
        generate: gen_i64,
        kernels: [
            k::warp_shfl_idx_i64.untyped(),
            k::warp_shfl_up_i64.untyped(),
            k::warp_shfl_down_i64.untyped(),
            k::warp_shfl_xor_i64.untyped(),
        ],
    },
    Element {
        size: 16,
        generate: gen_u128,
        kernels: [
            k::warp_shfl_idx_u128.untyped(),
            k::warp_shfl_up_u128.untyped(),
            k::warp_shfl_down_u128.untyped(),
            k::warp_shfl_xor_u128.untyped(),
        ],
    },
    Element {
        size: 4,
        generate: gen_f32,
        kernels: [
            k::warp_shfl_idx_f32.untyped(),
            k::warp_shfl_up_f32.untyped(),
            k::warp_shfl_down_f32.untyped(),
            k::warp_shfl_xor_f32.untyped(),
        ],
    },
    Element {
        size: 8,
        generate: gen_f64,
        kernels: [
            k::warp_shfl_idx_f64.untyped(),
            k::warp_shfl_up_f64.untyped(),
            k::warp_shfl_down_f64.untyped(),
            k::warp_shfl_xor_f64.untyped(),
        ],
    },
    Element {
        size: 12,
        generate: gen_tagged12,
        kernels: [
            k::warp_shfl_idx_tagged12.untyped(),
            k::warp_shfl_up_tagged12.untyped(),
            k::warp_shfl_down_tagged12.untyped(),
            k::warp_shfl_xor_tagged12.untyped(),
        ],
    },
];

const WIDTHS: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// A lane argument for `lane` whose source lane is in `mask` (or out of range, which reads
/// the lane itself): `preferred` when that works, else a random one that does (0 always
/// works for up/down/xor, `lane % width` for idx).
fn lane_argument(mode: Mode, lane: u32, mask: u32, width: u32, preferred: u32, rng: &mut StdRng) -> u32 {
    let valid = |b: u32| member(mask, shuffle_source(mode, lane, b, width).0);
    if valid(preferred) {
        return preferred;
    }
    loop {
        let b = rng.gen_range(0..32);
        if valid(b) {
            return b;
        }
    }
}

/// Runs the shuffle kernels of `mode` for every element type, shape, mask pattern and
/// width, on sm_70 and the device's own PTX, against [`shuffle_source`].
fn check_shuffles(device: &Device, test: &str, mode: Mode, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    // The emulator's shapes have fewer warps: more rounds cover every width and pattern.
    let rounds = if on_gpu(device) { 3 } else { 6 };
    for (arch, module) in common_modules(device, "warp", test) {
        for element in &ELEMENTS {
            let kernel = element.kernels[mode as usize];
            let size = element.size;
            for &shape in shapes(device) {
                for round in 0..rounds {
                    let n = shape.threads();
                    let masks = masks_for(shape, round, &mut rng);
                    let widths: Vec<u32> =
                        (0..shape.warps()).map(|w| WIDTHS[(w / 6 + round) % WIDTHS.len()]).collect();
                    // Even warps: one lane argument for the whole warp where it is valid
                    // (the usual use); odd warps: a random one per lane.
                    let mut args = vec![u32::MAX; n];
                    for w in 0..shape.warps() {
                        let uniform = rng.gen_range(0..32);
                        for lane in (0..32).filter(|&l| member(masks[w], l)) {
                            let preferred = if w % 2 == 0 { uniform } else { rng.gen_range(0..32) };
                            args[shape.thread(w, lane)] =
                                lane_argument(mode, lane, masks[w], widths[w], preferred, &mut rng);
                        }
                    }
                    let input: Vec<u8> = (0..n).flat_map(|_| (element.generate)(&mut rng)).collect();

                    let (d_masks, d_widths, d_args, d_input) = (
                        upload(device, &masks),
                        upload(device, &widths),
                        upload(device, &args),
                        upload(device, &input),
                    );
                    let (d_out, d_out_p, d_pred) =
                        (poisoned(device, n * size), poisoned(device, n * size), poisoned_u32(device, n));
                    let mut p_masks = d_masks.device_address();
                    let mut p_widths = d_widths.device_address();
                    let mut p_args = d_args.device_address();
                    let mut p_input = d_input.device_address();
                    let mut p_out = d_out.device_address();
                    let mut p_out_p = d_out_p.device_address();
                    let mut p_pred = d_pred.device_address();
                    let params = kernel_args![p_masks, p_widths, p_args, p_input, p_out, p_out_p, p_pred];
                    // SAFETY: the parameters of the shuffle kernels, sized for `shape`;
                    // masks name existing lanes, widths are powers of two, and every
                    // lane argument was chosen by `lane_argument`.
                    unsafe { launch(device, &module, kernel, shape, &params) };

                    let (out, out_p, pred) =
                        (d_out.download().unwrap(), d_out_p.download().unwrap(), d_pred.download().unwrap());
                    let mut expected = vec![POISON; n * size];
                    let mut expected_pred = vec![POISON_U32; n];
                    for (w, lane, t) in members(shape, &masks) {
                        let (src, in_range) = shuffle_source(mode, lane, args[t], widths[w]);
                        let s = shape.thread(w, src);
                        expected[t * size..(t + 1) * size].copy_from_slice(&input[s * size..(s + 1) * size]);
                        expected_pred[t] = in_range as u32;
                    }
                    for t in 0..n {
                        let what = || {
                            let w = (t / shape.block_threads()) * shape.warps_per_block()
                                + (t % shape.block_threads()) / 32;
                            format!(
                                "{arch} {} {shape:?} round {round} thread {t} (warp {w}, mask {:#010x}, \
                                 width {}, arg {})",
                                kernel.name(),
                                masks[w],
                                widths[w],
                                args[t]
                            )
                        };
                        let range = t * size..(t + 1) * size;
                        assert_eq!(out[range.clone()], expected[range.clone()], "plain: {}", what());
                        assert_eq!(out_p[range.clone()], expected[range], "_p value: {}", what());
                        assert_eq!(pred[t], expected_pred[t], "_p predicate: {}", what());
                    }
                }
            }
        }
    }
}

#[test]
fn shfl_idx_moves_every_type_bit_for_bit() {
    let test = "shfl_idx_moves_every_type_bit_for_bit";
    for device in test_devices(test) {
        check_shuffles(&device, test, Mode::Idx, 0x5eed_1001);
    }
}

#[test]
fn shfl_up_moves_every_type_bit_for_bit() {
    let test = "shfl_up_moves_every_type_bit_for_bit";
    for device in test_devices(test) {
        check_shuffles(&device, test, Mode::Up, 0x5eed_1002);
    }
}

#[test]
fn shfl_down_moves_every_type_bit_for_bit() {
    let test = "shfl_down_moves_every_type_bit_for_bit";
    for device in test_devices(test) {
        check_shuffles(&device, test, Mode::Down, 0x5eed_1003);
    }
}

#[test]
fn shfl_xor_moves_every_type_bit_for_bit() {
    let test = "shfl_xor_moves_every_type_bit_for_bit";
    for device in test_devices(test) {
        check_shuffles(&device, test, Mode::Xor, 0x5eed_1004);
    }
}

#[test]
fn shuffles_with_a_compile_time_width_match_the_model() {
    let test = "shuffles_with_a_compile_time_width_match_the_model";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_1005);
        for (arch, module) in common_modules(&device, "warp", test) {
            for &shape in full_shapes(&device) {
                let n = shape.threads();
                let data: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
                let (d_data, d_out) = (upload(&device, &data), poisoned_u32(&device, 4 * n));
                let mut p_data = d_data.device_address();
                let mut p_out = d_out.device_address();
                let params = kernel_args![p_data, p_out];
                // SAFETY: (data, out) with n and 4n elements; blocks are a multiple of 32.
                unsafe { launch(&device, &module, &k::warp_shfl_width8, shape, &params) };
                let out = d_out.download().unwrap();
                let cases = [(Mode::Idx, 3), (Mode::Up, 1), (Mode::Down, 2), (Mode::Xor, 4)];
                for w in 0..shape.warps() {
                    for lane in 0..32 {
                        let t = shape.thread(w, lane);
                        for (k, (mode, b)) in cases.into_iter().enumerate() {
                            let src = shuffle_source(mode, lane, b, 8).0;
                            assert_eq!(
                                out[4 * t + k],
                                data[shape.thread(w, src)],
                                "{arch} {shape:?} t {t} {mode:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Votes, active mask, lane masks.
// ---------------------------------------------------------------------------------------

#[test]
fn votes_match_the_model_and_active_mask_stays_within_the_branch() {
    let test = "votes_match_the_model_and_active_mask_stays_within_the_branch";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_2001);
        for (arch, module) in common_modules(&device, "warp", test) {
            for &shape in shapes(&device) {
                for round in 0..4 {
                    let n = shape.threads();
                    let masks = masks_for(shape, round, &mut rng);
                    // Per warp: random predicates, all true, all false, or one true lane.
                    let mut predicates = vec![0u32; n];
                    for w in 0..shape.warps() {
                        let kind = (w / 6 + round) % 4;
                        let one = random_lane(shape.existing(w), &mut rng);
                        for lane in 0..32 {
                            if member(shape.existing(w), lane) {
                                predicates[shape.thread(w, lane)] = match kind {
                                    0 => rng.gen_range(0..3),
                                    1 => 1,
                                    2 => 0,
                                    _ => (lane == one) as u32,
                                };
                            }
                        }
                    }
                    let (d_masks, d_pred, d_out) =
                        (upload(&device, &masks), upload(&device, &predicates), poisoned_u32(&device, 5 * n));
                    let mut p_masks = d_masks.device_address();
                    let mut p_pred = d_pred.device_address();
                    let mut p_out = d_out.device_address();
                    let params = kernel_args![p_masks, p_pred, p_out];
                    // SAFETY: (masks, predicates, out) sized for `shape`; masks name existing lanes.
                    unsafe { launch(&device, &module, &k::warp_vote, shape, &params) };
                    let out = d_out.download().unwrap();
                    let mut expected = vec![POISON_U32; 5 * n];
                    for (w, _, t) in members(shape, &masks) {
                        let mask = masks[w];
                        let ballot = (0..32)
                            .filter(|&l| member(mask, l) && predicates[shape.thread(w, l)] != 0)
                            .fold(0u32, |b, l| b | 1 << l);
                        expected[5 * t..5 * t + 4].copy_from_slice(&[
                            ballot,
                            (ballot != 0) as u32,
                            (ballot == mask) as u32,
                            (ballot == 0 || ballot == mask) as u32,
                        ]);
                        // The active mask depends on scheduling; only its bounds are certain.
                        expected[5 * t + 4] = out[5 * t + 4];
                        let lane = (t % shape.block_threads() % 32) as u32;
                        let active = out[5 * t + 4];
                        assert!(
                            member(active, lane) && active & !mask == 0,
                            "{arch} {shape:?} t {t}: active mask {active:#x} outside mask {mask:#x}"
                        );
                    }
                    for t in 0..n {
                        assert_eq!(
                            out[5 * t..5 * t + 5],
                            expected[5 * t..5 * t + 5],
                            "{arch} {shape:?} round {round} t {t}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn lane_masks_match_each_lane() {
    let test = "lane_masks_match_each_lane";
    for device in test_devices(test) {
        for (arch, module) in common_modules(&device, "warp", test) {
            for &shape in shapes(&device) {
                let n = shape.threads();
                let d_out = poisoned_u32(&device, 6 * n);
                let mut p_out = d_out.device_address();
                let params = kernel_args![p_out];
                // SAFETY: one buffer of 6n elements.
                unsafe { launch(&device, &module, &k::warp_lanes, shape, &params) };
                let out = d_out.download().unwrap();
                for t in 0..n {
                    let lane = (t % shape.block_threads() % 32) as u32;
                    let eq = 1u32 << lane;
                    let expected = [lane, eq, eq - 1, eq | (eq - 1), !(eq | (eq - 1)), !(eq - 1)];
                    assert_eq!(out[6 * t..6 * t + 6], expected, "{arch} {shape:?} t {t}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Match.
// ---------------------------------------------------------------------------------------

/// `(kernel, bytes, a pool of values as bit patterns)`: values differing only in
/// their sign bit, only in their high 32 bits (for 64-bit types), and floats that compare
/// equal but differ in bits (0.0 and -0.0), or compare unequal but have equal bits (NaN).
fn match_pools() -> Vec<(&'static Kernel, usize, Vec<u64>)> {
    let f32s = [0.0f32, -0.0, 1.5, f32::NAN].map(|f| f.to_bits() as u64).to_vec();
    let f64s = [0.0f64, -0.0, 1.5, f64::NAN].map(f64::to_bits).to_vec();
    vec![
        (&k::warp_match_u32, 4, vec![7, 8, 0x8000_0007, u32::MAX as u64]),
        (&k::warp_match_i32, 4, vec![(-1i32) as u32 as u64, 1, 0x7fff_ffff, 0x8000_0001]),
        (&k::warp_match_f32, 4, f32s),
        (&k::warp_match_u64, 8, vec![7, 7 | 1 << 32, 1 << 63, u64::MAX]),
        (&k::warp_match_i64, 8, vec![(-1i64) as u64, 0xffff_ffff, 1 << 40, 5]),
        (&k::warp_match_f64, 8, f64s),
    ]
}

#[test]
fn match_any_and_all_compare_bits() {
    let test = "match_any_and_all_compare_bits";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_3001);
        for (arch, module) in common_modules(&device, "warp", test) {
            for (kernel, size, pool) in match_pools() {
                for &shape in shapes(&device) {
                    for round in 0..3 {
                        let n = shape.threads();
                        let masks = masks_for(shape, round, &mut rng);
                        // Per warp: values from the pool, or (every third warp) one value.
                        let mut values = vec![0u64; n];
                        for w in 0..shape.warps() {
                            let same = pool[rng.gen_range(0..pool.len())];
                            for lane in 0..32 {
                                if member(shape.existing(w), lane) {
                                    values[shape.thread(w, lane)] = if (w + round) % 3 == 0 {
                                        same
                                    } else {
                                        pool[rng.gen_range(0..pool.len())]
                                    };
                                }
                            }
                        }
                        let bytes: Vec<u8> =
                            values.iter().flat_map(|v| v.to_ne_bytes()[..size].to_vec()).collect();
                        let (d_masks, d_input, d_out) =
                            (upload(&device, &masks), upload(&device, &bytes), poisoned_u32(&device, 3 * n));
                        let mut p_masks = d_masks.device_address();
                        let mut p_input = d_input.device_address();
                        let mut p_out = d_out.device_address();
                        let params = kernel_args![p_masks, p_input, p_out];
                        // SAFETY: (masks, input, out) sized for `shape`; masks name existing lanes.
                        unsafe { launch(&device, &module, kernel, shape, &params) };
                        let out = d_out.download().unwrap();
                        let mut expected = vec![POISON_U32; 3 * n];
                        for (w, _, t) in members(shape, &masks) {
                            let mask = masks[w];
                            let same = (0..32)
                                .filter(|&l| member(mask, l) && values[shape.thread(w, l)] == values[t])
                                .fold(0u32, |m, l| m | 1 << l);
                            let all = same == mask;
                            expected[3 * t..3 * t + 3].copy_from_slice(&[
                                same,
                                all as u32,
                                if all { mask } else { 0 },
                            ]);
                        }
                        for t in 0..n {
                            assert_eq!(
                                out[3 * t..3 * t + 3],
                                expected[3 * t..3 * t + 3],
                                "{arch} {} {shape:?} round {round} t {t}",
                                kernel.name()
                            );
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reductions (redux.sync and its fallback).
// ---------------------------------------------------------------------------------------

/// The eight reductions of `warp_redux` over `values`, in its output order.
fn reductions(values: &[u32]) -> [u32; 8] {
    let signed = || values.iter().map(|&v| v as i32);
    [
        values.iter().fold(0u32, |a, &v| a.wrapping_add(v)),
        values.iter().copied().min().unwrap(),
        values.iter().copied().max().unwrap(),
        signed().min().unwrap() as u32,
        signed().max().unwrap() as u32,
        values.iter().fold(u32::MAX, |a, &v| a & v),
        values.iter().fold(0, |a, &v| a | v),
        values.iter().fold(0, |a, &v| a ^ v),
    ]
}

#[test]
fn reductions_match_the_cpu_with_the_fallback_and_with_redux_sync() {
    let test = "reductions_match_the_cpu_with_the_fallback_and_with_redux_sync";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_4001);
        for (arch, module) in modules(&device, "warp", &[70, 80, 90], test) {
            for &shape in shapes(&device) {
                for round in 0..6 {
                    let n = shape.threads();
                    let masks = masks_for(shape, round, &mut rng);
                    let extremes = [0, 1, u32::MAX, i32::MIN as u32, i32::MAX as u32];
                    let input: Vec<u32> = (0..n)
                        .map(|_| {
                            if rng.gen_bool(0.2) {
                                extremes[rng.gen_range(0..extremes.len())]
                            } else {
                                rng.gen()
                            }
                        })
                        .collect();
                    let (d_masks, d_input, d_out) =
                        (upload(&device, &masks), upload(&device, &input), poisoned_u32(&device, 8 * n));
                    let mut p_masks = d_masks.device_address();
                    let mut p_input = d_input.device_address();
                    let mut p_out = d_out.device_address();
                    let params = kernel_args![p_masks, p_input, p_out];
                    // SAFETY: (masks, input, out) sized for `shape`; masks name existing lanes.
                    unsafe { launch(&device, &module, &k::warp_redux, shape, &params) };
                    let out = d_out.download().unwrap();
                    let mut expected = vec![POISON_U32; 8 * n];
                    for (w, _, t) in members(shape, &masks) {
                        let values: Vec<u32> = (0..32)
                            .filter(|&l| member(masks[w], l))
                            .map(|l| input[shape.thread(w, l)])
                            .collect();
                        expected[8 * t..8 * t + 8].copy_from_slice(&reductions(&values));
                    }
                    for t in 0..n {
                        assert_eq!(
                            out[8 * t..8 * t + 8],
                            expected[8 * t..8 * t + 8],
                            "{arch} {shape:?} round {round} t {t} (member: {})",
                            is_member(shape, &masks, t)
                        );
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Elect.
// ---------------------------------------------------------------------------------------

#[test]
fn elect_picks_exactly_one_lane_of_the_mask() {
    let test = "elect_picks_exactly_one_lane_of_the_mask";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_5001);
        for (arch, module) in modules(&device, "warp", &[70, 80, 90], test) {
            // Before sm_90 the fallback elects the lowest lane; elect.sync picks one, and so
            // does the emulator (by its seed).
            let lowest = arch == "sm_70" || arch == "sm_80";
            for &shape in shapes(&device) {
                for round in 0..6 {
                    let n = shape.threads();
                    let masks = masks_for(shape, round, &mut rng);

                    let (d_masks, d_out) = (upload(&device, &masks), poisoned_u32(&device, n));
                    let mut p_masks = d_masks.device_address();
                    let mut p_out = d_out.device_address();
                    let params = kernel_args![p_masks, p_out];
                    // SAFETY: (masks, out) sized for `shape`; masks name existing lanes.
                    unsafe { launch(&device, &module, &k::warp_elect, shape, &params) };
                    let out = d_out.download().unwrap();
                    for t in (0..n).filter(|&t| !is_member(shape, &masks, t)) {
                        assert_eq!(out[t], POISON_U32, "{arch} {shape:?} t {t} is not a member");
                    }
                    for w in (0..shape.warps()).filter(|&w| masks[w] != 0) {
                        let elected: Vec<u32> = (0..32)
                            .filter(|&l| member(masks[w], l))
                            .map(|l| out[shape.thread(w, l)])
                            .collect();
                        assert!(elected.iter().all(|&e| e <= 1), "{arch} {shape:?} warp {w}: {elected:?}");
                        assert_eq!(elected.iter().sum::<u32>(), 1, "{arch} {shape:?} warp {w}: {elected:?}");
                        if lowest {
                            assert_eq!(elected[0], 1, "{arch} {shape:?} warp {w}: not the lowest lane");
                        }
                    }

                    // One leader per round until every lane was elected once.
                    let d_rounds = poisoned_u32(&device, n);
                    let mut p_rounds = d_rounds.device_address();
                    let params = kernel_args![p_masks, p_rounds];
                    // SAFETY: (masks, out) sized for `shape`; masks name existing lanes.
                    unsafe { launch(&device, &module, &k::warp_elect_rounds, shape, &params) };
                    let rounds = d_rounds.download().unwrap();
                    for t in (0..n).filter(|&t| !is_member(shape, &masks, t)) {
                        assert_eq!(rounds[t], POISON_U32, "{arch} {shape:?} t {t} is not a member");
                    }
                    for w in (0..shape.warps()).filter(|&w| masks[w] != 0) {
                        let got: Vec<u32> = (0..32)
                            .filter(|&l| member(masks[w], l))
                            .map(|l| rounds[shape.thread(w, l)])
                            .collect();
                        let ranks: Vec<u32> = (0..got.len() as u32).collect();
                        if lowest {
                            assert_eq!(got, ranks, "{arch} {shape:?} warp {w}: rounds by rank");
                        } else {
                            let mut sorted = got.clone();
                            sorted.sort_unstable();
                            assert_eq!(sorted, ranks, "{arch} {shape:?} warp {w}: {got:?}");
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Independent thread scheduling: the CUDA programming guide's patterns, and a fixpoint.
// ---------------------------------------------------------------------------------------

#[test]
fn its_butterfly_sum_through_memory_with_sync_warp() {
    let test = "its_butterfly_sum_through_memory_with_sync_warp";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_6001);
        for (arch, module) in common_modules(&device, "warp", test) {
            for &shape in full_shapes(&device) {
                let n = shape.threads();
                let data: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
                let (d_data, d_scratch, d_out) =
                    (upload(&device, &data), poisoned_u32(&device, n), poisoned_u32(&device, n));
                let mut p_data = d_data.device_address();
                let mut p_scratch = d_scratch.device_address();
                let mut p_out = d_out.device_address();
                let params = kernel_args![p_data, p_scratch, p_out];
                // SAFETY: three buffers of n elements; blocks are a multiple of 32.
                unsafe { launch(&device, &module, &k::warp_its_butterfly, shape, &params) };
                let out = d_out.download().unwrap();
                for w in 0..shape.warps() {
                    let total = (0..32).fold(0u32, |s, l| s.wrapping_add(data[shape.thread(w, l)]));
                    for lane in 0..32 {
                        assert_eq!(
                            out[shape.thread(w, lane)],
                            total,
                            "{arch} {shape:?} warp {w} lane {lane}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn its_even_and_odd_lanes_shuffle_in_separate_branches() {
    let test = "its_even_and_odd_lanes_shuffle_in_separate_branches";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_6002);
        for (arch, module) in common_modules(&device, "warp", test) {
            for &shape in full_shapes(&device) {
                let n = shape.threads();
                let data: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
                let (d_data, d_out) = (upload(&device, &data), poisoned_u32(&device, n));
                let mut p_data = d_data.device_address();
                let mut p_out = d_out.device_address();
                let params = kernel_args![p_data, p_out];
                // SAFETY: two buffers of n elements; blocks are a multiple of 32.
                unsafe { launch(&device, &module, &k::warp_its_even_odd, shape, &params) };
                let out = d_out.download().unwrap();
                for w in 0..shape.warps() {
                    for lane in 0..32 {
                        let expected = data[shape.thread(w, lane ^ 2)];
                        assert_eq!(
                            out[shape.thread(w, lane)],
                            expected,
                            "{arch} {shape:?} warp {w} lane {lane}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn its_ballot_before_the_branch_gives_the_reduction_its_mask() {
    let test = "its_ballot_before_the_branch_gives_the_reduction_its_mask";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_6003);
        // The fallback (sm_70) and redux.sync (sm_80, sm_90).
        for (arch, module) in modules(&device, "warp", &[70, 80, 90], test) {
            let shape = Shape::new((3, 1, 1), (96, 1, 1));
            for len in [1u32, 5, 31, 32, 33, 100, 200, 287, 288] {
                let total = shape.threads();
                let data: Vec<u32> = (0..len).map(|_| rng.gen()).collect();
                let (d_data, d_out) = (upload(&device, &data), poisoned_u32(&device, total));
                let mut p_data = d_data.device_address();
                let mut n = len;
                let mut p_out = d_out.device_address();
                let params = kernel_args![p_data, n, p_out];
                // SAFETY: (data of len elements, len, out of one element per thread); 1-D
                // blocks of 96 threads.
                unsafe { launch(&device, &module, &k::warp_its_ballot_prefix, shape, &params) };
                let out = d_out.download().unwrap();
                for (i, &got) in out.iter().enumerate() {
                    let expected = if i < len as usize {
                        let start = i / 32 * 32;
                        data[start..(start + 32).min(len as usize)]
                            .iter()
                            .fold(0u32, |s, &v| s.wrapping_add(v))
                    } else {
                        POISON_U32
                    };
                    assert_eq!(got, expected, "{arch} len {len} i {i}");
                }
            }
        }
    }
}

/// The CPU model of `warp_fixpoint` for one warp: `(final labels, rounds)`.
fn fixpoint_model(mask: u32, labels: &[u32; 32], links: &[bool; 32]) -> ([u32; 32], u32) {
    let linked_right = |l: u32| l < 31 && member(mask, l) && member(mask, l + 1) && links[l as usize];
    let mut current = *labels;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut next = current;
        for l in (0..32).filter(|&l| member(mask, l)) {
            if l > 0 && linked_right(l - 1) {
                next[l as usize] = next[l as usize].min(current[l as usize - 1]);
            }
            if linked_right(l) {
                next[l as usize] = next[l as usize].min(current[l as usize + 1]);
            }
        }
        let changed = next != current;
        current = next;
        if !changed {
            return (current, rounds);
        }
    }
}

#[test]
fn fixpoint_loop_diverges_on_data_and_reconverges_with_sync_warp() {
    let test = "fixpoint_loop_diverges_on_data_and_reconverges_with_sync_warp";
    for device in test_devices(test) {
        let mut rng = StdRng::seed_from_u64(0x5eed_6004);
        for (arch, module) in common_modules(&device, "warp", test) {
            for &shape in shapes(&device) {
                for round in 0..4 {
                    let n = shape.threads();
                    let masks = masks_for(shape, round, &mut rng);
                    let labels: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
                    let links: Vec<u32> = (0..n).map(|_| rng.gen_bool(0.8) as u32).collect();
                    let (d_masks, d_labels, d_links) =
                        (upload(&device, &masks), upload(&device, &labels), upload(&device, &links));
                    let (d_scratch, d_out, d_rounds) =
                        (poisoned_u32(&device, n), poisoned_u32(&device, n), poisoned_u32(&device, n));
                    let mut p_masks = d_masks.device_address();
                    let mut p_labels = d_labels.device_address();
                    let mut p_links = d_links.device_address();
                    let mut p_scratch = d_scratch.device_address();
                    let mut p_out = d_out.device_address();
                    let mut p_rounds = d_rounds.device_address();
                    let params = kernel_args![p_masks, p_labels, p_links, p_scratch, p_out, p_rounds];
                    // SAFETY: the kernel's six buffers sized for `shape`; masks name existing lanes.
                    unsafe { launch(&device, &module, &k::warp_fixpoint, shape, &params) };
                    let (out, rounds) = (d_out.download().unwrap(), d_rounds.download().unwrap());
                    let mut expected = vec![POISON_U32; n];
                    let mut expected_rounds = vec![POISON_U32; n];
                    for w in (0..shape.warps()).filter(|&w| masks[w] != 0) {
                        let mut warp_labels = [0u32; 32];
                        let mut warp_links = [false; 32];
                        for lane in (0..32).filter(|&l| member(masks[w], l)) {
                            warp_labels[lane as usize] = labels[shape.thread(w, lane)];
                            warp_links[lane as usize] = links[shape.thread(w, lane)] != 0;
                        }
                        let (result, warp_rounds) = fixpoint_model(masks[w], &warp_labels, &warp_links);
                        for lane in (0..32).filter(|&l| member(masks[w], l)) {
                            expected[shape.thread(w, lane)] = result[lane as usize];
                            expected_rounds[shape.thread(w, lane)] = warp_rounds;
                        }
                    }
                    for t in 0..n {
                        assert_eq!(out[t], expected[t], "{arch} {shape:?} round {round} t {t}: label");
                        assert_eq!(
                            rounds[t], expected_rounds[t],
                            "{arch} {shape:?} round {round} t {t}: rounds"
                        );
                    }
                }
            }
        }
    }
}
