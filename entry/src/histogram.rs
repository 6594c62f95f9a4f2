//! warpsafe's histogram kernels, which `warpsafe_host::histogram::Histogram` launches
//! (declared with `warpsafe::histogram_kernels!`, whose documentation gives the parameter
//! list): even bins and bins between levels for `u8` samples in 1 channel, in 4 channels
//! with all 4 counted (RGBA) and with 3 of 4 counted (RGB of RGBA), and for `u16`, `i32`
//! and `f32` samples in 1 channel.
//!
//! Names: `warpsafe_histogram_<even|range>_<type>_<channels>c<active>`.

warpsafe::histogram_kernels! {
    u8, 1, 1 => warpsafe_histogram_even_u8_1c1, warpsafe_histogram_range_u8_1c1;
    u8, 4, 4 => warpsafe_histogram_even_u8_4c4, warpsafe_histogram_range_u8_4c4;
    u8, 4, 3 => warpsafe_histogram_even_u8_4c3, warpsafe_histogram_range_u8_4c3;
    u16, 1, 1 => warpsafe_histogram_even_u16_1c1, warpsafe_histogram_range_u16_1c1;
    i32, 1, 1 => warpsafe_histogram_even_i32_1c1, warpsafe_histogram_range_i32_1c1;
    f32, 1, 1 => warpsafe_histogram_even_f32_1c1, warpsafe_histogram_range_f32_1c1;
}
