//! The device side, with wgpu 30: WebGPU in wasm32, Vulkan/Metal/DX12
//! natively (feature `native`). Deliberately thin: it does the steps
//! [`Tracker::next_step`] asks for (allocate a chunk, or time a control on a
//! chunk it already holds), times each and reports back; every decision is
//! made in `plan.rs`. It tells the tracker whether the adapter is a software
//! one, where the swap rule does not apply.
//!
//! One chunk: inside an out-of-memory (and a validation) error scope, create
//! a buffer, clear it on the GPU (so the memory is really committed), write
//! a small pattern at its end and copy it to a staging buffer. Only when the
//! scopes come back clean is the staging buffer mapped and the pattern
//! checked: nothing created during a failed allocation is ever mapped. A
//! control is the same without the allocation: the held buffer is cleared,
//! written and read back again. Every buffer is destroyed and the device
//! dropped at the end, so a second probe finds the same memory free.

use crate::plan::{
    AdapterKind, ChunkResult, Decision, Outcome, ProbeConfig, ProbeResult, Progress, Step, Tracker,
};
use crate::report::{looks_like_software, vendor_name, AdapterReport};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use vramfit_core::Bytes;

/// Bytes read back from the end of each chunk to check it holds data.
const SAMPLE: u64 = 256;

/// The WebGPU limits by their spec names, from wgpu's [`wgpu::Limits`].
fn limits_list(l: &wgpu::Limits) -> Vec<(String, u64)> {
    macro_rules! pairs {
        ($($name:literal => $field:ident),* $(,)?) => {
            vec![$(($name.to_string(), u64::from(l.$field))),*]
        };
    }
    pairs![
        "maxTextureDimension1D" => max_texture_dimension_1d,
        "maxTextureDimension2D" => max_texture_dimension_2d,
        "maxTextureDimension3D" => max_texture_dimension_3d,
        "maxTextureArrayLayers" => max_texture_array_layers,
        "maxBindGroups" => max_bind_groups,
        "maxBindGroupsPlusVertexBuffers" => max_bind_groups_plus_vertex_buffers,
        "maxBindingsPerBindGroup" => max_bindings_per_bind_group,
        "maxDynamicUniformBuffersPerPipelineLayout" => max_dynamic_uniform_buffers_per_pipeline_layout,
        "maxDynamicStorageBuffersPerPipelineLayout" => max_dynamic_storage_buffers_per_pipeline_layout,
        "maxSampledTexturesPerShaderStage" => max_sampled_textures_per_shader_stage,
        "maxSamplersPerShaderStage" => max_samplers_per_shader_stage,
        "maxStorageBuffersPerShaderStage" => max_storage_buffers_per_shader_stage,
        "maxStorageTexturesPerShaderStage" => max_storage_textures_per_shader_stage,
        "maxUniformBuffersPerShaderStage" => max_uniform_buffers_per_shader_stage,
        "maxUniformBufferBindingSize" => max_uniform_buffer_binding_size,
        "maxStorageBufferBindingSize" => max_storage_buffer_binding_size,
        "minUniformBufferOffsetAlignment" => min_uniform_buffer_offset_alignment,
        "minStorageBufferOffsetAlignment" => min_storage_buffer_offset_alignment,
        "maxVertexBuffers" => max_vertex_buffers,
        "maxBufferSize" => max_buffer_size,
        "maxVertexAttributes" => max_vertex_attributes,
        "maxVertexBufferArrayStride" => max_vertex_buffer_array_stride,
        "maxInterStageShaderVariables" => max_inter_stage_shader_variables,
        "maxColorAttachments" => max_color_attachments,
        "maxColorAttachmentBytesPerSample" => max_color_attachment_bytes_per_sample,
        "maxComputeWorkgroupStorageSize" => max_compute_workgroup_storage_size,
        "maxComputeInvocationsPerWorkgroup" => max_compute_invocations_per_workgroup,
        "maxComputeWorkgroupSizeX" => max_compute_workgroup_size_x,
        "maxComputeWorkgroupSizeY" => max_compute_workgroup_size_y,
        "maxComputeWorkgroupSizeZ" => max_compute_workgroup_size_z,
        "maxComputeWorkgroupsPerDimension" => max_compute_workgroups_per_dimension,
    ]
}

fn device_type_name(t: wgpu::DeviceType) -> &'static str {
    match t {
        wgpu::DeviceType::DiscreteGpu => "discrete",
        wgpu::DeviceType::IntegratedGpu => "integrated",
        wgpu::DeviceType::VirtualGpu => "virtual",
        wgpu::DeviceType::Cpu => "cpu",
        wgpu::DeviceType::Other => "other",
    }
}

/// An instance and its (high-performance) adapter, or why there is none.
async fn adapter() -> Result<(wgpu::Instance, wgpu::Adapter), Outcome> {
    #[cfg(target_arch = "wasm32")]
    if web::gpu().is_none() {
        return Err(Outcome::Unsupported);
    }
    if wgpu::Instance::enabled_backend_features().is_empty() {
        return Err(Outcome::Unsupported);
    }
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    // Natively (DX12, Vulkan with VK_EXT_memory_budget) refuse buffers past
    // 95% of the OS's budget, rather than oversubscribing. Ignored on the web.
    desc.memory_budget_thresholds.for_resource_creation = Some(95);
    let instance = wgpu::Instance::new(desc);
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        })
        .await
        .map_err(|_| Outcome::NoAdapter)?;
    Ok((instance, adapter))
}

fn report_of(adapter: &wgpu::Adapter) -> AdapterReport {
    let info = adapter.get_info();
    let mut features: Vec<String> = adapter
        .features()
        .iter()
        .filter_map(|f| f.as_str())
        .map(str::to_string)
        .collect();
    features.sort();
    let description = format!("{} {}", info.driver, info.driver_info)
        .trim()
        .to_string();
    let mut r = AdapterReport {
        name: info.name.clone(),
        vendor: vendor_name(info.vendor),
        architecture: String::new(),
        device: if info.device == 0 {
            String::new()
        } else {
            format!("0x{:04x}", info.device)
        },
        description,
        backend: info.backend.to_str().to_string(),
        device_type: device_type_name(info.device_type).to_string(),
        fallback: info.device_type == wgpu::DeviceType::Cpu,
        limits: limits_list(&adapter.limits()),
        features,
    };
    r.fallback |= looks_like_software([r.name.as_str(), r.description.as_str()]);
    r
}

/// What the adapter says about itself. `Err(Outcome::Unsupported)` when
/// there is no WebGPU at all, `Err(Outcome::NoAdapter)` when no adapter is
/// offered. Never panics.
pub async fn report() -> Result<AdapterReport, Outcome> {
    let (_instance, adapter) = adapter().await?;
    Ok(describe(&adapter).await)
}

/// wgpu's view of `adapter`, completed (on the web) with the browser's
/// `GPUAdapterInfo`, and the software flag from every name it has.
async fn describe(adapter: &wgpu::Adapter) -> AdapterReport {
    let mut r = report_of(adapter);
    // wgpu's WebGPU backend fills only `description` and the fallback flag;
    // the browser's GPUAdapterInfo also has vendor, architecture and device.
    #[cfg(target_arch = "wasm32")]
    if let Some(info) = web::adapter_info().await {
        r.vendor = info.vendor;
        r.architecture = info.architecture;
        r.device = info.device;
        if !info.description.is_empty() {
            r.description = info.description;
        }
        if r.name.is_empty() {
            r.name = r.description.clone();
        }
        r.fallback |= info.fallback;
        if !info.limits.is_empty() {
            r.limits = info.limits;
        }
        if !info.features.is_empty() {
            r.features = info.features;
        }
    }
    r.fallback |= looks_like_software([
        r.name.as_str(),
        r.vendor.as_str(),
        r.architecture.as_str(),
        r.description.as_str(),
    ]);
    r
}

/// A device with the adapter's own limits (so `max_buffer_size` is the
/// adapter's, not WebGPU's 256 MiB default); failing that, the minimum
/// limits with the adapter's buffer size, on a fresh adapter.
async fn open_device(adapter: wgpu::Adapter) -> Result<(wgpu::Device, wgpu::Queue), Outcome> {
    let limits = adapter.limits();
    let mut desc = wgpu::DeviceDescriptor {
        label: Some("vramfit probe"),
        required_limits: limits.clone(),
        memory_hints: wgpu::MemoryHints::MemoryUsage,
        ..Default::default()
    };
    if let Ok(dq) = adapter.request_device(&desc).await {
        return Ok(dq);
    }
    drop(adapter);
    let (_instance, adapter) = self::adapter().await?;
    desc.required_limits = wgpu::Limits {
        max_buffer_size: limits.max_buffer_size,
        ..wgpu::Limits::downlevel_defaults()
    };
    adapter
        .request_device(&desc)
        .await
        .map_err(|_| Outcome::DeviceLost)
}

/// Measures how much memory can be allocated at once, within `cfg`.
///
/// `progress` is called at the start and after every step (chunk or
/// control); `cancel` is asked before every step. The chunk size is clamped
/// to the device's `max_buffer_size`. The swap rule applies on a hardware
/// adapter only: a software one (the report's fallback flag) has no video
/// memory to swap out of. Everything allocated is freed before this
/// returns. Never panics: a missing WebGPU or adapter is an outcome with 0
/// bytes.
pub async fn probe(
    cfg: ProbeConfig,
    progress: impl FnMut(Progress),
    cancel: impl Fn() -> bool,
) -> ProbeResult {
    run(cfg, None, progress, cancel).await
}

/// [`probe`], judging the adapter as `kind` whatever it reports: on
/// SwiftShader, [`AdapterKind::Hardware`] runs the hardware swap rule and
/// its controls, so the browser tests can check them on a machine without a
/// GPU.
pub async fn probe_as(
    kind: AdapterKind,
    cfg: ProbeConfig,
    progress: impl FnMut(Progress),
    cancel: impl Fn() -> bool,
) -> ProbeResult {
    run(cfg, Some(kind), progress, cancel).await
}

async fn run(
    cfg: ProbeConfig,
    kind: Option<AdapterKind>,
    mut progress: impl FnMut(Progress),
    cancel: impl Fn() -> bool,
) -> ProbeResult {
    let (device, queue, kind) = match adapter().await {
        Ok((_instance, adapter)) => {
            let kind = match kind {
                Some(k) => k,
                None if describe(&adapter).await.fallback => AdapterKind::Software,
                None => AdapterKind::Hardware,
            };
            match open_device(adapter).await {
                Ok((device, queue)) => (device, queue, kind),
                Err(o) => return ProbeResult::failed(o),
            }
        }
        Err(o) => return ProbeResult::failed(o),
    };
    let lost = Arc::new(AtomicBool::new(false));
    {
        let lost = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, _message| {
            if reason != wgpu::DeviceLostReason::Destroyed {
                lost.store(true, Ordering::SeqCst);
            }
        });
    }
    // Errors are caught by the scopes around each chunk; a stray one must
    // not take the page (or the CLI) down.
    device.on_uncaptured_error(Arc::new(|_error| {}));

    let mut tracker = Tracker::on(cfg.clamped_to(device.limits().max_buffer_size), kind);
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vramfit probe readback"),
        size: SAMPLE,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut held: Vec<wgpu::Buffer> = Vec::new();
    let clock = Clock::start();
    // Each write gets its own pattern, so a stale read-back is caught.
    let mut writes: u32 = 0;
    progress(tracker.progress());
    while let Some(step) = tracker.next_step() {
        if cancel() {
            tracker.cancel();
            break;
        }
        if lost.load(Ordering::SeqCst) {
            tracker.stop_with(Outcome::DeviceLost);
            break;
        }
        writes = writes.wrapping_add(1);
        let decision = match step {
            Step::Chunk(size) => {
                let t0 = clock.now_ms();
                let (buffer, result) = chunk(&device, &queue, &staging, size, writes, &lost).await;
                let ms = clock.now_ms() - t0;
                // Failed buffers too: destroying an invalid buffer is harmless.
                held.push(buffer);
                tracker.record_chunk(size, ms, result)
            }
            Step::Control { index, bytes } => {
                // Counted chunks are the first ones held (a failed chunk
                // stops the probe), so chunk `index` is `held[index]`.
                let t0 = clock.now_ms();
                let result = match held.get(index as usize) {
                    Some(buffer) => {
                        control(&device, &queue, &staging, buffer, bytes, writes, &lost).await
                    }
                    // Not held (cannot happen): held memory that cannot be
                    // re-checked is not usable memory.
                    None => ChunkResult::Oom,
                };
                let ms = clock.now_ms() - t0;
                tracker.record_control(bytes, ms, result)
            }
        };
        progress(tracker.progress());
        if let Decision::Stop(_) = decision {
            break;
        }
    }
    for b in &held {
        b.destroy();
    }
    staging.destroy();
    drop(held);
    drop(staging);
    device.destroy();
    #[cfg(not(target_arch = "wasm32"))]
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    tracker.result()
}

/// The pattern of write number `index` (a chunk or a control): differs per
/// write, so two chunks aliasing the same memory, or a stale read-back,
/// would be caught.
fn pattern(index: u32, len: u64) -> Vec<u8> {
    (0..len)
        .map(|k| {
            (k as u32)
                .wrapping_mul(7)
                .wrapping_add(index.wrapping_mul(13))
                .wrapping_add(1) as u8
        })
        .collect()
}

/// Allocates, commits and checks one buffer of `size` bytes.
async fn chunk(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    staging: &wgpu::Buffer,
    size: Bytes,
    index: u32,
    lost: &AtomicBool,
) -> (wgpu::Buffer, ChunkResult) {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vramfit probe chunk"),
        size: size.get(),
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let expected = touch(queue, device, staging, &buffer, size, index);
    let out_of_memory = oom.pop().await;
    let invalid = validation.pop().await;
    let refused = out_of_memory.is_some() || invalid.is_some();
    let result = check(device, staging, &expected, refused, lost).await;
    (buffer, result)
}

/// The control: re-touches `buffer` (held, `size` bytes) exactly as a chunk
/// is committed and checked, without allocating.
async fn control(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    staging: &wgpu::Buffer,
    buffer: &wgpu::Buffer,
    size: Bytes,
    index: u32,
    lost: &AtomicBool,
) -> ChunkResult {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let expected = touch(queue, device, staging, buffer, size, index);
    let out_of_memory = oom.pop().await;
    let invalid = validation.pop().await;
    let refused = out_of_memory.is_some() || invalid.is_some();
    check(device, staging, &expected, refused, lost).await
}

/// Clears `buffer` on the GPU (committing all of it), writes pattern
/// `index` at its end and copies that to `staging`. Returns the pattern.
fn touch(
    queue: &wgpu::Queue,
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
    buffer: &wgpu::Buffer,
    size: Bytes,
    index: u32,
) -> Vec<u8> {
    let size = size.get();
    let len = SAMPLE.min(size);
    let offset = size - len;
    let expected = pattern(index, len);
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    enc.clear_buffer(buffer, 0, None);
    queue.submit([enc.finish()]);
    queue.write_buffer(buffer, offset, &expected);
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    enc.copy_buffer_to_buffer(buffer, offset, staging, 0, Some(len));
    queue.submit([enc.finish()]);
    expected
}

/// After [`touch`]: maps `staging` and compares it with `expected`, unless
/// the error scopes `refused` the work (nothing from a failed allocation is
/// ever mapped) or the device was lost.
async fn check(
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
    expected: &[u8],
    refused: bool,
    lost: &AtomicBool,
) -> ChunkResult {
    if lost.load(Ordering::SeqCst) {
        return ChunkResult::Lost;
    }
    if refused {
        // Refused. Never map anything from this chunk.
        return ChunkResult::Oom;
    }
    let len = expected.len() as u64;
    let (tx, rx) = oneshot::<bool>();
    staging.map_async(wgpu::MapMode::Read, 0..len, move |r| tx.send(r.is_ok()));
    #[cfg(not(target_arch = "wasm32"))]
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    #[cfg(target_arch = "wasm32")]
    let _ = device;
    let mapped = rx.await.unwrap_or(false);
    if !mapped {
        return if lost.load(Ordering::SeqCst) {
            ChunkResult::Lost
        } else {
            ChunkResult::Oom
        };
    }
    let holds_data = match staging.get_mapped_range(0..len) {
        Ok(view) => view[..] == expected[..],
        Err(_) => false,
    };
    // The view is dropped above: unmapping with a live view would panic.
    staging.unmap();
    if holds_data {
        ChunkResult::Ok
    } else if lost.load(Ordering::SeqCst) {
        ChunkResult::Lost
    } else {
        // The memory did not keep what was written: not usable.
        ChunkResult::Oom
    }
}

/// Milliseconds since the probe started: `performance.now()` in the
/// browser, a monotonic clock natively.
struct Clock {
    #[cfg(not(target_arch = "wasm32"))]
    start: std::time::Instant,
    #[cfg(target_arch = "wasm32")]
    start: f64,
}

impl Clock {
    fn start() -> Self {
        Clock {
            #[cfg(not(target_arch = "wasm32"))]
            start: std::time::Instant::now(),
            #[cfg(target_arch = "wasm32")]
            start: web::now_ms(),
        }
    }

    fn now_ms(&self) -> f64 {
        #[cfg(not(target_arch = "wasm32"))]
        return self.start.elapsed().as_secs_f64() * 1000.0;
        #[cfg(target_arch = "wasm32")]
        return web::now_ms() - self.start;
    }
}

struct Shared<T> {
    value: Option<T>,
    closed: bool,
    waker: Option<Waker>,
}

fn lock<T>(m: &Mutex<Shared<T>>) -> MutexGuard<'_, Shared<T>> {
    // A poisoned lock only means a callback panicked; the data is plain.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends one value to a [`Receiver`]; dropping it unsent closes the channel.
struct Sender<T>(Arc<Mutex<Shared<T>>>);

/// Resolves to the sent value, or `None` if the sender was dropped unsent
/// (e.g. wgpu dropped a map callback when the device went away).
struct Receiver<T>(Arc<Mutex<Shared<T>>>);

fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Mutex::new(Shared {
        value: None,
        closed: false,
        waker: None,
    }));
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

impl<T> Sender<T> {
    fn send(self, value: T) {
        lock(&self.0).value = Some(value);
        // Drop wakes the receiver.
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut s = lock(&self.0);
            s.closed = true;
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut s = lock(&self.0);
        if let Some(v) = s.value.take() {
            return Poll::Ready(Some(v));
        }
        if s.closed {
            return Poll::Ready(None);
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// The few browser calls wgpu does not cover, through plain JS reflection
/// (no unstable web-sys APIs).
#[cfg(target_arch = "wasm32")]
mod web {
    use js_sys::{Function, Object, Promise, Reflect};
    use wasm_bindgen::{JsCast, JsValue};

    fn get(obj: &JsValue, key: &str) -> JsValue {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    }

    fn defined(v: JsValue) -> Option<JsValue> {
        (!v.is_undefined() && !v.is_null()).then_some(v)
    }

    /// `navigator.gpu`, if this browser has WebGPU.
    pub fn gpu() -> Option<JsValue> {
        let navigator = defined(get(&js_sys::global(), "navigator"))?;
        defined(get(&navigator, "gpu"))
    }

    /// `performance.now()`, or `Date.now()` where there is none.
    pub fn now_ms() -> f64 {
        let perf = get(&js_sys::global(), "performance");
        get(&perf, "now")
            .dyn_into::<Function>()
            .ok()
            .and_then(|now| now.call0(&perf).ok())
            .and_then(|v| v.as_f64())
            .unwrap_or_else(js_sys::Date::now)
    }

    /// The strings of `GPUAdapterInfo` that wgpu does not pass on.
    pub struct Info {
        pub vendor: String,
        pub architecture: String,
        pub device: String,
        pub description: String,
        pub fallback: bool,
        /// Every limit the browser reports (its own list, which may be
        /// longer than wgpu's).
        pub limits: Vec<(String, u64)>,
        /// Every feature the browser reports, sorted.
        pub features: Vec<String>,
    }

    /// The numeric attributes of a `GPUSupportedLimits`: WebIDL attributes
    /// live on the prototype, so read its property names.
    fn limits(adapter: &JsValue) -> Vec<(String, u64)> {
        let Some(limits) = defined(get(adapter, "limits")) else {
            return Vec::new();
        };
        let Ok(obj) = limits.clone().dyn_into::<Object>() else {
            return Vec::new();
        };
        let proto = Object::get_prototype_of(&obj);
        Object::get_own_property_names(&proto)
            .iter()
            .filter_map(|name| {
                let name = name.as_string()?;
                let v = get(&limits, &name).as_f64()?;
                (v.is_finite() && v >= 0.0).then_some((name, v as u64))
            })
            .collect()
    }

    /// The names in a `GPUSupportedFeatures` (a set-like), sorted.
    fn features(adapter: &JsValue) -> Vec<String> {
        let Some(set) = defined(get(adapter, "features")) else {
            return Vec::new();
        };
        let mut out: Vec<String> = js_sys::Array::from(&set)
            .iter()
            .filter_map(|v| v.as_string())
            .collect();
        out.sort();
        out
    }

    /// `(await navigator.gpu.requestAdapter({powerPreference})).info`.
    pub async fn adapter_info() -> Option<Info> {
        let gpu = gpu()?;
        let request = get(&gpu, "requestAdapter").dyn_into::<Function>().ok()?;
        let options = Object::new();
        Reflect::set(
            &options,
            &JsValue::from_str("powerPreference"),
            &JsValue::from_str("high-performance"),
        )
        .ok()?;
        let promise = request
            .call1(&gpu, &options)
            .ok()?
            .dyn_into::<Promise>()
            .ok()?;
        let adapter = defined(wasm_bindgen_futures::JsFuture::from(promise).await.ok()?)?;
        let info = get(&adapter, "info");
        let text = |k: &str| get(&info, k).as_string().unwrap_or_default();
        // Newer browsers: info.isFallbackAdapter; older: adapter.isFallbackAdapter.
        let fallback = get(&info, "isFallbackAdapter")
            .as_bool()
            .or_else(|| get(&adapter, "isFallbackAdapter").as_bool())
            .unwrap_or(false);
        Some(Info {
            vendor: text("vendor"),
            architecture: text("architecture"),
            device: text("device"),
            description: text("description"),
            fallback,
            limits: limits(&adapter),
            features: features(&adapter),
        })
    }
}
