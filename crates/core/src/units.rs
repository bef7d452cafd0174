//! Byte counts. Every size in vramfit is an exact integer number of bytes;
//! GiB (2^30) and GB (10^9) exist only when a number is shown to a person.
//!
//! Shared at the top: imports nothing of the crate.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign};

/// An exact number of bytes.
///
/// Arithmetic saturates instead of wrapping: the estimator computes in `u128`
/// and converts with [`Bytes::try_from_u128`], so saturation is only a guard.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// 2^30 bytes.
pub const GIB: u64 = 1 << 30;
/// 10^9 bytes.
pub const GB: u64 = 1_000_000_000;

impl Bytes {
    pub const ZERO: Bytes = Bytes(0);

    pub const fn new(n: u64) -> Self {
        Bytes(n)
    }

    pub const fn get(self) -> u64 {
        self.0
    }

    /// `None` when `n` does not fit in 64 bits.
    pub fn try_from_u128(n: u128) -> Option<Self> {
        u64::try_from(n).ok().map(Bytes)
    }

    /// Whole GiB as a float, for display and charts only.
    pub fn gib(self) -> f64 {
        self.0 as f64 / GIB as f64
    }

    /// Whole GB (10^9) as a float, for display only.
    pub fn gb(self) -> f64 {
        self.0 as f64 / GB as f64
    }

    pub fn saturating_sub(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(other.0))
    }

    /// Formats with the chosen display unit, e.g. `12.34 GiB`.
    pub fn display(self, unit: DisplayUnit) -> String {
        match unit {
            DisplayUnit::Gib => format!("{:.2} GiB", self.gib()),
            DisplayUnit::Gb => format!("{:.2} GB", self.gb()),
        }
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Bytes {
    fn add_assign(&mut self, rhs: Bytes) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes::ZERO, Add::add)
    }
}

impl fmt::Display for Bytes {
    /// GiB with two decimals: the default unit of the page.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.2} GiB", self.gib())
    }
}

/// The unit numbers are shown in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DisplayUnit {
    /// 2^30 bytes: what `nvidia-smi` and PyTorch report.
    #[default]
    Gib,
    /// 10^9 bytes: what GPU vendors print on the box.
    Gb,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_units() {
        let b = Bytes(3 * GIB / 2);
        assert_eq!(b.display(DisplayUnit::Gib), "1.50 GiB");
        assert_eq!(b.display(DisplayUnit::Gb), "1.61 GB");
        assert_eq!(b.to_string(), "1.50 GiB");
    }

    #[test]
    fn arithmetic_saturates_and_converts() {
        assert_eq!(Bytes(u64::MAX) + Bytes(1), Bytes(u64::MAX));
        assert_eq!(Bytes(1).saturating_sub(Bytes(2)), Bytes::ZERO);
        assert_eq!(Bytes::try_from_u128(u128::from(u64::MAX) + 1), None);
        assert_eq!(Bytes::try_from_u128(7), Some(Bytes(7)));
        assert_eq!([Bytes(1), Bytes(2)].into_iter().sum::<Bytes>(), Bytes(3));
    }
}

/// A decimal number as typed (`-1.5e9`, `0.25`, `7`), read exactly: its
/// digits and a power of ten, never a binary float. Counts typed with
/// decimals stay exact, and the page's wasm carries no float parser (its
/// tables alone are ~10 KB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal<'a> {
    pub negative: bool,
    /// Digits before and after the point (either may be empty, not both).
    int: &'a str,
    frac: &'a str,
    /// The power of ten written after `e` (saturated far past any count).
    exp: i64,
}

/// Why a [`Decimal`] is not a whole number that fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotCount {
    NotWhole,
    TooLarge,
}

impl<'a> Decimal<'a> {
    /// `[+-]digits[.digits][(e|E)[+-]digits]`, with at least one digit
    /// before the exponent; `None` for anything else (no `inf`, `nan`, hex
    /// or spaces).
    pub fn parse(s: &'a str) -> Option<Decimal<'a>> {
        let (negative, s) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exp_text) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = |t: &str| t.bytes().all(|c| c.is_ascii_digit());
        if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
            return None;
        }
        let exp = match exp_text {
            None => 0,
            Some(t) => {
                let (sign, t) = match t.as_bytes().first() {
                    Some(b'-') => (-1, &t[1..]),
                    Some(b'+') => (1, &t[1..]),
                    _ => (1, t),
                };
                if t.is_empty() || !digits(t) {
                    return None;
                }
                let t = t.trim_start_matches('0');
                sign * if t.len() > 9 {
                    1_000_000_000
                } else {
                    t.parse::<i64>().unwrap_or(0)
                }
            }
        };
        Some(Decimal {
            negative,
            int,
            frac,
            exp,
        })
    }

    pub fn is_zero(&self) -> bool {
        self.int.bytes().chain(self.frac.bytes()).all(|c| c == b'0')
    }

    /// The digits, and the power of ten that scales them to the value
    /// times 10^`shift`.
    fn parts(&self, shift: i64) -> (impl Iterator<Item = u8> + 'a, i64) {
        let digits = self.int.bytes().chain(self.frac.bytes()).map(|c| c - b'0');
        (digits, self.exp + shift - self.frac.len() as i64)
    }

    /// The value times 10^`shift` as a whole number (`-0` is 0).
    pub fn count(&self, shift: i64) -> Result<u64, NotCount> {
        if self.is_zero() {
            return Ok(0);
        }
        let (digits, e) = self.parts(shift);
        let digits: Vec<u8> = digits.collect();
        // Digits that fall after the point must all be zeros.
        let cut = usize::try_from(-e.min(0)).unwrap_or(usize::MAX);
        let kept = digits.len().saturating_sub(cut);
        if digits[kept..].iter().any(|&d| d != 0) {
            return Err(NotCount::NotWhole);
        }
        let mut n: u128 = 0;
        for &d in &digits[..kept] {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u128::from(d)))
                .ok_or(NotCount::TooLarge)?;
        }
        // 10^39 > u128::MAX: a nonzero value past that is too large.
        let up = u32::try_from(e.max(0)).ok().filter(|&e| e < 39);
        up.and_then(|e| n.checked_mul(10u128.pow(e)))
            .and_then(|n| u64::try_from(n).ok())
            .ok_or(NotCount::TooLarge)
    }

    /// The value times `unit`, rounded down (`None` past `u128`).
    pub fn times_floor(&self, unit: u64) -> Option<u128> {
        let (digits, e) = self.parts(0);
        let mut n: u128 = 0;
        for d in digits {
            n = n.checked_mul(10)?.checked_add(u128::from(d))?;
        }
        let n = n.checked_mul(u128::from(unit))?;
        if e >= 0 {
            n.checked_mul(10u128.checked_pow(u32::try_from(e).ok()?)?)
        } else {
            Some(
                match u32::try_from(-e).ok().and_then(|k| 10u128.checked_pow(k)) {
                    Some(p) => n / p,
                    None => 0,
                },
            )
        }
    }
}

/// `ceil(total × share / 10000)` in floating point: vLLM's
/// `math.ceil(total_memory * gpu_memory_utilization)`
/// (`v1/worker/utils.py:724-726`), which a budget must match to the byte.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
pub fn share_ceil(total: u128, ten_thousandths: u16) -> u128 {
    let util = f64::from(ten_thousandths) / 10_000.0;
    (total as f64 * util).ceil() as u128
}
