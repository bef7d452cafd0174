//! GPU memory capacities, for the page's "will it fit on my GPU" verdict.
//! Shared at the top: imports only `choice` and `units`.
//!
//! Sizes are nominal and binary: a GPU sold as "80 GB" holds 80 GiB
//! (80 × 2^30 bytes), which is how `nvidia-smi` and PyTorch count it, so every
//! entry stores `N * GIB`. (The driver reserves a few hundred MiB of that, which
//! the estimate does not model.)
//!
//! `usable` is the most a process can allocate. For discrete GPUs it equals
//! `memory`. Apple silicon shares its memory with the CPU, and macOS caps
//! what the GPU may use (Metal's `recommendedMaxWorkingSetSize`): not a
//! constant share, but what Macs were measured to report ([`apple`], each
//! row with its source), the smaller reading where macOS versions differ.
//! The `iogpu.wired_limit_mb` sysctl replaces it.
//!
//! Every entry names its source. Parts whose size we could not pin down (for
//! example NVIDIA B200, sold as both 180 GB and 192 GB) are left out.

pub mod apple;

use crate::choice::choice_enum;
use crate::units::{Bytes, GIB};
use serde::Serialize;
use GpuKind::{DataCentre, Desktop, Laptop};

choice_enum! {
    /// Where a GPU lives: it decides how the page groups the list.
    pub enum GpuKind {
        /// Server accelerators (HBM or ECC GDDR), sold for data centres and clouds.
        DataCentre = "data-centre", "data centre",
        /// Desktop and workstation add-in cards.
        Desktop = "desktop", "desktop",
        /// Laptop GPUs: often less memory than the desktop part of the same name.
        Laptop = "laptop", "laptop",
        /// Apple silicon: the GPU shares the machine's unified memory.
        Apple = "apple", "Apple unified memory",
    }
}

/// One GPU (or Apple machine configuration) and how much memory training can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// Stable URL key: lower-case ASCII letters, digits and `-`.
    pub id: &'static str,
    /// Display name, e.g. "NVIDIA H100 SXM 80GB".
    pub name: &'static str,
    /// "NVIDIA", "AMD", "Intel" or "Apple".
    pub vendor: &'static str,
    pub kind: GpuKind,
    /// Installed memory; for Apple, the machine's unified memory.
    pub memory: Bytes,
    /// The most a training process can allocate: `memory` for discrete GPUs,
    /// the macOS GPU share for Apple (see the module docs).
    pub usable: Bytes,
    /// Where the size comes from and, for Apple, the share rule applied.
    pub source: &'static str,
}

impl Gpu {
    /// Whether `needed` bytes fit in what this GPU can allocate.
    pub fn fits(&self, needed: Bytes) -> bool {
        needed <= self.usable
    }
}

/// `n` GiB.
const fn gib(n: u64) -> Bytes {
    Bytes(n * GIB)
}

/// What the GPU of a Mac with `n` GiB of unified memory may use, on a
/// macOS not named ([`apple::gpu_working_set`]: the measured rows).
const fn apple_share(n: u64) -> Bytes {
    let b = apple::gpu_working_set(n as u128 * GIB as u128, None, apple::MacOs::Unknown);
    Bytes(b as u64)
}

/// A discrete GPU with `n` GiB, all of it usable.
const fn discrete(
    id: &'static str,
    name: &'static str,
    vendor: &'static str,
    kind: GpuKind,
    n: u64,
    source: &'static str,
) -> Gpu {
    Gpu {
        id,
        name,
        vendor,
        kind,
        memory: gib(n),
        usable: gib(n),
        source,
    }
}

/// An Apple silicon machine with `n` GiB of unified memory.
const fn apple(id: &'static str, name: &'static str, n: u64, source: &'static str) -> Gpu {
    Gpu {
        id,
        name,
        vendor: "Apple",
        kind: GpuKind::Apple,
        memory: gib(n),
        usable: apple_share(n),
        source,
    }
}

/// Every known GPU, grouped by kind (data centre, desktop, laptop, Apple),
/// then by vendor, newest and largest first.
#[rustfmt::skip]
pub const GPUS: &[Gpu] = &[
    // NVIDIA data centre.
    discrete("h200-141", "NVIDIA H200 141GB", "NVIDIA", DataCentre, 141,
        "NVIDIA H200 product page: 141GB HBM3e (SXM and NVL)"),
    discrete("h100-nvl-94", "NVIDIA H100 NVL 94GB", "NVIDIA", DataCentre, 94,
        "NVIDIA H100 datasheet: H100 NVL 94GB HBM3"),
    discrete("h100-sxm-80", "NVIDIA H100 SXM 80GB", "NVIDIA", DataCentre, 80,
        "NVIDIA H100 datasheet: H100 SXM 80GB HBM3"),
    discrete("h100-pcie-80", "NVIDIA H100 PCIe 80GB", "NVIDIA", DataCentre, 80,
        "NVIDIA H100 datasheet: H100 PCIe 80GB HBM2e"),
    discrete("a100-80", "NVIDIA A100 80GB", "NVIDIA", DataCentre, 80,
        "NVIDIA A100 datasheet: 80GB HBM2e (SXM and PCIe)"),
    discrete("a100-40", "NVIDIA A100 40GB", "NVIDIA", DataCentre, 40,
        "NVIDIA A100 datasheet: 40GB HBM2 (SXM and PCIe)"),
    discrete("l40s-48", "NVIDIA L40S", "NVIDIA", DataCentre, 48,
        "NVIDIA L40S datasheet: 48GB GDDR6 with ECC"),
    discrete("l40-48", "NVIDIA L40", "NVIDIA", DataCentre, 48,
        "NVIDIA L40 datasheet: 48GB GDDR6 with ECC"),
    discrete("a40-48", "NVIDIA A40", "NVIDIA", DataCentre, 48,
        "NVIDIA A40 datasheet: 48GB GDDR6 with ECC"),
    discrete("a30-24", "NVIDIA A30", "NVIDIA", DataCentre, 24,
        "NVIDIA A30 datasheet: 24GB HBM2"),
    discrete("l4-24", "NVIDIA L4", "NVIDIA", DataCentre, 24,
        "NVIDIA L4 datasheet: 24GB GDDR6"),
    discrete("a10-24", "NVIDIA A10", "NVIDIA", DataCentre, 24,
        "NVIDIA A10 datasheet: 24GB GDDR6"),
    discrete("a10g-24", "NVIDIA A10G", "NVIDIA", DataCentre, 24,
        "AWS EC2 G5 instance page: 24GB per NVIDIA A10G"),
    discrete("v100-32", "NVIDIA V100 32GB", "NVIDIA", DataCentre, 32,
        "NVIDIA V100 datasheet: 32GB HBM2 (SXM2 and PCIe)"),
    discrete("v100-16", "NVIDIA V100 16GB", "NVIDIA", DataCentre, 16,
        "NVIDIA V100 datasheet: 16GB HBM2 (SXM2 and PCIe)"),
    discrete("t4-16", "NVIDIA T4", "NVIDIA", DataCentre, 16,
        "NVIDIA T4 datasheet: 16GB GDDR6"),
    discrete("p100-16", "NVIDIA P100 16GB", "NVIDIA", DataCentre, 16,
        "NVIDIA Tesla P100 datasheet: 16GB CoWoS HBM2"),
    // AMD data centre.
    discrete("mi325x-256", "AMD Instinct MI325X", "AMD", DataCentre, 256,
        "AMD Instinct MI325X product page: 256GB HBM3E"),
    discrete("mi300x-192", "AMD Instinct MI300X", "AMD", DataCentre, 192,
        "AMD Instinct MI300X datasheet: 192GB HBM3"),
    discrete("mi250x-128", "AMD Instinct MI250X", "AMD", DataCentre, 128,
        "AMD Instinct MI250X product page: 128GB HBM2e"),
    discrete("mi250-128", "AMD Instinct MI250", "AMD", DataCentre, 128,
        "AMD Instinct MI250 product page: 128GB HBM2e"),
    discrete("mi210-64", "AMD Instinct MI210", "AMD", DataCentre, 64,
        "AMD Instinct MI210 product page: 64GB HBM2e"),
    discrete("mi100-32", "AMD Instinct MI100", "AMD", DataCentre, 32,
        "AMD Instinct MI100 product page: 32GB HBM2"),
    // NVIDIA workstation (desktop cards).
    discrete("rtx-pro-6000-blackwell", "NVIDIA RTX PRO 6000 Blackwell", "NVIDIA", Desktop, 96,
        "NVIDIA RTX PRO 6000 Blackwell product page: 96GB GDDR7 with ECC"),
    discrete("rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation", "NVIDIA", Desktop, 48,
        "NVIDIA RTX 6000 Ada datasheet: 48GB GDDR6 with ECC"),
    discrete("rtx-a6000", "NVIDIA RTX A6000", "NVIDIA", Desktop, 48,
        "NVIDIA RTX A6000 datasheet: 48GB GDDR6 with ECC"),
    discrete("rtx-5000-ada", "NVIDIA RTX 5000 Ada Generation", "NVIDIA", Desktop, 32,
        "NVIDIA RTX 5000 Ada datasheet: 32GB GDDR6 with ECC"),
    discrete("rtx-a5000", "NVIDIA RTX A5000", "NVIDIA", Desktop, 24,
        "NVIDIA RTX A5000 datasheet: 24GB GDDR6 with ECC"),
    discrete("rtx-4000-ada", "NVIDIA RTX 4000 Ada Generation", "NVIDIA", Desktop, 20,
        "NVIDIA RTX 4000 Ada datasheet: 20GB GDDR6 with ECC"),
    discrete("rtx-a4000", "NVIDIA RTX A4000", "NVIDIA", Desktop, 16,
        "NVIDIA RTX A4000 datasheet: 16GB GDDR6 with ECC"),
    // NVIDIA GeForce desktop.
    discrete("rtx-5090", "NVIDIA GeForce RTX 5090", "NVIDIA", Desktop, 32,
        "NVIDIA GeForce RTX 5090 specifications: 32GB GDDR7"),
    discrete("rtx-5080", "NVIDIA GeForce RTX 5080", "NVIDIA", Desktop, 16,
        "NVIDIA GeForce RTX 5080 specifications: 16GB GDDR7"),
    discrete("rtx-5070-ti", "NVIDIA GeForce RTX 5070 Ti", "NVIDIA", Desktop, 16,
        "NVIDIA GeForce RTX 5070 family specifications: 5070 Ti 16GB GDDR7"),
    discrete("rtx-5070", "NVIDIA GeForce RTX 5070", "NVIDIA", Desktop, 12,
        "NVIDIA GeForce RTX 5070 family specifications: 5070 12GB GDDR7"),
    discrete("rtx-4090", "NVIDIA GeForce RTX 4090", "NVIDIA", Desktop, 24,
        "NVIDIA GeForce RTX 4090 specifications: 24GB GDDR6X"),
    discrete("rtx-4080-super", "NVIDIA GeForce RTX 4080 SUPER", "NVIDIA", Desktop, 16,
        "NVIDIA GeForce RTX 4080 family specifications: 4080 SUPER 16GB GDDR6X"),
    discrete("rtx-4080", "NVIDIA GeForce RTX 4080", "NVIDIA", Desktop, 16,
        "NVIDIA GeForce RTX 4080 family specifications: 4080 16GB GDDR6X"),
    discrete("rtx-4070-ti-super", "NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA", Desktop, 16,
        "NVIDIA GeForce RTX 4070 family specifications: 4070 Ti SUPER 16GB GDDR6X"),
    discrete("rtx-4070-ti", "NVIDIA GeForce RTX 4070 Ti", "NVIDIA", Desktop, 12,
        "NVIDIA GeForce RTX 4070 family specifications: 4070 Ti 12GB GDDR6X"),
    discrete("rtx-4070", "NVIDIA GeForce RTX 4070", "NVIDIA", Desktop, 12,
        "NVIDIA GeForce RTX 4070 family specifications: 4070 12GB GDDR6X"),
    discrete("rtx-4060-ti-16", "NVIDIA GeForce RTX 4060 Ti 16GB", "NVIDIA", Desktop, 16,
        "NVIDIA GeForce RTX 4060 family specifications: 4060 Ti 16GB GDDR6"),
    discrete("rtx-4060-ti-8", "NVIDIA GeForce RTX 4060 Ti 8GB", "NVIDIA", Desktop, 8,
        "NVIDIA GeForce RTX 4060 family specifications: 4060 Ti 8GB GDDR6"),
    discrete("rtx-4060", "NVIDIA GeForce RTX 4060", "NVIDIA", Desktop, 8,
        "NVIDIA GeForce RTX 4060 family specifications: 4060 8GB GDDR6"),
    discrete("rtx-3090-ti", "NVIDIA GeForce RTX 3090 Ti", "NVIDIA", Desktop, 24,
        "NVIDIA GeForce RTX 3090 family specifications: 3090 Ti 24GB GDDR6X"),
    discrete("rtx-3090", "NVIDIA GeForce RTX 3090", "NVIDIA", Desktop, 24,
        "NVIDIA GeForce RTX 3090 family specifications: 3090 24GB GDDR6X"),
    discrete("rtx-3080-ti", "NVIDIA GeForce RTX 3080 Ti", "NVIDIA", Desktop, 12,
        "NVIDIA GeForce RTX 3080 family specifications: 3080 Ti 12GB GDDR6X"),
    discrete("rtx-3080-12", "NVIDIA GeForce RTX 3080 12GB", "NVIDIA", Desktop, 12,
        "NVIDIA GeForce RTX 3080 family specifications: 3080 12GB GDDR6X"),
    discrete("rtx-3080-10", "NVIDIA GeForce RTX 3080 10GB", "NVIDIA", Desktop, 10,
        "NVIDIA GeForce RTX 3080 family specifications: 3080 10GB GDDR6X"),
    discrete("rtx-3070", "NVIDIA GeForce RTX 3070", "NVIDIA", Desktop, 8,
        "NVIDIA GeForce RTX 3070 family specifications: 3070 8GB GDDR6"),
    discrete("rtx-3060-12", "NVIDIA GeForce RTX 3060 12GB", "NVIDIA", Desktop, 12,
        "NVIDIA GeForce RTX 3060 family specifications: 3060 12GB GDDR6"),
    discrete("rtx-2080-ti", "NVIDIA GeForce RTX 2080 Ti", "NVIDIA", Desktop, 11,
        "NVIDIA GeForce RTX 2080 Ti specifications: 11GB GDDR6"),
    discrete("titan-rtx", "NVIDIA TITAN RTX", "NVIDIA", Desktop, 24,
        "NVIDIA TITAN RTX specifications: 24GB GDDR6"),
    // AMD desktop.
    discrete("radeon-pro-w7900", "AMD Radeon PRO W7900", "AMD", Desktop, 48,
        "AMD Radeon PRO W7900 product page: 48GB GDDR6 with ECC"),
    discrete("rx-9070-xt", "AMD Radeon RX 9070 XT", "AMD", Desktop, 16,
        "AMD Radeon RX 9070 XT product page: 16GB GDDR6"),
    discrete("rx-7900-xtx", "AMD Radeon RX 7900 XTX", "AMD", Desktop, 24,
        "AMD Radeon RX 7900 XTX product page: 24GB GDDR6"),
    discrete("rx-7900-xt", "AMD Radeon RX 7900 XT", "AMD", Desktop, 20,
        "AMD Radeon RX 7900 XT product page: 20GB GDDR6"),
    discrete("rx-7800-xt", "AMD Radeon RX 7800 XT", "AMD", Desktop, 16,
        "AMD Radeon RX 7800 XT product page: 16GB GDDR6"),
    discrete("rx-6900-xt", "AMD Radeon RX 6900 XT", "AMD", Desktop, 16,
        "AMD Radeon RX 6900 XT product page: 16GB GDDR6"),
    // Intel desktop.
    discrete("arc-b580", "Intel Arc B580", "Intel", Desktop, 12,
        "Intel Arc B580 product specifications: 12GB GDDR6"),
    discrete("arc-a770-16", "Intel Arc A770 16GB", "Intel", Desktop, 16,
        "Intel Arc A770 product specifications: 16GB GDDR6 (Limited Edition)"),
    discrete("arc-a750", "Intel Arc A750", "Intel", Desktop, 8,
        "Intel Arc A750 product specifications: 8GB GDDR6"),
    // NVIDIA laptop: the memory of the laptop part, not the desktop one.
    discrete("rtx-5090-laptop", "NVIDIA GeForce RTX 5090 Laptop GPU", "NVIDIA", Laptop, 24,
        "NVIDIA GeForce RTX 50 Series laptop specifications: 5090 Laptop 24GB GDDR7"),
    discrete("rtx-5080-laptop", "NVIDIA GeForce RTX 5080 Laptop GPU", "NVIDIA", Laptop, 16,
        "NVIDIA GeForce RTX 50 Series laptop specifications: 5080 Laptop 16GB GDDR7"),
    discrete("rtx-4090-laptop", "NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA", Laptop, 16,
        "NVIDIA GeForce RTX 40 Series laptop specifications: 4090 Laptop 16GB GDDR6"),
    discrete("rtx-4080-laptop", "NVIDIA GeForce RTX 4080 Laptop GPU", "NVIDIA", Laptop, 12,
        "NVIDIA GeForce RTX 40 Series laptop specifications: 4080 Laptop 12GB GDDR6"),
    discrete("rtx-4070-laptop", "NVIDIA GeForce RTX 4070 Laptop GPU", "NVIDIA", Laptop, 8,
        "NVIDIA GeForce RTX 40 Series laptop specifications: 4070 Laptop 8GB GDDR6"),
    discrete("rtx-4060-laptop", "NVIDIA GeForce RTX 4060 Laptop GPU", "NVIDIA", Laptop, 8,
        "NVIDIA GeForce RTX 40 Series laptop specifications: 4060 Laptop 8GB GDDR6"),
    discrete("rtx-4050-laptop", "NVIDIA GeForce RTX 4050 Laptop GPU", "NVIDIA", Laptop, 6,
        "NVIDIA GeForce RTX 40 Series laptop specifications: 4050 Laptop 6GB GDDR6"),
    discrete("rtx-3080-ti-laptop", "NVIDIA GeForce RTX 3080 Ti Laptop GPU", "NVIDIA", Laptop, 16,
        "NVIDIA GeForce RTX 30 Series laptop specifications: 3080 Ti Laptop 16GB GDDR6"),
    discrete("rtx-3080-laptop-16", "NVIDIA GeForce RTX 3080 Laptop GPU 16GB", "NVIDIA", Laptop, 16,
        "NVIDIA GeForce RTX 30 Series laptop specifications: 3080 Laptop 8GB or 16GB GDDR6"),
    discrete("rtx-3080-laptop-8", "NVIDIA GeForce RTX 3080 Laptop GPU 8GB", "NVIDIA", Laptop, 8,
        "NVIDIA GeForce RTX 30 Series laptop specifications: 3080 Laptop 8GB or 16GB GDDR6"),
    discrete("rtx-3070-laptop", "NVIDIA GeForce RTX 3070 Laptop GPU", "NVIDIA", Laptop, 8,
        "NVIDIA GeForce RTX 30 Series laptop specifications: 3070 Laptop 8GB GDDR6"),
    discrete("rtx-3060-laptop", "NVIDIA GeForce RTX 3060 Laptop GPU", "NVIDIA", Laptop, 6,
        "NVIDIA GeForce RTX 30 Series laptop specifications: 3060 Laptop 6GB GDDR6"),
    // Apple silicon: `usable` is the default macOS GPU share.
    apple("m4-max-128", "Apple M4 Max (128GB)", 128,
        "Apple MacBook Pro (M4 Max) tech specs: 128GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m4-max-64", "Apple M4 Max (64GB)", 64,
        "Apple MacBook Pro (M4 Max) tech specs: 64GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m4-max-36", "Apple M4 Max (36GB)", 36,
        "Apple MacBook Pro (M4 Max) tech specs: 36GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m4-pro-64", "Apple M4 Pro (64GB)", 64,
        "Apple Mac mini (M4 Pro) tech specs: 64GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m4-pro-48", "Apple M4 Pro (48GB)", 48,
        "Apple MacBook Pro (M4 Pro) tech specs: 48GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m4-pro-24", "Apple M4 Pro (24GB)", 24,
        "Apple MacBook Pro (M4 Pro) tech specs: 24GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m4-32", "Apple M4 (32GB)", 32,
        "Apple MacBook Air (M4) tech specs: 32GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m4-16", "Apple M4 (16GB)", 16,
        "Apple MacBook Air (M4) tech specs: 16GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m3-ultra-512", "Apple M3 Ultra (512GB)", 512,
        "Apple Mac Studio (2025) tech specs: 512GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m3-ultra-256", "Apple M3 Ultra (256GB)", 256,
        "Apple Mac Studio (2025) tech specs: 256GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m3-max-128", "Apple M3 Max (128GB)", 128,
        "Apple MacBook Pro (M3) tech specs: 128GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m3-max-64", "Apple M3 Max (64GB)", 64,
        "Apple MacBook Pro (M3) tech specs: 64GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m3-max-36", "Apple M3 Max (36GB)", 36,
        "Apple MacBook Pro (M3) tech specs: 36GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m3-pro-36", "Apple M3 Pro (36GB)", 36,
        "Apple MacBook Pro (M3) tech specs: 36GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m3-pro-18", "Apple M3 Pro (18GB)", 18,
        "Apple MacBook Pro (M3) tech specs: 18GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m2-ultra-192", "Apple M2 Ultra (192GB)", 192,
        "Apple Mac Studio (2023) tech specs: 192GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m2-max-96", "Apple M2 Max (96GB)", 96,
        "Apple MacBook Pro (2023) tech specs: 96GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m2-24", "Apple M2 (24GB)", 24,
        "Apple MacBook Air (M2) tech specs: 24GB; GPU share 2/3 (macOS default up to 36 GB)"),
    apple("m1-ultra-128", "Apple M1 Ultra (128GB)", 128,
        "Apple Mac Studio (2022) tech specs: 128GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m1-max-64", "Apple M1 Max (64GB)", 64,
        "Apple MacBook Pro (2021) tech specs: 64GB; GPU share 3/4 (macOS default above 36 GB)"),
    apple("m1-16", "Apple M1 (16GB)", 16,
        "Apple MacBook Air (M1) tech specs: 16GB; GPU share 2/3 (macOS default up to 36 GB)"),
];

/// The GPU with this id, if any.
pub fn gpu(id: &str) -> Option<&'static Gpu> {
    GPUS.iter().find(|g| g.id == id)
}

/// The CUDA compute capability (major, minor) of every NVIDIA GPU in
/// [`GPUS`], by id (tested: none is missing). What PyTorch sizes its cuBLAS
/// workspaces by.
///
/// Source: NVIDIA's CUDA GPUs list (developer.nvidia.com/cuda-gpus):
/// Hopper 9.0, Ada 8.9, Ampere 8.0 (A100, A30) and 8.6, Turing 7.5, Volta
/// 7.0, Pascal 6.0, Blackwell desktop and workstation 12.0.
pub const CUDA_CAPABILITY: &[(&str, (u8, u8))] = &[
    ("h200-141", (9, 0)),
    ("h100-nvl-94", (9, 0)),
    ("h100-sxm-80", (9, 0)),
    ("h100-pcie-80", (9, 0)),
    ("a100-80", (8, 0)),
    ("a100-40", (8, 0)),
    ("l40s-48", (8, 9)),
    ("l40-48", (8, 9)),
    ("a40-48", (8, 6)),
    ("a30-24", (8, 0)),
    ("l4-24", (8, 9)),
    ("a10-24", (8, 6)),
    ("a10g-24", (8, 6)),
    ("v100-32", (7, 0)),
    ("v100-16", (7, 0)),
    ("t4-16", (7, 5)),
    ("p100-16", (6, 0)),
    ("rtx-pro-6000-blackwell", (12, 0)),
    ("rtx-6000-ada", (8, 9)),
    ("rtx-a6000", (8, 6)),
    ("rtx-5000-ada", (8, 9)),
    ("rtx-a5000", (8, 6)),
    ("rtx-4000-ada", (8, 9)),
    ("rtx-a4000", (8, 6)),
    ("rtx-5090", (12, 0)),
    ("rtx-5080", (12, 0)),
    ("rtx-5070-ti", (12, 0)),
    ("rtx-5070", (12, 0)),
    ("rtx-4090", (8, 9)),
    ("rtx-4080-super", (8, 9)),
    ("rtx-4080", (8, 9)),
    ("rtx-4070-ti-super", (8, 9)),
    ("rtx-4070-ti", (8, 9)),
    ("rtx-4070", (8, 9)),
    ("rtx-4060-ti-16", (8, 9)),
    ("rtx-4060-ti-8", (8, 9)),
    ("rtx-4060", (8, 9)),
    ("rtx-3090-ti", (8, 6)),
    ("rtx-3090", (8, 6)),
    ("rtx-3080-ti", (8, 6)),
    ("rtx-3080-12", (8, 6)),
    ("rtx-3080-10", (8, 6)),
    ("rtx-3070", (8, 6)),
    ("rtx-3060-12", (8, 6)),
    ("rtx-2080-ti", (7, 5)),
    ("titan-rtx", (7, 5)),
    ("rtx-5090-laptop", (12, 0)),
    ("rtx-5080-laptop", (12, 0)),
    ("rtx-4090-laptop", (8, 9)),
    ("rtx-4080-laptop", (8, 9)),
    ("rtx-4070-laptop", (8, 9)),
    ("rtx-4060-laptop", (8, 9)),
    ("rtx-4050-laptop", (8, 9)),
    ("rtx-3080-ti-laptop", (8, 6)),
    ("rtx-3080-laptop-16", (8, 6)),
    ("rtx-3080-laptop-8", (8, 6)),
    ("rtx-3070-laptop", (8, 6)),
    ("rtx-3060-laptop", (8, 6)),
];

impl Gpu {
    /// Its CUDA compute capability; `None` for a GPU CUDA does not run
    /// (AMD, Intel, Apple).
    pub fn cuda_capability(&self) -> Option<(u8, u8)> {
        CUDA_CAPABILITY
            .iter()
            .find(|(id, _)| *id == self.id)
            .map(|(_, cc)| *cc)
    }
}

/// The GPUs of one kind, in table order.
pub fn by_kind(kind: GpuKind) -> impl Iterator<Item = &'static Gpu> {
    GPUS.iter().filter(move |g| g.kind == kind)
}

/// The GPU with the smallest `usable` that still holds `needed` bytes (the
/// first in table order on a tie), or `None` when nothing is large enough.
pub fn closest_fitting(needed: Bytes) -> Option<&'static Gpu> {
    GPUS.iter()
        .filter(|g| g.fits(needed))
        .min_by_key(|g| g.usable)
}
