//! Plain forms of TensorFlow's `TensorDescription` and `AllocationDescription` protos, filled
//! by [`Tensor::fill_description`]. The proto forms live in `tensorcast-proto`.

use crate::{DataType, Tensor, TensorShape};

/// What TensorFlow's `AllocationDescription` records about a tensor's buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocationDescription {
    /// Bytes requested (the buffer's size).
    pub requested_bytes: i64,
    /// Bytes the allocator reserved, when it tracks sizes (0 otherwise).
    pub allocated_bytes: i64,
    /// The allocator's name (`cpu`, `vec`, `mmap`, `HostScalarTensorBuffer`...).
    pub allocator_name: String,
    /// The allocator's id for the allocation, when it tracks them (0 otherwise).
    pub allocation_id: i64,
    /// True when the tracking allocator reports a single reference to the buffer.
    pub has_single_reference: bool,
    /// The address of the first byte.
    pub ptr: u64,
}

/// What TensorFlow's `TensorDescription` records: dtype, shape and allocation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TensorDescription {
    /// The dtype.
    pub dtype: DataType,
    /// The shape.
    pub shape: TensorShape,
    /// The allocation, when the tensor has a buffer with data.
    pub allocation_description: Option<AllocationDescription>,
}

impl Tensor {
    /// TensorFlow's `FillDescription`: dtype and shape, and when the buffer holds data, its
    /// requested size, allocator name and address; with a size-tracking allocator also the
    /// allocated size, allocation id and whether it has a single reference.
    pub fn fill_description(&self) -> TensorDescription {
        let allocation_description = self.buffer().filter(|b| !b.is_empty()).map(|b| {
            let mut d = AllocationDescription {
                requested_bytes: b.len() as i64,
                allocator_name: b.owner_name().to_string(),
                ptr: b.as_ptr() as u64,
                ..Default::default()
            };
            if let Some(a) = b.allocator().filter(|a| a.tracks_allocation_sizes()) {
                d.allocated_bytes = b.allocated_bytes().unwrap_or(0) as i64;
                d.allocation_id = b.allocation_id().unwrap_or(0);
                d.has_single_reference = b.ref_count_is_one();
                let _ = a;
            }
            d
        });
        TensorDescription {
            dtype: self.dtype(),
            shape: self.shape().clone(),
            allocation_description,
        }
    }
}
