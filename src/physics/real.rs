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

/// `(hi + lo) + x` kept as a pair of floats: `hi' = fl(hi + (lo + x))` and `lo'` the exact
/// rounding error of that sum (Knuth's TwoSum, six additions, no branch), so `hi' + lo'`
/// equals `hi + fl(lo + x)` exactly. The only rounding is that of `lo + x`, at most half an
/// ulp of `|x| + ulp(hi) / 2`: of the update, or eps^2 of the value, never eps of the value.
/// A small update to a large value is never lost, and a value on a power of two loses
/// nothing either way. `|lo'| <= ulp(hi') / 2`.
/// `add_compensated` in `kernels/real.cuh` mirrors it (with explicitly rounded additions,
/// which the compiler may not fuse or reorder).
#[inline(always)]
pub fn add_compensated<T: Real>(hi: T, lo: T, x: T) -> (T, T) {
    let t = lo + x;
    let s = hi + t;
    let b = s - hi;
    let e = (hi - (s - b)) + (t - b);
    (s, e)
}
