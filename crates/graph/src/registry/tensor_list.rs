//! TensorLists as TensorFlow 2's loops use them (`tf.TensorArray`, Keras' recurrent layers):
//! `TensorListReserve`, `TensorListFromTensor`, `TensorListGetItem`, `TensorListSetItem`,
//! `TensorListStack`, `TensorListLength`, `TensorListElementShape`.
//!
//! A list is what TensorFlow makes it: a scalar `variant` tensor whose value is encoded as
//! TensorFlow encodes a `TensorList` (type name `tensorflow::TensorList`; the set elements as
//! the nested tensors; metadata: the number of unset elements and their indices, the element
//! dtype, `max_num_elements`, the element shape as a `TensorShapeProto`), so a list is an
//! ordinary value: fetched, fed, or carried through a `While` like any tensor. Lists are values:
//! every op makes a new one.

use bytes::Bytes;
use tensorcast_core::{
    Code, DataType, PartialTensorShape, Tensor, TensorShape, Variant, VariantTensorData,
};
use tensorcast_proto::{Message, TensorShapeProto};

use super::spec::op_def;
use super::{kernel_error, unknown_shapes, Entry, KernelCtx, Run, ShapeCtx};
use crate::attr;
use crate::error::Result;

const TYPE_NAME: &str = "tensorflow::TensorList";

/// A decoded list.
struct List {
    dtype: DataType,
    shape: PartialTensorShape,
    max: i64,
    items: Vec<Option<Tensor>>,
}

fn err(op: &'static str, message: String) -> crate::error::Error {
    kernel_error(tensorcast_core::Error::Op {
        op,
        code: Code::InvalidArgument,
        message,
    })
}

/// The memory one element of a list takes however small it is: its slot while decoded, and up
/// to five bytes of metadata (its index) while unset.
const SLOT_BYTES: u64 = std::mem::size_of::<Option<Tensor>>() as u64 + 5;

/// Checks that a list of `len` elements fits the run's allocation limit beyond `justified`
/// bytes (TensorFlow makes a `std::vector` of that many tensors, and aborts when it cannot).
fn check_slots(op: &'static str, run: &Run<'_>, len: u64, justified: u64) -> Result<()> {
    run.check_bytes(
        || format!("{op}: a list of {len} elements"),
        len.saturating_mul(SLOT_BYTES),
        justified,
    )
}

/// An empty vector with room for `len` slots, allocated fallibly.
fn slots(op: &'static str, len: usize) -> Result<Vec<Option<Tensor>>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        kernel_error(tensorcast_core::Error::Op {
            op,
            code: Code::ResourceExhausted,
            message: format!("cannot allocate a list of {len} elements"),
        })
    })?;
    Ok(v)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

impl List {
    fn encode(self) -> Tensor {
        let mut meta = Vec::new();
        let unset: Vec<usize> = (0..self.items.len())
            .filter(|&i| self.items[i].is_none())
            .collect();
        put_varint(&mut meta, unset.len() as u64);
        for &i in &unset {
            put_varint(&mut meta, i as u64);
        }
        put_varint(&mut meta, self.dtype.number() as u64);
        put_varint(&mut meta, self.max as u64);
        meta.extend_from_slice(
            &tensorcast_proto::partial_shape_to_proto(&self.shape).encode_to_vec(),
        );
        let data = VariantTensorData {
            type_name: TYPE_NAME.to_string(),
            metadata: Bytes::from(meta),
            tensors: self.items.into_iter().flatten().collect(),
        };
        Tensor::scalar_of(Variant::Encoded(data))
    }

    /// The list `t` holds. Its slots take memory in proportion to its element count, which
    /// the encoding carries in a byte or so per unset element: checked against `run`'s limit
    /// beyond the encoding's bytes before they are made.
    fn decode(op: &'static str, t: &Tensor, run: &Run<'_>) -> Result<List> {
        if t.dtype() != DataType::VARIANT {
            return Err(err(
                op,
                format!(
                    "Input handle is expected to be a variant tensor but is a {} tensor",
                    t.dtype().name()
                ),
            ));
        }
        if t.dims() != 0 {
            return Err(err(
                op,
                format!("Input list must be a scalar saw: {}", t.shape()),
            ));
        }
        let v = &t.as_slice::<Variant>().map_err(kernel_error)?[0];
        let data = v.encode();
        if data.type_name != TYPE_NAME {
            return Err(err(
                op,
                format!("Input handle is not a list. Saw: '{}'", v.summarize()),
            ));
        }
        let bad = || err(op, "Input handle holds a malformed TensorList".into());
        let b = &data.metadata;
        let mut pos = 0;
        let n_unset = get_varint(b, &mut pos).ok_or_else(bad)?;
        // Each unset index takes a byte at least.
        let n_unset = usize::try_from(n_unset)
            .ok()
            .filter(|&n| n <= b.len())
            .ok_or_else(bad)?;
        let len = data.tensors.len() + n_unset;
        check_slots(op, run, len as u64, b.len() as u64)?;
        // The unset indices, ascending as TensorFlow writes them, each below the length.
        let mut unset = Vec::with_capacity(n_unset);
        for _ in 0..n_unset {
            let i = get_varint(b, &mut pos).ok_or_else(bad)?;
            let i = usize::try_from(i)
                .ok()
                .filter(|&i| i < len && unset.last().is_none_or(|&p| p < i))
                .ok_or_else(bad)?;
            unset.push(i);
        }
        let dtype = DataType::from_number(get_varint(b, &mut pos).ok_or_else(bad)? as i32);
        let max = get_varint(b, &mut pos).ok_or_else(bad)? as i64;
        let proto = TensorShapeProto::decode(&b[pos..]).map_err(|_| bad())?;
        let mut items = slots(op, len)?;
        let mut set = data.tensors.into_iter();
        let mut unset = unset.into_iter().peekable();
        for i in 0..len {
            if unset.next_if_eq(&i).is_some() {
                items.push(None);
            } else {
                items.push(set.next());
            }
        }
        Ok(List {
            dtype,
            shape: attr::partial_shape(&proto).map_err(|_| bad())?,
            max,
            items,
        })
    }

    /// The op's `element_dtype`, which must be the list's.
    fn check_dtype(&self, op: &'static str, c: &KernelCtx<'_>) -> Result<DataType> {
        let dtype = element_dtype(c);
        if dtype != self.dtype {
            return Err(err(
                op,
                format!(
                    "Invalid data types; op elements {} but list elements {}",
                    dtype.name(),
                    self.dtype.name()
                ),
            ));
        }
        Ok(dtype)
    }

    /// `element_shape` merged with the list's shape and the shapes of its set elements.
    fn element_shape(
        &self,
        op: &'static str,
        given: &PartialTensorShape,
    ) -> Result<PartialTensorShape> {
        let mut s = merge(op, &self.shape, given)?;
        for t in self.items.iter().flatten() {
            s = merge(op, &s, &PartialTensorShape::from(t.shape()))?;
        }
        Ok(s)
    }
}

/// Two partial shapes merged (`PartialTensorShape::MergeWith`, with its messages).
fn merge(
    op: &'static str,
    a: &PartialTensorShape,
    b: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    a.merge_with(b).map_err(|e| err(op, e.to_string()))
}

/// An `element_shape` input: scalar -1 for unknown rank, or a vector with -1 for unknown dims.
fn shape_input(op: &'static str, t: &Tensor) -> Result<PartialTensorShape> {
    let v: Vec<i64> = match t.dtype() {
        DataType::INT32 => t
            .as_slice::<i32>()
            .map_err(kernel_error)?
            .iter()
            .map(|&x| i64::from(x))
            .collect(),
        DataType::INT64 => t.as_slice::<i64>().map_err(kernel_error)?.to_vec(),
        d => {
            return Err(err(
                op,
                format!("element_shape must be int32 or int64, got {}", d.name()),
            ))
        }
    };
    if t.dims() == 0 {
        return if v == [-1] {
            Ok(PartialTensorShape::unknown_rank())
        } else {
            Err(err(
                op,
                "The only valid scalar shape tensor is the fully unknown shape specified as -1."
                    .into(),
            ))
        };
    }
    if let Some(&d) = v.iter().find(|&&d| d < -1) {
        return Err(err(op, format!("Dimension {d} must be >= -1")));
    }
    PartialTensorShape::new(&v).map_err(|e| err(op, e.to_string()))
}

fn scalar_i32(op: &'static str, t: &Tensor, what: &str) -> Result<i64> {
    if t.num_elements() != 1 {
        return Err(err(
            op,
            format!("The {what} must be a tensor size 1, but got {}", t.shape()),
        ));
    }
    Ok(i64::from(t.as_slice::<i32>().map_err(kernel_error)?[0]))
}

/// Zeros of `dtype` and fully defined `shape` (what reading an unset element gives), checked
/// against the run's allocation limit first.
fn zeros(run: &Run<'_>, dtype: DataType, dims: &[i64]) -> Result<Tensor> {
    run.check_tensor(dtype, dims, 0)?;
    let zero =
        tensorcast_kernels::cast::cast(&Tensor::scalar_of(0.0f32), dtype).map_err(kernel_error)?;
    let shape = TensorShape::new(dims).map_err(kernel_error)?;
    tensorcast_kernels::broadcast::broadcast_to(&zero, &shape).map_err(kernel_error)
}

fn element_dtype(c: &KernelCtx<'_>) -> DataType {
    attr::get_type(c.attrs, "element_dtype").unwrap_or(DataType::INVALID)
}

fn reserve(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    const OP: &str = "TensorListReserve";
    let shape = shape_input(OP, &inputs[0])?;
    let n = scalar_i32(OP, &inputs[1], "num_elements to reserve")?;
    if n < 0 {
        return Err(err(
            OP,
            format!("The num_elements to reserve must be a non negative number, but got {n}"),
        ));
    }
    check_slots(OP, c.run, n as u64, 0)?;
    let mut items = slots(OP, n as usize)?;
    items.resize_with(n as usize, || None);
    let list = List {
        dtype: element_dtype(c),
        shape,
        max: -1,
        items,
    };
    Ok(vec![list.encode()])
}

fn from_tensor(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    const OP: &str = "TensorListFromTensor";
    let t = &inputs[0];
    let shape = shape_input(OP, &inputs[1])?;
    if t.dims() == 0 {
        return Err(err(
            OP,
            format!(
                "Tensor must be at least a vector, but saw shape: {}",
                t.shape()
            ),
        ));
    }
    let dims = t.shape().dim_sizes();
    let elem = PartialTensorShape::new(&dims[1..]).map_err(kernel_error)?;
    if merge(OP, &shape, &elem).is_err() {
        return Err(err(
            OP,
            format!(
                "Specified a list with shape {} from a tensor with shape {}",
                shape, elem
            ),
        ));
    }
    // The elements are the input's bytes again; their slots come on top.
    check_slots(OP, c.run, dims[0] as u64, 0)?;
    let mut items = slots(OP, dims[0] as usize)?;
    for i in 0..dims[0] {
        items.push(Some(
            t.sub_slice(i)
                .map_err(kernel_error)?
                .deep_copy()
                .map_err(kernel_error)?,
        ));
    }
    let list = List {
        dtype: element_dtype(c),
        shape,
        max: -1,
        items,
    };
    Ok(vec![list.encode()])
}

fn check_index(op: &'static str, verb: &str, index: i64, len: usize) -> Result<usize> {
    if index < 0 || index as usize >= len {
        return Err(err(
            op,
            format!("Trying to {verb} element {index} in a list with {len} elements."),
        ));
    }
    Ok(index as usize)
}

fn get_item(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    const OP: &str = "TensorListGetItem";
    let list = List::decode(OP, &inputs[0], c.run)?;
    let dtype = list.check_dtype(OP, c)?;
    let index = check_index(
        OP,
        "access",
        scalar_i32(OP, &inputs[1], "index")?,
        list.items.len(),
    )?;
    if let Some(t) = &list.items[index] {
        return Ok(vec![t.clone()]);
    }
    let given = shape_input(OP, &inputs[2])?;
    let s = list.element_shape(OP, &given)?;
    match s.dims() {
        Some(d) if s.is_fully_defined() => Ok(vec![zeros(c.run, dtype, d)?]),
        _ => Err(err(
            OP,
            format!(
                "Trying to read an uninitialized tensor but element_shape is not fully defined: {} and no list element is set.",
                s
            ),
        )),
    }
}

fn set_item(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    const OP: &str = "TensorListSetItem";
    let mut list = List::decode(OP, &inputs[0], c.run)?;
    let item = inputs[2].clone();
    if item.dtype() != list.dtype {
        return Err(err(
            OP,
            format!(
                "Invalid data types; op elements {} but list elements {}",
                item.dtype().name(),
                list.dtype.name()
            ),
        ));
    }
    let index = scalar_i32(OP, &inputs[1], "index")?;
    if c.bool("resize_if_index_out_of_bounds") && index >= list.items.len() as i64 {
        let len = index as u64 + 1;
        check_slots(OP, c.run, len, list.items.len() as u64 * SLOT_BYTES)?;
        list.items
            .try_reserve_exact(len as usize - list.items.len())
            .map_err(|_| err(OP, format!("cannot allocate a list of {len} elements")))?;
        list.items.resize_with(len as usize, || None);
    }
    let index = check_index(OP, "modify", index, list.items.len())?;
    let elem = PartialTensorShape::from(item.shape());
    if merge(OP, &list.shape, &elem).is_err() {
        return Err(err(
            OP,
            format!(
                "Tried to set a tensor with incompatible shape at a list index. Item element shape: {} list shape: {}",
                elem,
                list.shape
            ),
        ));
    }
    list.items[index] = Some(item);
    Ok(vec![list.encode()])
}

fn stack(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    const OP: &str = "TensorListStack";
    let list = List::decode(OP, &inputs[0], c.run)?;
    let dtype = list.check_dtype(OP, c)?;
    let want = attr::get_int(c.attrs, "num_elements").unwrap_or(-1);
    if want != -1 && want != list.items.len() as i64 {
        return Err(err(
            OP,
            format!(
                "Operation expected a list with {want} elements but got a list with {} elements.",
                list.items.len()
            ),
        ));
    }
    let given = shape_input(OP, &inputs[1])?;
    let s = list.element_shape(OP, &given)?;
    let full = s.dims().filter(|_| s.is_fully_defined());
    if list.items.iter().all(Option::is_some) {
        if list.items.is_empty() {
            let Some(d) = full else {
                return Err(err(
                    OP,
                    format!(
                        "Tried to stack elements of an empty list with non-fully-defined element_shape: {}",
                        s
                    ),
                ));
            };
            let mut dims = vec![0];
            dims.extend_from_slice(d);
            return Ok(vec![zeros(c.run, dtype, &dims)?]);
        }
        // The stack is the set elements' bytes again.
        let refs: Vec<&Tensor> = list.items.iter().flatten().collect();
        return super::out(tensorcast_kernels::array::pack(&refs, 0));
    }
    let Some(d) = full else {
        return Err(err(
            OP,
            format!(
                "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined element_shape: {}",
                s
            ),
        ));
    };
    // Unset elements read as zeros: the output is checked whole, beyond the set elements'
    // bytes, before anything is made; the unset elements share one zeros tensor.
    let mut dims = Vec::with_capacity(d.len() + 1);
    dims.push(list.items.len() as i64);
    dims.extend_from_slice(d);
    let set_bytes = list
        .items
        .iter()
        .flatten()
        .fold(0u64, |n, t| n.saturating_add(t.total_bytes() as u64));
    c.run.check_tensor(dtype, &dims, set_bytes)?;
    let zero = zeros(c.run, dtype, d)?;
    let refs: Vec<&Tensor> = list
        .items
        .iter()
        .map(|t| t.as_ref().unwrap_or(&zero))
        .collect();
    super::out(tensorcast_kernels::array::pack(&refs, 0))
}

fn length(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let list = List::decode("TensorListLength", &inputs[0], c.run)?;
    Ok(vec![Tensor::scalar_of(list.items.len() as i32)])
}

fn element_shape(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let list = List::decode("TensorListElementShape", &inputs[0], c.run)?;
    let int64 = attr::get_type(c.attrs, "shape_type") == Some(DataType::INT64);
    let dims = match list.shape.dims() {
        None => {
            return Ok(vec![if int64 {
                Tensor::scalar_of(-1i64)
            } else {
                Tensor::scalar_of(-1i32)
            }])
        }
        Some(d) => d.to_vec(),
    };
    let t = if int64 {
        Tensor::vector(&dims)
    } else {
        Tensor::vector(&dims.iter().map(|&d| d as i32).collect::<Vec<_>>())
    };
    Ok(vec![t])
}

fn scalar_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(vec![
        PartialTensorShape::from(
            &tensorcast_core::TensorShape::scalar()
        );
        c.out_types.len()
    ])
}

pub(super) fn entries() -> Vec<Entry> {
    let e = |def, shape, kernel| Entry {
        def,
        shape,
        kernel: Some(kernel),
        fold: false,
        sized_by_values: false,
    };
    vec![
        e(op_def("TensorListReserve"), scalar_shape, reserve),
        e(op_def("TensorListFromTensor"), scalar_shape, from_tensor),
        e(op_def("TensorListGetItem"), unknown_shapes, get_item),
        e(op_def("TensorListSetItem"), scalar_shape, set_item),
        e(op_def("TensorListStack"), unknown_shapes, stack),
        e(op_def("TensorListLength"), scalar_shape, length),
        e(
            op_def("TensorListElementShape"),
            unknown_shapes,
            element_shape,
        ),
    ]
}
