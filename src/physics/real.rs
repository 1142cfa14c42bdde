//! The floating-point type of a run: f32 (the paper's, and the GPU's) or f64 (reference runs).

pub trait Real:
    num_traits::Float
    + Default
    + Send
    + Sync
    + std::fmt::Debug
    + std::fmt::Display
    + std::iter::Sum
    + bytemuck::Pod
    + 'static
{
    const NAME: &'static str;
    /// Machine epsilon, as the Newton stopping rule uses it.
    const EPS: Self;
    fn c(x: f64) -> Self;
    fn f64(self) -> f64;
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    const EPS: f32 = f32::EPSILON;
    #[inline(always)]
    fn c(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    const EPS: f64 = f64::EPSILON;
    #[inline(always)]
    fn c(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
}
