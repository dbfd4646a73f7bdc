//! Finding an adapter, checking it can run the shaders, opening the device.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::GpuError;

/// What the evaluator runs on, for logs and benchmark reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The driver's name for the device, e.g. "NVIDIA H100" or "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub name: String,
    /// "Vulkan", "Metal", "Dx12".
    pub backend: String,
    /// "DiscreteGpu", "IntegratedGpu", "Cpu", ...
    pub device_type: String,
    /// Driver name and version as the driver reports them.
    pub driver: String,
    /// True for a CPU implementation such as Mesa's lavapipe (software Vulkan).
    pub is_software: bool,
}

impl AdapterSummary {
    fn new(info: &wgpu::AdapterInfo) -> AdapterSummary {
        let driver = match (info.driver.is_empty(), info.driver_info.is_empty()) {
            (false, false) => format!("{} {}", info.driver, info.driver_info),
            (false, true) => info.driver.clone(),
            _ => info.driver_info.clone(),
        };
        AdapterSummary {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver,
            is_software: info.device_type == wgpu::DeviceType::Cpu,
        }
    }
}

impl fmt::Display for AdapterSummary {
    /// `llvmpipe (LLVM 15.0.6, 256 bits) [software Vulkan; llvmpipe Mesa 22.3.6]`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_software {
            format!("software {}", self.backend)
        } else {
            format!("{} {}", self.device_type, self.backend)
        };
        write!(f, "{} [{kind}; {}]", self.name, self.driver)
    }
}

/// What the pipelines need from the device, computed from the network and the options.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Needs {
    pub ft_bytes: u64,
    pub input_bytes_per_position: u64,
    pub max_batch: u32,
    pub workgroup_size: u32,
    pub workgroup_storage_bytes: u32,
    pub storage_buffers: u32,
}

/// An opened device with the adapter it came from.
pub(crate) struct Opened {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    /// Largest batch the limits allow (at most `needs.max_batch`).
    pub max_batch: u32,
    /// The first error the device reported outside an error scope, if any.
    pub errors: Arc<Mutex<Option<String>>>,
}

pub(crate) fn open(
    backends: wgpu::Backends,
    power_preference: wgpu::PowerPreference,
    needs: Needs,
) -> Result<Opened, GpuError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference,
        force_fallback_adapter: false,
        compatible_surface: None,
        apply_limit_buckets: false,
    }))
    .map_err(|e| GpuError::NoAdapter {
        detail: e.to_string(),
    })?;
    let summary = AdapterSummary::new(&adapter.get_info());
    let unsupported = |what: String| GpuError::Unsupported {
        adapter: summary.name.clone(),
        what,
    };

    let downlevel = adapter.get_downlevel_capabilities();
    if !downlevel
        .flags
        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
    {
        return Err(unsupported("no compute shaders".to_owned()));
    }

    let have = adapter.limits();
    if have.max_compute_invocations_per_workgroup < needs.workgroup_size
        || have.max_compute_workgroup_size_x < needs.workgroup_size
    {
        return Err(unsupported(format!(
            "workgroups of {} invocations needed, the adapter allows {} (x: {})",
            needs.workgroup_size,
            have.max_compute_invocations_per_workgroup,
            have.max_compute_workgroup_size_x
        )));
    }
    if have.max_compute_workgroup_storage_size < needs.workgroup_storage_bytes {
        return Err(unsupported(format!(
            "{} bytes of workgroup memory needed, the adapter has {}",
            needs.workgroup_storage_bytes, have.max_compute_workgroup_storage_size
        )));
    }
    if have.max_storage_buffers_per_shader_stage < needs.storage_buffers {
        return Err(unsupported(format!(
            "{} storage buffers per stage needed, the adapter allows {}",
            needs.storage_buffers, have.max_storage_buffers_per_shader_stage
        )));
    }
    let max_binding = have
        .max_storage_buffer_binding_size
        .min(have.max_buffer_size);
    if max_binding < needs.ft_bytes {
        return Err(unsupported(format!(
            "the feature-transformer weights take {} bytes, the largest storage binding is {}",
            needs.ft_bytes, max_binding
        )));
    }
    // Shrink the batch until its input buffer and its dispatch fit the limits.
    let by_binding = (max_binding.saturating_sub(8) / needs.input_bytes_per_position)
        .min(u64::from(u32::MAX)) as u32;
    let max_batch = needs
        .max_batch
        .min(by_binding)
        .min(have.max_compute_workgroups_per_dimension);
    if max_batch == 0 {
        return Err(unsupported(
            "storage bindings or dispatch size too small for one position".to_owned(),
        ));
    }
    let input_bytes = input_bytes(needs.input_bytes_per_position, max_batch);

    // Ask for no more than the shaders use, starting from the lowest common limits.
    let base = wgpu::Limits::downlevel_defaults();
    let required_limits = wgpu::Limits {
        max_storage_buffer_binding_size: base
            .max_storage_buffer_binding_size
            .max(needs.ft_bytes)
            .max(input_bytes),
        max_buffer_size: base.max_buffer_size.max(needs.ft_bytes).max(input_bytes),
        max_compute_workgroups_per_dimension: base
            .max_compute_workgroups_per_dimension
            .max(max_batch),
        max_compute_invocations_per_workgroup: base
            .max_compute_invocations_per_workgroup
            .max(needs.workgroup_size),
        max_compute_workgroup_size_x: base.max_compute_workgroup_size_x.max(needs.workgroup_size),
        ..base
    };

    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("chess-nn-gpu"),
        required_features: wgpu::Features::empty(),
        required_limits,
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
    .map_err(|e| GpuError::RequestDevice {
        adapter: summary.name.clone(),
        detail: e.to_string(),
    })?;

    // Without a handler wgpu panics on errors outside error scopes; record the first instead
    // so the evaluator can return it.
    let errors = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&errors);
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        tracing::error!(error = %e, "GPU device error");
        let mut slot = sink.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| e.to_string());
    }));
    let sink = Arc::clone(&errors);
    device.set_device_lost_callback(move |reason, message| {
        let mut slot = sink.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| format!("device lost ({reason:?}): {message}"));
    });

    Ok(Opened {
        device,
        queue,
        adapter: summary,
        max_batch,
        errors,
    })
}

/// Bytes of one slot's input buffer: the per-position share, the closing bound and one word
/// of padding for an odd number of u16 feature indices.
pub(crate) fn input_bytes(per_position: u64, positions: u32) -> u64 {
    8 + per_position * u64::from(positions)
}
