//! The GPU table: its shape, the sizes of well-known parts, the Apple share
//! rule and the lookups the page uses.

use std::collections::HashSet;
use vramfit_core::gpus::{by_kind, closest_fitting, gpu, Gpu, GpuKind, GPUS};
use vramfit_core::units::GIB;
use vramfit_core::Bytes;

fn get(id: &str) -> &'static Gpu {
    match gpu(id) {
        Some(g) => g,
        None => panic!("no GPU with id {id}"),
    }
}

#[test]
fn table_shape() {
    assert!(GPUS.len() >= 40, "only {} GPUs", GPUS.len());
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    for g in GPUS {
        assert!(!g.id.is_empty(), "{g:?}");
        assert!(
            g.id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "id {:?} is not [a-z0-9-]+",
            g.id
        );
        assert!(
            !g.id.starts_with('-') && !g.id.ends_with('-') && !g.id.contains("--"),
            "id {:?}",
            g.id
        );
        assert!(ids.insert(g.id), "duplicate id {}", g.id);
        assert!(names.insert(g.name), "duplicate name {}", g.name);
        assert!(
            ["NVIDIA", "AMD", "Intel", "Apple"].contains(&g.vendor),
            "{}: vendor {}",
            g.id,
            g.vendor
        );
        assert!(
            g.name.starts_with(g.vendor),
            "{}: name {:?} does not start with its vendor",
            g.id,
            g.name
        );
        assert_eq!(g.vendor == "Apple", g.kind == GpuKind::Apple, "{}", g.id);
        assert!(!g.source.is_empty() && !g.source.contains('\n'), "{}", g.id);
        // Nominal sizes are whole GiB.
        assert_eq!(g.memory.get() % GIB, 0, "{}", g.id);
    }
}

#[test]
fn usable_never_exceeds_memory() {
    for g in GPUS {
        assert!(g.usable > Bytes::ZERO, "{}", g.id);
        assert!(g.usable <= g.memory, "{}", g.id);
        if g.kind == GpuKind::Apple {
            assert!(g.usable < g.memory, "{}: Apple keeps a share", g.id);
        } else {
            assert_eq!(g.usable, g.memory, "{}: discrete GPUs are all usable", g.id);
        }
    }
}

#[test]
fn well_known_sizes() {
    fn check(id: &str, gib: u64, kind: GpuKind) {
        let g = get(id);
        assert_eq!(g.memory, Bytes(gib * GIB), "{id}");
        assert_eq!(g.kind, kind, "{id}");
    }
    use GpuKind::{Apple, DataCentre, Desktop, Laptop};
    // Source: NVIDIA H200 product page, 141GB HBM3e.
    check("h200-141", 141, DataCentre);
    // Source: NVIDIA H100 datasheet, SXM 80GB / PCIe 80GB / NVL 94GB.
    check("h100-sxm-80", 80, DataCentre);
    check("h100-pcie-80", 80, DataCentre);
    check("h100-nvl-94", 94, DataCentre);
    // Source: NVIDIA A100 datasheet, 80GB HBM2e and 40GB HBM2.
    check("a100-80", 80, DataCentre);
    check("a100-40", 40, DataCentre);
    // Source: NVIDIA L40S datasheet, 48GB GDDR6.
    check("l40s-48", 48, DataCentre);
    // Source: NVIDIA L4 datasheet, 24GB GDDR6.
    check("l4-24", 24, DataCentre);
    // Source: AWS EC2 G5 page, 24GB per A10G.
    check("a10g-24", 24, DataCentre);
    // Source: NVIDIA T4 datasheet, 16GB GDDR6.
    check("t4-16", 16, DataCentre);
    // Source: NVIDIA V100 datasheet, 32GB or 16GB HBM2.
    check("v100-32", 32, DataCentre);
    check("v100-16", 16, DataCentre);
    // Source: AMD Instinct MI300X datasheet, 192GB HBM3.
    check("mi300x-192", 192, DataCentre);
    // Source: AMD Instinct MI250X product page, 128GB HBM2e.
    check("mi250x-128", 128, DataCentre);
    // Source: NVIDIA GeForce RTX 5090 specifications, 32GB GDDR7.
    check("rtx-5090", 32, Desktop);
    // Source: NVIDIA GeForce RTX 4090 specifications, 24GB GDDR6X.
    check("rtx-4090", 24, Desktop);
    // Source: NVIDIA RTX 4060 family specifications, 4060 Ti in 16GB and 8GB.
    check("rtx-4060-ti-16", 16, Desktop);
    check("rtx-4060-ti-8", 8, Desktop);
    // Source: NVIDIA GeForce RTX 3080 specifications, 10GB GDDR6X (original).
    check("rtx-3080-10", 10, Desktop);
    // Source: NVIDIA RTX 6000 Ada datasheet, 48GB GDDR6.
    check("rtx-6000-ada", 48, Desktop);
    // Source: AMD Radeon RX 7900 XTX product page, 24GB GDDR6.
    check("rx-7900-xtx", 24, Desktop);
    // Source: Intel Arc A770 specifications, 16GB GDDR6.
    check("arc-a770-16", 16, Desktop);
    // Source: NVIDIA RTX 40 Series laptop specifications, 4090 Laptop 16GB.
    check("rtx-4090-laptop", 16, Laptop);
    // Source: Apple MacBook Pro (M3) tech specs, M3 Max up to 128GB.
    check("m3-max-128", 128, Apple);
    // Source: Apple Mac Studio (2023) tech specs, M2 Ultra up to 192GB.
    check("m2-ultra-192", 192, Apple);
}

#[test]
fn laptop_parts_have_their_own_sizes() {
    // (laptop id, laptop GiB, desktop sibling id, desktop GiB)
    let table = [
        // Source: NVIDIA RTX 50 Series laptop and desktop specifications.
        ("rtx-5090-laptop", 24, "rtx-5090", 32),
        ("rtx-5080-laptop", 16, "rtx-5080", 16),
        // Source: NVIDIA RTX 40 Series laptop and desktop specifications.
        ("rtx-4090-laptop", 16, "rtx-4090", 24),
        ("rtx-4080-laptop", 12, "rtx-4080", 16),
        ("rtx-4070-laptop", 8, "rtx-4070", 12),
        ("rtx-4060-laptop", 8, "rtx-4060", 8),
        // Source: NVIDIA RTX 30 Series laptop and desktop specifications.
        ("rtx-3080-laptop-16", 16, "rtx-3080-10", 10),
        ("rtx-3070-laptop", 8, "rtx-3070", 8),
    ];
    for (laptop, laptop_gib, desktop, desktop_gib) in table {
        let (l, d) = (get(laptop), get(desktop));
        assert_eq!(l.kind, GpuKind::Laptop, "{laptop}");
        assert_eq!(d.kind, GpuKind::Desktop, "{desktop}");
        assert_eq!(l.memory, Bytes(laptop_gib * GIB), "{laptop}");
        assert_eq!(d.memory, Bytes(desktop_gib * GIB), "{desktop}");
        assert_ne!(l.name, d.name);
        assert!(l.name.contains("Laptop"), "{}", l.name);
    }
    assert!(by_kind(GpuKind::Laptop).count() >= 6);
}

#[test]
fn apple_share_rule() {
    // (id, unified GiB, exact usable bytes)
    let table = [
        // 16 GiB × 2/3 = 11_453_246_122.67, rounded down; llama.cpp's Metal
        // log on a 16 GB M1 reads "recommendedMaxWorkingSetSize = 10922.67 MB".
        ("m1-16", 16, 11_453_246_122),
        // 36 GiB × 2/3 = 24 GiB exactly: the largest size on the 2/3 rule.
        ("m3-pro-36", 36, 25_769_803_776),
        // 48 GiB × 3/4 = 36 GiB.
        ("m4-pro-48", 48, 38_654_705_664),
        // 128 GiB × 3/4 = 96 GiB.
        ("m3-max-128", 128, 103_079_215_104),
        // 192 GiB × 3/4 = 144 GiB.
        ("m2-ultra-192", 192, 154_618_822_656),
    ];
    for (id, gib, usable) in table {
        let g = get(id);
        assert_eq!(g.memory, Bytes(gib * GIB), "{id}");
        assert_eq!(g.usable, Bytes(usable), "{id}");
    }
    assert_eq!(get("m3-max-128").usable, Bytes(96 * GIB));

    // Every Apple entry follows the rule, and its source says which share.
    for g in by_kind(GpuKind::Apple) {
        let m = g.memory.get();
        let (expected, share) = if m <= 36 * GIB {
            (m * 2 / 3, "2/3")
        } else {
            (m * 3 / 4, "3/4")
        };
        assert_eq!(g.usable, Bytes(expected), "{}", g.id);
        assert!(g.source.contains(share), "{}: {}", g.id, g.source);
    }
}

#[test]
fn lookups() {
    let table: [(&str, Option<&str>); 6] = [
        ("rtx-4090", Some("NVIDIA GeForce RTX 4090")),
        ("h100-sxm-80", Some("NVIDIA H100 SXM 80GB")),
        ("m3-max-128", Some("Apple M3 Max (128GB)")),
        ("RTX-4090", None),
        ("rtx-9999", None),
        ("", None),
    ];
    for (id, name) in table {
        assert_eq!(gpu(id).map(|g| g.name), name, "{id:?}");
    }
    for g in GPUS {
        assert_eq!(gpu(g.id), Some(g));
    }
}

#[test]
fn kinds_group_the_table() {
    let kinds = [
        (GpuKind::DataCentre, "data centre"),
        (GpuKind::Desktop, "desktop"),
        (GpuKind::Laptop, "laptop"),
        (GpuKind::Apple, "Apple unified memory"),
    ];
    let mut total = 0;
    for (kind, label) in kinds {
        assert_eq!(kind.label(), label);
        let of_kind: Vec<&Gpu> = by_kind(kind).collect();
        assert!(!of_kind.is_empty(), "{label}");
        assert!(of_kind.iter().all(|g| g.kind == kind), "{label}");
        total += of_kind.len();
    }
    assert_eq!(total, GPUS.len());
    // The table lists kinds in order, so by_kind slices are contiguous.
    assert!(GPUS.windows(2).all(|w| w[0].kind <= w[1].kind));
}

#[test]
fn closest_fitting_picks_the_smallest_usable() {
    // (needed bytes, expected id)
    let table: [(u64, Option<&str>); 9] = [
        // Nothing needed: the smallest part, first of the 6 GiB laptops.
        (0, Some("rtx-4050-laptop")),
        // Exactly 20 GiB: a 20 GiB part fits (usable == needed).
        (20 * GIB, Some("rtx-4000-ada")),
        // Just over 20 GiB: a 32 GB Mac's 2/3 share (21.33 GiB) is next.
        (20 * GIB + 1, Some("m4-32")),
        // 22 GiB: the first 24 GiB part in table order.
        (22 * GIB, Some("a30-24")),
        // 100 GiB: the first 128 GiB part (a 128 GB Mac's 96 GiB is too small).
        (100 * GIB, Some("mi250x-128")),
        // 130 GiB: H200's 141 GiB beats a 192 GB Mac's 144 GiB share.
        (130 * GIB, Some("h200-141")),
        // The largest usable is a 512 GB Mac's 384 GiB share.
        (384 * GIB, Some("m3-ultra-512")),
        (384 * GIB + 1, None),
        (u64::MAX, None),
    ];
    for (needed, id) in table {
        let got = closest_fitting(Bytes(needed));
        assert_eq!(got.map(|g| g.id), id, "needed {needed}");
    }
    assert_eq!(get("a30-24").memory, Bytes(24 * GIB));

    // Against brute force on a sweep of needs.
    for half_gib in 0..=800u64 {
        let needed = Bytes(half_gib * GIB / 2);
        let best = GPUS
            .iter()
            .filter(|g| g.usable >= needed)
            .map(|g| g.usable)
            .min();
        let got = closest_fitting(needed);
        assert_eq!(got.map(|g| g.usable), best, "needed {needed}");
        if let Some(g) = got {
            assert!(g.fits(needed));
            let first = GPUS.iter().position(|x| x.usable == g.usable);
            assert_eq!(first, GPUS.iter().position(|x| x.id == g.id));
        }
    }
}

#[test]
fn serializes_with_the_kind_key() {
    let json = serde_json::to_value(get("rtx-4090-laptop")).expect("serializes");
    assert_eq!(json["id"], "rtx-4090-laptop");
    assert_eq!(json["kind"], "laptop");
    assert_eq!(json["memory"], 16 * GIB);
    assert_eq!(json["usable"], 16 * GIB);
}

/// Every NVIDIA GPU has its CUDA compute capability (what torch sizes its
/// cuBLAS workspaces by); no other vendor's does.
#[test]
fn every_nvidia_gpu_has_a_compute_capability() {
    for g in vramfit_core::gpus::GPUS {
        assert_eq!(
            g.cuda_capability().is_some(),
            g.vendor == "NVIDIA",
            "{}",
            g.id
        );
    }
    for (id, _) in vramfit_core::gpus::CUDA_CAPABILITY {
        assert!(vramfit_core::gpus::gpu(id).is_some(), "{id}");
    }
}
