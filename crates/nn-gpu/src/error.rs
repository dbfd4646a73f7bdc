//! Why the GPU backend could not be set up or could not finish a batch.

/// Everything that can go wrong on the GPU path. The setup errors (`NoAdapter`, `Unsupported`,
/// `RequestDevice`) are the expected ones on machines without a usable GPU: the caller falls
/// back to the CPU backend (see [`crate::gpu_or_cpu`]). The others mean a bug or a lost device.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter (GPU or software rasteriser) was found by wgpu on any enabled backend.
    #[error(
        "no GPU adapter found ({detail}); install a Vulkan driver (mesa-vulkan-drivers for the \
         software one) or use the CPU backend"
    )]
    NoAdapter { detail: String },
    /// The adapter exists but lacks something the shaders need.
    #[error("GPU adapter {adapter:?} cannot run the evaluation shaders: {what}")]
    Unsupported { adapter: String, what: String },
    /// The adapter refused to open a device.
    #[error("GPU adapter {adapter:?} refused to open a device: {detail}")]
    RequestDevice { adapter: String, detail: String },
    /// The shader or pipeline failed validation: a bug in this crate.
    #[error("evaluation shader failed validation: {0}")]
    Shader(String),
    /// The network cannot be evaluated by these shaders (shape or constants out of range).
    #[error("network not supported by the GPU backend: {0}")]
    Network(String),
    /// The batch is malformed (offsets not increasing, too many features, bad index).
    #[error("invalid feature batch: {0}")]
    InvalidBatch(String),
    /// The device reported an error while running a batch (validation, out of memory, lost).
    #[error("GPU device error: {0}")]
    Device(String),
}
