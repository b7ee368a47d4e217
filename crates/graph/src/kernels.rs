//! The kernel table: each registered op's run-time computation on tensorcast's eager kernels,
//! with TensorFlow's run-time (kernel) messages.

use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels as ops;
use tensorcast_kernels::elementwise::{binary, BinaryOp};

use crate::attr::{self, Attrs};
use crate::error::{Error, Result};
use crate::registry::opdef::{Op, OpDef, MAX_OUTPUTS};
use crate::registry::Run;

use tensorcast_core::Error as CoreError;

/// What one graph may keep, in all, of values known at graph time (decoded constants and folded
/// results), in bytes. Past it, further values are simply not known at graph time (inference
/// gives less precise shapes; nothing fails), so a GraphDef of many constants costs memory in
/// proportion to its own size, never 65,536 decoded elements per 20-byte node.
pub(crate) const VALUE_BUDGET_BYTES: u64 = 1 << 20;

/// A kernel's result, its error as the graph's (attributed to a node later).
pub(crate) fn kernel<T>(r: tensorcast_core::Result<T>) -> Result<T> {
    r.map_err(|source| Error::Kernel {
        node: String::new(),
        location: Box::default(),
        source: Box::new(source),
    })
}

/// A kernel's own argument check failing.
fn invalid(e: tensorcast_core::Error) -> Error {
    Error::Kernel {
        node: String::new(),
        location: Box::default(),
        source: Box::new(e),
    }
}

/// `Equal`/`NotEqual`'s `incompatible_shape_error` (true for the other ops, which ignore it).
pub(crate) fn incompatible_shape_error(attrs: &Attrs) -> bool {
    attr::get_bool(attrs, "incompatible_shape_error").unwrap_or(true)
}

/// A node's computation, resolved once when a run's plan is built (TensorFlow builds its
/// `OpKernel`s once per executor): attrs read, a `Const`'s value decoded, an op without a kernel
/// turned into the error running it gives. Running it reads no attrs and no op names.
#[derive(Debug)]
pub(crate) enum Kernel {
    /// `Const`: its decoded value.
    Const(Tensor),
    /// Running the node fails with this error (already attributed to the node).
    Fail(Error),
    /// `NoOp`: nothing to compute (a node others depend on by control edges).
    NoOp,
    /// `Identity`.
    Identity,
    /// `Cast`.
    Cast {
        /// `DstT`.
        dst: DataType,
        /// `Truncate`.
        truncate: bool,
    },
    /// `Shape`.
    Shape {
        /// `out_type`.
        out_type: DataType,
    },
    /// `Bitcast`.
    Bitcast {
        /// `type`.
        dst: DataType,
    },
    /// `BroadcastTo`.
    BroadcastTo,
    /// `Reshape`.
    Reshape,
    /// A registry op (`registry/`): its kernel, the node's attrs and output dtypes.
    Reg {
        /// The kernel.
        kernel: crate::registry::KernelFn,
        /// For an op that sizes its outputs from values it reads, its shape function: run on
        /// the actual inputs before the kernel, to check the outputs against the run's
        /// allocation limit.
        sized_by: Option<crate::registry::ShapeFn>,
        /// The node's attrs.
        attrs: Box<Attrs>,
        /// Its output dtypes.
        out_types: Vec<DataType>,
    },
    /// A fused chain of element-wise nodes (`plan::fuse`), run as its last node.
    Fused(Box<crate::plan::fuse::Fused>),
    /// A convolution and the fused chain reading it, in one pass (`plan::conv_chain`), run as
    /// the chain's last node.
    ConvChain(Box<crate::plan::conv_chain::ConvChain>),
    /// `Softmax` of a `float` `Mul` by a scalar constant, in one pass (`plan::softmax`).
    ScaledSoftmax {
        /// The constant.
        scale: f32,
        /// Whether the constant is the `Mul`'s first operand.
        scale_first: bool,
    },
    /// An element-wise binary op.
    Binary {
        /// The op.
        op: BinaryOp,
        /// `incompatible_shape_error` (true for the ops without the attr).
        incompatible_shape_error: bool,
    },
}

impl Kernel {
    /// True when running a node of op `kind` (`None`: an op tensorcast does not know) needs no
    /// kernel tensorcast lacks (a placeholder counts as available: it fails only when it is not
    /// fed): every registered op has a kernel.
    pub(crate) fn available(kind: Option<Op>) -> bool {
        match kind {
            Some(Op::Reg(r)) => r.entry().kernel.is_some(),
            Some(_) => true,
            None => false,
        }
    }

    /// The kernel of a registered op with `attrs`; a `Const` may decode at most
    /// `max_constant_bytes` of values its proto does not carry.
    pub(crate) fn for_op(op: Op, attrs: &Attrs, max_constant_bytes: u64) -> Kernel {
        match op {
            Op::Const => match const_value(attrs, max_constant_bytes) {
                Ok(t) => Kernel::Const(t),
                Err(e) => Kernel::Fail(e),
            },
            // Resolved with its node (the message names it); never run otherwise.
            Op::Placeholder => Kernel::Fail(Error::Internal("an unfed placeholder ran".into())),
            Op::NoOp => Kernel::NoOp,
            Op::Identity => Kernel::Identity,
            Op::Cast => Kernel::Cast {
                dst: attr::get_type(attrs, "DstT").unwrap_or(DataType::INVALID),
                truncate: attr::get_bool(attrs, "Truncate").unwrap_or(false),
            },
            Op::Shape => Kernel::Shape {
                out_type: attr::get_type(attrs, "out_type").unwrap_or(DataType::INT32),
            },
            Op::Bitcast => Kernel::Bitcast {
                dst: attr::get_type(attrs, "type").unwrap_or(DataType::INVALID),
            },
            Op::BroadcastTo => Kernel::BroadcastTo,
            Op::Reshape => Kernel::Reshape,
            Op::Binary(op) => Kernel::Binary {
                op,
                incompatible_shape_error: incompatible_shape_error(attrs),
            },
            Op::Reg(r) => {
                let entry = r.entry();
                let out_types = OpDef::expand(entry.def.outputs, attrs, MAX_OUTPUTS).map(|v| {
                    v.into_iter()
                        .map(|d| d.unwrap_or(DataType::INVALID))
                        .collect()
                });
                match (entry.kernel, out_types) {
                    (Some(kernel), Some(out_types)) => Kernel::Reg {
                        kernel,
                        sized_by: entry.sized_by_values.then_some(entry.shape),
                        attrs: Box::new(attrs.clone()),
                        out_types,
                    },
                    (None, _) => Kernel::Fail(Error::NoKernel {
                        op: entry.def.name.to_string(),
                        node: String::new(),
                        location: Box::default(),
                    }),
                    (_, None) => Kernel::Fail(Error::Internal(format!(
                        "{}: output count not derivable from attrs",
                        entry.def.name
                    ))),
                }
            }
        }
    }

    /// True for the kernels that can take a lazy broadcast as input without materialising it.
    pub(crate) fn reads_lazy(&self) -> bool {
        matches!(
            self,
            Kernel::Binary { .. }
                | Kernel::Shape { .. }
                | Kernel::Identity
                | Kernel::Cast { .. }
                | Kernel::BroadcastTo
                | Kernel::Bitcast { .. }
        )
    }

    /// Runs a kernel that may have several outputs on `inputs` within `run`: every output, in
    /// order.
    pub(crate) fn compute_all(
        &self,
        inputs: Vec<Tensor>,
        node: &str,
        run: &Run<'_>,
    ) -> Result<Vec<Tensor>> {
        match self {
            Kernel::Reg {
                kernel,
                sized_by,
                attrs,
                out_types,
            } => {
                if let Some(shape) = sized_by {
                    check_sized_outputs(*shape, attrs, out_types, &inputs, run)?;
                }
                let out = kernel(
                    &crate::registry::KernelCtx {
                        node,
                        attrs,
                        out_types,
                        run,
                    },
                    inputs,
                )?;
                if out.len() != out_types.len() {
                    return Err(Error::Internal(format!(
                        "a kernel gave {} outputs for {}",
                        out.len(),
                        out_types.len()
                    )));
                }
                Ok(out)
            }
            Kernel::NoOp => Ok(Vec::new()),
            k => Ok(vec![k.compute(&inputs)?]),
        }
    }

    /// A binary kernel on two scalars taken by value (a loop body's counter and accumulator):
    /// `Ok` with what [`Kernel::compute`] gives on them when the single-element fast path
    /// applies (the result possibly written into an operand's buffer that nothing else holds,
    /// see [`ops::elementwise::binary_scalars`]); `Err` with the operands back otherwise, and
    /// for every other kernel.
    #[allow(
        clippy::result_large_err,
        reason = "as `binary_scalars`: the operands come back by value, unboxed"
    )]
    pub(crate) fn compute_scalars(
        &self,
        x: Tensor,
        y: Tensor,
    ) -> std::result::Result<Result<Tensor>, (Tensor, Tensor)> {
        match self {
            Kernel::Binary { op, .. } => ops::elementwise::binary_scalars(*op, x, y).map(kernel),
            _ => Err((x, y)),
        }
    }

    /// True for kernels with other than one output (run through [`Kernel::compute_all`]).
    pub(crate) fn multi(&self) -> bool {
        matches!(self, Kernel::Reg { .. })
    }

    /// Runs the kernel on `inputs` (as many as the node has; checked by the plan).
    pub(crate) fn compute(&self, inputs: &[Tensor]) -> Result<Tensor> {
        let x = |i: usize| {
            inputs
                .get(i)
                .ok_or_else(|| Error::Internal(format!("missing input {i}")))
        };
        Ok(match self {
            Kernel::Fused(f) => f.run(x(0)?.clone())?,
            Kernel::ConvChain(c) => c.run(x(0)?, x(1)?)?,
            Kernel::ScaledSoftmax { scale, scale_first } => kernel(
                tensorcast_kernels::math::softmax_of_scaled(x(0)?, *scale, *scale_first),
            )?,
            Kernel::Const(t) => t.clone(),
            Kernel::Fail(e) => return Err(e.clone()),
            // Nothing reads a NoOp's (absent) output; an empty tensor stands in for it.
            Kernel::NoOp => Tensor::vector::<f32>(&[]),
            Kernel::Identity => x(0)?.clone(),
            Kernel::Cast { dst, truncate } => cast(x(0)?, *dst, *truncate)?,
            Kernel::Shape { out_type } => shape_of(x(0)?, *out_type)?,
            Kernel::Bitcast { dst } => kernel(ops::bitcast::bitcast(x(0)?, *dst))?,
            Kernel::BroadcastTo => kernel(ops::broadcast::broadcast_to_op(x(0)?, x(1)?))?,
            Kernel::Reshape => reshape(x(0)?, x(1)?)?,
            Kernel::Binary {
                op,
                incompatible_shape_error,
            } => kernel(binary(*op, x(0)?, x(1)?, *incompatible_shape_error))?,
            Kernel::Reg { .. } => {
                // Graph and plan time (folding): no variables, and little to allocate.
                let resources = crate::registry::Resources::default();
                let run = Run::new(&resources, FOLD_ALLOCATION_BYTES, None);
                let mut out = self.compute_all(inputs.to_vec(), "", &run)?;
                if out.len() != 1 {
                    return Err(Error::Internal(
                        "a multi-output kernel ran as single".into(),
                    ));
                }
                out.remove(0)
            }
        })
    }
}

/// Runs `op` with `attrs` on `inputs` once (constant folding at graph-build time).
pub(crate) fn compute(op: Op, attrs: &Attrs, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    let resources = crate::registry::Resources::default();
    let run = Run::new(&resources, FOLD_ALLOCATION_BYTES, None);
    Kernel::for_op(op, attrs, VALUE_BUDGET_BYTES).compute_all(inputs.to_vec(), "", &run)
}

/// The most a kernel run at graph or plan time (constant folding) may allocate beyond its
/// inputs: grappler's limit for a folded constant, 10 MiB.
pub(crate) const FOLD_ALLOCATION_BYTES: u64 = 10 << 20;

/// The outputs `shape` (a registry op's shape function) gives on the actual `inputs`, checked
/// against `run`'s allocation limit beyond the inputs' bytes: what an op that sizes its outputs
/// from values it reads would allocate, refused before its kernel allocates it. A shape
/// function that fails or leaves a dim unknown decides nothing (the kernel reports its own
/// error, and allocates fallibly).
fn check_sized_outputs(
    shape: crate::registry::ShapeFn,
    attrs: &Attrs,
    out_types: &[DataType],
    inputs: &[Tensor],
    run: &Run<'_>,
) -> Result<()> {
    use crate::registry::{InferInput, Known, ShapeCtx};
    use tensorcast_core::PartialTensorShape;
    let known: Vec<InferInput> = inputs
        .iter()
        .map(|t| InferInput {
            shape: PartialTensorShape::from(t.shape()),
            value: Some(Known::Tensor(t.clone())),
        })
        .collect();
    let Ok(shapes) = shape(&ShapeCtx {
        attrs,
        inputs: &known,
        out_types,
    }) else {
        return Ok(());
    };
    let justified = inputs
        .iter()
        .fold(0u64, |n, t| n.saturating_add(t.total_bytes() as u64));
    for (s, &dtype) in shapes.iter().zip(out_types) {
        if let Some(dims) = s.dims().filter(|_| s.is_fully_defined()) {
            run.check_tensor(dtype, dims, justified)?;
        }
    }
    Ok(())
}

/// The bytes a `Const`'s value takes once decoded (its element count times the element size;
/// for strings also their bytes), from the proto alone. Saturates; 0 without a value.
pub(crate) fn const_bytes(attrs: &Attrs) -> u64 {
    let Some(p) = attr::get_tensor(attrs, "value") else {
        return 0;
    };
    let n = p.tensor_shape.as_ref().map_or(Some(1u64), |s| {
        s.dim.iter().try_fold(1u64, |acc, d| {
            u64::try_from(d.size).ok().and_then(|d| acc.checked_mul(d))
        })
    });
    let Some(n) = n else { return u64::MAX };
    let size = DataType::from_number(p.dtype).size().max(1) as u64;
    let strings: u64 = p.string_val.iter().map(|s| s.len() as u64).sum();
    n.saturating_mul(size).saturating_add(strings)
}

/// A `Const`'s value, checked against its `dtype` attr; values it does not carry (a fill)
/// may take at most `max_fill_bytes`.
fn const_value(attrs: &Attrs, max_fill_bytes: u64) -> Result<Tensor> {
    let proto = attr::get_tensor(attrs, "value")
        .ok_or_else(|| Error::Internal("Const without value".into()))?;
    let options = tensorcast_proto::DecodeOptions::new()
        .with_max_fill_bytes(usize::try_from(max_fill_bytes).unwrap_or(usize::MAX));
    let t = tensorcast_proto::tensor_from_proto_with(proto, &options)?;
    let dtype = attr::get_type(attrs, "dtype").unwrap_or(DataType::INVALID);
    if t.dtype() != dtype {
        return Err(Error::ConstTypeMismatch {
            node: String::new(),
            location: Box::default(),
            value: t.dtype(),
            dtype,
        });
    }
    Ok(t)
}

/// `Cast`, with `Truncate` for float/double to bfloat16 (drop the low bits instead of rounding).
pub(crate) fn cast(x: &Tensor, dst: DataType, truncate: bool) -> Result<Tensor> {
    if truncate && dst == DataType::BFLOAT16 && x.dtype() == DataType::FLOAT {
        let bits: Vec<u16> = kernel(x.as_slice::<f32>())?
            .iter()
            .map(|v| {
                if v.is_nan() {
                    0x7fc0
                } else {
                    (v.to_bits() >> 16) as u16
                }
            })
            .collect();
        let t = kernel(Tensor::from_vec(bits, x.shape()))?;
        return kernel(ops::bitcast::bitcast(&t, DataType::BFLOAT16));
    }
    kernel(ops::cast::cast(x, dst))
}

fn shape_of(x: &Tensor, out_type: DataType) -> Result<Tensor> {
    shape_vector(x.shape(), out_type)
}

/// `Shape`'s output for a tensor of shape `shape` (a lazy broadcast's logical shape, too).
pub(crate) fn shape_vector(shape: &TensorShape, out_type: DataType) -> Result<Tensor> {
    let dims = shape.dim_sizes();
    if out_type == DataType::INT64 {
        return Ok(Tensor::vector(dims));
    }
    let mut v = Vec::with_capacity(dims.len());
    for &d in dims {
        v.push(i32::try_from(d).map_err(|_| {
            invalid(CoreError::ShapeOutput32 {
                index: v.len(),
                dim: d,
            })
        })?);
    }
    Ok(Tensor::vector(&v))
}

/// The int values of a shape operand (int32/int64; a vector or a scalar).
fn shape_values(sizes: &Tensor) -> Result<Vec<i64>> {
    if sizes.dims() > 1 {
        return Err(invalid(CoreError::ReshapeSizesRank {
            shape: sizes.shape().clone(),
        }));
    }
    match sizes.dtype() {
        DataType::INT32 => Ok(kernel(sizes.as_slice::<i32>())?
            .iter()
            .map(|&v| i64::from(v))
            .collect()),
        DataType::INT64 => Ok(kernel(sizes.as_slice::<i64>())?.to_vec()),
        dtype => Err(invalid(CoreError::ReshapeSizesDtype { dtype })),
    }
}

/// `Reshape` with TensorFlow's kernel checks and messages (`ValidateSizes`).
pub(crate) fn reshape(input: &Tensor, sizes: &Tensor) -> Result<Tensor> {
    let values = shape_values(sizes)?;
    let mut dims = Vec::with_capacity(values.len());
    let mut product: i64 = 1;
    let mut has_zero = false;
    let mut unknown: Option<usize> = None;
    for (d, &size) in values.iter().enumerate() {
        if size == -1 {
            if let Some(u) = unknown {
                return Err(invalid(CoreError::ReshapeTwoUnknown {
                    first: u,
                    second: d,
                }));
            }
            unknown = Some(d);
            dims.push(1);
        } else if size < 0 {
            return Err(invalid(CoreError::ReshapeNegativeSize { index: d, size }));
        } else if size == 0 {
            has_zero = true;
            dims.push(0);
        } else {
            product = product
                .checked_mul(size)
                .ok_or_else(|| invalid(CoreError::ReshapeTooManyElements))?;
            dims.push(size);
        }
    }
    let n = input.num_elements();
    if let Some(u) = unknown {
        let mut input_n: i64 = 1;
        let mut input_zero = false;
        for &d in input.shape().dim_sizes() {
            if d > 0 || !has_zero {
                input_n *= d;
            } else {
                input_zero = true;
            }
        }
        let missing = input_n / product;
        if !input_zero && product * missing != input_n {
            return Err(invalid(CoreError::ReshapeNotMultiple {
                elements: n,
                product,
            }));
        }
        dims[u] = missing;
    }
    let shape = kernel(TensorShape::new(&dims))?;
    if shape.num_elements() != n {
        return Err(invalid(CoreError::ReshapeSizes {
            elements: n,
            requested: shape.num_elements(),
        }));
    }
    kernel(input.reshape(&shape))
}
