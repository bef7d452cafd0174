//! The terms an estimate is made of: each one a product of named factors
//! (and, under ZeRO, a division by the GPUs), belonging to one component.
//!
//! The estimators compute every byte through a [`Term`], the phases are sets
//! of terms ([`TermSet`]), and the breakdown table renders the terms of the
//! peak: an explanation can only show the numbers that made the total.
//!
//! Shared at the top: imports only `component` (a term's component).

use crate::component::Component;

/// What one factor counts, for its label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Parameters (elements of weights).
    Params,
    /// Elements of some tensor(s).
    Elements,
    /// Bytes per element, per token or per key position.
    BytesEach,
    /// A plain count of copies.
    Copies,
    Tensors,
    Layers,
    /// Sequences in a micro-batch (B).
    Batch,
    /// Tokens per sequence (S).
    Seq,
    /// Key positions (S again, for attention scores).
    KeyPositions,
    /// Vocabulary entries (V).
    Vocab,
    /// Bytes (a size given whole).
    Bytes,
    /// MiB (2^20 bytes).
    Mib,
    /// Routed experts (E).
    Experts,
    /// Key/value blocks (vLLM's pool).
    Blocks,
}

impl Unit {
    /// How a factor of this unit is written after its number.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Params => " parameters",
            Unit::Elements => " elements",
            Unit::BytesEach | Unit::Bytes => " B",
            Unit::Copies => "",
            Unit::Tensors => " tensors",
            Unit::Layers => " layers",
            Unit::Batch => " sequences",
            Unit::Seq => " tokens",
            Unit::KeyPositions => " key positions",
            Unit::Vocab => " vocabulary",
            Unit::Mib => " MiB",
            Unit::Experts => " experts",
            Unit::Blocks => " blocks",
        }
    }
}

/// One factor of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Factor {
    pub value: u64,
    pub unit: Unit,
}

/// Most factors a term has.
const MAX_FACTORS: usize = 5;

macro_rules! term_ids {
    ($( $(#[$m:meta])* $variant:ident = $component:ident, $label:literal; )+) => {
        /// Every kind of term, in the order the breakdown lists them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum TermId { $( $(#[$m])* $variant ),+ }

        impl TermId {
            pub const ALL: &'static [TermId] = &[$(TermId::$variant),+];
            /// Each term's component, by the term's index.
            pub(crate) const COMPONENTS: &'static [Component] = &[$(Component::$component),+];
            pub const COUNT: usize = TermId::ALL.len();

            /// The component its bytes belong to.
            pub const fn component(self) -> Component {
                match self { $(TermId::$variant => Component::$component),+ }
            }

            /// What it is, in plain words.
            pub const fn label(self) -> &'static str {
                match self { $(TermId::$variant => $label),+ }
            }
        }
    };
}

term_ids! {
    Weights = Parameters, "weights";
    WeightsRecast = Parameters, "embeddings and head back in bf16 (TRL's SFTTrainer after k-bit preparation)";
    QuantWeights = Parameters, "quantized linear weights (4-bit: two per byte; int8: one)";
    QuantState = Parameters, "quantization constants (absmax per block, nested absmax and code tables; int8: a scale per row)";
    Buffers = Parameters, "buffers (RoPE tables, a causal mask)";
    WeightBlocks = Parameters, "the caching allocator's whole blocks: weights of 10 MiB or more within 1 MiB of their 2 MiB-rounded segment (plain segments)";
    LoraAdapters = Parameters, "LoRA adapters (fp32)";
    ZeroGathered = Parameters, "largest module gathered with its gradient (ZeRO-3)";
    DsPersistent = Parameters, "parameters under stage3_param_persistence_threshold, whole on every GPU (DeepSpeed)";
    DsGathered = Parameters, "parameters DeepSpeed keeps gathered from its second step (prefetched ahead, kept for reuse), up to stage3_max_live_parameters";
    DsModule = Parameters, "the largest parameter, gathered while its module runs (DeepSpeed's first step)";
    DsFlatAhead = Parameters, "flat all-gather buffers of the buckets prefetched ahead, until each bucket's last parameter is used (DeepSpeed, from its second step)";
    DsMaster = OptimizerState, "fp32 master partition (DeepSpeed, from deepspeed.initialize)";
    DsGradPartition = Gradients, "gradient partition in bf16 (DeepSpeed, from deepspeed.initialize)";
    DsReduceBucket = Gradients, "reduce bucket of reduce_bucket_size elements (DeepSpeed, from deepspeed.initialize)";
    DsReduceCat = Gradients, "the gradients of one reduce, concatenated (DeepSpeed: a full reduce bucket, or every gradient when they fit in one; counted at the end of backward)";
    DsStepGrads = OptimizerTemporaries, "fp32 copy of the gradient partition, during the step (DeepSpeed)";
    FsdpRoot = Parameters, "FSDP1's root unit gathered whole (embeddings, final norm, head), from the first forward to the end of backward";
    FsdpLayer = Parameters, "one decoder layer gathered whole (FSDP1)";
    FsdpPrefetch = Parameters, "the next decoder layer, gathered ahead (FSDP1's backward prefetch)";
    FsdpHeadPrefetch = Parameters, "the last decoder layer, gathered ahead of the head's backward (FSDP1's backward prefetch)";
    Fsdp2HeadPrefetch = Parameters, "the last decoder layer, gathered ahead from the head's backward on (FSDP2)";
    Fsdp2Tail = Parameters, "the final norm and the head gathered whole (FSDP2's tail unit), from the end of forward through the head's backward";
    Fsdp2Start = Parameters, "the input embedding (or the tied tail) gathered, with its all-gather output and layer 0's (FSDP2, the first forward moment)";
    Fsdp2Buffer = Parameters, "a decoder layer's all-gather output, kept until the next unit's copy-out (FSDP2)";
    Fsdp2LossBuffer = Parameters, "the last unit's all-gather output, kept through the loss to the forward's end (FSDP2)";
    Fsdp2EndUnit = Parameters, "the input embedding gathered again for its backward (FSDP2)";
    Moments = OptimizerState, "moments";
    StepCounters = OptimizerState, "step counters";
    Absmax = OptimizerState, "8-bit block scales (fp32 absmax per 256 elements)";
    Factored = OptimizerState, "factored second moments (rows + columns, fp32)";
    RmsScalars = OptimizerState, "RMS scalars";
    FactoredSoFar = OptimizerState, "factored moments created so far in the first step";
    RmsSoFar = OptimizerState, "RMS scalars created so far in the first step";
    Master = OptimizerState, "fp32 master weights and fp32 gradients";
    HostMaster = OptimizerState, "fp32 master weights (host)";
    HostMoments = OptimizerState, "optimizer moments, fp32 (host)";
    HostGrads = Gradients, "fp32 gradients the CPU optimizer reads (host)";
    Grads = Gradients, "gradients";
    PipeGradsForward = Gradients, "the rank's other stages' gradients made so far: at a forward";
    PipeGradsForwardGrads = Gradients, "the rank's other stages' gradients made so far: at a forward after a backward";
    PipeGradsBackwardFirst = Gradients, "the rank's other stages' gradients made so far: at the stage's first backward";
    PipeGradsBackward = Gradients, "the rank's other stages' gradients made so far: at a later backward";
    PipeGradsRest = Gradients, "the rank's other stages' gradients, once every backward has run";
    GradsButFirst = Gradients, "gradients made before layer 0's backward (all but layer 0's and the embedding's)";
    DdpBuckets = Gradients, "DDP's bucket copy of the gradients";
    HeadGrad = Gradients, "the output head's weight gradient";
    HeadGradCopy = Gradients, "gradient of the head's bf16 weight copy";
    LayerWeightGrad = Gradients, "the weight gradients a layer's backward has made at its MLP's moment (its down projection's; DeepSeek-V2's sorted loop on transformers 4: its experts' so far)";
    FsdpLayerGrad = Gradients, "a decoder layer's unsharded flat gradient, until its reduce-scatter (FSDP1)";
    Fsdp2RsKept = Gradients, "the tail's reduce-scatter input (or a layer's), kept until the next reduce-scatter (FSDP2)";
    Fsdp2RsLayer = Gradients, "a decoder layer's reduce-scatter input (FSDP2)";
    Fsdp2RsInput = Gradients, "layer 1's reduce-scatter input, being filled from its gradients (FSDP2)";
    Fsdp2EndGrads = Gradients, "the input embedding's gradient (the tied tail's), whole until its reduce-scatter, the last (FSDP2)";
    Fsdp2GradsRest = Gradients, "every other gradient as a shard (FSDP2, at the end of backward)";
    Fsdp2GradsDone = Gradients, "the gradient shards of every unit but layers 0 and 1 and the embedding (FSDP2, at layer 1's reduce-scatter)";
    LayerWeightGradFirst = Gradients, "the first weight gradient layer 0's backward makes (its MLP's down projection)";
    TiedGradSum = Gradients, "embedding and head gradients summed (tied weights)";
    MergedGrad = Gradients, "gradient of one merged LoRA expert weight (peft ParamWrapper), while its layer runs backward";
    Temps = OptimizerTemporaries, "step temporaries";
    TempsFirstStep = OptimizerTemporaries, "step temporaries (first step)";
    CopiesSaved = WeightCopies, "bf16 weight copies saved for backward";
    CopiesTransient = WeightCopies, "bf16 weight copies cached until autocast exits";
    Dequantized = WeightCopies, "the largest quantized weight, dequantized for its matmul in backward";
    DequantizedIo = Activations, "that matmul's incoming gradient and the input's gradient, in the compute dtype";
    DoraTransient = WeightCopies, "DoRA's weight norm at its largest layer: an identity of the input width, BA, the fp32 weight and W + s·BA";
    DequantizedFwd = WeightCopies, "the largest quantized weight, dequantized for its matmul in forward";
    Inputs = Activations, "token ids and labels the loop keeps (int64)";
    Labels = Activations, "shifted labels (int64)";
    LayerFirst = Activations, "saved by layer 0 (its input needs no gradient)";
    ScoresFirst = Activations, "attention scores of layer 0 (seq²)";
    Layers = Activations, "saved by each layer";
    Scores = Activations, "attention scores and probabilities (seq²)";
    MoeLayers = Activations, "saved by each MoE layer";
    MoeScores = Activations, "attention scores of the MoE layers (seq²)";
    GlobalLayers = Activations, "saved by each global layer (Gemma 4: its own head width and key/value heads)";
    GlobalScores = Activations, "attention scores of the global layers (seq²)";
    SharedLayers = Activations, "saved by each layer reusing an earlier layer's keys and values (Gemma 4)";
    SharedScores = Activations, "attention scores of the layers reusing keys and values (seq²)";
    SharedGlobalLayers = Activations, "saved by each global layer reusing an earlier layer's keys and values (Gemma 4)";
    SharedGlobalScores = Activations, "attention scores of the global layers reusing keys and values (seq²)";
    CkptSharedKv = Activations, "the keys and values the layers reusing them read, kept by their checkpoints (Gemma 4)";
    CkptRetainedKv = Activations, "the recomputed keys and values of the layers whose keys later layers reuse, with what their graph saved, kept to the end of backward by the earlier layers' checkpoints (Gemma 4)";
    PerLayerInputsGrad = Activations, "the per-layer inputs' gradient, summed over the layers' backward (Gemma 4)";
    LinearLayers = Activations, "saved by each recurrent layer (Gated DeltaNet, short convolution) per token";
    LinearSequences = Activations, "saved by each recurrent layer per sequence (a Gated DeltaNet's fp32 chunks of 64 positions, padded, with the state entering each; the convolution's extra steps) and once (the chunk mask, exp(A))";
    LinearSequencesFirst = Activations, "saved by layer 0's recurrent mixer per sequence and once (its input needs no gradient)";
    SlidingMasks = Activations, "sliding-window masks SDPA keeps (seq²)";
    CausalMasks = Activations, "the causal or sliding-window masks a forward builds once, kept through backward (seq²)";
    CausalMasksForward = Activations, "the causal or sliding-window masks a forward builds once (seq²)";
    MaskedKv = Activations, "keys and values repeated to every head where SDPA gets a mask";
    RouterLogits = Activations, "every MoE layer's router logits, kept for the auxiliary loss";
    CkptInputs = Activations, "checkpointed layer inputs";
    CkptInputFirst = Activations, "checkpointed inputs left at layer 0's backward (its own; every layer's when FSDP1 keeps them)";
    FsdpKeptGrads = Activations, "every layer's input gradient, kept by FSDP1's hooks until backward ends (reentrant checkpointing around frozen units, transformers ≤ 4.51)";
    QuantInputs = Activations, "linear inputs LLM.int8 holds beyond checkpointing (ctx.A)";
    QuantInputsFirst = Activations, "layer 0's linear inputs LLM.int8 holds (ctx.A)";
    CkptInFlight = Activations, "one checkpointed input, on its way to or from host memory";
    PipeInputsForward = Activations, "inputs the last stage holds of micro-batches through backward: at a forward";
    PipeInputsForwardGrads = Activations, "inputs the last stage holds of micro-batches through backward: at a forward after a backward";
    PipeInputsBackwardFirst = Activations, "inputs the last stage holds of micro-batches through backward: at the first backward";
    PipeInputsBackward = Activations, "inputs the last stage holds of micro-batches through backward: at a later backward";
    PipeInputsStep = Activations, "every input the last stage holds until the next step";
    PipeStageOutput = Activations, "the stage's output, kept for its backward (fwd_cache)";
    PipeWaitingForward = Activations, "micro-batches waiting for their backward: at a forward";
    PipeWaitingForwardGrads = Activations, "micro-batches waiting for their backward: at a forward after a backward";
    PipeWaitingBackwardFirst = Activations, "micro-batches waiting for their backward: at the first backward";
    PipeWaitingBackward = Activations, "micro-batches waiting for their backward: at a later backward";
    PipeOthersForward = Activations, "micro-batches waiting on the rank's stages of the other kind: at a forward";
    PipeOthersForwardGrads = Activations, "micro-batches waiting on the rank's stages of the other kind: at a forward after a backward";
    PipeOthersBackwardFirst = Activations, "micro-batches waiting on the rank's stages of the other kind: at the stage's first backward";
    PipeOthersBackward = Activations, "micro-batches waiting on the rank's stages of the other kind: at a later backward";
    Outer = Activations, "final norm and head input";
    OuterEmbedding = Activations, "what the embedding saves (its dropout mask)";
    PositionTables = Activations, "position tables (RoPE cos and sin, position ids)";
    PaddedLabels = Activations, "labels padded by one position while the loss runs (int64)";
    CachePresents = Activations, "every layer's key/value cache, kept under checkpointing until the outputs are dropped (GPTBigCode, transformers ≤ 4.52)";
    LastHidden = Activations, "the last hidden state while the loss runs";
    GradHidden = Activations, "gradient of the last hidden state";
    FinalNormBackward = Activations, "the final RMSNorm's backward: five fp32 token × hidden temporaries";
    EmbeddingGrad = Activations, "gradient of the embedding output";
    EmbeddingGradNew = Gradients, "the embedding's new gradient, before AccumulateGrad adds it to the one kept";
    Recompute = Activations, "one layer's saved tensors (recomputed under checkpointing)";
    RecomputeLinear = Activations, "its recurrent mixer's tensors per sequence and once (a Gated DeltaNet's chunks, the convolution's extra steps)";
    RecomputeOutput = Activations, "its output, kept through its backward (reentrant checkpointing)";
    RecomputeLora = Activations, "its recompute inside a LoRA adapter, at its highest: what it saved by then, the base output, lora_B's output and its scaled copy";
    LayerBackward = Activations, "a layer's gradients at its MLP's backward: three ffn-wide, less what it frees (DeepSeek-V2's sorted loop: its experts' slice gradients added up)";
    LayerBackwardEntry = Activations, "a MoE layer's gradients entering its experts' backward: three hidden-wide per routed token (DeepSeek-V2's sorted loop: its weighting's two fp32 ones)";
    LayerForward = Activations, "a checkpointed layer's forward: the MLP's inputs and outputs at once (nothing saved)";
    LinearForward = Activations, "a checkpointed recurrent layer's forward at its highest moment (nothing saved): a Gated DeltaNet's projections' and convolution's outputs inside its chunked rule, every chunk's fp32 tensors at once, the state and one chunk's loop temporaries; a short convolution's projections and convolution at out_proj";
    LayerForwardCopies = WeightCopies, "its frozen weights' copies until then (an adapted down experts' merge comes later)";
    ForwardCopies = WeightCopies, "its largest frozen weight's bf16 copy (each lives through its own matmul)";
    ExpertsLoopForward = Activations, "the last MoE layer's forward in transformers 4's per-expert loop, beyond what it saves: at the last expert's down projection that expert's product and output (with LoRA, peft's fp32 copies of its input), the block's output under construction and its routing mask; in DeepSeek-V2's sorted loop, at the sum, every expert's output, their concatenation, the reordered rows and their fp32 copy";
    LayerForwardDown = Activations, "a checkpointed MoE layer's forward at its down experts: the routed inputs, the product and the output";
    LayerForwardQuant = Activations, "a checkpointed quantized layer's forward at its largest matmul: the MLP's input, its cast and output in the compute dtype";
    RecomputeScores = Activations, "its attention scores (seq²)";
    RecomputeCopies = WeightCopies, "its bf16 weight copies";
    RecomputeMask = Activations, "its sliding-window mask (seq²)";
    RecomputeMaskedKv = Activations, "its keys and values repeated to every head (SDPA with a mask)";
    RecomputeMaskedKvFirst = Activations, "layer 0's keys and values repeated to every head (SDPA with a mask)";
    RecomputeAttn = Activations, "its attention's saved tensors (the MLP's released)";
    ScoresTransient = Activations, "attention's score-sized temporaries in a layer's forward (eager with sinks, the math kernel; seq²)";
    ScoresMask = Activations, "the math kernel's fp32 copy of the (seq, seq) mask in forward";
    ScoresTransientBwd = Activations, "attention's score-sized gradients in a layer's backward (eager with sinks, the math kernel; seq²)";
    RecomputeFirst = Activations, "layer 0's saved tensors (recomputed under checkpointing)";
    RecomputeLinearFirst = Activations, "its recurrent mixer's tensors per sequence and once (a Gated DeltaNet's chunks, the convolution's extra steps)";
    RecomputeLoraFirst = Activations, "its recompute inside a LoRA adapter, at its highest: what it saved by then, the base output, lora_B's output and its scaled copy";
    RecomputeScoresFirst = Activations, "its attention scores (seq²)";
    RecomputeCopiesFirst = WeightCopies, "its bf16 weight copies";
    LayerBackwardFirst = Activations, "layer 0's gradients at its MLP's backward: three ffn-wide, less what it frees";
    LayerBackwardEntryFirst = Activations, "layer 0's gradients entering its experts' backward (MoE): three hidden-wide per routed token";
    LogitsOut = Logits, "logits in the compute dtype";
    LogitsUpcast = Logits, "logits upcast to fp32";
    LogitsShifted = Logits, "logits shifted by one position, a contiguous copy (transformers 4.46 to 4.48)";
    LogSoftmax = Logits, "fp32 log-softmax saved by the loss";
    LogitsKept = Logits, "logits kept by the output object";
    LogitsSoftcap = Logits, "tanh of the softcapped logits, kept for backward";
    LogitsGrads = Logits, "gradients of the log-softmax and the logits (fp32)";
    LogitsGradOut = Logits, "gradient of the logits in the compute dtype";
    PipeKeptForward = Logits, "outputs the last stage keeps (output_chunks): at a forward";
    PipeKeptForwardGrads = Logits, "outputs the last stage keeps (output_chunks): at a forward after a backward";
    PipeKeptBackwardFirst = Logits, "outputs the last stage keeps (output_chunks): at the first backward";
    PipeKeptBackward = Logits, "outputs the last stage keeps (output_chunks): at a later backward";
    PipeKeptStep = Logits, "every output the last stage keeps (output_chunks) until the next step";
    Dataset = Retained, "data put on the GPU";
    CublasWorkspaces = Retained, "cuBLAS workspaces: the forward's and the backward's threads (CUDA only)";
    SeedModel = Parameters, "model = N × P";
    SeedState = OptimizerState, "optimizer state = k × N × P";
    SeedGrads = Gradients, "gradients = N × P";
    SeedIntermediates = OptimizerTemporaries, "optimizer intermediates = N × P";
    SeedActivations = Activations, "activations = A × B × S × P, A = 4.6894e-4 × N + 1.8494e6";
    PrefillKv = KvCache, "key/value cache of the full-attention layers run so far (sequences × tokens × layers × bytes per token)";
    PrefillKvSliding = KvCache, "key/value cache of the sliding-window layers run so far";
    PrefillKvGrowing = KvCache, "the running layer's new keys and values (or a Gated DeltaNet layer's states as it makes them)";
    PrefillRecurrent = KvCache, "Gated DeltaNet layers' states made so far (layers × (convolution state + fp32 recurrent state) for the batch)";
    PrefillActivations = Activations, "the forward's live tensors at its largest moment";
    PrefillLogits = Logits, "logits of the last position and their fp32 copies (generate's scores, the logits processors' outputs)";
    PrefillState = Engine, "the prompt's ids and mask, generate's position ids, the ids' clone and flags (int64)";
    DecodeKv = KvCache, "key/value cache of the full-attention layers this step has run (sequences × tokens × layers × bytes per token)";
    DecodeKvSliding = KvCache, "key/value cache of the sliding-window layers this step has run (at most the window)";
    DecodeKvBehind = KvCache, "key/value cache of the full-attention layers this step has not reached (one token fewer)";
    DecodeKvSlidingBehind = KvCache, "key/value cache of the sliding-window layers this step has not reached";
    DecodeKvGrowing = KvCache, "the running layer's cache as torch.cat grows it: its old and new keys (and values) at once; or a Gated DeltaNet layer's states";
    DecodeRecurrent = KvCache, "the other Gated DeltaNet layers' states (layers × (convolution state + fp32 recurrent state) for the batch)";
    DecodeActivations = Activations, "the step's live tensors at its largest moment";
    DecodeLogits = Logits, "this step's logits and the fp32 scores of this step and the last (generate, the logits processors)";
    GenerateCublas = Engine, "cuBLAS workspace: generate's thread, from its first matmul (CUDA only)";
    DecodeState = Engine, "the prompt's ids and mask, generate's position and token ids so far and flags (int64)";
    VllmWeights = Parameters, "weights as vLLM loads them (its layout, this GPU's share, the allocator's 512-byte blocks), with the rotary cache and the attention scales";
    VllmHostWeights = Parameters, "weights vLLM holds in host memory for this GPU (cpu_offload_gb), read over UVA at every forward";
    VllmRunner = Engine, "the model runner's buffers (the sampler's penalty counts per sequence and vocabulary entry, the input buffers)";
    VllmActivation = Activations, "the profiling run's peak, kept in reserve for serving (max_num_batched_tokens through the model, then the sampler): vLLM measures it; estimated";
    VllmNonTorch = Engine, "memory outside PyTorch counted in the budget (libraries' buffers, lazily loaded kernels): vLLM measures it; an allowance";
    VllmGraphs = Engine, "CUDA graphs, as vLLM estimates them before the pool (its largest capture and 1 MiB for each further one): vLLM measures it; estimated";
    VllmPool = KvCache, "the key/value pool: blocks × bytes per block (every layer group's pages), the rest of the budget";
    VllmKvNeeded = KvCache, "key/value blocks one request of max_model_len needs, and the null block";
    LocalWeights = Parameters, "the GGUF's tensors on the GPU (the layers -ngl puts there, the output layer; CUDA pads quantized rows)";
    LocalKv = KvCache, "key/value cache of the layers on the GPU (n_ctx cells, each row in the cache type's blocks)";
    LocalCompute = Activations, "compute buffer of the largest graph (llama.cpp sizes it by reserving its graphs: estimated)";
    LocalLora = Parameters, "the LoRA adapter's tensors on the GPU (--lora: A and B of each adapted weight there, in the adapter's type; loaded after --fit placed the model, which does not count them)";
    LocalHostWeights = Parameters, "the GGUF's tensors in host memory: the token embedding, the layers left on the CPU (host)";
    LocalHostKv = KvCache, "key/value cache of the layers on the CPU (host)";
    LocalHostLora = Parameters, "the LoRA adapter's tensors in host memory, beside the layers left on the CPU (host)";
    LocalHostCompute = Activations, "the CPU's compute buffer (host)";
    LocalOutput = Logits, "the output buffer: logits of a batch's outputs (host)";
    MlxWeights = Parameters, "weights as mlx_lm.convert writes them (quantized: packed N-bit weights and per group a scale and a bias, or one 8-bit scale in the mxfp4, nvfp4 and mxfp8 modes)";
    MlxKv = KvCache, "key/value cache, grown in steps of 256 tokens (quantized with kv_bits)";
    MlxState = KvCache, "the Gated DeltaNet layers' states (layers × (the convolution's last kernel − 1 inputs + the fp32 recurrent state))";
    MlxGrowth = KvCache, "the cache's last growth: concatenate holds a layer's old arrays a moment";
    MlxPrefill = Activations, "one prompt chunk's activations (prefill_step_size tokens; estimated)";
}

/// One term: named factors, multiplied, divided by `divisor` (rounded up).
///
/// Factors are kept as `u64` (a term is copied often: 56 bytes, not 200): a
/// factor beyond `u64` is held at `u64::MAX` and marks the term
/// `saturated`, whose product is then beyond `u128`'s range unless another
/// factor is zero, so the checked conversion to bytes fails exactly as it
/// would have (never a held figure reported as bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    values: [u64; MAX_FACTORS],
    units: [Unit; MAX_FACTORS],
    len: u8,
    /// A factor was beyond `u64` (held at `u64::MAX`).
    saturated: bool,
    /// ZeRO's GPUs (1: not divided).
    divisor: u32,
}

impl Term {
    pub const ZERO: Term = Term {
        values: [0; MAX_FACTORS],
        units: [Unit::Copies; MAX_FACTORS],
        len: 0,
        saturated: false,
        divisor: 1,
    };

    /// The product of `factors` (at most five).
    pub fn of(factors: &[(u128, Unit)]) -> Term {
        debug_assert!(factors.len() <= MAX_FACTORS, "{factors:?}");
        // Written in place (a fold of `times` moves the term at each step).
        let mut t = Term::ZERO;
        let n = factors.len().min(MAX_FACTORS);
        for (i, &(value, unit)) in factors[..n].iter().enumerate() {
            t.values[i] = t.held(value);
            t.units[i] = unit;
        }
        t.len = n as u8;
        t
    }

    /// This term times one more factor (a sixth is dropped: terms are
    /// written with at most five, checked in debug builds).
    pub fn times(mut self, value: u128, unit: Unit) -> Term {
        let i = usize::from(self.len);
        debug_assert!(i < MAX_FACTORS, "a sixth factor: {self:?}");
        if i < MAX_FACTORS {
            self.values[i] = self.held(value);
            self.units[i] = unit;
            self.len += 1;
        }
        self
    }

    /// `value` as a factor: itself, or `u64::MAX` with the term marked
    /// saturated.
    fn held(&mut self, value: u128) -> u64 {
        u64::try_from(value).unwrap_or_else(|_| {
            self.saturated = true;
            u64::MAX
        })
    }

    /// The same term spread over `gpus` (rounded up) when `on`.
    pub fn split(mut self, gpus: u32, on: bool) -> Term {
        if on {
            self.divisor = gpus.max(1);
        }
        self
    }

    /// The factors, in order.
    pub fn factors(&self) -> impl ExactSizeIterator<Item = Factor> + '_ {
        let n = usize::from(self.len);
        self.values[..n]
            .iter()
            .zip(&self.units[..n])
            .map(|(&value, &unit)| Factor { value, unit })
    }

    pub fn divisor(&self) -> u32 {
        self.divisor
    }

    /// The product of the factors, saturating (the sizes it can take are
    /// far below u128's range; the conversion to bytes is checked):
    /// `u128::MAX` for a saturated term unless a factor is zero.
    pub fn product(&self) -> u128 {
        if self.len == 0 {
            return 0;
        }
        let values = &self.values[..usize::from(self.len)];
        // Most products fit in 64 bits: multiplied there (one checked
        // multiply a factor), the same product; the others in 128.
        let p = match values.iter().try_fold(1u64, |p, &v| p.checked_mul(v)) {
            Some(p) => u128::from(p),
            None => values
                .iter()
                .fold(1u128, |p, &v| mul_saturating(p, u128::from(v))),
        };
        if self.saturated && p > 0 {
            u128::MAX
        } else {
            p
        }
    }

    /// Bytes: the product divided by the GPUs, rounded up.
    pub fn bytes(&self) -> u128 {
        let p = self.product();
        match (self.divisor, u64::try_from(p)) {
            (1, _) => p,
            // A 64-bit division where the product fits (the same
            // quotient, without the 128-bit division's call).
            (d, Ok(small)) => u128::from(small.div_ceil(u64::from(d))),
            (d, Err(_)) => p.div_ceil(u128::from(d)),
        }
    }
}

/// `a × b`, saturating at `u128::MAX`: when the operands' bit lengths add
/// up to at most 128 the product cannot overflow and is a plain multiply
/// (the usual case, and much cheaper than an overflow-checked one).
fn mul_saturating(a: u128, b: u128) -> u128 {
    let bits = (128 - a.leading_zeros()) + (128 - b.leading_zeros());
    if bits <= 128 {
        a.wrapping_mul(b)
    } else {
        a.saturating_mul(b)
    }
}

/// Words of a [`TermSet`]'s bitmask: room for 256 kinds of terms.
const WORDS: usize = 4;
/// Bits of a [`TermSet`].
const BITS: usize = WORDS * 64;

/// What [`TermSet::zip`] does with two words.
#[derive(Clone, Copy)]
enum SetOp {
    Or,
    AndNot,
    And,
}

/// A set of terms alive at one moment (a bitmask, a term's bit its index).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TermSet([u64; WORDS]);

impl TermSet {
    pub const EMPTY: TermSet = TermSet([0; WORDS]);
    /// Every term's bit.
    const ALL_BITS: TermSet = {
        let mut t = TermSet::EMPTY;
        let mut i = 0;
        while i < TermId::COUNT {
            t.0[i / 64] |= 1 << (i % 64);
            i += 1;
        }
        t
    };

    pub const fn of(ids: &[TermId]) -> TermSet {
        let mut t = TermSet::EMPTY;
        let mut i = 0;
        while i < ids.len() {
            t = t.with(ids[i]);
            i += 1;
        }
        t
    }

    pub const fn with(mut self, id: TermId) -> TermSet {
        let i = id as usize;
        self.0[i / 64] |= 1 << (i % 64);
        self
    }

    /// Word by word, `op` of this set's and `other`'s words.
    const fn zip(mut self, other: TermSet, op: SetOp) -> TermSet {
        let mut w = 0;
        while w < WORDS {
            self.0[w] = match op {
                SetOp::Or => self.0[w] | other.0[w],
                SetOp::AndNot => self.0[w] & !other.0[w],
                SetOp::And => self.0[w] & other.0[w],
            };
            w += 1;
        }
        self
    }

    pub const fn union(self, other: TermSet) -> TermSet {
        self.zip(other, SetOp::Or)
    }

    pub const fn without(self, other: TermSet) -> TermSet {
        self.zip(other, SetOp::AndNot)
    }

    /// The terms in both.
    pub const fn and(self, other: TermSet) -> TermSet {
        self.zip(other, SetOp::And)
    }

    /// Adds or removes `id` in place: one word written (building a
    /// one-bit set and merging it stalled on the store of its words:
    /// a quarter of an estimate's time went there).
    fn put(&mut self, id: TermId, on: bool) {
        let i = id as usize;
        let bit = 1u64 << (i % 64);
        let word = &mut self.0[i / 64];
        *word = if on { *word | bit } else { *word & !bit };
    }

    pub const fn contains(self, id: TermId) -> bool {
        let i = id as usize;
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// The terms, in [`TermId::ALL`] order (a term's bit is its index).
    pub fn iter(self) -> impl Iterator<Item = TermId> {
        self.0.into_iter().enumerate().flat_map(|(w, word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                TermId::ALL.get(i).copied()
            })
        })
    }
}

/// The value of every term of one estimate.
#[derive(Clone)]
pub struct Terms {
    /// Boxed: a few kilobytes that an [`crate::Estimate`] carries around.
    inner: Box<TermsInner>,
}

/// Each term set and its bytes, computed once when it is set (every phase
/// sums dozens of sets of them). An estimate sets a third of the kinds of
/// terms: the terms themselves are kept in the order they were set, so a
/// new estimate zeroes only the small tables (a table of every term was
/// 9 KB written, then copied, per estimate).
#[derive(Clone)]
struct TermsInner {
    /// Each term's bytes by its index: the hot loop indexes it by bit.
    bytes: [u128; TermId::COUNT],
    /// Where each term is in `items`, plus one (0: never set).
    at: [u8; TermId::COUNT],
    /// The terms set, in the order they were first set.
    items: Vec<Term>,
    /// The terms that hold bytes.
    present: TermSet,
}

// A term's place in `items` plus one fits `TermsInner::at`'s bytes.
const _: () = assert!(TermId::COUNT < u8::MAX as usize);

impl Default for Terms {
    fn default() -> Self {
        Terms {
            inner: Box::new(TermsInner {
                bytes: [0; TermId::COUNT],
                at: [0; TermId::COUNT],
                // Room for every term: none is ever moved, and the room
                // not set is never written.
                items: Vec::with_capacity(TermId::COUNT),
                present: TermSet::EMPTY,
            }),
        }
    }
}

/// Equal when every term is (the bytes and the present terms follow from
/// the terms), whatever order they were set in.
impl PartialEq for Terms {
    fn eq(&self, other: &Terms) -> bool {
        TermId::ALL.iter().all(|&id| self.get(id) == other.get(id))
    }
}

impl Eq for Terms {}

/// The terms set, in [`TermId::ALL`] order.
impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = TermId::ALL
            .iter()
            .filter(|&&id| self.inner.at[id as usize] > 0);
        f.debug_map()
            .entries(set.map(|&id| (id, self.get(id))))
            .finish()
    }
}

impl Terms {
    pub fn get(&self, id: TermId) -> &Term {
        /// What a term never set is.
        static ZERO: Term = Term::ZERO;
        match usize::from(self.inner.at[id as usize]) {
            0 => &ZERO,
            k => &self.inner.items[k - 1],
        }
    }

    pub fn set(&mut self, id: TermId, t: Term) {
        // Held at 2^64 at most: beyond it no sum converts to bytes anyway,
        // and sums of up to 256 such values cannot overflow a u128.
        let bytes = t.bytes().min(1 << 64);
        let inner = &mut *self.inner;
        inner.bytes[id as usize] = bytes;
        match usize::from(inner.at[id as usize]) {
            0 => {
                inner.items.push(t);
                // At most `TermId::COUNT` (< 255) terms are ever pushed.
                inner.at[id as usize] = inner.items.len() as u8;
            }
            k => inner.items[k - 1] = t,
        }
        inner.present.put(id, bytes > 0);
    }

    /// The terms that hold bytes: a moment's other terms add nothing.
    pub fn present(&self) -> TermSet {
        self.inner.present
    }

    pub fn bytes(&self, id: TermId) -> u128 {
        self.inner.bytes[id as usize]
    }

    /// Calls `f(component, bytes)` for each term of `set`: the phases' hot
    /// loop, walking the set's bits.
    pub(crate) fn each(&self, set: TermSet, mut f: impl FnMut(Component, u128)) {
        let bits = set.and(TermSet::ALL_BITS);
        // Word by word, each set bit a term's index.
        for (w, &word) in bits.0.iter().enumerate() {
            let mut b = word;
            while b != 0 {
                let i = w * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                // Every bit of `bits` is a term's: always `Some`.
                if let Some(&bytes) = self.inner.bytes.get(i) {
                    f(COMPONENT_OF[i % BITS], bytes);
                }
            }
        }
    }
}

/// Each term's component by its bit, padded to a [`TermSet`]'s bits
/// (padding is never reached: [`Terms::each`] masks the bits of terms).
const COMPONENT_OF: [Component; BITS] = {
    let mut out = [Component::Overhead; BITS];
    let mut i = 0;
    while i < TermId::COUNT {
        out[i] = TermId::COMPONENTS[i];
        i += 1;
    }
    out
};

// A TermSet has a bit for each kind of term.
const _: () = assert!(TermId::COUNT <= BITS);

#[cfg(test)]
mod tests {
    use super::*;

    /// `Term::of` writes the factors in place: the same term as one
    /// `times` after another, a factor beyond `u64` held at `u64::MAX`
    /// (so the product stays beyond `u64`, as the checked conversion to
    /// bytes needs).
    #[test]
    fn of_is_times_in_order() {
        let big = u128::from(u64::MAX) + 1;
        let cases: [&[(u128, Unit)]; 5] = [
            &[],
            &[(7, Unit::Bytes)],
            &[(8, Unit::Batch), (4096, Unit::Seq), (4096, Unit::Elements)],
            &[(big, Unit::Elements), (2, Unit::BytesEach)],
            &[
                (8, Unit::Batch),
                (4096, Unit::Seq),
                (32, Unit::Layers),
                (u128::MAX, Unit::Elements),
                (2, Unit::BytesEach),
            ],
        ];
        for factors in cases {
            let folded = factors.iter().fold(Term::ZERO, |t, &(v, u)| t.times(v, u));
            let t = Term::of(factors);
            assert_eq!(t, folded, "{factors:?}");
            assert_eq!(t.factors().len(), factors.len());
        }
        let t = Term::of(&[(big, Unit::Elements), (2, Unit::BytesEach)]);
        assert_eq!(t.factors().next().map(|f| f.value), Some(u64::MAX));
        assert!(t.bytes() > u128::from(u64::MAX));
        // Held alone, or spread over GPUs, a factor past 64 bits still
        // converts to no bytes (it read 2^64 - 1 bytes, or an eighth);
        // times zero it is zero.
        for t in [
            Term::of(&[(big, Unit::Bytes)]),
            Term::of(&[(big, Unit::Params), (1, Unit::BytesEach)]).split(8, true),
            Term::of(&[(1, Unit::Params)]).times(big, Unit::BytesEach),
        ] {
            assert!(t.bytes() > u128::from(u64::MAX), "{t:?}");
        }
        assert_eq!(
            Term::of(&[(big, Unit::Params), (0, Unit::BytesEach)]).bytes(),
            0
        );
        assert_eq!(
            Term::of(&[(3, Unit::Elements), (2, Unit::BytesEach)]).bytes(),
            6
        );
    }
}
