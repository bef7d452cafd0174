//! Byte counts. Every size in vramfit is an exact integer number of bytes;
//! GiB (2^30) and GB (10^9) exist only when a number is shown to a person.

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
