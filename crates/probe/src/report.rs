//! What the adapter says about itself: name, vendor, whether it is a
//! software (fallback) adapter, its limits and features. Pure data, filled
//! by the wgpu driver and shown or exported as JSON.

use crate::plan::{ProbeConfig, ProbeResult};
use serde::{Deserialize, Serialize};
use vramfit_core::units::GIB;
use vramfit_core::Bytes;

/// The label a software adapter must carry wherever its figure is shown.
pub const FALLBACK_NOTE: &str = "software adapter: this measures system memory, not a GPU";

/// The most a probe may take on a software adapter, whatever the target:
/// its "GPU memory" is this machine's RAM, shared with everything else.
pub const FALLBACK_CEILING: Bytes = Bytes(2 * GIB);

/// Names of known software rasterizers, matched case-insensitively.
const SOFTWARE_NAMES: [&str; 6] = [
    "swiftshader",
    "llvmpipe",
    "lavapipe",
    "softpipe",
    "microsoft basic render",
    "warp",
];

/// Whether any of these adapter strings names a software rasterizer
/// (SwiftShader, llvmpipe/lavapipe, WARP).
pub fn looks_like_software<'a>(fields: impl IntoIterator<Item = &'a str>) -> bool {
    fields.into_iter().any(|f| {
        let f = f.to_ascii_lowercase();
        SOFTWARE_NAMES.iter().any(|s| {
            // "warp" only as a whole word: not inside "warpspeed".
            if *s == "warp" {
                f.split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|w| w == "warp")
            } else {
                f.contains(s)
            }
        })
    })
}

/// The adapter as reported by wgpu (and, on the web, `GPUAdapterInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterReport {
    /// Adapter name (natively the driver's device name; on the web the
    /// `description`, often empty unless the browser unmasks it).
    pub name: String,
    /// Vendor: on the web `GPUAdapterInfo.vendor` (e.g. "nvidia",
    /// "google"); natively the PCI vendor as a name or `0x....`.
    pub vendor: String,
    /// On the web `GPUAdapterInfo.architecture` (e.g. "swiftshader").
    pub architecture: String,
    /// Device id: `GPUAdapterInfo.device` or the PCI device `0x....`.
    pub device: String,
    /// Free text: `GPUAdapterInfo.description`, or the driver and its info.
    pub description: String,
    /// wgpu backend: "webgpu", "vulkan", "metal", "dx12", "gl".
    pub backend: String,
    /// "discrete", "integrated", "virtual", "cpu" or "other".
    pub device_type: String,
    /// A software/fallback adapter: the probe then measures system memory.
    pub fallback: bool,
    /// The limits by their WebGPU names (`maxBufferSize`, ...), in the
    /// order reported; a JSON object in serialized form.
    #[serde(with = "pairs_as_map")]
    pub limits: Vec<(String, u64)>,
    /// Optional features, by their WebGPU names (`shader-f16`, ...).
    pub features: Vec<String>,
}

impl AdapterReport {
    /// The limit called `name` (camelCase), if reported.
    pub fn limit(&self, name: &str) -> Option<u64> {
        self.limits.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// `maxBufferSize`, or WebGPU's guaranteed 256 MiB when missing.
    pub fn max_buffer_size(&self) -> u64 {
        self.limit("maxBufferSize").unwrap_or(256 << 20)
    }

    /// Pretty JSON, for the page's "export JSON" and the CLI's `--json`.
    pub fn to_json(&self) -> String {
        // Strings, numbers and bools only: serialization cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The probe this adapter runs up to `ceiling`: chunks this adapter's
    /// `maxBufferSize` allows, and never above [`FALLBACK_CEILING`] on a
    /// software adapter, whose "GPU memory" is this machine's RAM (the one
    /// place that rule lives: the page and `vramfit probe` both plan here).
    pub fn config(&self, ceiling: Bytes) -> ProbeConfig {
        let ceiling = if self.fallback {
            ceiling.min(FALLBACK_CEILING)
        } else {
            ceiling
        };
        ProbeConfig::new(ceiling, self.max_buffer_size())
    }

    /// The default probe on this adapter for a workload peaking at
    /// `target`: its peak plus a margin ([`crate::default_ceiling`]), as
    /// [`AdapterReport::config`] caps it.
    pub fn probe_config(&self, target: Bytes) -> ProbeConfig {
        self.config(crate::plan::default_ceiling(target))
    }

    /// The label to show next to a figure from this adapter, if any.
    pub fn fallback_note(&self) -> Option<&'static str> {
        self.fallback.then_some(FALLBACK_NOTE)
    }
}

/// One probe as a JSON document (the CLI's `--json`, the page's export):
/// `{"adapter", "config", "result", "summary", "message"}`.
pub fn document_json(
    adapter: &AdapterReport,
    config: &ProbeConfig,
    result: &ProbeResult,
) -> String {
    #[derive(Serialize)]
    struct Document<'a> {
        adapter: &'a AdapterReport,
        config: &'a ProbeConfig,
        result: &'a ProbeResult,
        summary: String,
        message: String,
    }
    let doc = Document {
        adapter,
        config,
        result,
        summary: result.summary(),
        message: result.message(),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// `json` as a `data:application/json` URL, for a download link
/// (percent-encoded: RFC 3986 unreserved characters are kept).
pub fn json_data_url(json: &str) -> String {
    let mut out = String::from("data:application/json;charset=utf-8,");
    for b in json.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `Vec<(String, u64)>` as a JSON object, keeping the order.
mod pairs_as_map {
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::fmt;

    pub fn serialize<S: Serializer>(pairs: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(pairs.len()))?;
        for (k, v) in pairs {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }

    struct Pairs;

    impl<'de> Visitor<'de> for Pairs {
        type Value = Vec<(String, u64)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of limit names to whole numbers")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry::<String, u64>()? {
                out.push(entry);
            }
            Ok(out)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, u64)>, D::Error> {
        d.deserialize_map(Pairs)
    }
}

/// A PCI vendor id as a name when it is a well-known one, else `0x....`.
pub fn vendor_name(id: u32) -> String {
    match id {
        0 => String::new(),
        0x10de => "nvidia".into(),
        0x1002 | 0x1022 => "amd".into(),
        0x8086 => "intel".into(),
        0x106b => "apple".into(),
        0x5143 => "qualcomm".into(),
        0x13b5 => "arm".into(),
        0x1010 => "imgtec".into(),
        0x1414 => "microsoft".into(),
        0x10005 => "mesa".into(),
        n => format!("0x{n:04x}"),
    }
}

// Native only: the wasm32 test run is the browser suite in tests/web.rs.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn software_adapters_are_recognised() {
        assert!(looks_like_software(["google", "swiftshader"]));
        assert!(looks_like_software(["llvmpipe (LLVM 15.0.6, 256 bits)"]));
        assert!(looks_like_software(["Microsoft Basic Render Driver"]));
        assert!(looks_like_software(["", "WARP"]));
        assert!(!looks_like_software([
            "NVIDIA GeForce RTX 4090",
            "nvidia",
            "ada"
        ]));
        assert!(!looks_like_software(["warpspeed"]));
        assert!(!looks_like_software([]));
    }

    #[test]
    fn limits_and_json() {
        let limits = vec![
            ("maxBufferSize".to_string(), 1 << 30),
            ("minUniformBufferOffsetAlignment".to_string(), 256),
        ];
        let r = AdapterReport {
            vendor: "google".into(),
            architecture: "swiftshader".into(),
            fallback: true,
            limits,
            features: vec!["shader-f16".into()],
            ..Default::default()
        };
        assert_eq!(r.max_buffer_size(), 1 << 30);
        assert_eq!(AdapterReport::default().max_buffer_size(), 256 << 20);
        assert_eq!(r.fallback_note(), Some(FALLBACK_NOTE));
        let back: AdapterReport = serde_json::from_str(&r.to_json()).expect("test value");
        assert_eq!(back, r);
        assert!(r.to_json().contains("\"maxBufferSize\": 1073741824,"));
    }

    #[test]
    fn document() {
        let r = AdapterReport {
            name: "llvmpipe".into(),
            fallback: true,
            limits: vec![("maxBufferSize".into(), 1 << 30)],
            ..Default::default()
        };
        let cfg = ProbeConfig::new(Bytes(1 << 30), 1 << 30);
        let res = ProbeResult::failed(crate::plan::Outcome::Oom);
        let v: serde_json::Value =
            serde_json::from_str(&document_json(&r, &cfg, &res)).expect("test value");
        assert_eq!(v["adapter"]["fallback"], true);
        assert_eq!(v["adapter"]["limits"]["maxBufferSize"], 1u64 << 30);
        assert_eq!(v["config"]["ceiling"], 1u64 << 30);
        assert_eq!(v["config"]["chunk"], 256u64 << 20);
        assert_eq!(v["result"]["outcome"], "oom");
        assert_eq!(v["result"]["allocated"], 0);
        assert!(v["message"]
            .as_str()
            .expect("test value")
            .starts_with("Nothing could be allocated"));
        assert!(v["summary"]
            .as_str()
            .expect("test value")
            .starts_with("at least 0.00 GiB"));
    }

    #[test]
    fn software_adapters_get_a_small_ceiling() {
        let mut r = AdapterReport {
            limits: vec![("maxBufferSize".into(), 1 << 30)],
            ..Default::default()
        };
        let big = Bytes(40 * GIB);
        assert_eq!(r.probe_config(big).ceiling, Bytes(44 * GIB));
        assert_eq!(r.probe_config(big).chunk, Bytes(256 << 20));
        r.fallback = true;
        assert_eq!(r.probe_config(big).ceiling, FALLBACK_CEILING);
        assert_eq!(r.probe_config(big).chunk, Bytes(256 << 20));
        // a small target is not raised to the cap
        assert_eq!(r.probe_config(Bytes::ZERO).ceiling, Bytes(GIB));
    }

    #[test]
    fn data_url() {
        assert_eq!(
            json_data_url("{\"a\": 1}"),
            "data:application/json;charset=utf-8,%7B%22a%22%3A%201%7D"
        );
        assert!(json_data_url("x-y_z.~é").ends_with(",x-y_z.~%C3%A9"));
    }

    #[test]
    fn vendor_names() {
        assert_eq!(vendor_name(0x10de), "nvidia");
        assert_eq!(vendor_name(0x1234), "0x1234");
        assert_eq!(vendor_name(0), "");
    }
}
