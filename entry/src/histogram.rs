//! warpsafe's histogram kernels, which `warpsafe_host::histogram::Histogram` launches
//! (declared with `warpsafe::histogram_kernels!`, whose documentation gives the parameter
//! list): even bins and bins between levels for `u8` samples in 1 channel, in 4 channels
//! with all 4 counted (RGBA) and with 3 of 4 counted (RGB of RGBA), and for `u16`, `i32`
//! and `f32` samples in 1 channel. Integer even bins have a kernel per division mode
//! (`identity`, `magic`, `wide`, `every`: `warpsafe::histogram::DIVIDE_*`; `every`, one
//! bin per value of the type, would need 2^32 bins for `i32`, so it has none).
//!
//! Names: `warpsafe_histogram_<mode>_<type>_<channels>c<active>`, the mode a division
//! mode, `even` (`f32`) or `range`.

warpsafe::histogram_kernels! {
    u8, 1, 1 => even [
        warpsafe_histogram_identity_u8_1c1, warpsafe_histogram_magic_u8_1c1,
        warpsafe_histogram_wide_u8_1c1, warpsafe_histogram_every_u8_1c1
    ], range warpsafe_histogram_range_u8_1c1;
    u8, 4, 4 => even [
        warpsafe_histogram_identity_u8_4c4, warpsafe_histogram_magic_u8_4c4,
        warpsafe_histogram_wide_u8_4c4, warpsafe_histogram_every_u8_4c4
    ], range warpsafe_histogram_range_u8_4c4;
    u8, 4, 3 => even [
        warpsafe_histogram_identity_u8_4c3, warpsafe_histogram_magic_u8_4c3,
        warpsafe_histogram_wide_u8_4c3, warpsafe_histogram_every_u8_4c3
    ], range warpsafe_histogram_range_u8_4c3;
    u16, 1, 1 => even [
        warpsafe_histogram_identity_u16_1c1, warpsafe_histogram_magic_u16_1c1,
        warpsafe_histogram_wide_u16_1c1, warpsafe_histogram_every_u16_1c1
    ], range warpsafe_histogram_range_u16_1c1;
    i32, 1, 1 => even [
        warpsafe_histogram_identity_i32_1c1, warpsafe_histogram_magic_i32_1c1,
        warpsafe_histogram_wide_i32_1c1
    ], range warpsafe_histogram_range_i32_1c1;
    f32, 1, 1 => even [warpsafe_histogram_even_f32_1c1], range warpsafe_histogram_range_f32_1c1;
}
